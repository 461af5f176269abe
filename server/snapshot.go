package server

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/common/expfmt"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/config"
)

// GetSnapshot (11) answers a ZIP archive of diagnostics, as Iggy's server
// does: one "<type>.txt" entry per snapshot type asked for (Iggy's names:
// filesystem_overview, process_list, resource_usage, test, server_logs,
// server_config; "all" is every one but test), compressed as asked.
// Iggy runs ls, ps, top and cat; Strata reads the same facts itself (from
// /proc where the host has it), which bounds every entry and keeps out
// what must never leave the server:
//   - no environment of any process is read (the root password and the
//     HTTP JWT secret come from the environment);
//   - no key, certificate or metadata file is read, only listed (password
//     hashes and personal access tokens live in the metadata);
//   - of other processes only the kernel's command name is shown, not
//     their arguments, which can carry their own credentials;
//   - the configuration is the one runtime/current_config.toml holds,
//     from which config.EncodeCurrent leaves secrets out.
//
// Sizes are bounded: the logs by their newest snapshotLogBytes, every
// other entry by snapshotEntryBytes, so an archive stays far below the
// 64 MiB frame; one archive is built at a time.

// Snapshot bounds.
const (
	// snapshotLogBytes is how much of the newest server log an archive
	// holds.
	snapshotLogBytes = 16 << 20
	// snapshotEntryBytes bounds every other entry.
	snapshotEntryBytes = 4 << 20
	// snapshotDirEntries bounds the filesystem overview's listing.
	snapshotDirEntries = 20_000
	// snapshotOpenFiles bounds the open files listed for the process.
	snapshotOpenFiles = 2_000
	// clockTicksPerSecond is Linux's USER_HZ, the unit of /proc CPU times.
	clockTicksPerSecond = 100
)

// snapshotTypeNames names each snapshot type's entry (Iggy's Display).
var snapshotTypeNames = map[uint8]string{
	wire.SnapshotFilesystemOverview: "filesystem_overview",
	wire.SnapshotProcessList:        "process_list",
	wire.SnapshotResourceUsage:      "resource_usage",
	wire.SnapshotTest:               "test",
	wire.SnapshotServerLogs:         "server_logs",
	wire.SnapshotServerConfig:       "server_config",
}

// snapshotAllTypes is what SnapshotAll stands for: every type but test
// (Iggy's all_snapshot_types).
var snapshotAllTypes = []uint8{wire.SnapshotFilesystemOverview, wire.SnapshotProcessList,
	wire.SnapshotResourceUsage, wire.SnapshotServerLogs, wire.SnapshotServerConfig}

// snapshotZstd compresses zstd entries (WinZip's method 93), reusing its
// encoders.
var snapshotZstd = zstd.ZipCompressor(zstd.WithEncoderConcurrency(1))

// errSnapshotTypes is a type list Iggy refuses: "all" beside other types.
var errSnapshotTypes = errors.New("snapshot type all cannot be combined with other types")

// handleGetSnapshot runs GetSnapshot (11). It needs read_servers or
// manage_servers (PROTOCOL.md §7).
func (s *Server) handleGetSnapshot(c *connection, body []byte) response {
	var req wire.GetSnapshotRequest
	if err := req.Decode(body); err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	if !s.canReadServers(c) {
		return deny(wire.ErrUnauthorized)
	}
	types, err := snapshotTypeList(req.Types)
	if err != nil {
		return deny(wire.ErrInvalidCommand)
	}
	archive, err := s.buildSnapshot(req.Compression, types)
	if err != nil || len(archive) > wire.MaxFrameSize-wire.HeaderSize {
		s.log.Error("snapshot failed", zap.Int("bytes", len(archive)), zap.Error(err))
		return deny(wire.ErrSnapshotFileCompletionFailed)
	}
	return response{body: archive}
}

