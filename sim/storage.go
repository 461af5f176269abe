package sim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/stratabroker/strata/vsr"
)

// ErrLatentSector is returned by a simulated read that touches a sector with
// an injected latent error.
var ErrLatentSector = errors.New("sim: latent sector error")

// zoneCount bounds the zone numbers a Storage accepts.
const zoneCount = 8

// StorageCounters counts what a simulated disk did and which faults it
// injected.
type StorageCounters struct {
	Reads            uint64
	Writes           uint64
	Syncs            uint64
	ReadErrors       uint64 // reads failed by a latent sector
	LatentSectors    uint64 // sectors marked latent-bad (all zones)
	MisdirectedWrite uint64 // (all zones)
	StaleReads       uint64 // reads that returned sectors as they were before their last write
	TornWrites       uint64
	Crashes          uint64
	PowerLosses      uint64
	UnsyncedLost     uint64 // sectors dropped by power loss
	// Faults by zone, for the coverage table.
	LatentSuperblock      uint64
	LatentCheckpoint      uint64
	MisdirectedSuperblock uint64
	MisdirectedCheckpoint uint64
	StaleCheckpointReads  uint64
	// Events the faults timed to the protocol hook into.
	SuperblockWrites uint64
	CheckpointWrites uint64
}

func (c *StorageCounters) add(o StorageCounters) {
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.Syncs += o.Syncs
	c.ReadErrors += o.ReadErrors
	c.LatentSectors += o.LatentSectors
	c.MisdirectedWrite += o.MisdirectedWrite
	c.StaleReads += o.StaleReads
	c.TornWrites += o.TornWrites
	c.Crashes += o.Crashes
	c.PowerLosses += o.PowerLosses
	c.UnsyncedLost += o.UnsyncedLost
	c.LatentSuperblock += o.LatentSuperblock
	c.LatentCheckpoint += o.LatentCheckpoint
	c.MisdirectedSuperblock += o.MisdirectedSuperblock
	c.MisdirectedCheckpoint += o.MisdirectedCheckpoint
	c.StaleCheckpointReads += o.StaleCheckpointReads
	c.SuperblockWrites += o.SuperblockWrites
	c.CheckpointWrites += o.CheckpointWrites
}

type sectorKey struct {
	zone   vsr.Zone
	sector uint64
}

type ioKind uint8

const (
	ioRead ioKind = iota
	ioWrite
	ioSync
)

// ioRequest is one submitted, not yet completed storage operation.
type ioRequest struct {
	kind         ioKind
	zone         vsr.Zone
	offset       uint64
	buf          []byte // read target, or a copy of the written data
	misdirect    uint64 // for writes: the offset it really lands at
	done         func(err error)
	completeTick uint64
	sequence     uint64
	snapshot     []sectorWrite // for syncs: the volatile sectors it covers
	shadow       []sectorWrite // for syncs: the same, of the shadow layers
}

type sectorWrite struct {
	key  sectorKey
	data []byte
}

// storageEvent is a point of a replica's storage traffic that a fault
// timed to the protocol may strike at.
type storageEvent uint8

const (
	// eventSuperblockSubmit: a superblock write was submitted, not landed.
	eventSuperblockSubmit storageEvent = iota
	// eventSuperblockDurable: a sync made a landed superblock write durable.
	eventSuperblockDurable
	// eventCheckpointSubmit: a write to the checkpoint zone was submitted
	// (a crash now may tear it).
	eventCheckpointSubmit
	// eventCheckpointLanded: a write to the checkpoint zone landed (the
	// checkpoint is written, not synced, not yet named by a superblock).
	eventCheckpointLanded
)

