package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
	"github.com/stratabroker/strata/vsr"
)

// The disks of the ack-semantics tests (ack_semantics_test.go): an
// in-process cluster (cluster_harness_test.go) whose servers run on the
// in-memory file system, one disk each, that can crash, lose power or be
// corrupted.

// ackDisk is one server's disk: a memfs every file call of the server
// reaches under one lock, through the process (procFS) that runs now.
type ackDisk struct {
	mu sync.Mutex
	fs *memfs.FS
	// failCreate, if set, fails the creation of the files it returns
	// true for; skipSync, if set, makes the Syncs of the files it returns
	// true for report success without syncing (a disk whose cache lies).
	// Both run under mu.
	failCreate, skipSync func(path string) bool
}

// errProcessGone is what a crashed process's file calls get: none of
// them reaches the disk.
var errProcessGone = errors.New("the process crashed")

// procFS is the disk as one process sees it; dead once it crashed.
type procFS struct {
	d    *ackDisk
	dead bool // guarded by d.mu
}

// crash cuts the process off the disk: no call after it changes anything.
func (p *procFS) crash(powerLoss bool) {
	p.d.mu.Lock()
	defer p.d.mu.Unlock()
	p.dead = true
	if powerLoss {
		p.d.fs.Crash()
	}
}

func (p *procFS) lock() error {
	p.d.mu.Lock()
	if p.dead {
		p.d.mu.Unlock()
		return errProcessGone
	}
	return nil
}

func (p *procFS) file(path string, f storage.File, err error) (storage.File, error) {
	if err != nil {
		return nil, err
	}
	return &procFile{p: p, f: f, path: path}, nil
}

// errInjected is the failure of a file call a test injected.
var errInjected = errors.New("injected failure")

func (p *procFS) Create(path string) (storage.File, error) {
	if err := p.lock(); err != nil {
		return nil, err
	}
	defer p.d.mu.Unlock()
	if p.d.failCreate != nil && p.d.failCreate(path) {
		return nil, fmt.Errorf("create %s: %w", path, errInjected)
	}
	f, err := p.d.fs.Create(path)
	return p.file(path, f, err)
}

func (p *procFS) OpenReadWrite(path string) (storage.File, error) {
	if err := p.lock(); err != nil {
		return nil, err
	}
	defer p.d.mu.Unlock()
	f, err := p.d.fs.OpenReadWrite(path)
	return p.file(path, f, err)
}

func (p *procFS) Open(path string) (storage.File, error) {
	if err := p.lock(); err != nil {
		return nil, err
	}
	defer p.d.mu.Unlock()
	f, err := p.d.fs.Open(path)
	return p.file(path, f, err)
}