// snapshotTypeList resolves the requested types: "all" alone is every type
// but test, with others it is refused; duplicates are kept once, in the
// order asked.
func snapshotTypeList(requested []uint8) ([]uint8, error) {
	var out []uint8
	seen := map[uint8]bool{}
	for _, t := range requested {
		if t == wire.SnapshotAll {
			if len(requested) > 1 {
				return nil, errSnapshotTypes
			}
			return snapshotAllTypes, nil
		}
		if _, ok := snapshotTypeNames[t]; !ok {
			return nil, fmt.Errorf("%w: snapshot type %d", wire.ErrBadValue, t)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

// snapshotMethod maps a snapshot compression to a ZIP method. Bzip2, LZMA
// and XZ have no encoder in this build: their entries are deflated (the
// entry headers say so, so any ZIP reader opens them) and the archive
// comment tells.
func snapshotMethod(compression uint8) (method uint16, comment string) {
	switch compression {
	case wire.SnapshotCompressionStored:
		return zip.Store, ""
	case wire.SnapshotCompressionZstd:
		return zstd.ZipMethodWinZip, ""
	case wire.SnapshotCompressionBzip2:
		return zip.Deflate, "bzip2 is not available on this server: the entries are deflated"
	case wire.SnapshotCompressionLzma:
		return zip.Deflate, "lzma is not available on this server: the entries are deflated"
	case wire.SnapshotCompressionXz:
		return zip.Deflate, "xz is not available on this server: the entries are deflated"
	}
	return zip.Deflate, ""
}

// buildSnapshot writes the archive of the given types.
func (s *Server) buildSnapshot(compression uint8, types []uint8) ([]byte, error) {
	s.snapshotMu.Lock()
	defer s.snapshotMu.Unlock()
	started := time.Now()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zstd.ZipMethodWinZip, snapshotZstd)
	method, comment := snapshotMethod(compression)
	if comment != "" {
		if err := zw.SetComment(comment); err != nil {
			return nil, fmt.Errorf("snapshot comment: %w", err)
		}
	}
	modified := s.now()
	names := make([]string, 0, len(types))
	for _, t := range types {
		name := snapshotTypeNames[t]
		content := s.snapshotEntry(t)
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".txt", Method: method, Modified: modified})
		if err != nil {
			return nil, fmt.Errorf("snapshot entry %s: %w", name, err)
		}
		if _, err := w.Write(content); err != nil {
			return nil, fmt.Errorf("snapshot entry %s: %w", name, err)
		}
		names = append(names, name)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("snapshot archive: %w", err)
	}
	s.log.Info("snapshot", zap.Strings("types", names), zap.Uint16("zip_method", method),
		zap.Int("bytes", buf.Len()), zap.Duration("took", time.Since(started)))
	return buf.Bytes(), nil
}

// snapshotEntry produces the text of one snapshot type.
func (s *Server) snapshotEntry(t uint8) []byte {
	switch t {
	case wire.SnapshotTest:
		return []byte("test\n")
	case wire.SnapshotServerLogs:
		return s.snapshotServerLogs()
	}
	out := &cappedText{max: snapshotEntryBytes}
	switch t {
	case wire.SnapshotFilesystemOverview:
		s.snapshotFilesystem(out)
	case wire.SnapshotProcessList:
		snapshotProcesses(out)
	case wire.SnapshotResourceUsage:
		s.snapshotResources(out)
	case wire.SnapshotServerConfig:
		current, err := config.EncodeCurrent(s.cfg, s.boundAddresses())
		if err != nil {
			out.printf("cannot encode the configuration: %v\n", err)
		}
		out.write(current)
	}
	return out.bytes()
}

// cappedText is an entry's text, cut at max bytes with a note.
type cappedText struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (t *cappedText) write(p []byte) {
	if t.cut {
		return
	}
	if room := t.max - t.buf.Len(); len(p) > room {
		t.buf.Write(p[:room])
		fmt.Fprintf(&t.buf, "\n[... cut at %d bytes ...]\n", t.max)
		t.cut = true
		return
	}
	t.buf.Write(p)
}

func (t *cappedText) printf(format string, args ...any) {
	if !t.cut {
		t.write(fmt.Appendf(nil, format, args...))
	}
}

// full reports whether the entry was cut (later writes are dropped).
func (t *cappedText) full() bool { return t.cut }

func (t *cappedText) bytes() []byte { return t.buf.Bytes() }

// procFile copies one /proc (or other small system) file under a header.
func (t *cappedText) procFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.printf("=== %s: %v ===\n\n", path, err)
		return
	}
	t.printf("=== %s ===\n", path)
	t.write(data)
	t.write([]byte("\n"))
}

