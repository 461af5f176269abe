// Package journal stores the prepares of a VSR replica in two storage
// zones: one sector per slot of checksummed headers, and one fixed-size
// area per slot holding the full checksummed prepare. Slot = op % slots.
// A record that replaces a slot's prepare (an installed header, a removal)
// goes to both zones, so that one faulty zone of a slot never brings back
// what it replaced; the writes to one slot of a zone land in order.
//
// The journal knows nothing of the prepare format beyond its bytes: it
// frames each record with magic, kind, op, length and a checksum, and
// reports a record that is torn, corrupt, misdirected or unreadable as a
// faulty slot instead of returning its bytes. Like the rest of the core it
// is pure: all IO goes through Device, whose completions arrive later.
package journal

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"
)

// SectorSize is the unit of atomic writes; it equals vsr.SectorSize.
const SectorSize = 4096

// recordFrameSize is the size of the frame in front of every record:
// magic, version, kind, op, length, write sequence, checksum.
const recordFrameSize = 48

// recordSummedSize is the part of the frame the checksum covers.
const recordSummedSize = 32

// HeaderPayloadMax is the largest header a header record can hold.
const HeaderPayloadMax = SectorSize - recordFrameSize

// SlotsMax bounds Config.Slots.
const SlotsMax = 1 << 16

const (
	recordMagic   = 0x4c41574a // "JWAL"
	recordVersion = 2
	kindPrepare   = 2
)

// HeaderKind says what a header record asserts about its slot.
type HeaderKind uint8

const (
	// HeaderDurable is written after the slot's prepare was durable: if the
	// prepare then fails to read, it was corrupted, not lost.
	HeaderDurable HeaderKind = 1
	// HeaderInstalled records a header adopted from a peer (a view change)
	// whose prepare this replica does not hold.
	HeaderInstalled HeaderKind = 3
	// HeaderRemoved records that the op was truncated from the log; the
	// payload is empty.
	HeaderRemoved HeaderKind = 4
)

// mirrored reports whether a header record of kind k is written to both
// zones. An installed header or a removal replaces what the slot's
// prepare zone holds (an older prepare, which a restart must not bring
// back): with the record in the header zone alone, one faulty header
// sector (a latent error, a stale read returning the record before it)
// would resurrect that prepare. A HeaderDurable record is the second copy
// of the prepare beside it and never overwrites it.
func (k HeaderKind) mirrored() bool { return k == HeaderInstalled || k == HeaderRemoved }

// valid reports whether k is one of the kinds above.
func (k HeaderKind) valid() bool {
	return k == HeaderDurable || k == HeaderInstalled || k == HeaderRemoved
}

// Errors reported by the journal.
var (
	// ErrFaulty marks a slot whose record is missing, torn, corrupt or
	// unreadable; its content must be repaired from a peer.
	ErrFaulty = errors.New("journal: faulty slot")
	// ErrMisdirected marks a slot holding a valid record of another op.
	ErrMisdirected = errors.New("journal: record of another op")
	// ErrTooLarge means a record does not fit its slot.
	ErrTooLarge = errors.New("journal: record too large")
	// ErrConfig reports an invalid Config.
	ErrConfig = errors.New("journal: invalid config")
)

// Device is one zone of a replica's storage. Completions run later, on the
// goroutine that drives the journal, never inside the call.
type Device interface {
	Read(offset uint64, buf []byte, done func(err error))
	Write(offset uint64, data []byte, done func(err error))
}

// Config sizes a journal.
type Config struct {
	// Slots is the number of prepares the journal holds.
	Slots uint64
	// PrepareSlotSize is the bytes reserved per prepare, a multiple of
	// SectorSize; a record needs its length plus a 48-byte frame
	// (recordFrameSize).
	PrepareSlotSize uint64
}

// Journal is the slot-addressed prepare store. Who may call it: the replica
// that owns the devices, from its own goroutine.
type Journal struct {
	cfg      Config
	headers  Device
	prepares Device
	// seqLast is the highest write sequence submitted: a record's sequence
	// orders it against the other records of its slot at open, so each
	// write must carry a higher one than every write before it.
	seqLast uint64
	written bool
	// queues orders the writes to each slot of each zone (index zoneHeaders
	// or zonePrepares): a write is submitted only once the one before it
	// completed, so that the newest record is the one the sector keeps (a
	// device may complete concurrent writes in any order). A slot has a
	// queue only while a write to it is in flight: a journal that writes
	// nothing (a replicated group's) holds none, whatever its slots.
	queues [2]map[uint64]*slotQueue
}