func (p *procFS) MkdirAll(path string) error {
	if err := p.lock(); err != nil {
		return err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.MkdirAll(path)
}

func (p *procFS) Remove(path string) error {
	if err := p.lock(); err != nil {
		return err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.Remove(path)
}

func (p *procFS) RemoveAll(path string) error {
	if err := p.lock(); err != nil {
		return err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.RemoveAll(path)
}

func (p *procFS) Rename(a, b string) error {
	if err := p.lock(); err != nil {
		return err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.Rename(a, b)
}

func (p *procFS) ReadDir(path string) ([]storage.DirEntry, error) {
	if err := p.lock(); err != nil {
		return nil, err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.ReadDir(path)
}

func (p *procFS) Stat(path string) (storage.FileInfo, error) {
	if err := p.lock(); err != nil {
		return storage.FileInfo{}, err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.Stat(path)
}

func (p *procFS) SyncDir(path string) error {
	if err := p.lock(); err != nil {
		return err
	}
	defer p.d.mu.Unlock()
	return p.d.fs.SyncDir(path)
}

type procFile struct {
	p    *procFS
	f    storage.File
	path string
}

func (f *procFile) ReadAt(b []byte, off int64) (int, error) {
	if err := f.p.lock(); err != nil {
		return 0, err
	}
	defer f.p.d.mu.Unlock()
	return f.f.ReadAt(b, off)
}

func (f *procFile) WriteAt(b []byte, off int64) (int, error) {
	if err := f.p.lock(); err != nil {
		return 0, err
	}
	defer f.p.d.mu.Unlock()
	return f.f.WriteAt(b, off)
}

func (f *procFile) Append(b []byte) (int, error) {
	if err := f.p.lock(); err != nil {
		return 0, err
	}
	defer f.p.d.mu.Unlock()
	return f.f.Append(b)
}

func (f *procFile) AppendVector(b [][]byte) (int, error) {
	if err := f.p.lock(); err != nil {
		return 0, err
	}
	defer f.p.d.mu.Unlock()
	return f.f.AppendVector(b)
}

func (f *procFile) Truncate(n int64) error {
	if err := f.p.lock(); err != nil {
		return err
	}
	defer f.p.d.mu.Unlock()
	return f.f.Truncate(n)
}

func (f *procFile) Sync() error {
	if err := f.p.lock(); err != nil {
		return err
	}
	defer f.p.d.mu.Unlock()
	if f.p.d.skipSync != nil && f.p.d.skipSync(f.path) {
		return nil
	}
	return f.f.Sync()
}

func (f *procFile) Size() (int64, error) {
	if err := f.p.lock(); err != nil {
		return 0, err
	}
	defer f.p.d.mu.Unlock()
	return f.f.Size()
}

func (f *procFile) Close() error {
	if err := f.p.lock(); err != nil {
		return err
	}
	defer f.p.d.mu.Unlock()
	return f.f.Close()
}

// ackDataDir is every server's data directory on its own disk.
const ackDataDir = "/data"

// ackCluster is an in-process cluster (cluster_harness_test.go) whose
// servers run on in-memory disks that can crash, lose power or be
// corrupted.
type ackCluster struct {
	*testCluster
	disks []*ackDisk
	procs []*procFS
	// bootHook, when set, sees every server booted before it starts.
	bootHook func(*server.Server)
}

// startAckCluster starts n servers, each on a fresh disk.
func startAckCluster(t *testing.T, n int, opts server.ClusterOptions) *ackCluster {
	t.Helper()
	c := &ackCluster{testCluster: &testCluster{t: t, bus: newMemBus(t, n), opts: opts, nodes: make([]*clusterNode, n)}}
	c.opts.ReplicaCount = uint8(n)
	if c.opts.TickInterval == 0 {
		c.opts.TickInterval = 10 * time.Millisecond
	}
	for i := 0; i < n; i++ {
		c.dirs = append(c.dirs, ackDataDir)
		c.disks = append(c.disks, &ackDisk{fs: memfs.New()})
		c.procs = append(c.procs, nil)
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	for i := 0; i < n; i++ {
		c.boot(i)
	}
	return c
}

// boot starts replica i as a new process on its disk (what the harness's
// start does over an OS directory).
func (c *ackCluster) boot(i int) {
	c.t.Helper()
	if err := c.tryBoot(i); err != nil {
		c.t.Fatal(err)
	}
}

// tryBoot is boot, returning why the server did not start. The prepare
// WAL of a persisted topic is kept small (wal_bytes_max 1 MiB: 512 KiB
// slots): its file is sparse on a real disk, but memfs holds every byte up
// to the last slot written.
func (c *ackCluster) tryBoot(i int) error {
	cfg, err := config.Load("", append([]string{"STRATA_SYSTEM_PATH=" + ackDataDir, "STRATA_TCP_ADDRESS=127.0.0.1:0", "STRATA_PARTITION_WAL_BYTES_MAX=1 MiB"}, engineEnv()...))
	if err != nil {
		return err
	}
	logs := &logBuffer{}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), logs, zapcore.InfoLevel)
	opts := c.opts
	opts.ReplicaIndex, opts.Transport = uint8(i), c.bus.port(uint8(i))
	c.procs[i] = &procFS{d: c.disks[i]}
	srv, err := server.New(server.Options{Config: cfg, FS: c.procs[i], Logger: zap.New(core),
		Root: server.RootCredentials{Username: "iggy", Password: "iggy"}, Cluster: opts})
	if err != nil {
		return fmt.Errorf("replica %d: server.New: %w", i, err)
	}
	if c.bootHook != nil {
		c.bootHook(srv)
	}
	c.bus.nodes[i].srv.Store(srv)
	if err := srv.Start(); err != nil {
		c.bus.nodes[i].srv.Store(nil)
		_ = srv.Shutdown(context.Background())
		return fmt.Errorf("replica %d: Start: %w", i, err)
	}
	dialCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.nodes[i] = &clusterNode{srv: srv, client: nil, logs: logs}
	cl, err := client.Dial(dialCtx, srv.TCPAddr().String(), client.WithTransientBackoff(time.Millisecond))
	if err != nil {
		return fmt.Errorf("replica %d: dial: %w", i, err)
	}
	c.nodes[i].client = cl
	if _, err := cl.LoginUser(dialCtx, "iggy", "iggy"); err != nil {
		return fmt.Errorf("replica %d: login: %w", i, err)
	}
	return nil
}

// crash kills replica i's process (and with powerLoss its machine's
// power): it is cut off its disk and the replica plane at once; what is
// left of the server is then torn down, with nothing reaching the disk.
func (c *ackCluster) crash(i int, powerLoss bool) {
	node := c.nodes[i]
	if node == nil {
		return
	}
	c.bus.nodes[i].srv.Store(nil)
	c.procs[i].crash(powerLoss)
	c.nodes[i] = nil
	_ = node.client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = node.srv.Shutdown(ctx) // errors: its file calls fail, as a dead process's
}

// corrupt flips one byte of a file of replica i's disk (down) at
// offset, durably; a negative offset counts from the end.
func (c *ackCluster) corrupt(i int, path string, offset int64) {
	c.t.Helper()
	d := c.disks[i]
	d.mu.Lock()
	defer d.mu.Unlock()
	data, ok := d.fs.ReadFile(path)
	if !ok {
		c.t.Fatalf("replica %d: no file %s", i, path)
	}
	if offset < 0 {
		offset += int64(len(data))
	}
	if !d.fs.Corrupt(path, offset, 0x5a) {
		c.t.Fatalf("replica %d: %s has no byte %d (%d bytes)", i, path, offset, len(data))
	}
	c.t.Logf("replica %d: flipped byte %d of %s (%d bytes)", i, offset, path, len(data))
}

// fileSize is the size of path on replica i's disk (0 when missing).
func (c *ackCluster) fileSize(i int, path string) int {
	d := c.disks[i]
	d.mu.Lock()
	defer d.mu.Unlock()
	data, _ := d.fs.ReadFile(path)
	return len(data)
}

// ackPartitionDir is partition p of stream 0's topic 0.
func ackPartitionDir(p uint32) string {
	return fmt.Sprintf("%s/streams/0/topics/0/partitions/%d", ackDataDir, p)
}

// waitApplied waits until every running replica of partition p applied
// up to offset next.
func (c *testCluster) waitApplied(p uint32, next uint64) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("every replica of p%d to apply up to offset %d", p, next), func() bool {
		for i := range c.nodes {
			if c.nodes[i] == nil {
				continue
			}
			if st, ok := c.status(i, p); !ok || st.NextOffset < next {
				return false
			}
		}
		return true
	})
}

// waitCaughtUp waits until replica i of partition p is normal and holds
// what the primary holds.
func (c *testCluster) waitCaughtUp(i int, p uint32) {
	c.t.Helper()
	leader := c.primary(p)
	ls, _ := c.status(leader, p)
	c.waitFor(fmt.Sprintf("replica %d p%d to catch up", i, p), func() bool {
		st, ok := c.status(i, p)
		return ok && st.Status == vsr.StatusNormal && st.CommitNumber >= ls.CommitNumber && st.NextOffset >= ls.NextOffset
	})
}