// snapshotFilesystem lists the data directory (and the log directory
// when it lies elsewhere) like ls -la, and the space of its file system.
func (s *Server) snapshotFilesystem(out *cappedText) {
	dirs := []string{s.cfg.System.Path}
	if logs := s.logDirectory(); !strings.HasPrefix(logs, filepath.Clean(s.cfg.System.Path)+string(filepath.Separator)) {
		dirs = append(dirs, logs)
	}
	for _, root := range dirs {
		abs, _ := filepath.Abs(root)
		out.printf("=== %s ===\n%-11s %14s %-25s %s\n", abs, "mode", "bytes", "modified", "path")
		var files, directories, listed int
		var total int64
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				out.printf("%s: %v\n", path, err)
				return nil
			}
			info, err := d.Info()
			if err != nil {
				out.printf("%s: %v\n", path, err)
				return nil
			}
			if d.IsDir() {
				directories++
			} else {
				files++
				total += info.Size()
			}
			if listed < snapshotDirEntries {
				listed++
				rel, _ := filepath.Rel(root, path)
				out.printf("%-11s %14d %-25s %s\n", info.Mode(), info.Size(), info.ModTime().UTC().Format(time.RFC3339), rel)
			}
			return nil
		})
		if err != nil {
			out.printf("%s: %v\n", root, err)
		}
		out.printf("%d files (%d bytes) in %d directories; %d entries listed\n", files, total, directories, listed)
		var st unix.Statfs_t
		if err := unix.Statfs(root, &st); err == nil {
			bsize := uint64(st.Bsize)
			out.printf("file system: %d bytes, %d free, %d available to the server, %d inodes, %d free\n",
				st.Blocks*bsize, st.Bfree*bsize, st.Bavail*bsize, st.Files, st.Ffree)
		}
		out.printf("\n")
	}
	out.procFile("/proc/mounts")
}

// procStat is the part of /proc/<pid>/stat (or task/<tid>/stat) shown.
type procStat struct {
	comm                        string
	state                       string
	ppid                        int
	utime, stime                uint64 // clock ticks
	threads                     int
	start                       uint64 // clock ticks after boot
	vsize                       uint64 // bytes
	rss                         uint64 // pages
	processor                   int
	minorFaults, majorFaults    uint64
	priority, nice, sessionID   int
	processGroup, terminalGroup int
}

// parseProcStat parses a stat line; the command may hold spaces and
// parentheses, so it is what lies between the first '(' and the last ')'.
func parseProcStat(line string) (procStat, bool) {
	open, closing := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || closing < open {
		return procStat{}, false
	}
	f := strings.Fields(line[closing+1:])
	if len(f) < 37 {
		return procStat{}, false
	}
	n := func(i int) uint64 { v, _ := strconv.ParseUint(f[i], 10, 64); return v }
	i := func(i int) int { v, _ := strconv.Atoi(f[i]); return v }
	return procStat{comm: line[open+1 : closing], state: f[0], ppid: i(1), processGroup: i(2), sessionID: i(3),
		terminalGroup: i(5), minorFaults: n(7), majorFaults: n(9), utime: n(11), stime: n(12), priority: i(15),
		nice: i(16), threads: i(17), start: n(19), vsize: n(20), rss: n(21), processor: i(36)}, true
}

