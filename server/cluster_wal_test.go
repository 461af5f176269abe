package server_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeebo/xxh3"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// The prepare WAL of persisted multi-replica partitions (partition_wal.go)
// through the in-process cluster: every replica's data lives on its own
// power-loss file system (memfs, which loses every unsynced write on a
// crash), and a power loss of every replica at once must keep every
// acknowledged message and offset of a topic with a persisted policy.

// walTestEnv makes the WAL small: 256 KiB of wal_bytes_max gives prepare
// slots of 128 KiB, and with 32 journal slots the file holds 4 MiB.
var walTestEnv = []string{"STRATA_PARTITION_WAL_BYTES_MAX=256 KiB"}

// errPowerOff is what a powered-off disk answers.
var errPowerOff = errors.New("power off")

// powerFS is memfs behind one lock, with a power switch: powerOff drops
// every unsynced write (memfs.Crash) and fails every later call, so that
// nothing the dying server does afterwards (its shutdown's flushes and
// syncs) reaches the disk; powerOn serves the survivors to a new server.
type powerFS struct {
	mu  sync.Mutex
	fs  *memfs.FS
	off bool
}

func newPowerFSs(n int) []storage.FS {
	out := make([]storage.FS, n)
	for i := range out {
		out[i] = &powerFS{fs: memfs.New()}
	}
	return out
}

func (p *powerFS) powerOff() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fs.Crash()
	p.off = true
}

func (p *powerFS) powerOn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.off = false
}

func (p *powerFS) do(f func() error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off {
		return errPowerOff
	}
	return f()
}

func (p *powerFS) open(open func(string) (storage.File, error), name string) (storage.File, error) {
	var f storage.File
	err := p.do(func() (err error) { f, err = open(name); return err })
	if err != nil {
		return nil, err
	}
	return &powerFile{p: p, f: f}, nil
}

func (p *powerFS) Create(name string) (storage.File, error) { return p.open(p.fs.Create, name) }
func (p *powerFS) OpenReadWrite(name string) (storage.File, error) {
	return p.open(p.fs.OpenReadWrite, name)
}
func (p *powerFS) Open(name string) (storage.File, error) { return p.open(p.fs.Open, name) }
func (p *powerFS) MkdirAll(name string) error {
	return p.do(func() error { return p.fs.MkdirAll(name) })
}
func (p *powerFS) Remove(name string) error { return p.do(func() error { return p.fs.Remove(name) }) }
func (p *powerFS) RemoveAll(name string) error {
	return p.do(func() error { return p.fs.RemoveAll(name) })
}
func (p *powerFS) Rename(a, b string) error  { return p.do(func() error { return p.fs.Rename(a, b) }) }
func (p *powerFS) SyncDir(name string) error { return p.do(func() error { return p.fs.SyncDir(name) }) }

func (p *powerFS) ReadDir(name string) (out []storage.DirEntry, err error) {
	err = p.do(func() (err error) { out, err = p.fs.ReadDir(name); return err })
	return out, err
}

func (p *powerFS) Stat(name string) (out storage.FileInfo, err error) {
	err = p.do(func() (err error) { out, err = p.fs.Stat(name); return err })
	return out, err
}

// readFile returns a file's current bytes.
func (p *powerFS) readFile(name string) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fs.ReadFile(name)
}

type powerFile struct {
	p *powerFS
	f storage.File
}

func (f *powerFile) ReadAt(b []byte, off int64) (n int, err error) {
	err = f.p.do(func() (err error) { n, err = f.f.ReadAt(b, off); return err })
	return n, err
}

func (f *powerFile) WriteAt(b []byte, off int64) (n int, err error) {
	err = f.p.do(func() (err error) { n, err = f.f.WriteAt(b, off); return err })
	return n, err
}

func (f *powerFile) Append(b []byte) (n int, err error) {
	err = f.p.do(func() (err error) { n, err = f.f.Append(b); return err })
	return n, err
}

func (f *powerFile) AppendVector(b [][]byte) (n int, err error) {
	err = f.p.do(func() (err error) { n, err = f.f.AppendVector(b); return err })
	return n, err
}

func (f *powerFile) Size() (n int64, err error) {
	err = f.p.do(func() (err error) { n, err = f.f.Size(); return err })
	return n, err
}

func (f *powerFile) Truncate(n int64) error { return f.p.do(func() error { return f.f.Truncate(n) }) }
func (f *powerFile) Sync() error            { return f.p.do(func() error { return f.f.Sync() }) }

func (f *powerFile) Close() error {
	f.p.mu.Lock()
	defer f.p.mu.Unlock()
	_ = f.f.Close() // a handle from before a crash is stale: nothing to lose
	return nil
}