const (
	zoneHeaders  = 0
	zonePrepares = 1
)

// assertNextSeq checks that a write's sequence is above every sequence
// written before (the caller's contract; recovery relies on it).
func (j *Journal) assertNextSeq(op, seq uint64) {
	if j.written && seq <= j.seqLast {
		panic(fmt.Sprintf("journal: record of op %d with sequence %d after sequence %d", op, seq, j.seqLast))
	}
	j.seqLast, j.written = seq, true
}

// slotQueue holds the writes of one slot waiting for the one in flight.
type slotQueue struct {
	busy    bool
	waiting []func(done func())
}

// HeaderRecord is one slot of the header zone as read back.
type HeaderRecord struct {
	// Slot is the slot index.
	Slot uint64
	// Op is the op the record was written for (valid when Err is nil).
	Op uint64
	// Seq is the record's write sequence.
	Seq uint64
	// Kind says what the record asserts.
	Kind HeaderKind
	// Header holds the header bytes (valid when Err is nil).
	Header []byte
	// Err is nil or wraps ErrFaulty.
	Err error
	// Blank reports a slot that was never written (all zero frame).
	Blank bool
}

// New returns a journal over the two devices.
func New(cfg Config, headers, prepares Device) (*Journal, error) {
	if cfg.Slots == 0 || cfg.Slots > SlotsMax {
		return nil, fmt.Errorf("%w: slots %d", ErrConfig, cfg.Slots)
	}
	if cfg.PrepareSlotSize < SectorSize || cfg.PrepareSlotSize%SectorSize != 0 {
		return nil, fmt.Errorf("%w: prepare slot size %d", ErrConfig, cfg.PrepareSlotSize)
	}
	return &Journal{cfg: cfg, headers: headers, prepares: prepares}, nil
}

// ordered runs write, which must call its done once its device write
// completed, after every earlier write to the same slot of zone did.
func (j *Journal) ordered(zone int, slot uint64, write func(done func())) {
	queues := j.queues[zone]
	if queues == nil {
		queues = make(map[uint64]*slotQueue)
		j.queues[zone] = queues
	}
	q := queues[slot]
	if q != nil && q.busy {
		q.waiting = append(q.waiting, write)
		return
	}
	if q == nil {
		q = &slotQueue{}
		queues[slot] = q
	}
	q.busy = true
	var next func(w func(done func()))
	next = func(w func(done func())) {
		w(func() {
			if len(q.waiting) == 0 {
				q.busy = false
				q.waiting = q.waiting[:0]
				delete(queues, slot)
				return
			}
			w2 := q.waiting[0]
			q.waiting = q.waiting[1:]
			next(w2)
		})
	}
	next(write)
}

// Slots returns the number of slots.
func (j *Journal) Slots() uint64 { return j.cfg.Slots }

// Slot returns the slot of op.
func (j *Journal) Slot(op uint64) uint64 { return op % j.cfg.Slots }

// PrepareSizeMax is the largest prepare a slot holds.
func (j *Journal) PrepareSizeMax() uint64 { return j.cfg.PrepareSlotSize - recordFrameSize }

// sectorsFor rounds n up to whole sectors.
func sectorsFor(n uint64) uint64 { return (n + SectorSize - 1) / SectorSize * SectorSize }

// frame writes a record frame and payload into buf, which must hold
// recordFrameSize+len(payload) bytes. seq orders records of a slot: the
// highest valid one is the newest.
func frame(buf []byte, kind uint8, op, seq uint64, payload []byte) {
	le := binary.LittleEndian
	le.PutUint32(buf[0:], recordMagic)
	le.PutUint16(buf[4:], recordVersion)
	buf[6] = kind
	buf[7] = 0
	le.PutUint64(buf[8:], op)
	le.PutUint32(buf[16:], uint32(len(payload)))
	le.PutUint32(buf[20:], 0)
	le.PutUint64(buf[24:], seq)
	copy(buf[recordFrameSize:], payload)
	sum := recordChecksum(buf[:recordSummedSize], payload)
	le.PutUint64(buf[32:], sum.Lo)
	le.PutUint64(buf[40:], sum.Hi)
}

func recordChecksum(frameHead, payload []byte) xxh3.Uint128 {
	h := xxh3.New()
	_, _ = h.Write(frameHead)
	_, _ = h.Write(payload)
	return h.Sum128()
}