// Storage is one replica's simulated disk. It implements vsr.Storage over
// zones of bytes kept as sparse 4 KiB sectors in two layers: durable
// sectors, and volatile sectors written but not yet covered by a completed
// Sync. Requests complete on later ticks, in an order drawn from the seed
// (slow disks take up to SlowDiskTicksMax per request in the safety
// phase).
//
// Faults. A crash lands each in-flight write whole, not at all or torn at
// a sector boundary; a power loss also drops unsynced sectors. On a
// replica the fault model marks faulty, written sectors may turn
// latent-bad (reads fail until rewritten), writes may land at the wrong
// offset, and reads may return sectors as they were before their last
// write (stale data of the right length). The fault model keeps every
// fault one the cluster recovers from:
//   - at most f replicas are faulty (Params.StorageFaultyReplica), so every
//     datum has an intact copy on a quorum;
//   - on a faulty replica a journal slot is faulty in at most one of its
//     two copies (header zone, prepare zone) at a time, so a faulty slot
//     is always told apart from one that was never written;
//   - the superblock copy with the highest durable sequence is never made
//     unreadable: latent errors strike the other copy, only once the new
//     one is durable; misdirected superblock writes land on the other
//     copy; superblock reads are never stale;
//   - checkpoint areas may suffer every fault (the superblock's checksum
//     detects them).
//
// For the checks made when a message is sent, the disk also keeps shadow
// layers on a replica with misdirected writes: where every write would
// have landed without misdirection, so that "what the replica made
// durable" can be read back independently of the faults injected.
type Storage struct {
	replica       int
	params        *Params
	prng          *PRNG
	now           *uint64
	faulty        bool
	faultsEnabled bool
	zoneSize      [zoneCount]uint64
	durable       map[sectorKey][]byte
	volatile      map[sectorKey][]byte
	latent        map[sectorKey]bool
	// prior holds, for faulty replicas that may read stale data, each
	// sector's content before its last write (nil: zeros).
	prior map[sectorKey][]byte
	// slotFault records, per journal slot, the zone in which the slot is
	// faulty (latent sector, misdirected write, stale read); the other
	// zone's copy of the slot is then kept intact.
	slotFault map[uint64]vsr.Zone
	// shadowDurable and shadowVolatile are the layers without misdirected
	// writes (nil when this disk never misdirects: the real layers are).
	shadowDurable  map[sectorKey][]byte
	shadowVolatile map[sectorKey][]byte
	pending        []*ioRequest
	due            []*ioRequest
	sequence       uint64
	lastSyncTick   uint64
	// onEvent, if set, is told of each storageEvent; interrupt, set from
	// it, stops Tick after the current completion (a crash strikes there).
	onEvent   func(ev storageEvent)
	interrupt bool
	slow      bool
	Counters  StorageCounters
}

// NewStorage returns an empty disk for replica with the given zone sizes
// (indexed by vsr.Zone).
func NewStorage(replica int, params *Params, prng *PRNG, now *uint64, zoneSize map[vsr.Zone]uint64) *Storage {
	s := &Storage{
		replica:       replica,
		params:        params,
		prng:          prng,
		now:           now,
		faulty:        params.IsStorageFaulty(replica),
		faultsEnabled: true,
		slow:          params.IsSlowDisk(replica) && params.SlowDiskTicksMax > 0,
		durable:       make(map[sectorKey][]byte),
		volatile:      make(map[sectorKey][]byte),
		latent:        make(map[sectorKey]bool),
		slotFault:     make(map[uint64]vsr.Zone),
	}
	if s.faulty && params.StaleReadPPM > 0 {
		s.prior = make(map[sectorKey][]byte)
	}
	if s.faulty && params.MisdirectPPM > 0 {
		s.shadowDurable = make(map[sectorKey][]byte)
		s.shadowVolatile = make(map[sectorKey][]byte)
	}
	for z, size := range zoneSize {
		if int(z) >= zoneCount {
			panic(fmt.Sprintf("sim: zone %d out of range", z))
		}
		if size%vsr.SectorSize != 0 {
			panic(fmt.Sprintf("sim: zone %d size %d not sector aligned", z, size))
		}
		s.zoneSize[z] = size
	}
	return s
}

// SetFaults turns latent errors, misdirected writes, stale reads and slow
// IO on or off.
func (s *Storage) SetFaults(enabled bool) { s.faultsEnabled = enabled }

// ZoneSize implements vsr.Storage.
func (s *Storage) ZoneSize(zone vsr.Zone) uint64 {
	if int(zone) >= zoneCount {
		return 0
	}
	return s.zoneSize[zone]
}

func (s *Storage) checkRange(zone vsr.Zone, offset uint64, length int) {
	if offset%vsr.SectorSize != 0 || length%vsr.SectorSize != 0 || length == 0 {
		panic(fmt.Sprintf("sim: replica %d storage request zone=%d offset=%d length=%d not sector aligned", s.replica, zone, offset, length))
	}
	if offset+uint64(length) > s.ZoneSize(zone) {
		panic(fmt.Sprintf("sim: replica %d storage request zone=%d offset=%d length=%d beyond zone size %d", s.replica, zone, offset, length, s.ZoneSize(zone)))
	}
}