// powerLossAll cuts the power of every replica at once and shuts the
// servers down on the dead disks (their errors are expected), then powers
// the disks on again.
func (c *testCluster) powerLossAll() {
	c.t.Helper()
	for _, fs := range c.fss {
		fs.(*powerFS).powerOff()
	}
	for i, node := range c.nodes {
		if node == nil {
			continue
		}
		c.nodes[i] = nil
		c.bus.nodes[i].srv.Store(nil)
		_ = node.client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_ = node.srv.Shutdown(ctx) // the disk is gone: errors are expected
		cancel()
	}
	for _, fs := range c.fss {
		fs.(*powerFS).powerOn()
	}
}

// TestClusterPersistedSurvivesPowerLossOfEveryReplica: a topic with
// durability=persisted on three replicas, sends acknowledged through the
// primaries of two partitions, then a power loss of all three servers at
// once, with no clean flush (the segments' unsynced tails and everything
// the shutdown would write are gone). After a restart of all three every
// acknowledged message is at its offset: it was in a quorum's prepare
// WAL, durable before PrepareOk, whatever reached a segment. The journal
// window (32 slots) and descriptor checkpoints (every 8 ops) wrap the WAL
// several times, so reclaimed history is covered by synced segments.
// Without the WAL (replicated consensus under a persisted topic) the
// restarted groups lose their acknowledged tail.
func TestClusterPersistedSurvivesPowerLossOfEveryReplica(t *testing.T) {
	const partitions = 2
	fss := newPowerFSs(3)
	c := startClusterOn(t, 3, server.ClusterOptions{JournalSlots: 32, CheckpointEveryOps: 8}, fss, walTestEnv)
	c.createTopic(partitions, client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted)))
	acked := make([][]ackedMessage, partitions)
	for b := 0; b < 50; b++ {
		for p := uint32(0); p < partitions; p++ {
			acked[p] = append(acked[p], c.send(p, fmt.Sprintf("b%d", b), 4)...)
		}
	}
	c.powerLossAll()
	for i := range c.nodes {
		c.start(i)
	}
	for p := uint32(0); p < partitions; p++ {
		c.checkPoll(c.settledPrimary(p), p, acked[p])
	}
	for i := range fss {
		name := path.Join(c.dirs[i], "streams/0/topics/0/partitions/0/prepares.wal")
		if image, ok := fss[i].(*powerFS).readFile(name); !ok || string(image[:4]) != "SPWL" {
			t.Fatalf("replica %d keeps no prepare WAL %s", i, name)
		}
	}
}

// settledPrimary waits for a serving primary of partition p that has
// committed its whole log: a primary that just took over a view knows the
// ops of its log, but commits those the old view committed only as it
// replicates them again (a poll serves the commit frontier, never
// beyond).
func (c *testCluster) settledPrimary(p uint32) int {
	c.t.Helper()
	found := -1
	c.waitFor(fmt.Sprintf("a settled primary of partition %d", p), func() bool {
		for i := range c.nodes {
			if st, ok := c.status(i, p); ok && st.Serving && st.CommitNumber == st.OpNumber {
				found = i
				return true
			}
		}
		return false
	})
	st, _ := c.status(found, p)
	c.t.Logf("p%d: primary %d %+v", p, found, st)
	return found
}

// TestClusterPersistedOffsetsSurvivePowerLoss: consumer_offset_durability
// = persisted with replicated messages still journals the partition's
// ops, message payloads included (a durable offset's predecessors must be
// recoverable): after a power loss of every replica the stored offset is
// back and so is every message below it.
func TestClusterPersistedOffsetsSurvivePowerLoss(t *testing.T) {
	fss := newPowerFSs(3)
	c := startClusterOn(t, 3, server.ClusterOptions{JournalSlots: 32, CheckpointEveryOps: 8}, fss, walTestEnv)
	c.createTopic(1, client.Options{}.With(client.OptionConsumerOffsetDurability, client.StringValue(client.DurabilityPersisted)))
	var acked []ackedMessage
	for b := 0; b < 12; b++ {
		acked = append(acked, c.send(0, fmt.Sprintf("b%d", b), 3)...)
	}
	consumer := client.IndividualConsumer(client.ID(7))
	stored := uint64(len(acked) - 1)
	if err := c.nodes[c.primary(0)].client.StoreConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0, stored); err != nil {
		t.Fatal(err)
	}
	c.powerLossAll()
	for i := range c.nodes {
		c.start(i)
	}
	leader := c.settledPrimary(0)
	got, err := c.nodes[leader].client.GetConsumerOffset(ctx(t), consumer, client.ID(0), client.ID(0), 0)
	if err != nil || got.StoredOffset != stored {
		t.Fatalf("stored offset after the power loss: %+v, %v; want %d", got, err, stored)
	}
	c.checkPoll(leader, 0, acked)
}