// snapshotProcesses is the process list: every process like ps aux
// (command names only), then this process in detail.
func snapshotProcesses(out *cappedText) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		out.printf("no process list on %s: %v\n", runtime.GOOS, err)
		return
	}
	page := uint64(os.Getpagesize())
	out.printf("=== Processes (ps aux; of processes other than this one only the command name is shown) ===\n")
	out.printf("%8s %8s %6s %5s %7s %12s %12s %10s %10s  %s\n", "PID", "PPID", "UID", "STATE", "THREADS", "RSS_KB", "VSZ_KB", "CPU_S", "START_S", "COMMAND")
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() {
			pids = append(pids, pid)
		}
	}
	sort.Ints(pids)
	for _, pid := range pids {
		if out.full() {
			break
		}
		dir := filepath.Join("/proc", strconv.Itoa(pid))
		raw, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue // the process ended
		}
		st, ok := parseProcStat(string(raw))
		if !ok {
			continue
		}
		uid := "?"
		var fi unix.Stat_t
		if unix.Stat(dir, &fi) == nil {
			uid = strconv.FormatUint(uint64(fi.Uid), 10)
		}
		command := st.comm
		if pid == self {
			command = selfCommandLine()
		}
		out.printf("%8d %8d %6s %5s %7d %12d %12d %10.2f %10.2f  %s\n", pid, st.ppid, uid, st.state, st.threads,
			st.rss*page/1024, st.vsize/1024, float64(st.utime+st.stime)/clockTicksPerSecond, float64(st.start)/clockTicksPerSecond, command)
	}
	out.printf("\n=== This process (pid %d) ===\ncommand line: %s\n", self, selfCommandLine())
	if raw, err := os.ReadFile("/proc/self/stat"); err == nil {
		if st, ok := parseProcStat(string(raw)); ok {
			out.printf("state %s, parent %d, process group %d, session %d, terminal group %d, priority %d, nice %d, threads %d\n",
				st.state, st.ppid, st.processGroup, st.sessionID, st.terminalGroup, st.priority, st.nice, st.threads)
			out.printf("faults minor %d major %d; cpu user %.2f s system %.2f s\n\n", st.minorFaults, st.majorFaults,
				float64(st.utime)/clockTicksPerSecond, float64(st.stime)/clockTicksPerSecond)
		}
	}
	for _, path := range []string{"/proc/self/status", "/proc/self/limits", "/proc/self/cgroup", "/proc/self/statm"} {
		out.procFile(path)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err == nil {
		out.printf("=== /proc/self/fd: %d open files ===\n", len(fds))
		for i, fd := range fds {
			if i == snapshotOpenFiles {
				out.printf("[... %d more ...]\n", len(fds)-i)
				break
			}
			target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
			if err != nil {
				target = "(" + err.Error() + ")"
			}
			out.printf("%s -> %s\n", fd.Name(), target)
		}
		out.printf("\n")
	}
	for _, path := range []string{"/proc/uptime", "/proc/loadavg", "/proc/version", "/proc/sys/kernel/pid_max", "/proc/net/sockstat", "/proc/net/sockstat6"} {
		out.procFile(path)
	}
}

// selfCommandLine is this process's arguments (the server takes no
// secret on its command line: secrets come from the environment).
func selfCommandLine() string {
	if raw, err := os.ReadFile("/proc/self/cmdline"); err == nil {
		return strings.TrimSpace(strings.ReplaceAll(string(raw), "\x00", " "))
	}
	return strings.Join(os.Args, " ")
}