func (s *Storage) submit(r *ioRequest) {
	s.sequence++
	r.sequence = s.sequence
	latency := s.params.IOLatencyTicksMax
	if s.slow && s.faultsEnabled && s.prng.Chance(s.params.SlowDiskPPM) {
		latency = s.params.SlowDiskTicksMax
	}
	r.completeTick = *s.now + uint64(s.prng.Range(1, latency))
	if r.kind == ioSync {
		// Syncs complete in submission order.
		if r.completeTick < s.lastSyncTick {
			r.completeTick = s.lastSyncTick
		}
		s.lastSyncTick = r.completeTick
	}
	s.pending = append(s.pending, r)
}

// Read implements vsr.Storage.
func (s *Storage) Read(zone vsr.Zone, offset uint64, buf []byte, done func(err error)) {
	s.checkRange(zone, offset, len(buf))
	s.Counters.Reads++
	s.submit(&ioRequest{kind: ioRead, zone: zone, offset: offset, buf: buf, done: done})
}

// Write implements vsr.Storage. The data is copied at submission.
func (s *Storage) Write(zone vsr.Zone, offset uint64, data []byte, done func(err error)) {
	s.checkRange(zone, offset, len(data))
	s.Counters.Writes++
	r := &ioRequest{kind: ioWrite, zone: zone, offset: offset, buf: append([]byte(nil), data...), done: done, misdirect: offset}
	if s.faultsOn() && s.prng.Chance(s.params.MisdirectPPM) {
		target := s.misdirectedOffset(zone, offset, uint64(len(data)))
		if target != offset && s.mayFaultSlots(zone, offset, uint64(len(data))) && s.mayFaultSlots(zone, target, uint64(len(data))) {
			r.misdirect = target
			s.markSlotFaults(zone, offset, uint64(len(data)))
			s.markSlotFaults(zone, target, uint64(len(data)))
			s.Counters.MisdirectedWrite++
			switch zone {
			case vsr.ZoneSuperblock:
				s.Counters.MisdirectedSuperblock++
			case vsr.ZoneCheckpoint:
				s.Counters.MisdirectedCheckpoint++
			}
		}
	}
	s.submit(r)
	switch zone {
	case vsr.ZoneSuperblock:
		s.Counters.SuperblockWrites++
		s.event(eventSuperblockSubmit)
	case vsr.ZoneCheckpoint:
		s.event(eventCheckpointSubmit)
	}
}

func (s *Storage) event(ev storageEvent) {
	if s.onEvent != nil {
		s.onEvent(ev)
	}
}

// misdirectedOffset picks a wrong, sector-aligned target near the intended
// one (a few lengths away), inside the zone. In the superblock zone that
// is the other copy.
func (s *Storage) misdirectedOffset(zone vsr.Zone, offset, length uint64) uint64 {
	k := uint64(s.prng.Range(1, 3)) * length
	if s.prng.Chance(PPM/2) && offset >= k {
		return offset - k
	}
	if offset+k+length <= s.ZoneSize(zone) {
		return offset + k
	}
	if offset >= k {
		return offset - k
	}
	return offset
}

// faultsOn reports whether this disk may inject latent errors, misdirected
// writes and stale reads now.
func (s *Storage) faultsOn() bool { return s.faulty && s.faultsEnabled }

// slotSize returns the bytes per journal slot of zone, or 0 for the zones
// that are not journal zones.
func (s *Storage) slotSize(zone vsr.Zone) uint64 {
	switch zone {
	case vsr.ZoneWALHeaders:
		return vsr.SectorSize
	case vsr.ZoneWALPrepares:
		return uint64(s.params.MessageSizeMax)
	}
	return 0
}

// otherJournalZone returns the journal zone holding a slot's other copy.
func otherJournalZone(zone vsr.Zone) vsr.Zone {
	if zone == vsr.ZoneWALHeaders {
		return vsr.ZoneWALPrepares
	}
	return vsr.ZoneWALHeaders
}

// mayFaultSlots reports whether a fault may strike zone's bytes at offset:
// no journal slot they touch is faulty in its other copy.
func (s *Storage) mayFaultSlots(zone vsr.Zone, offset, length uint64) bool {
	size := s.slotSize(zone)
	if size == 0 {
		return true
	}
	other := otherJournalZone(zone)
	for slot := offset / size; slot*size < offset+length; slot++ {
		if z, ok := s.slotFault[slot]; ok && z == other {
			return false
		}
	}
	return true
}