// TestClusterWALBytesMaxPushesBack: with both backups of a persisted
// partition down nothing commits, so the primary's prepares and queued
// requests stay above its checkpoint; `[partition] wal_bytes_max` (256
// KiB here) bounds them, and the sends beyond it are answered 58
// TransientNotAccepted (overloaded, retry), not queued without bound nor
// accepted with less durability. Once the backups are back the accepted
// sends commit and are all there.
func TestClusterWALBytesMaxPushesBack(t *testing.T) {
	c := startClusterOn(t, 3, server.ClusterOptions{JournalSlots: 32, CheckpointEveryOps: 8}, nil, walTestEnv)
	c.createTopic(1, client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted)))
	c.send(0, "warm", 1)
	leader := c.primary(0)
	for i := range c.nodes {
		if i != leader {
			c.stop(i)
		}
	}
	const senders = 16
	payload := strings.Repeat("x", 40<<10)
	type outcome struct {
		base uint64
		err  error
		tag  string
	}
	results := make(chan outcome, senders)
	addr := c.nodes[leader].srv.TCPAddr().String()
	for s := 0; s < senders; s++ {
		go func(s int) {
			cl, err := client.Dial(ctx(t), addr, client.WithTransientBackoff(time.Millisecond))
			if err == nil {
				defer cl.Close()
				_, err = cl.LoginUser(ctx(t), "iggy", "iggy")
			}
			if err != nil {
				results <- outcome{err: err}
				return
			}
			tag := fmt.Sprintf("s%d-", s)
			conf, err := cl.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte(tag + payload)}})
			if err == nil && len(conf) == 1 {
				results <- outcome{base: conf[0].BaseOffset, tag: tag}
				return
			}
			results <- outcome{err: err, tag: tag}
		}(s)
	}
	// A sender is either pushed back (58, its retries exhausted) or waits
	// for a commit, which cannot come: wait for the first pushed back,
	// then bring the backups back so the others commit.
	var pushedBack, answered int
	var acked []ackedMessage
	collect := func(o outcome) {
		answered++
		switch {
		case o.err == nil:
			acked = append(acked, ackedMessage{o.base, o.tag + payload})
		case client.CodeOf(o.err) == wire.ErrTransientNotAccepted:
			pushedBack++
		default:
			t.Errorf("send %s: %v", o.tag, o.err)
		}
	}
	deadline := time.After(clusterWait)
	for pushedBack == 0 {
		select {
		case o := <-results:
			collect(o)
		case <-deadline:
			t.Fatalf("wal_bytes_max of 256 KiB held %d sends of 40 KiB with no quorum without pushing one back", senders-answered)
		}
	}
	if len(acked) > 0 {
		t.Fatalf("%d sends acknowledged with both backups down", len(acked))
	}
	for i := range c.nodes {
		if c.nodes[i] == nil {
			c.start(i)
		}
	}
	for answered < senders {
		select {
		case o := <-results:
			collect(o)
		case <-time.After(clusterWait):
			t.Fatalf("%d sends never answered after the backups returned", senders-answered)
		}
	}
	t.Logf("%d sends of 40 KiB at once with no quorum and wal_bytes_max 256 KiB: %d pushed back (58), %d acknowledged once the backups returned", senders, pushedBack, len(acked))
	c.checkPoll(c.settledPrimary(0), 0, acked)
}

// TestClusterWALOtherVersionRefused: a partition's prepares.wal of another
// format version is refused at boot, naming the file and both versions,
// never reformatted (its prepares may be the only copy of acknowledged
// messages).
func TestClusterWALOtherVersionRefused(t *testing.T) {
	fss := newPowerFSs(3)
	c := startClusterOn(t, 3, server.ClusterOptions{JournalSlots: 32}, fss, walTestEnv)
	c.createTopic(1, client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted)))
	c.send(0, "kept", 1)
	for i := range c.nodes {
		c.stop(i)
	}
	fs := fss[0].(*powerFS)
	name := path.Join(c.dirs[0], "streams/0/topics/0/partitions/0/prepares.wal")
	f, err := fs.OpenReadWrite(name)
	if err != nil {
		t.Fatal(err)
	}
	hdr := make([]byte, 4096)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		t.Fatal(err)
	}
	if string(hdr[:4]) != "SPWL" || binary.LittleEndian.Uint16(hdr[4:]) != 1 {
		t.Fatalf("prepares.wal header %q version %d", hdr[:4], binary.LittleEndian.Uint16(hdr[4:]))
	}
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint64(hdr[56:], xxh3.Hash(hdr[:56]))
	if _, err := f.WriteAt(hdr, 0); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load("", append([]string{"STRATA_SYSTEM_PATH=" + c.dirs[0], "STRATA_TCP_ADDRESS=127.0.0.1:0"}, walTestEnv...))
	if err != nil {
		t.Fatal(err)
	}
	opts := c.opts
	opts.ReplicaIndex, opts.Transport = 0, c.bus.port(0)
	srv, err := server.New(server.Options{Config: cfg, FS: fs, Logger: zap.NewNop(), Root: server.RootCredentials{Username: "iggy", Password: "iggy"}, Cluster: opts})
	if err == nil {
		_ = srv.Shutdown(context.Background())
		t.Fatal("a prepare WAL of version 2 was opened")
	}
	for _, want := range []string{"prepares.wal", "format version 2", "reads version 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("boot error %q does not say %q", err, want)
		}
	}
}