// assertFramed checks, in the invariants build, that a record framed for
// writing reads back as what was framed: its checksum is checked before the
// write as it is after every read.
func assertFramed(buf []byte, kind uint8, op, seq uint64, payload []byte) {
	if !invariants {
		return
	}
	rec, err := unframe(buf)
	if err != nil || rec.kind != kind || rec.op != op || rec.seq != seq || string(rec.payload) != string(payload) {
		panic(fmt.Sprintf("journal: record of op %d does not read back as framed: %v", op, err))
	}
}

// record is a verified record: its kind, op, sequence and payload.
type record struct {
	kind    uint8
	op      uint64
	seq     uint64
	payload []byte
}

// unframe verifies a record and returns it (the payload aliases buf).
func unframe(buf []byte) (record, error) {
	if len(buf) < recordFrameSize {
		return record{}, fmt.Errorf("%w: short record", ErrFaulty)
	}
	le := binary.LittleEndian
	if le.Uint32(buf[0:]) != recordMagic || le.Uint16(buf[4:]) != recordVersion {
		return record{}, fmt.Errorf("%w: bad frame", ErrFaulty)
	}
	n := uint64(le.Uint32(buf[16:]))
	if n > uint64(len(buf)-recordFrameSize) {
		return record{}, fmt.Errorf("%w: length %d", ErrFaulty, n)
	}
	payload := buf[recordFrameSize : recordFrameSize+n]
	sum := recordChecksum(buf[:recordSummedSize], payload)
	if sum.Lo != le.Uint64(buf[32:]) || sum.Hi != le.Uint64(buf[40:]) {
		return record{}, fmt.Errorf("%w: checksum", ErrFaulty)
	}
	return record{kind: buf[6], op: le.Uint64(buf[8:]), seq: le.Uint64(buf[24:]), payload: payload}, nil
}

// WritePrepare stores the full prepare of op in its slot with write
// sequence seq and calls done when the write completed (not synced: the
// caller syncs the storage). The journal copies the bytes.
func (j *Journal) WritePrepare(op, seq uint64, prepare []byte, done func(err error)) {
	if uint64(len(prepare)) > j.PrepareSizeMax() {
		done(fmt.Errorf("%w: prepare of %d bytes", ErrTooLarge, len(prepare)))
		return
	}
	j.assertNextSeq(op, seq)
	buf := make([]byte, sectorsFor(uint64(recordFrameSize+len(prepare))))
	frame(buf, kindPrepare, op, seq, prepare)
	assertFramed(buf, kindPrepare, op, seq, prepare)
	slot := j.Slot(op)
	j.ordered(zonePrepares, slot, func(next func()) {
		j.prepares.Write(slot*j.cfg.PrepareSlotSize, buf, func(err error) {
			next()
			if err != nil {
				done(fmt.Errorf("journal: write prepare op %d: %w", op, err))
				return
			}
			done(nil)
		})
	})
}

// WriteHeader stores a header record of the given kind for op in the
// header zone, with write sequence seq; an installed header or a removal
// goes to the slot's prepare zone too (HeaderKind.mirrored), and done runs
// once both writes completed.
func (j *Journal) WriteHeader(op, seq uint64, kind HeaderKind, header []byte, done func(err error)) {
	j.writeHeader(op, seq, kind, header, kind.mirrored(), done)
}

// WriteHeaderCopies stores a header record in both zones of op's slot,
// whatever its kind: the HeaderDurable record of a prepare whose body
// read back faulty, so that the slot keeps saying, in both zones, that
// the op was durable (and may have been acked) until its body is repaired.
func (j *Journal) WriteHeaderCopies(op, seq uint64, kind HeaderKind, header []byte, done func(err error)) {
	j.writeHeader(op, seq, kind, header, true, done)
}

