package sim

import (
	"errors"
	"fmt"
	"sort"

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
	LatentSectors    uint64 // sectors marked latent-bad
	MisdirectedWrite uint64
	TornWrites       uint64
	Crashes          uint64
	PowerLosses      uint64
	UnsyncedLost     uint64 // sectors dropped by power loss
}

func (c *StorageCounters) add(o StorageCounters) {
	c.Reads += o.Reads
	c.Writes += o.Writes
	c.Syncs += o.Syncs
	c.ReadErrors += o.ReadErrors
	c.LatentSectors += o.LatentSectors
	c.MisdirectedWrite += o.MisdirectedWrite
	c.TornWrites += o.TornWrites
	c.Crashes += o.Crashes
	c.PowerLosses += o.PowerLosses
	c.UnsyncedLost += o.UnsyncedLost
}

type sectorKey struct {
	zone   vsr.Zone
	sector uint64
}

func (k sectorKey) less(o sectorKey) bool {
	if k.zone != o.zone {
		return k.zone < o.zone
	}
	return k.sector < o.sector
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
}

type sectorWrite struct {
	key  sectorKey
	data []byte
}

// Storage is one replica's simulated disk. It implements vsr.Storage over
// zones of bytes kept as sparse 4 KiB sectors in two layers: durable sectors,
// and volatile sectors written but not yet covered by a completed Sync.
// Requests complete on later ticks, in an order drawn from the seed. Faults:
// a crash lands each in-flight write whole, not at all or torn at a sector
// boundary; a power loss also drops unsynced sectors; on a replica the
// fault model marks faulty, written sectors may turn latent-bad (reads fail
// until rewritten) and writes may land at the wrong offset. The superblock
// zone never suffers latent errors or misdirection (the fault model keeps
// every replica able to find its superblock).
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
	pending       []*ioRequest
	due           []*ioRequest
	sequence      uint64
	lastSyncTick  uint64
	Counters      StorageCounters
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
		durable:       make(map[sectorKey][]byte),
		volatile:      make(map[sectorKey][]byte),
		latent:        make(map[sectorKey]bool),
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

// SetFaults turns latent errors and misdirected writes on or off.
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
	r.completeTick = *s.now + uint64(s.prng.Range(1, s.params.IOLatencyTicksMax))
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
	if s.storageFaultsOn(zone) && s.prng.Chance(s.params.MisdirectPPM) {
		r.misdirect = s.misdirectedOffset(zone, offset, uint64(len(data)))
		if r.misdirect != offset {
			s.Counters.MisdirectedWrite++
		}
	}
	s.submit(r)
}

// misdirectedOffset picks a wrong, sector-aligned target near the intended
// one (a few lengths away), inside the zone.
func (s *Storage) misdirectedOffset(zone vsr.Zone, offset, length uint64) uint64 {
	k := uint64(s.prng.Range(1, 3)) * length
	if s.prng.Chance(PPM/2) && offset >= k {
		return offset - k
	}
	if offset+k+length <= s.ZoneSize(zone) {
		return offset + k
	}
	return offset
}

func (s *Storage) storageFaultsOn(zone vsr.Zone) bool {
	return s.faulty && s.faultsEnabled && zone != vsr.ZoneSuperblock
}

// Sync implements vsr.Storage: it covers every write completed before it
// was submitted.
func (s *Storage) Sync(done func(err error)) {
	s.Counters.Syncs++
	r := &ioRequest{kind: ioSync, done: done}
	keys := s.volatileKeys()
	r.snapshot = make([]sectorWrite, len(keys))
	for i, k := range keys {
		r.snapshot[i] = sectorWrite{key: k, data: s.volatile[k]}
	}
	s.submit(r)
}

// volatileKeys returns the keys of unsynced sectors in sorted order, so
// that decisions drawn per sector are deterministic.
func (s *Storage) volatileKeys() []sectorKey {
	keys := make([]sectorKey, 0, len(s.volatile))
	for k := range s.volatile {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys
}

// Tick completes every request due at or before now, in (tick, submission)
// order, calling its callback. Callbacks may submit more requests; those
// complete on later ticks.
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
	sort.Slice(s.due, func(i, j int) bool {
		if s.due[i].completeTick != s.due[j].completeTick {
			return s.due[i].completeTick < s.due[j].completeTick
		}
		return s.due[i].sequence < s.due[j].sequence
	})
	// Callbacks may submit new requests (appended to s.pending, completing
	// on a later tick); they never touch s.due.
	for i, r := range s.due {
		s.due[i] = nil
		r.done(s.complete(r))
	}
	s.due = s.due[:0]
}

func (s *Storage) complete(r *ioRequest) error {
	switch r.kind {
	case ioRead:
		first := r.offset / vsr.SectorSize
		for i := 0; i*vsr.SectorSize < len(r.buf); i++ {
			k := sectorKey{r.zone, first + uint64(i)}
			if s.latent[k] {
				s.Counters.ReadErrors++
				return fmt.Errorf("replica %d zone %d sector %d: %w", s.replica, r.zone, k.sector, ErrLatentSector)
			}
			dst := r.buf[i*vsr.SectorSize : (i+1)*vsr.SectorSize]
			if d, ok := s.volatile[k]; ok {
				copy(dst, d)
			} else if d, ok := s.durable[k]; ok {
				copy(dst, d)
			} else {
				clear(dst)
			}
		}
		return nil
	case ioWrite:
		s.land(r, len(r.buf)/vsr.SectorSize)
		return nil
	default:
		for _, w := range r.snapshot {
			s.durable[w.key] = w.data
			if v, ok := s.volatile[w.key]; ok && &v[0] == &w.data[0] {
				delete(s.volatile, w.key)
			}
		}
		return nil
	}
}

// land applies the first sectors sectors of write r to the volatile layer.
func (s *Storage) land(r *ioRequest, sectors int) {
	first := r.misdirect / vsr.SectorSize
	for i := 0; i < sectors; i++ {
		k := sectorKey{r.zone, first + uint64(i)}
		s.volatile[k] = r.buf[i*vsr.SectorSize : (i+1)*vsr.SectorSize : (i+1)*vsr.SectorSize]
		delete(s.latent, k)
		if s.storageFaultsOn(r.zone) && s.prng.Chance(s.params.LatentErrorPPM) {
			s.latent[k] = true
			s.Counters.LatentSectors++
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
	sort.Slice(pending, func(i, j int) bool { return pending[i].sequence < pending[j].sequence })
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
	for _, k := range s.volatileKeys() {
		if s.prng.Chance(s.params.UnsyncedKeepPPM) {
			s.durable[k] = s.volatile[k]
		} else {
			s.Counters.UnsyncedLost++
		}
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
