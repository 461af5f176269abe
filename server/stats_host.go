package server

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/net/wire"
)

// fillHostStats adds the host's figures to st: names and versions, memory,
// disk space of the data directory, threads and CPU usage of the process.
// A figure the host does not expose stays zero.
func fillHostStats(st *wire.Stats, dataDir string, uptime time.Duration) {
	if host, err := os.Hostname(); err == nil {
		st.Hostname = host
	}
	var uts unix.Utsname
	if unix.Uname(&uts) == nil {
		st.OSName = unix.ByteSliceToString(uts.Sysname[:])
		st.OSVersion = unix.ByteSliceToString(uts.Version[:])
		st.KernelVersion = unix.ByteSliceToString(uts.Release[:])
	}
	var fs unix.Statfs_t
	if unix.Statfs(dataDir, &fs) == nil {
		st.FreeDiskSpace = fs.Bavail * uint64(fs.Bsize)
		st.TotalDiskSpace = fs.Blocks * uint64(fs.Bsize)
	}
	if meminfo, err := os.ReadFile("/proc/meminfo"); err == nil {
		st.TotalMemory = meminfoBytes(meminfo, "MemTotal:")
		st.AvailableMemory = meminfoBytes(meminfo, "MemAvailable:")
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
				st.ThreadsCount = uint32(n)
			}
		}
	}
	var usage unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &usage) == nil && uptime > 0 {
		cpu := time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
		st.CPUUsage = float32(100 * cpu.Seconds() / uptime.Seconds())
		st.TotalCPUUsage = st.CPUUsage
	}
}

// meminfoBytes reads one "Key: N kB" line of /proc/meminfo.
func meminfoBytes(meminfo []byte, key string) uint64 {
	scanner := bufio.NewScanner(bytes.NewReader(meminfo))
	for scanner.Scan() {
		if v, ok := strings.CutPrefix(scanner.Text(), key); ok {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				return 0
			}
			n, _ := strconv.ParseUint(fields[0], 10, 64)
			return n * 1024
		}
	}
	return 0
}

// metricValue reads a counter's current value.
func metricValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil || m.Counter == nil {
		return 0
	}
	return m.Counter.GetValue()
}