func (j *Journal) writeHeader(op, seq uint64, kind HeaderKind, header []byte, both bool, done func(err error)) {
	if len(header) > HeaderPayloadMax {
		done(fmt.Errorf("%w: header of %d bytes", ErrTooLarge, len(header)))
		return
	}
	if !kind.valid() {
		done(fmt.Errorf("%w: header kind %d", ErrConfig, kind))
		return
	}
	j.assertNextSeq(op, seq)
	buf := make([]byte, SectorSize)
	frame(buf, uint8(kind), op, seq, header)
	assertFramed(buf, uint8(kind), op, seq, header)
	slot := j.Slot(op)
	writes := 1
	if both {
		writes = 2
	}
	var first error
	complete := func(err error) {
		if err != nil && first == nil {
			first = fmt.Errorf("journal: write header op %d: %w", op, err)
		}
		writes--
		if writes == 0 {
			done(first)
		}
	}
	j.ordered(zoneHeaders, slot, func(next func()) {
		j.headers.Write(slot*SectorSize, buf, func(err error) {
			next()
			complete(err)
		})
	})
	if both {
		mirror := append([]byte(nil), buf...)
		j.ordered(zonePrepares, slot, func(next func()) {
			j.prepares.Write(slot*j.cfg.PrepareSlotSize, mirror, func(err error) {
				next()
				complete(err)
			})
		})
	}
}

// SlotRecord is a prepare slot as read back: a prepare, or the copy of a
// header record (HeaderKind.mirrored, WriteHeaderCopies).
type SlotRecord struct {
	Op  uint64
	Seq uint64
	// Kind is zero for a prepare, else the kind of the header record.
	Kind HeaderKind
	// Prepare holds the prepare's bytes (Kind zero), Header the header
	// record's payload (Kind not zero).
	Prepare []byte
	Header  []byte
	// Blank reports, with the error, a slot that was never written (all
	// zero frame), as against one whose record is torn or corrupt.
	Blank bool
	// Torn reports, with the error, a record whose frame is intact (magic
	// and version) but which fails its checksum: a write that tore at a
	// crash, or a power loss that kept some of its unsynced sectors. Op,
	// Seq and Kind are then the frame's, unverified.
	Torn bool
}

// RecordReader is an optional interface of the prepare zone's Device:
// ReadRecord reads the record that starts at offset, of at most max bytes,
// without reading the whole slot. It reads the first sector and, when the
// frame there gives a record longer than a sector and at most max bytes,
// the sectors that hold the rest; buf is those bytes (the first sector
// alone when the frame says otherwise). Parsing buf must give what parsing
// max bytes read at offset gives.
type RecordReader interface {
	ReadRecord(offset, max uint64, done func(buf []byte, err error))
}