// markSlotFaults records that the journal slots zone's bytes at offset
// touch are faulty in zone.
func (s *Storage) markSlotFaults(zone vsr.Zone, offset, length uint64) {
	size := s.slotSize(zone)
	if size == 0 {
		return
	}
	for slot := offset / size; slot*size < offset+length; slot++ {
		s.slotFault[slot] = zone
	}
}

// clearSlotFault forgets that slot is faulty in zone once the slot holds
// no latent sector there any more (a clean write landed over it).
func (s *Storage) clearSlotFault(zone vsr.Zone, slot uint64) {
	if z, ok := s.slotFault[slot]; !ok || z != zone {
		return
	}
	size := s.slotSize(zone)
	for sector := slot * size / vsr.SectorSize; sector < (slot+1)*size/vsr.SectorSize; sector++ {
		if s.latent[sectorKey{zone, sector}] {
			return
		}
	}
	delete(s.slotFault, slot)
}

// Sync implements vsr.Storage: it covers every write completed before it
// was submitted.
func (s *Storage) Sync(done func(err error)) {
	s.Counters.Syncs++
	r := &ioRequest{kind: ioSync, done: done}
	r.snapshot = snapshotOf(s.volatile)
	if s.shadowVolatile != nil {
		r.shadow = snapshotOf(s.shadowVolatile)
	}
	s.submit(r)
}

// snapshotOf lists the sectors of a volatile layer in sorted order, so
// that decisions drawn per sector are deterministic.
func snapshotOf(volatile map[sectorKey][]byte) []sectorWrite {
	keys := sortedKeys(volatile)
	out := make([]sectorWrite, len(keys))
	for i, k := range keys {
		out[i] = sectorWrite{key: k, data: volatile[k]}
	}
	return out
}

func sortedKeys(m map[sectorKey][]byte) []sectorKey {
	keys := make([]sectorKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b sectorKey) int {
		if a.zone != b.zone {
			return int(a.zone) - int(b.zone)
		}
		return cmpUint64(a.sector, b.sector)
	})
	return keys
}

// Tick completes every request due at or before now, in (tick, submission)
// order, calling its callback. Callbacks may submit more requests; those
// complete on later ticks. A callback that sets interrupt (a crash timed
// to what the replica just did) stops the loop; the requests not yet
// completed go back to pending, for the crash to deal with.
func (s *Storage) Tick(now uint64) {
	s.due = s.due[:0]
	kept := s.pending[:0]
	for _, r := range s.pending {
		if r.completeTick <= now {
			s.due = append(s.due, r)
		} else {
			kept = append(kept, r)
		}
	}
	for i := len(kept); i < len(s.pending); i++ {
		s.pending[i] = nil
	}
	s.pending = kept
	if len(s.due) > 1 {
		slices.SortFunc(s.due, func(a, b *ioRequest) int {
			if a.completeTick != b.completeTick {
				return cmpUint64(a.completeTick, b.completeTick)
			}
			return cmpUint64(a.sequence, b.sequence)
		})
	}
	// Callbacks may submit new requests (appended to s.pending, completing
	// on a later tick); they never touch s.due.
	s.interrupt = false
	for i, r := range s.due {
		if s.interrupt {
			s.pending = append(s.pending, s.due[i:]...)
			break
		}
		s.due[i] = nil
		r.done(s.complete(r))
	}
	clear(s.due)
	s.due = s.due[:0]
}

func (s *Storage) complete(r *ioRequest) error {
	switch r.kind {
	case ioRead:
		return s.completeRead(r)
	case ioWrite:
		s.land(r, len(r.buf)/vsr.SectorSize)
		if r.zone == vsr.ZoneCheckpoint {
			s.Counters.CheckpointWrites++
			s.event(eventCheckpointLanded)
		}
		return nil
	default:
		for _, w := range r.snapshot {
			s.durable[w.key] = w.data
			if v, ok := s.volatile[w.key]; ok && &v[0] == &w.data[0] {
				delete(s.volatile, w.key)
			}
		}
		for _, w := range r.shadow {
			s.shadowDurable[w.key] = w.data
			if v, ok := s.shadowVolatile[w.key]; ok && &v[0] == &w.data[0] {
				delete(s.shadowVolatile, w.key)
			}
		}
		s.superblockDurable(r.snapshot)
		return nil
	}
}

