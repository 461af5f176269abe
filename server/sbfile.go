package server

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// superblockStore is the node's superblock file (sbfile_format.go): which
// slot holds which group's superblock zone, and each shard's handle of
// the file with its coalesced sync (sbfile_sync.go).
//
// Slots are allocated durably before use: the slot header naming the
// group is written and synced when the group's consensus.vsr is created
// (or, for a group whose superblock was lost, before its recovery writes
// one); a deleted partition's slot is tombstoned and reusable. The boot
// scans the file once to map group id to slot.
//
// A group's slot is read and written only by its owning shard, through
// that shard's handle; mu guards the map and the free list, which
// partitions opening and deleted on any shard change.
type superblockStore struct {
	log      *zap.Logger
	name     string
	zoneSize uint64
	slotSize uint64

	mu sync.Mutex
	// slots maps a group id to its slot (guarded by mu).
	slots map[uint64]uint32
	// conflicts are groups that two valid slot headers claimed at the
	// boot scan, with those slots: none is trusted (the group's
	// superblock is lost); they are tombstoned when the group gets its
	// new slot (guarded by mu).
	conflicts map[uint64][]uint32
	// free are the slots that may be (re)allocated; count is the slots
	// the file has room for so far (guarded by mu).
	free  []uint32
	count uint32

	// shards is indexed by shard id; each is touched only by its shard.
	shards []*superblockShard
	// syncs counts the file's coalesced syncs, syncRequests the group
	// Syncs they served (SuperblockSyncStats).
	syncs, syncRequests atomic.Uint64
}

// SuperblockSyncStats reports the coalesced syncs of the node's
// superblock file since the server started (syncs) and the groups'
// superblock syncs they served (requests). Safe from any goroutine.
func (s *Server) SuperblockSyncStats() (syncs, requests uint64) {
	if s.superblocks == nil {
		return 0, 0
	}
	return s.superblocks.syncs.Load(), s.superblocks.syncRequests.Load()
}

// superblockSlot is one group's slot as its storage uses it.
type superblockSlot struct {
	store *superblockStore
	sh    *superblockShard
	group uint64
	index uint32
	// released: the slot was tombstoned; no IO goes to it any more.
	released bool
}

// zoneOffset is the file offset of the slot's zone image.
func (s *superblockStore) zoneOffset(index uint32) int64 {
	return int64(sbFileHeaderSize + uint64(index)*s.slotSize + sbSlotHeaderSize)
}

// headerOffset is the file offset of the slot's header.
func (s *superblockStore) headerOffset(index uint32) int64 {
	return int64(sbFileHeaderSize + uint64(index)*s.slotSize)
}