// ReadRecordSectors implements RecordReader's rule over read, a
// synchronous read of a device range: the first sector, then the rest of
// the record its frame describes.
func ReadRecordSectors(offset, max uint64, read func(offset uint64, buf []byte) error) ([]byte, error) {
	first := make([]byte, min(SectorSize, max))
	if err := read(offset, first); err != nil {
		return nil, err
	}
	size, ok := RecordSize(first)
	if !ok || size <= uint64(len(first)) || size > max {
		return first, nil
	}
	buf := make([]byte, sectorsFor(size))
	copy(buf, first)
	if err := read(offset+uint64(len(first)), buf[len(first):]); err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadSlot reads the prepare slot (the whole slot, or only its record
// when the device is a RecordReader) and calls done with what it holds,
// or an error wrapping ErrFaulty.
func (j *Journal) ReadSlot(slot uint64, done func(rec SlotRecord, err error)) {
	if rr, ok := j.prepares.(RecordReader); ok {
		rr.ReadRecord(slot*j.cfg.PrepareSlotSize, j.cfg.PrepareSlotSize, func(buf []byte, err error) {
			j.slotRead(slot, buf, err, done)
		})
		return
	}
	buf := make([]byte, j.cfg.PrepareSlotSize)
	j.prepares.Read(slot*j.cfg.PrepareSlotSize, buf, func(err error) {
		j.slotRead(slot, buf, err, done)
	})
}

// slotRead parses what ReadSlot read.
func (j *Journal) slotRead(slot uint64, buf []byte, err error, done func(rec SlotRecord, err error)) {
	if err != nil {
		done(SlotRecord{}, fmt.Errorf("%w: read slot %d: %w", ErrFaulty, slot, err))
		return
	}
	if blankFrame(buf) {
		done(SlotRecord{Blank: true}, fmt.Errorf("%w: slot %d empty", ErrFaulty, slot))
		return
	}
	rec, err := unframe(buf)
	if err == nil && rec.kind != kindPrepare && !HeaderKind(rec.kind).valid() {
		err = fmt.Errorf("%w: slot %d holds kind %d", ErrFaulty, slot, rec.kind)
	}
	if err != nil {
		done(tornFrame(buf), err)
		return
	}
	if rec.kind != kindPrepare {
		done(SlotRecord{Op: rec.op, Seq: rec.seq, Kind: HeaderKind(rec.kind), Header: rec.payload}, nil)
		return
	}
	done(SlotRecord{Op: rec.op, Seq: rec.seq, Prepare: rec.payload}, nil)
}

// tornFrame returns what the intact frame of a record that fails its
// checksum says (SlotRecord.Torn), or an empty SlotRecord.
func tornFrame(buf []byte) SlotRecord {
	le := binary.LittleEndian
	if len(buf) < recordFrameSize || le.Uint32(buf[0:]) != recordMagic || le.Uint16(buf[4:]) != recordVersion {
		return SlotRecord{}
	}
	rec := SlotRecord{Torn: true, Op: le.Uint64(buf[8:]), Seq: le.Uint64(buf[24:])}
	if buf[6] != kindPrepare {
		rec.Kind = HeaderKind(buf[6])
	}
	return rec
}

// ReadHeaders reads every header slot and calls done with one record per
// slot, in slot order. A failed read of the whole zone falls back to
// reading sector by sector so that one bad sector faults one slot only.
func (j *Journal) ReadHeaders(done func(records []HeaderRecord)) {
	buf := make([]byte, j.cfg.Slots*SectorSize)
	j.headers.Read(0, buf, func(err error) {
		records := make([]HeaderRecord, j.cfg.Slots)
		if err == nil {
			for slot := range records {
				records[slot] = parseHeader(uint64(slot), buf[uint64(slot)*SectorSize:uint64(slot+1)*SectorSize])
			}
			done(records)
			return
		}
		j.readHeadersOneByOne(buf, records, 0, done)
	})
}

func (j *Journal) readHeadersOneByOne(buf []byte, records []HeaderRecord, slot uint64, done func([]HeaderRecord)) {
	if slot == j.cfg.Slots {
		done(records)
		return
	}
	sector := buf[slot*SectorSize : (slot+1)*SectorSize]
	j.headers.Read(slot*SectorSize, sector, func(err error) {
		if err != nil {
			records[slot] = HeaderRecord{Slot: slot, Err: fmt.Errorf("%w: read: %w", ErrFaulty, err)}
		} else {
			records[slot] = parseHeader(slot, sector)
		}
		j.readHeadersOneByOne(buf, records, slot+1, done)
	})
}

// blankFrame reports whether buf starts with an all-zero frame: a record
// that was never written, not a torn or corrupt one.
func blankFrame(buf []byte) bool {
	if len(buf) < recordFrameSize {
		return false
	}
	for _, b := range buf[:recordFrameSize] {
		if b != 0 {
			return false
		}
	}
	return true
}

func parseHeader(slot uint64, sector []byte) HeaderRecord {
	if blankFrame(sector) {
		return HeaderRecord{Slot: slot, Err: fmt.Errorf("%w: empty", ErrFaulty), Blank: true}
	}
	rec, err := unframe(sector)
	if err == nil && !HeaderKind(rec.kind).valid() {
		err = fmt.Errorf("%w: header slot holds kind %d", ErrFaulty, rec.kind)
	}
	if err != nil {
		return HeaderRecord{Slot: slot, Err: err}
	}
	return HeaderRecord{Slot: slot, Op: rec.op, Seq: rec.seq, Kind: HeaderKind(rec.kind), Header: rec.payload}
}

// ReadPrepare reads the prepare of op, of at most sizeMax bytes, and calls
// done with its bytes or an error wrapping ErrFaulty or ErrMisdirected.
func (j *Journal) ReadPrepare(op uint64, size uint64, done func(prepare []byte, err error)) {
	if size > j.PrepareSizeMax() {
		done(nil, fmt.Errorf("%w: prepare of %d bytes", ErrTooLarge, size))
		return
	}
	slot := j.Slot(op)
	buf := make([]byte, sectorsFor(recordFrameSize+size))
	j.prepares.Read(slot*j.cfg.PrepareSlotSize, buf, func(err error) {
		if err != nil {
			done(nil, fmt.Errorf("%w: read op %d: %w", ErrFaulty, op, err))
			return
		}
		rec, err := unframe(buf)
		if err == nil && rec.kind != kindPrepare {
			err = fmt.Errorf("%w: kind %d", ErrFaulty, rec.kind)
		}
		if err != nil {
			done(nil, err)
			return
		}
		if rec.op != op {
			done(nil, fmt.Errorf("%w: slot of op %d holds op %d", ErrMisdirected, op, rec.op))
			return
		}
		done(rec.payload, nil)
	})
}