// superblockDurable runs when a sync made superblock sectors durable: it
// reports the event, and on a faulty disk may strike the other copy (the
// older one) with a latent error; the newest durable copy stays readable.
func (s *Storage) superblockDurable(synced []sectorWrite) {
	found := false
	var sector uint64
	for _, w := range synced {
		if w.key.zone == vsr.ZoneSuperblock {
			found, sector = true, w.key.sector
		}
	}
	if !found {
		return
	}
	if s.faultsOn() && s.prng.Chance(s.params.LatentErrorPPM) {
		copies := s.ZoneSize(vsr.ZoneSuperblock) / vsr.SectorSize
		if copies > 1 {
			other := sectorKey{vsr.ZoneSuperblock, (sector + 1) % copies}
			if _, pendingWrite := s.volatile[other]; !pendingWrite && !s.latent[other] {
				s.latent[other] = true
				s.Counters.LatentSectors++
				s.Counters.LatentSuperblock++
			}
		}
	}
	s.event(eventSuperblockDurable)
}

func (s *Storage) completeRead(r *ioRequest) error {
	first := r.offset / vsr.SectorSize
	count := uint64(len(r.buf) / vsr.SectorSize)
	for i := uint64(0); i < count; i++ {
		if s.latent[sectorKey{r.zone, first + i}] {
			s.Counters.ReadErrors++
			return fmt.Errorf("replica %d zone %d sector %d: %w", s.replica, r.zone, first+i, ErrLatentSector)
		}
	}
	stale := s.prior != nil && s.faultsOn() && r.zone != vsr.ZoneSuperblock && s.prng.Chance(s.params.StaleReadPPM)
	staleSectors := 0
	for i := uint64(0); i < count; i++ {
		k := sectorKey{r.zone, first + i}
		dst := r.buf[i*vsr.SectorSize : (i+1)*vsr.SectorSize]
		if stale {
			if old, ok := s.prior[k]; ok && s.staleAllowed(k) {
				copyOrClear(dst, old)
				staleSectors++
				continue
			}
		}
		if d, ok := s.volatile[k]; ok {
			copy(dst, d)
		} else if d, ok := s.durable[k]; ok {
			copy(dst, d)
		} else {
			clear(dst)
		}
	}
	if staleSectors > 0 {
		s.Counters.StaleReads++
		if r.zone == vsr.ZoneCheckpoint {
			s.Counters.StaleCheckpointReads++
		}
	}
	return nil
}

// staleAllowed reports whether sector k may be read stale under the
// per-slot fault budget, and if so charges it.
func (s *Storage) staleAllowed(k sectorKey) bool {
	size := s.slotSize(k.zone)
	if size == 0 {
		return true
	}
	offset := k.sector * vsr.SectorSize
	if !s.mayFaultSlots(k.zone, offset, vsr.SectorSize) {
		return false
	}
	s.markSlotFaults(k.zone, offset, vsr.SectorSize)
	return true
}

func copyOrClear(dst, src []byte) {
	if src == nil {
		clear(dst)
		return
	}
	copy(dst, src)
}

// land applies the first sectors sectors of write r to the volatile layer
// (at its misdirected offset) and to the shadow layer (at its intended
// offset).
func (s *Storage) land(r *ioRequest, sectors int) {
	first := r.misdirect / vsr.SectorSize
	for i := 0; i < sectors; i++ {
		k := sectorKey{r.zone, first + uint64(i)}
		data := r.buf[i*vsr.SectorSize : (i+1)*vsr.SectorSize : (i+1)*vsr.SectorSize]
		if s.prior != nil {
			if d, ok := s.volatile[k]; ok {
				s.prior[k] = d
			} else {
				s.prior[k] = s.durable[k]
			}
		}
		s.volatile[k] = data
		delete(s.latent, k)
		if r.zone != vsr.ZoneSuperblock && s.faultsOn() && s.prng.Chance(s.params.LatentErrorPPM) &&
			s.mayFaultSlots(r.zone, k.sector*vsr.SectorSize, vsr.SectorSize) {
			s.latent[k] = true
			s.markSlotFaults(r.zone, k.sector*vsr.SectorSize, vsr.SectorSize)
			s.Counters.LatentSectors++
			if r.zone == vsr.ZoneCheckpoint {
				s.Counters.LatentCheckpoint++
			}
		}
	}
	if s.shadowVolatile != nil {
		intended := r.offset / vsr.SectorSize
		for i := 0; i < sectors; i++ {
			s.shadowVolatile[sectorKey{r.zone, intended + uint64(i)}] = r.buf[i*vsr.SectorSize : (i+1)*vsr.SectorSize : (i+1)*vsr.SectorSize]
		}
	}
	if size := s.slotSize(r.zone); size > 0 && r.misdirect == r.offset && sectors == len(r.buf)/vsr.SectorSize {
		for slot := r.offset / size; slot*size < r.offset+uint64(len(r.buf)); slot++ {
			s.clearSlotFault(r.zone, slot)
		}
	}
}

