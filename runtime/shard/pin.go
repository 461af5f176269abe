package shard

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// ErrAffinity is wrapped by every CPU affinity error.
var ErrAffinity = errors.New("shard: CPU affinity")

// AllowedCPUs returns, ascending, the CPUs the calling thread may run on
// (sched_getaffinity). At start-up every thread of the process shares the
// affinity the process was started with (taskset, cgroup cpusets).
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("%w: sched_getaffinity: %w", ErrAffinity, err)
	}
	return cpusOf(&set), nil
}

// Pin locks the calling goroutine to its OS thread (runtime.LockOSThread,
// never undone: a pinned thread must not run other goroutines) and
// restricts that thread to one CPU with sched_setaffinity. Only the
// goroutine that will run a shard's loop should call it.
func Pin(cpu int) error {
	if cpu < 0 || cpu > CPUNumberMax {
		return fmt.Errorf("%w: CPU %d is outside 0..%d", ErrAffinity, cpu, CPUNumberMax)
	}
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("%w: sched_setaffinity to CPU %d: %w", ErrAffinity, cpu, err)
	}
	return nil
}

// cpusOf lists the CPUs in a set, ascending.
func cpusOf(set *unix.CPUSet) []int {
	var cpus []int
	for cpu := 0; cpu <= CPUNumberMax; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}
