package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"testing"

	"github.com/zeebo/xxh3"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
	"github.com/stratabroker/strata/vsr"
)

// newTestSuperblockStore opens the node superblock file of root on fsys
// with one shard that is never started: storages opened on it sync in
// place (their group is not opened).
func newTestSuperblockStore(t testing.TB, fsys storage.FS, root string) (*superblockStore, *shard.Shard) {
	t.Helper()
	sh, err := shard.New(shard.Config{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := openSuperblockStore(fsys, root, []*shard.Shard{sh}, []storage.FS{fsys}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return store, sh
}

// TestSlotHeaderDecoder: a slot header decodes only at its own index,
// with its checksum; zeros are a free slot; every damaged byte of an
// encoded header is refused, never read as another group's slot.
func TestSlotHeaderDecoder(t *testing.T) {
	sector := make([]byte, sbSlotHeaderSize)
	if h, err := decodeSlotHeader(sector, 3); err != nil || h.state != slotFree {
		t.Fatalf("zeros: %+v %v", h, err)
	}
	want := slotHeader{state: slotAllocated, group: 1<<40 | 5<<20 | 7, index: 3}
	encodeSlotHeader(want, sector)
	if h, err := decodeSlotHeader(sector, 3); err != nil || h != want {
		t.Fatalf("round trip: %+v %v", h, err)
	}
	if _, err := decodeSlotHeader(sector, 4); !errors.Is(err, errSlotHeader) {
		t.Fatalf("the header of slot 3 read at slot 4: %v", err)
	}
	for i := range sbHeaderBytes {
		for _, mask := range []byte{0x01, 0x80} {
			damaged := bytes.Clone(sector)
			damaged[i] ^= mask
			if h, err := decodeSlotHeader(damaged, 3); err == nil {
				t.Fatalf("byte %d flipped by %#x decoded as %+v", i, mask, h)
			}
		}
	}
	if _, err := decodeSlotHeader(sector[:10], 3); err == nil {
		t.Fatal("a short header decoded")
	}
	hdr := encodeSBFileHeader(2 * vsr.SectorSize)
	if z, err := decodeSBFileHeader(hdr); err != nil || z != 2*vsr.SectorSize {
		t.Fatalf("file header: %d %v", z, err)
	}
}

// FuzzSuperblockSlotHeader: the decoders of the node superblock file's
// headers never panic on bytes from disk, and a slot header that decodes
// re-encodes to the same bytes (so no two byte strings name one slot).
func FuzzSuperblockSlotHeader(f *testing.F) {
	sector := make([]byte, sbSlotHeaderSize)
	encodeSlotHeader(slotHeader{state: slotAllocated, group: 42, index: 1}, sector)
	f.Add(sector[:sbHeaderBytes], uint32(1))
	encodeSlotHeader(slotHeader{state: slotTombstone, group: 1<<63 - 1, index: 9}, sector)
	f.Add(sector[:sbHeaderBytes], uint32(9))
	f.Add(encodeSBFileHeader(2 * vsr.SectorSize)[:sbHeaderBytes], uint32(0))
	f.Add(make([]byte, sbHeaderBytes), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, index uint32) {
		_, _ = decodeSBFileHeader(data)
		h, err := decodeSlotHeader(data, index)
		if err != nil || h.state == slotFree {
			return
		}
		if h.index != index {
			t.Fatalf("slot %d decoded a header of slot %d", index, h.index)
		}
		again := make([]byte, sbSlotHeaderSize)
		encodeSlotHeader(h, again)
		if !bytes.Equal(again[:sbHeaderBytes], data[:sbHeaderBytes]) {
			t.Fatalf("%+v re-encodes differently", h)
		}
	})
}

// TestSuperblockStoreSlots: slots are found again at boot, a deleted
// group's slot is reused (cleared) by the next, a damaged slot header or
// two headers naming one group make that group's superblock lost (never
// another group's slot), and a file of another version is refused,
// naming file and version.
func TestSuperblockStoreSlots(t *testing.T) {
	fs := memfs.New()
	store, owner := newTestSuperblockStore(t, fs, "/data")
	acquire := func(s *superblockStore, group uint64, fresh bool) (*superblockSlot, bool) {
		t.Helper()
		slot, lost, _, err := s.acquire(owner, group, fresh, false)
		if err != nil {
			t.Fatal(err)
		}
		return slot, lost
	}
	a, _ := acquire(store, 10, true)
	b, _ := acquire(store, 11, true)
	if err := b.writeZone(0, bytes.Repeat([]byte{0xb}, vsr.SectorSize)); err != nil {
		t.Fatal(err)
	}
	if err := b.sh.file.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := b.release(); err != nil {
		t.Fatal(err)
	}
	if err := b.writeZone(0, make([]byte, vsr.SectorSize)); err == nil {
		t.Fatal("a released slot took a write")
	}
	c, lost := acquire(store, 12, true)
	if c.index != b.index || lost {
		t.Fatalf("group 12 got slot %d (lost %v), want the released slot %d", c.index, lost, b.index)
	}
	buf := make([]byte, vsr.SectorSize)
	if err := c.readZone(0, buf); err != nil || !bytes.Equal(buf, make([]byte, vsr.SectorSize)) {
		t.Fatalf("the reused slot was not cleared: %v", err)
	}
	fs.Crash()

	reopen := func() *superblockStore {
		t.Helper()
		s, _ := newTestSuperblockStore(t, fs, "/data")
		return s
	}
	s2 := reopen()
	if got, ok := s2.slots[10]; !ok || got != a.index {
		t.Fatalf("group 10 at slot %d (%v), want %d", got, ok, a.index)
	}
	if _, ok := s2.slots[11]; ok {
		t.Fatal("the deleted group 11 still has a slot")
	}
	if got := s2.slots[12]; got != c.index {
		t.Fatalf("group 12 at slot %d, want %d", got, c.index)
	}

	// Group 10's header damaged: its slot is left alone, and group 10
	// (its consensus.vsr exists) finds its superblock lost in another.
	if !fs.Corrupt(store.name, store.headerOffset(a.index)+9, 0x01) {
		t.Fatal("corrupt")
	}
	s3 := reopen()
	if _, ok := s3.slots[10]; ok {
		t.Fatal("a damaged slot header was mapped")
	}
	slot, lost := acquire(s3, 10, false)
	if !lost || slot.index == a.index {
		t.Fatalf("group 10 without a slot: lost %v in slot %d (the damaged one is %d)", lost, slot.index, a.index)
	}
	image := make([]byte, s3.zoneSize)
	if err := slot.readZone(0, image); err != nil || !bytes.Equal(image, lostZoneImage(s3.zoneSize)) {
		t.Fatalf("the lost group's slot does not read as lost: %v", err)
	}

	// A header copied to another slot (a misdirected write) is refused
	// there; two valid headers naming one group: neither is used.
	data, _ := fs.ReadFile(store.name)
	hdr := data[store.headerOffset(c.index) : store.headerOffset(c.index)+sbSlotHeaderSize]
	if _, err := decodeSlotHeader(hdr, slot.index); err == nil {
		t.Fatal("a header decoded at another slot")
	}
	other := make([]byte, sbSlotHeaderSize)
	encodeSlotHeader(slotHeader{state: slotAllocated, group: 12, index: slot.index}, other)
	f, err := fs.OpenReadWrite(store.name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(other, store.headerOffset(slot.index)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	s4 := reopen()
	if _, ok := s4.slots[12]; ok || len(s4.conflicts[12]) != 2 {
		t.Fatalf("two slots naming group 12: mapped %v, conflict %v", ok, s4.conflicts[12])
	}
	fresh, lost := acquire(s4, 12, false)
	if !lost {
		t.Fatal("a group two slots claim was not lost")
	}
	// The next boot finds only its new slot, still lost until written.
	s5 := reopen()
	if got, ok := s5.slots[12]; !ok || got != fresh.index || len(s5.conflicts[12]) != 0 {
		t.Fatalf("after the conflict: group 12 at %d (%v), want %d; conflicts %v", got, ok, fresh.index, s5.conflicts[12])
	}

	// Another version.
	fileHdr := encodeSBFileHeader(store.zoneSize)
	fileHdr[4] = 7
	binary.LittleEndian.PutUint64(fileHdr[56:], xxh3.Hash(fileHdr[:56]))
	if _, err := f.WriteAt(fileHdr, 0); err != nil {
		t.Fatal(err)
	}
	sh, _ := shard.New(shard.Config{})
	_, err = openSuperblockStore(fs, "/data", []*shard.Shard{sh}, []storage.FS{fs}, zap.NewNop())
	for _, want := range []string{sbFileName, "format version 7", fmt.Sprintf("reads version %d", sbFileVersion)} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Fatalf("boot error %v does not say %q", err, want)
		}
	}
	_ = f.Close()
}

// TestSuperblockLostAllocationIsCrashSafe: the slot given to a group
// that lost its superblock reads as lost after a power cut at any of its
// file operations, clean or torn: never as fresh storage (blank), which
// would make a replica that lost its memory a new one.
func TestSuperblockLostAllocationIsCrashSafe(t *testing.T) {
	const root, group = "/data", 99
	for _, torn := range []bool{false, true} {
		for cutAt := 0; ; cutAt++ {
			mem := memfs.New()
			store, owner := newTestSuperblockStore(t, mem, root)
			// An earlier group's slot, tombstoned: its image is not blank.
			old, _, _, err := store.acquire(owner, 7, true, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := old.writeZone(0, bytes.Repeat([]byte{7}, vsr.SectorSize)); err != nil {
				t.Fatal(err)
			}
			if err := old.release(); err != nil {
				t.Fatal(err)
			}
			fsys := &cutFS{FS: mem, left: cutAt}
			if torn {
				fsys.torn = store.name
			}
			cut, _ := newTestSuperblockStoreErr(fsys, root)
			if cut != nil {
				_, _, _, _ = cut.acquire(cut.shards[0].owner, group, false, false)
			}
			again, sh := newTestSuperblockStore(t, mem, root)
			slot, lost, _, err := again.acquire(sh, group, false, false)
			if err != nil {
				t.Fatal(err)
			}
			image := make([]byte, again.zoneSize)
			if err := slot.readZone(0, image); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(image, lostZoneImage(again.zoneSize)) {
				t.Fatalf("cut at %d (torn %v): the lost group's slot %d (lost %v) does not read as lost", cutAt, torn, slot.index, lost)
			}
			if !fsys.cut {
				break
			}
		}
	}
}

// errPowerCut is what every file operation returns once the power was cut.
var errPowerCut = errors.New("power cut")

// cutFS is memfs that cuts the power at its n-th mutating file operation
// (a write, truncate, sync, create, rename, remove or directory sync):
// the operation does not happen, memfs loses what was not synced (or,
// torn, keeps the first sector of the superblock file's last write), and
// every later operation fails.
type cutFS struct {
	*memfs.FS
	left   int
	torn   string
	cut    bool
	counts int
}

func (c *cutFS) step() error {
	if c.cut {
		return errPowerCut
	}
	c.counts++
	if c.left == 0 {
		c.cut = true
		if c.torn != "" {
			c.FS.CrashTorn(c.torn, vsr.SectorSize)
		} else {
			c.FS.Crash()
		}
		return errPowerCut
	}
	c.left--
	return nil
}

func (c *cutFS) wrap(f storage.File, err error) (storage.File, error) {
	if err != nil {
		return nil, err
	}
	return &cutFile{File: f, fs: c}, nil
}

func (c *cutFS) Create(p string) (storage.File, error) {
	if err := c.step(); err != nil {
		return nil, err
	}
	return c.wrap(c.FS.Create(p))
}

func (c *cutFS) OpenReadWrite(p string) (storage.File, error) {
	if c.cut {
		return nil, errPowerCut
	}
	return c.wrap(c.FS.OpenReadWrite(p))
}

func (c *cutFS) Open(p string) (storage.File, error) {
	if c.cut {
		return nil, errPowerCut
	}
	return c.wrap(c.FS.Open(p))
}

func (c *cutFS) MkdirAll(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.MkdirAll(p)
}

func (c *cutFS) SyncDir(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.SyncDir(p)
}

func (c *cutFS) RemoveAll(p string) error {
	if err := c.step(); err != nil {
		return err
	}
	return c.FS.RemoveAll(p)
}

type cutFile struct {
	storage.File
	fs *cutFS
}

func (f *cutFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.step(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *cutFile) Truncate(size int64) error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Truncate(size)
}

func (f *cutFile) Sync() error {
	if err := f.fs.step(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *cutFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fs.cut {
		return 0, errPowerCut
	}
	return f.File.ReadAt(p, off)
}

// crashReplica is a vsr replica (index 1 of 3, a backup in view 0 for
// the groups the test uses) over a vsrFileStorage of the test's files.
type crashReplica struct {
	group uint64
	g     *vsrGroup
	st    *vsrFileStorage
	r     *vsr.Replica
	// writing is the view of the superblock copy written last, durable
	// the view of the last one a completed Sync covered (at least what
	// a restart must find).
	writing, durable uint64
	wrote            bool
	// formatted: a superblock copy is durable (the group is no longer
	// fresh storage).
	formatted bool
}

type nopNetwork struct{}

func (nopNetwork) SendToReplica(uint8, *vsr.Message)      {}
func (nopNetwork) SendToClient(vsr.Uint128, *vsr.Message) {}

type nopMachine struct{}

func (nopMachine) Apply(uint64, uint64, uint8, []byte) []byte { return nil }
func (nopMachine) Checkpoint() []byte                         { return nil }
func (nopMachine) Restore([]byte) error                       { return nil }

type zeroClock struct{}

func (zeroClock) RealtimeMicros() uint64 { return 1 }

// recordingStorage is the replica's Storage: the vsrFileStorage, with the
// views its superblock writes and syncs record noted.
type recordingStorage struct {
	*vsrFileStorage
	c *crashReplica
}

func (s recordingStorage) Write(z vsr.Zone, offset uint64, data []byte, done func(error)) {
	if z != vsr.ZoneSuperblock {
		s.vsrFileStorage.Write(z, offset, data, done)
		return
	}
	view := s.c.r.View()
	s.vsrFileStorage.Write(z, offset, data, func(err error) {
		if err == nil {
			s.c.writing, s.c.wrote = view, true
		}
		done(err)
	})
}

func (s recordingStorage) Sync(done func(error)) {
	pending, wrote := s.c.writing, s.c.wrote
	s.c.wrote = false
	s.vsrFileStorage.Sync(func(err error) {
		if err == nil && wrote {
			s.c.durable = max(s.c.durable, pending)
			s.c.formatted = true
		}
		done(err)
	})
}

// openCrashReplica opens group's consensus.vsr under root and a replica
// over it; an error is the power cut (or a failure the caller reports).
func openCrashReplica(fsys storage.FS, store *superblockStore, owner *shard.Shard, root string, group uint64, prev *crashReplica) (*crashReplica, error) {
	c := &crashReplica{group: group}
	if prev != nil {
		c.durable, c.formatted = prev.durable, prev.formatted
	}
	dir := path.Join(root, fmt.Sprint(group))
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, err
	}
	c.g = &vsrGroup{p: &partitionRuntime{fs: fsys}}
	cfg := vsr.DefaultConfig(0, 3, 1)
	cfg.Group = group
	cfg.JournalSlots = 64
	cfg.CheckpointSizeMax = vsr.SectorSize
	st, err := openVSRFileStorage(c.g, path.Join(dir, vsrFileName), cfg.ZoneSize(vsr.ZoneCheckpoint), store, owner, group)
	if err != nil {
		return nil, err
	}
	c.st = st
	r, err := vsr.NewReplica(cfg, recordingStorage{st, c}, nopNetwork{}, nopMachine{}, zeroClock{})
	if err != nil {
		return nil, err
	}
	c.r = r
	var openErr error
	done := false
	c.g.hostLoop.enter()
	r.Open(func(err error) { openErr, done = err, true })
	c.g.hostLoop.leave()
	if !done {
		return nil, errors.New("open did not complete")
	}
	return c, openErr
}

// tick ticks the replica until its view changed once more (a superblock
// write and its syncs) or it failed.
func (c *crashReplica) tick() error {
	view := c.r.View()
	for range 1000 {
		c.g.hostLoop.enter()
		c.r.Tick()
		c.g.hostLoop.leave()
		if err := c.r.Err(); err != nil {
			return err
		}
		if c.r.View() > view && c.durable >= c.r.View() {
			return nil
		}
	}
	return fmt.Errorf("group %d: no view change in 1000 ticks (view %d)", c.group, view)
}

// TestSuperblockFileIsCrashSafe cuts the power at every file operation
// of a node's superblock file's life: its creation, the slot allocation
// of three groups (their first superblock), view changes (superblock
// writes of two groups through the shared file), the deletion of one
// group (its tombstone) and the reuse of its slot by a new group, and
// more view changes; each cut clean or tearing the superblock file's last
// write after its first sector. After each cut the node restarts on what
// survived: every live group's replica opens (vsr's read of its copies
// decides) with a view between the last one a completed sync covered and
// the last one written, never another group's slot (vsr refuses a
// foreign group's superblock) and never a lost one, recovering from its
// peers; and a new group changes views through the reopened file.
func TestSuperblockFileIsCrashSafe(t *testing.T) {
	const root = "/data"
	const a, b, c, d = 1<<20 | 1, 1<<20 | 4, 1<<20 | 7, 1<<20 | 10 // replica 1 is a backup of view 0 in each
	type outcome struct{ points, torn, old, new int }
	var got outcome
	for _, torn := range []bool{false, true} {
		for cutAt := 0; ; cutAt++ {
			mem := memfs.New()
			fsys := &cutFS{FS: mem, left: cutAt}
			if torn {
				fsys.torn = path.Join(root, sbFileDir, sbFileName)
			}
			groups := map[uint64]*crashReplica{}
			deleted := map[uint64]bool{}
			var attempted []uint64
			run := func() error {
				store, owner := newTestSuperblockStoreErr(fsys, root)
				if store == nil {
					return errPowerCut
				}
				for _, g := range []uint64{a, b} {
					attempted = append(attempted, g)
					r, err := openCrashReplica(fsys, store, owner, root, g, nil)
					if r != nil {
						groups[g] = r
					}
					if err != nil {
						return err
					}
				}
				for _, g := range []uint64{a, b, a} {
					if err := groups[g].tick(); err != nil {
						return err
					}
				}
				deleted[b] = true
				if err := groups[b].st.slot.release(); err != nil {
					return err
				}
				if err := fsys.RemoveAll(path.Join(root, fmt.Sprint(b))); err != nil {
					return err
				}
				delete(groups, b)
				attempted = append(attempted, c)
				r, err := openCrashReplica(fsys, store, owner, root, c, nil)
				if r != nil {
					groups[c] = r
				}
				if err != nil {
					return err
				}
				for _, g := range []uint64{c, a, c} {
					if err := groups[g].tick(); err != nil {
						return err
					}
				}
				return nil
			}
			err := run()
			if err != nil && !fsys.cut {
				t.Fatalf("cut at %d (torn %v): %v", cutAt, torn, err)
			}
			// Restart on what survived.
			mem.ClearFaults()
			store, owner := newTestSuperblockStore(t, mem, root)
			for _, g := range attempted {
				if deleted[g] {
					continue
				}
				before := groups[g]
				if before == nil {
					before = &crashReplica{}
				}
				r, err := openCrashReplica(mem, store, owner, root, g, before)
				if err != nil {
					t.Fatalf("cut at %d (torn %v): group %d does not reopen: %v", cutAt, torn, g, err)
				}
				if r.r.MemoryLost() {
					t.Fatalf("cut at %d (torn %v): group %d lost its superblock", cutAt, torn, g)
				}
				if v := r.r.View(); v < before.durable || v > max(before.writing, before.durable) {
					t.Fatalf("cut at %d (torn %v): group %d reopened in view %d; durable %d, written %d", cutAt, torn, g, v, before.durable, before.writing)
				} else if v == before.durable {
					got.old++
				} else {
					got.new++
				}
				if st := r.r.Status(); st != vsr.StatusRecovering && (before.formatted || st != vsr.StatusNormal) {
					// Fresh storage (its first superblock never became
					// durable) formats; any other recovers from its peers.
					t.Fatalf("cut at %d (torn %v): group %d reopened %v (formatted %v), want recovering from its peers", cutAt, torn, g, st, before.formatted)
				}
			}
			// The restarted node's file takes a new group, which changes
			// views through it.
			if r, err := openCrashReplica(mem, store, owner, root, d, nil); err != nil {
				t.Fatalf("cut at %d (torn %v): a new group after the restart: %v", cutAt, torn, err)
			} else if err := r.tick(); err != nil {
				t.Fatalf("cut at %d (torn %v): a new group after the restart: %v", cutAt, torn, err)
			}
			if !fsys.cut {
				break // the whole life ran
			}
			got.points++
			if torn {
				got.torn++
			}
			if cutAt > 10000 {
				t.Fatal("the scenario never completes")
			}
		}
	}
	if got.points < 20 {
		t.Fatalf("only %d cut points", got.points)
	}
	t.Logf("%d cut points (%d torn): restarted groups found the durable view %d times, the one being written %d times", got.points, got.torn, got.old, got.new)
}

// newTestSuperblockStoreErr is newTestSuperblockStore that reports a
// failure (the power cut) as a nil store.
func newTestSuperblockStoreErr(fsys storage.FS, root string) (*superblockStore, *shard.Shard) {
	sh, err := shard.New(shard.Config{})
	if err != nil {
		return nil, nil
	}
	store, err := openSuperblockStore(fsys, root, []*shard.Shard{sh}, []storage.FS{fsys}, zap.NewNop())
	if err != nil {
		return nil, nil
	}
	return store, sh
}

// TestSuperblockSlotOfAGoneReplicaIsLost: a new consensus.vsr for a
// group whose slot on this node vsr already wrote (the partition's
// directory moved aside, then the partition created again with the same
// group) gets the lost image when the group has peers, so that the
// replica recovers instead of joining view 0 with an empty log, and
// stays lost across a restart; a slot still blank (an allocation whose
// consensus.vsr never became durable) and a group of one are cleared.
func TestSuperblockSlotOfAGoneReplicaIsLost(t *testing.T) {
	fs := memfs.New()
	store, owner := newTestSuperblockStore(t, fs, "/data")
	image := make([]byte, store.zoneSize)
	readImage := func(slot *superblockSlot) []byte {
		t.Helper()
		if err := slot.readZone(0, image); err != nil {
			t.Fatal(err)
		}
		return image
	}
	for _, g := range []uint64{20, 21, 22} {
		if _, _, _, err := store.acquire(owner, g, true, true); err != nil {
			t.Fatal(err)
		}
	}
	// Groups 20 and 22 wrote a superblock; 21's allocation stayed blank.
	for _, g := range []uint64{20, 22} {
		slot := &superblockSlot{store: store, sh: store.shards[0], group: g, index: store.slots[g]}
		if err := slot.writeZone(0, bytes.Repeat([]byte{byte(g)}, vsr.SectorSize)); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.shards[0].file.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		group            uint64
		peers, forgotten bool
	}{{20, true, true}, {21, true, false}, {22, false, false}} {
		before := store.slots[tc.group]
		slot, lost, forgotten, err := store.acquire(owner, tc.group, true, tc.peers)
		if err != nil {
			t.Fatal(err)
		}
		if slot.index != before || lost != tc.forgotten || forgotten != tc.forgotten {
			t.Fatalf("group %d (peers %v): slot %d (was %d), lost %v, forgotten %v; want its own slot, lost and forgotten %v",
				tc.group, tc.peers, slot.index, before, lost, forgotten, tc.forgotten)
		}
		want := make([]byte, store.zoneSize)
		if tc.forgotten {
			want = lostZoneImage(store.zoneSize)
		}
		if !bytes.Equal(readImage(slot), want) {
			t.Fatalf("group %d (peers %v): the slot's image is not the %s one", tc.group, tc.peers, map[bool]string{true: "lost", false: "blank"}[tc.forgotten])
		}
	}
	fs.Crash()
	again, sh := newTestSuperblockStore(t, fs, "/data")
	slot, lost, _, err := again.acquire(sh, 20, false, true)
	if err != nil || lost {
		t.Fatalf("group 20 after the restart: lost %v, %v", lost, err)
	}
	if !bytes.Equal(readImage(slot), lostZoneImage(again.zoneSize)) {
		t.Fatal("group 20's slot does not read as lost after the restart")
	}
}

// TestSuperblockStoreReleasesRetiredGroups: the boot's sweep tombstones
// the slots of the groups it is told are retired (a deleted partition's
// slot a crash left allocated, conflicting slots too), durably, and
// leaves every other slot as it was; the freed slots serve new groups.
func TestSuperblockStoreReleasesRetiredGroups(t *testing.T) {
	fs := memfs.New()
	store, owner := newTestSuperblockStore(t, fs, "/data")
	slots := map[uint64]uint32{}
	for _, g := range []uint64{1, 2, 3, 100} {
		slot, _, _, err := store.acquire(owner, g, true, false)
		if err != nil {
			t.Fatal(err)
		}
		slots[g] = slot.index
	}
	// Group 4 claimed by two slots (the boot scan distrusts both).
	store.conflicts[4] = []uint32{store.count, store.count + 1}
	for _, i := range store.conflicts[4] {
		index, err := store.take()
		if err != nil || index != i {
			t.Fatalf("take %d: %d %v", i, index, err)
		}
		if err := store.shards[0].writeSlot(i, slotHeader{state: slotAllocated, group: 4, index: i}, make([]byte, store.zoneSize)); err != nil {
			t.Fatal(err)
		}
	}
	retired := func(g uint64) bool { return g < 5 && g != 2 }
	released, err := store.releaseRetired(owner, retired)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint32{slots[1], slots[3], store.count - 2, store.count - 1}; fmt.Sprint(released) != fmt.Sprint(want) {
		t.Fatalf("released slots %v, want %v", released, want)
	}
	fs.Crash()
	s2, _ := newTestSuperblockStore(t, fs, "/data")
	for g, want := range map[uint64]bool{1: false, 2: true, 3: false, 4: false, 100: true} {
		if _, ok := s2.slots[g]; ok != want || len(s2.conflicts[g]) != 0 {
			t.Fatalf("after the sweep and a crash: group %d mapped %v (want %v), conflicts %v", g, ok, want, s2.conflicts[g])
		}
	}
	if len(s2.free) != 4 {
		t.Fatalf("free slots %v, want the 4 released", s2.free)
	}
	if again, err := s2.releaseRetired(owner, retired); err != nil || len(again) != 0 {
		t.Fatalf("a second sweep released %v (%v)", again, err)
	}
}
