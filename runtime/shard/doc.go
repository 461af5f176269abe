// Package shard is Strata's thread-per-core runtime (DESIGN.md decision 9):
// it turns the `cpu_allocation` setting into a plan (how many shards, which
// CPU each runs on) using the process's allowed CPU set and the NUMA and
// hyperthread topology read from sysfs, pins OS threads with
// sched_setaffinity, runs each shard as one goroutine locked to its OS
// thread with an event loop over a bounded inbox, timers and an IO engine's
// completions, and routes a partition to its owning shard by the namespace
// hash. With an IO engine that is a Sleeper (a shard's own io_uring), a
// loop with operations in flight sleeps in the engine and senders wake it;
// otherwise it polls the engine while operations are in flight.
//
// Files: cpulist.go (sysfs CPU list syntax), allocation.go (the setting's
// grammar), topology.go (sysfs), plan.go (allocation -> CPUs), pin.go
// (affinity syscalls), route.go (namespace hash), shard.go and loop.go (the
// event loop), timers.go.
//
// Lock order: Shard.sendMu (held only around a channel send) is never held
// while taking Shard.timersMu, and neither is held while running a task.
package shard