// openSuperblockStore opens (or creates) the node's superblock file on
// fsys and scans its slots; it runs at boot, before any partition opens.
// A file of another format or version is refused, naming file and
// version.
func openSuperblockStore(fsys storage.FS, root string, shards []*shard.Shard, shardFS []storage.FS, log *zap.Logger) (*superblockStore, error) {
	zoneSize := superblockZoneSize()
	dir := path.Join(root, sbFileDir)
	s := &superblockStore{log: log, name: path.Join(dir, sbFileName), zoneSize: zoneSize, slotSize: sbSlotHeaderSize + zoneSize,
		slots: map[uint64]uint32{}, conflicts: map[uint64][]uint32{}}
	for i, sh := range shards {
		s.shards = append(s.shards, newSuperblockShard(s, sh, shardFS[i]))
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := fsys.OpenReadWrite(s.name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", s.name, err)
	}
	err = s.scan(fsys, f)
	if closeErr := f.Close(); err == nil && closeErr != nil {
		err = fmt.Errorf("close %s: %w", s.name, closeErr)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// superblockZoneSize is the superblock zone of every partition group.
func superblockZoneSize() uint64 {
	c := vsr.DefaultConfig(0, 1, 0)
	return c.ZoneSize(vsr.ZoneSuperblock)
}

// scan formats a new file or checks the header of an existing one and
// maps every slot.
func (s *superblockStore) scan(fsys storage.FS, f storage.File) error {
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("size of %s: %w", s.name, err)
	}
	if size < sbFileHeaderSize {
		// New (or its creation never became durable: nothing used it).
		if _, err := f.WriteAt(encodeSBFileHeader(s.zoneSize), 0); err != nil {
			return fmt.Errorf("write %s: %w", s.name, err)
		}
		if err := f.Truncate(sbFileHeaderSize); err != nil {
			return fmt.Errorf("truncate %s: %w", s.name, err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", s.name, err)
		}
		for _, dir := range []string{path.Dir(s.name), path.Dir(path.Dir(s.name))} {
			if err := fsys.SyncDir(dir); err != nil {
				return fmt.Errorf("sync the directory %s: %w", dir, err)
			}
		}
		return nil
	}
	hdr := make([]byte, sbFileHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return fmt.Errorf("read %s: %w", s.name, err)
	}
	zoneSize, err := decodeSBFileHeader(hdr)
	if err == nil && zoneSize != s.zoneSize {
		err = fmt.Errorf("%w: zones of %d bytes, this build uses %d", errSBFormat, zoneSize, s.zoneSize)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	// A slot cut short at the end (its allocation's write never became
	// durable) is not counted: the next allocation rewrites it whole.
	slots := uint64(size-sbFileHeaderSize) / s.slotSize
	if slots > sbSlotsMax {
		return fmt.Errorf("%s: %w: %d slots, at most %d", s.name, errSBFormat, slots, sbSlotsMax)
	}
	s.count = uint32(slots)
	owner := map[uint64]uint32{}
	sector := make([]byte, sbSlotHeaderSize)
	for i := range s.count {
		if _, err := f.ReadAt(sector, s.headerOffset(i)); err != nil {
			// Neither free nor mapped: a group it held finds its
			// superblock lost; nothing else ever uses the slot.
			s.log.Warn("cannot read a superblock slot header; the slot is not used", zap.String("file", s.name), zap.Uint32("slot", i), zap.Error(err))
			continue
		}
		h, err := decodeSlotHeader(sector, i)
		switch {
		case err != nil:
			// Its group, if any, finds its superblock lost (and gets
			// another slot); this one is left as it was found, for an
			// operator's repair, and never reused.
			s.log.Warn("a damaged superblock slot header; the slot is not used", zap.String("file", s.name), zap.Uint32("slot", i), zap.Error(err))
		case h.state != slotAllocated:
			s.free = append(s.free, i)
		case s.conflicts[h.group] != nil:
			s.conflicts[h.group] = append(s.conflicts[h.group], i)
		default:
			if other, dup := owner[h.group]; dup {
				s.log.Warn("two superblock slots name one group; neither is used", zap.String("file", s.name), zap.Uint64("vsr_group", h.group), zap.Uint32("slot", i), zap.Uint32("other_slot", other))
				delete(s.slots, h.group)
				s.conflicts[h.group] = []uint32{other, i}
				continue
			}
			owner[h.group] = i
			s.slots[h.group] = i
		}
	}
	return nil
}

// acquire returns the slot of group for its storage, on owner. fresh:
// the group's consensus.vsr is new (the group is being created): its slot
// (its own left from before, or a new one) is cleared and made durable
// before the caller creates consensus.vsr. Otherwise the group's slot is
// the one the scan found; without one (its header damaged, or missing)
// the group lost its superblock: a slot is allocated whose image vsr
// reads as lost (lostZoneImage), so that the loss holds across restarts
// until the recovery writes a superblock. lost reports that case.
//
// peers: the group has other replicas. Its own slot left from before
// with an image that is not blank is then never cleared for a new
// consensus.vsr: the replica joined the group on this node (vsr writes
// its first superblock before it acks or votes) and may have acked ops
// a quorum needed, but its directory, with its checkpoint and journal,
// is gone (moved aside as unknown to a metadata that lost the topic's
// creation, or lost). A cleared slot would make it a member of view 0
// with an empty log; it gets the lost image instead, and recovers as a
// replica that lost its memory (partition_sblost.go). A group of one
// has nobody to recover from and nobody its promises bind: its slot is
// cleared. forgotten reports the case.
func (s *superblockStore) acquire(owner *shard.Shard, group uint64, fresh, peers bool) (slot *superblockSlot, lost, forgotten bool, err error) {
	sh := s.shards[owner.ID()]
	s.mu.Lock()
	index, mapped := s.slots[group]
	conflicting := s.conflicts[group]
	s.mu.Unlock()
	if mapped && !fresh {
		return &superblockSlot{store: s, sh: sh, group: group, index: index}, false, false, nil
	}
	if mapped && peers {
		used, err := (&superblockSlot{store: s, sh: sh, group: group, index: index}).used()
		if err != nil {
			return nil, false, false, err
		}
		if used {
			fresh, forgotten = false, true
		}
	}
	// Slots that claimed the group together go first (durably), so that
	// the next boot finds only the new one.
	for _, i := range conflicting {
		if err := sh.writeSlot(i, slotHeader{state: slotTombstone, group: group, index: i}, nil); err != nil {
			return nil, false, false, err
		}
	}
	if !mapped {
		if index, err = s.take(); err != nil {
			return nil, false, false, err
		}
	}
	header := slotHeader{state: slotAllocated, group: group, index: index}
	if lost = !fresh; lost {
		// The image first: a header durable over a blank image would
		// read as fresh storage, a replica that lost its memory as a
		// new one.
		err = sh.writeZoneDurably(index, lostZoneImage(s.zoneSize))
		if err == nil {
			err = sh.writeSlot(index, header, nil)
		}
	} else {
		// One write: until it is durable consensus.vsr does not exist,
		// and a torn allocation is made again at the next open.
		err = sh.writeSlot(index, header, make([]byte, s.zoneSize))
	}
	if err != nil {
		// The slot is in an unknown state: it is not handed out again
		// in this run.
		return nil, false, false, err
	}
	s.mu.Lock()
	s.slots[group] = index
	delete(s.conflicts, group)
	s.mu.Unlock()
	return &superblockSlot{store: s, sh: sh, group: group, index: index}, lost, forgotten, nil
}

// used reports whether the slot's zone image is not blank: vsr wrote a
// superblock into it (or the lost image, or a damage did), so the group's
// replica on this node may have made promises. A cleared allocation
// (acquire) leaves it blank until vsr formats the group.
func (slot *superblockSlot) used() (bool, error) {
	image := make([]byte, slot.store.zoneSize)
	if err := slot.readZone(0, image); err != nil {
		return false, err
	}
	for _, b := range image {
		if b != 0 {
			return true, nil
		}
	}
	return false, nil
}

// take reserves a free slot (or a new one at the end of the file).
func (s *superblockStore) take() (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		index := s.free[n-1]
		s.free = s.free[:n-1]
		return index, nil
	}
	if s.count >= sbSlotsMax {
		return 0, fmt.Errorf("%s: every one of %d superblock slots is in use", s.name, sbSlotsMax)
	}
	s.count++
	return s.count - 1, nil
}

// release tombstones a deleted group's slot (synced before it is
// reusable), on the group's owner. A failure leaves the slot unused.
func (slot *superblockSlot) release() error {
	if slot == nil || slot.released {
		return nil
	}
	slot.released = true
	s := slot.store
	if err := slot.sh.writeSlot(slot.index, slotHeader{state: slotTombstone, group: slot.group, index: slot.index}, nil); err != nil {
		return err
	}
	s.mu.Lock()
	if s.slots[slot.group] == slot.index {
		delete(s.slots, slot.group)
	}
	s.free = append(s.free, slot.index)
	s.mu.Unlock()
	return nil
}

// releaseRetired tombstones, through owner's handle and on owner, every
// slot allocated to a group for which retired reports true (conflicting
// slots included) and returns their indexes. The boot calls it once
// every partition opened (partition_groups.go); a failure leaves the
// slots it did not reach as they were.
func (s *superblockStore) releaseRetired(owner *shard.Shard, retired func(group uint64) bool) ([]uint32, error) {
	type claim struct {
		group uint64
		index uint32
	}
	var claims []claim
	s.mu.Lock()
	for g, i := range s.slots {
		if retired(g) {
			claims = append(claims, claim{g, i})
		}
	}
	for g, slots := range s.conflicts {
		if retired(g) {
			for _, i := range slots {
				claims = append(claims, claim{g, i})
			}
		}
	}
	s.mu.Unlock()
	sort.Slice(claims, func(a, b int) bool { return claims[a].index < claims[b].index })
	sh := s.shards[owner.ID()]
	var released []uint32
	for _, c := range claims {
		if err := sh.writeSlot(c.index, slotHeader{state: slotTombstone, group: c.group, index: c.index}, nil); err != nil {
			return released, err
		}
		s.mu.Lock()
		if s.slots[c.group] == c.index {
			delete(s.slots, c.group)
		}
		delete(s.conflicts, c.group)
		s.free = append(s.free, c.index)
		s.mu.Unlock()
		released = append(released, c.index)
	}
	return released, nil
}

// superblockShard is one shard's handle of the node's superblock file
// and its coalesced sync; only that shard's goroutine touches it.
type superblockShard struct {
	store *superblockStore
	owner *shard.Shard
	fs    storage.FS
	// file is opened on first use, on the shard's own IO engine; closed
	// is set once it was closed for good (the server stops).
	file   storage.File
	closed bool
	sync   superblockSyncer
}

func newSuperblockShard(s *superblockStore, owner *shard.Shard, fsys storage.FS) *superblockShard {
	sh := &superblockShard{store: s, owner: owner, fs: fsys}
	sh.sync.init(sh)
	return sh
}

// handle returns the shard's handle of the file, opening it on first use.
func (sh *superblockShard) handle() (storage.File, error) {
	if sh.closed {
		return nil, fmt.Errorf("%s: closed", sh.store.name)
	}
	if sh.file == nil {
		f, err := sh.fs.OpenReadWrite(sh.store.name)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", sh.store.name, err)
		}
		sh.file = f
	}
	return sh.file, nil
}

// writeSlot writes a slot header (and, when image is set, the zone image
// after it, in the same write) and syncs the file in place: slot
// allocation and deletion are durable before they return.
func (sh *superblockShard) writeSlot(index uint32, h slotHeader, image []byte) error {
	s := sh.store
	f, err := sh.handle()
	if err != nil {
		return err
	}
	buf := make([]byte, sbSlotHeaderSize+len(image))
	encodeSlotHeader(h, buf)
	copy(buf[sbSlotHeaderSize:], image)
	if _, err := f.WriteAt(buf, s.headerOffset(index)); err != nil {
		return fmt.Errorf("write slot %d of %s: %w", index, s.name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.name, err)
	}
	return nil
}

// writeZoneDurably writes a slot's zone image and syncs the file in place.
func (sh *superblockShard) writeZoneDurably(index uint32, image []byte) error {
	s := sh.store
	f, err := sh.handle()
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(image, s.zoneOffset(index)); err != nil {
		return fmt.Errorf("write slot %d of %s: %w", index, s.name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.name, err)
	}
	return nil
}

// readZone reads the slot's zone image at offset; bytes past the end of
// the file read as zeros.
func (slot *superblockSlot) readZone(offset uint64, buf []byte) error {
	s := slot.store
	if err := slot.check(offset, len(buf)); err != nil {
		return err
	}
	f, err := slot.sh.handle()
	if err != nil {
		return err
	}
	n, err := f.ReadAt(buf, s.zoneOffset(slot.index)+int64(offset))
	if errors.Is(err, io.EOF) {
		clear(buf[n:])
		err = nil
	}
	if err != nil {
		return fmt.Errorf("read slot %d of %s: %w", slot.index, s.name, err)
	}
	return nil
}

// writeZone writes data into the slot's zone image at offset.
func (slot *superblockSlot) writeZone(offset uint64, data []byte) error {
	s := slot.store
	if err := slot.check(offset, len(data)); err != nil {
		return err
	}
	f, err := slot.sh.handle()
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, s.zoneOffset(slot.index)+int64(offset)); err != nil {
		return fmt.Errorf("write slot %d of %s: %w", slot.index, s.name, err)
	}
	return nil
}

func (slot *superblockSlot) check(offset uint64, n int) error {
	s := slot.store
	if slot.released {
		return fmt.Errorf("%s: slot %d of group %d was released", s.name, slot.index, slot.group)
	}
	if offset+uint64(n) > s.zoneSize {
		return fmt.Errorf("%s: superblock zone offset %d length %d beyond %d", s.name, offset, n, s.zoneSize)
	}
	return nil
}

// tick starts owner's coalesced superblock sync, in its replica plane
// tick task.
func (s *superblockStore) tick(owner *shard.Shard) { s.shards[owner.ID()].sync.tick() }

// closeShard closes shard i's handle, on that shard, once its
// partitions closed: later IO through it fails.
func (s *superblockStore) closeShard(i int) {
	sh := s.shards[i]
	sh.closed = true
	if sh.file == nil {
		return
	}
	if err := sh.file.Close(); err != nil {
		s.log.Error("closing the superblock file", zap.String("file", s.name), zap.Int("shard", i), zap.Error(err))
	}
	sh.file = nil
}