// Crash models the replica process dying: pending reads and syncs vanish
// without completing, and each in-flight write lands whole, not at all, or
// (with the torn-write rate) as a prefix of its sectors. Completed writes
// survive in the volatile layer (the OS page cache). With powerLoss, the
// volatile layer is then lost too, except for sectors the disk happened to
// persist (UnsyncedKeepPPM).
func (s *Storage) Crash(powerLoss bool) {
	s.Counters.Crashes++
	pending := s.pending
	slices.SortFunc(pending, func(a, b *ioRequest) int { return cmpUint64(a.sequence, b.sequence) })
	for _, r := range pending {
		if r.kind != ioWrite {
			continue
		}
		sectors := len(r.buf) / vsr.SectorSize
		switch {
		case sectors > 1 && s.prng.Chance(s.params.TornWritePPM):
			s.Counters.TornWrites++
			s.land(r, s.prng.Range(1, sectors-1))
		case s.prng.Chance(PPM / 2):
			s.land(r, sectors)
		}
	}
	s.pending = nil
	s.lastSyncTick = 0
	if !powerLoss {
		return
	}
	s.Counters.PowerLosses++
	var kept map[*byte]bool
	if s.shadowVolatile != nil {
		kept = make(map[*byte]bool)
	}
	for _, k := range sortedKeys(s.volatile) {
		if s.prng.Chance(s.params.UnsyncedKeepPPM) {
			s.durable[k] = s.volatile[k]
			if kept != nil {
				kept[&s.volatile[k][0]] = true
			}
		} else {
			s.Counters.UnsyncedLost++
		}
	}
	if s.shadowVolatile != nil {
		// The shadow keeps what the real disk kept, at the place each
		// write was meant to go: a misdirected write the disk kept is in
		// the shadow at its intended place (seed 41985: a superblock copy
		// misdirected onto the other copy and kept by a power loss was
		// missing from the shadow, and the replica, which read it back at
		// its restart, was judged to ack from a view its superblock did
		// not hold). Real and shadow sectors of one write share their
		// buffers (land).
		for k, d := range s.shadowVolatile {
			if kept[&d[0]] {
				s.shadowDurable[k] = d
			}
		}
		clear(s.shadowVolatile)
	}
	clear(s.volatile)
}

// Pending returns the number of submitted, not yet completed requests.
func (s *Storage) Pending() int { return len(s.pending) }

// CorruptSector marks one sector of zone latent-bad (scenarios use it to
// script a latent error at a chosen place).
func (s *Storage) CorruptSector(zone vsr.Zone, sector uint64) {
	s.latent[sectorKey{zone, sector}] = true
	s.Counters.LatentSectors++
}

// readDurable copies what the replica has made durable in zone at offset
// into buf: the durable layer, or the shadow durable layer on a disk that
// misdirects writes (where every write was meant to land). Latent errors
// and stale reads do not apply: this is the checkers' view, not a read
// the replica makes.
func (s *Storage) readDurable(zone vsr.Zone, offset uint64, buf []byte) {
	layer := s.durable
	if s.shadowDurable != nil {
		layer = s.shadowDurable
	}
	first := offset / vsr.SectorSize
	for i := 0; i*vsr.SectorSize < len(buf); i++ {
		dst := buf[i*vsr.SectorSize : (i+1)*vsr.SectorSize]
		if d, ok := layer[sectorKey{zone, first + uint64(i)}]; ok {
			copy(dst, d)
		} else {
			clear(dst)
		}
	}
}

// durableSector returns the durable content of one sector as readDurable
// sees it (nil for zeros), without copying.
func (s *Storage) durableSector(zone vsr.Zone, sector uint64) []byte {
	layer := s.durable
	if s.shadowDurable != nil {
		layer = s.shadowDurable
	}
	return layer[sectorKey{zone, sector}]
}