// snapshotResources is the resource usage (Iggy runs top -H): the host's
// load and memory, the process's CPU, memory and IO, its threads, the Go
// runtime, the broker's figures and its metrics.
func (s *Server) snapshotResources(out *cappedText) {
	now := s.now()
	out.printf("=== Host ===\ncpus %d, GOMAXPROCS %d, os %s/%s\n", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	for _, path := range []string{"/proc/loadavg", "/proc/uptime", "/proc/meminfo", "/proc/pressure/cpu", "/proc/pressure/memory", "/proc/pressure/io"} {
		out.procFile(path)
	}
	if raw, err := os.ReadFile("/proc/stat"); err == nil {
		out.printf("=== /proc/stat (cpu lines) ===\n")
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "cpu") || strings.HasPrefix(line, "procs_") || strings.HasPrefix(line, "ctxt") {
				out.printf("%s\n", line)
			}
		}
		out.printf("\n")
	}
	out.printf("=== Process ===\n")
	var usage unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &usage) == nil {
		out.printf("cpu user %s system %s; max rss %d KiB; faults minor %d major %d; block in %d out %d; context switches voluntary %d involuntary %d\n",
			time.Duration(usage.Utime.Nano()), time.Duration(usage.Stime.Nano()), usage.Maxrss, usage.Minflt, usage.Majflt,
			usage.Inblock, usage.Oublock, usage.Nvcsw, usage.Nivcsw)
	}
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	out.printf("go: goroutines %d, heap in use %d, heap idle %d, heap released %d, from the os %d, stacks %d, gc cycles %d, gc pause total %s, next gc at %d\n",
		runtime.NumGoroutine(), mem.HeapInuse, mem.HeapIdle, mem.HeapReleased, mem.Sys, mem.StackSys, mem.NumGC,
		time.Duration(mem.PauseTotalNs), mem.NextGC)
	if s.pool != nil {
		st := s.pool.Stats()
		out.printf("memory pool: budget %d, owned %d, in use %d, cached %d, outside in use %d, hits %d, misses %d, outside allocations %d, evictions %d\n",
			st.BudgetBytes, st.BytesOwned, st.BytesInUse, st.BytesCached, st.OutsideBytesInUse, st.Hits, st.Misses, st.OutsideAllocations, st.Evictions)
	}
	out.procFile("/proc/self/io")
	if tasks, err := os.ReadDir("/proc/self/task"); err == nil {
		out.printf("=== Threads (top -H) ===\n%8s %5s %10s %10s %4s  %s\n", "TID", "STATE", "USER_S", "SYSTEM_S", "CPU", "NAME")
		for _, task := range tasks {
			raw, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "stat"))
			if err != nil {
				continue
			}
			if st, ok := parseProcStat(string(raw)); ok {
				out.printf("%8s %5s %10.2f %10.2f %4d  %s\n", task.Name(), st.state, float64(st.utime)/clockTicksPerSecond,
					float64(st.stime)/clockTicksPerSecond, st.processor, st.comm)
			}
		}
		out.printf("\n")
	}
	st := s.collectStats()
	out.printf("=== Broker ===\nversion %s, up %s (since %s), io engine %s, shards %d (%s)\n",
		st.ServerVersion, now.Sub(s.startedAt).Round(time.Second), s.startedAt.UTC().Format(time.RFC3339), s.engine, len(s.shards), s.shardIODescription())
	out.printf("streams %d, topics %d, partitions %d, segments %d, messages %d (%d bytes), clients %d, consumer groups %d\n",
		st.StreamsCount, st.TopicsCount, st.PartitionsCount, st.SegmentsCount, st.MessagesCount, st.MessagesSizeBytes, st.ClientsCount, st.ConsumerGroupsCount)
	out.printf("cpu %.1f %%, memory %d of %d (%d available), disk %d free of %d\n\n",
		st.CPUUsage, st.MemoryUsage, st.TotalMemory, st.AvailableMemory, st.FreeDiskSpace, st.TotalDiskSpace)
	families, err := s.metrics.registry.Gather()
	if err != nil {
		out.printf("metrics: %v\n", err)
	}
	out.printf("=== Metrics ===\n")
	for _, family := range families {
		var text bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&text, family); err == nil {
			out.write(text.Bytes())
		}
	}
}

// logDirectory is where the server log is written (NewLogger's path).
func (s *Server) logDirectory() string {
	dir := s.cfg.System.Logging.Path
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.cfg.System.Path, dir)
	}
	return filepath.Clean(dir)
}

// snapshotServerLogs is the log files, oldest first (Iggy: ls -tr | cat),
// of which the newest snapshotLogBytes are kept, each cut file starting at
// a line.
func (s *Server) snapshotServerLogs() []byte {
	dir := s.logDirectory()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Appendf(nil, "no server logs in %s: %v\n", dir, err)
	}
	type logFile struct {
		name string
		size int64
		mod  time.Time
	}
	var files []logFile
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		files = append(files, logFile{e.Name(), info.Size(), info.ModTime()})
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	budget := int64(snapshotLogBytes)
	parts := make([][]byte, len(files))
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		take := min(f.size, max(budget, 0))
		parts[i] = readLogTail(filepath.Join(dir, f.name), f.size, take)
		budget -= take
	}
	var out bytes.Buffer
	for i, f := range files {
		if len(parts[i]) == 0 && f.size > 0 {
			fmt.Fprintf(&out, "=== %s: %d bytes left out (older than the newest %d bytes) ===\n", f.name, f.size, snapshotLogBytes)
			continue
		}
		if len(parts[i]) < int(f.size) {
			fmt.Fprintf(&out, "=== %s: the last %d of %d bytes ===\n", f.name, len(parts[i]), f.size)
		} else {
			fmt.Fprintf(&out, "=== %s ===\n", f.name)
		}
		out.Write(parts[i])
	}
	return out.Bytes()
}

// readLogTail reads the last take bytes of a file of size bytes, from the
// first line that starts inside them.
func readLogTail(path string, size, take int64) []byte {
	if take <= 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Appendf(nil, "%v\n", err)
	}
	defer f.Close()
	buf := make([]byte, take)
	n, err := f.ReadAt(buf, size-take)
	buf = buf[:n]
	if err != nil && n == 0 {
		return fmt.Appendf(nil, "%v\n", err)
	}
	if take < size {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	return buf
}
