package journal

import (
	"bytes"
	"errors"
	"testing"
)

// memDevice is an in-memory Device; completions are queued and run by run.
type memDevice struct {
	data    []byte
	queue   *[]func()
	readErr bool
}

func (d *memDevice) Read(offset uint64, buf []byte, done func(error)) {
	if d.readErr {
		*d.queue = append(*d.queue, func() { done(errors.New("latent sector error")) })
		return
	}
	copy(buf, d.data[offset:])
	*d.queue = append(*d.queue, func() { done(nil) })
}

func (d *memDevice) Write(offset uint64, data []byte, done func(error)) {
	copy(d.data[offset:], data)
	*d.queue = append(*d.queue, func() { done(nil) })
}

func run(q *[]func()) {
	for len(*q) > 0 {
		f := (*q)[0]
		*q = (*q)[1:]
		f()
	}
}

func newTestJournal(t *testing.T) (*Journal, *memDevice, *memDevice, *[]func()) {
	q := &[]func(){}
	cfg := Config{Slots: 8, PrepareSlotSize: 2 * SectorSize}
	h := &memDevice{data: make([]byte, cfg.Slots*SectorSize), queue: q}
	p := &memDevice{data: make([]byte, cfg.Slots*cfg.PrepareSlotSize), queue: q}
	j, err := New(cfg, h, p)
	if err != nil {
		t.Fatal(err)
	}
	return j, h, p, q
}

func TestWriteRead(t *testing.T) {
	j, _, _, q := newTestJournal(t)
	var werr error = errors.New("not called")
	j.WritePrepare(10, 1, []byte("prepare-10"), func(err error) { werr = err })
	run(q)
	if werr != nil {
		t.Fatal(werr)
	}
	j.WriteHeader(10, 2, HeaderDurable, []byte("header-10"), func(err error) { werr = err })
	run(q)
	if werr != nil {
		t.Fatal(werr)
	}
	var records []HeaderRecord
	j.ReadHeaders(func(r []HeaderRecord) { records = r })
	run(q)
	if len(records) != 8 {
		t.Fatalf("%d records", len(records))
	}
	for _, r := range records {
		if r.Slot == 2 {
			if r.Err != nil || r.Op != 10 || r.Seq != 2 || r.Kind != HeaderDurable || string(r.Header) != "header-10" {
				t.Fatalf("slot 2: %+v", r)
			}
		} else if !errors.Is(r.Err, ErrFaulty) {
			t.Fatalf("empty slot %d not faulty: %+v", r.Slot, r)
		}
	}
	var got []byte
	var rerr error
	j.ReadPrepare(10, 10, func(b []byte, err error) { got, rerr = b, err })
	run(q)
	if rerr != nil || !bytes.Equal(got, []byte("prepare-10")) {
		t.Fatalf("read prepare: %q %v", got, rerr)
	}
	j.ReadPrepare(18, 10, func(b []byte, err error) { rerr = err })
	run(q)
	if !errors.Is(rerr, ErrMisdirected) {
		t.Fatalf("slot of op 18 holds op 10, got %v", rerr)
	}
	var slot SlotRecord
	j.ReadSlot(2, func(s SlotRecord, err error) { slot, rerr = s, err })
	run(q)
	if rerr != nil || slot.Op != 10 || slot.Seq != 1 || string(slot.Prepare) != "prepare-10" {
		t.Fatalf("read slot: %+v %v", slot, rerr)
	}
	j.WriteHeader(10, 3, HeaderRemoved, nil, func(err error) { werr = err })
	run(q)
	j.ReadHeaders(func(r []HeaderRecord) { records = r })
	run(q)
	if records[2].Kind != HeaderRemoved || records[2].Seq != 3 || records[2].Err != nil {
		t.Fatalf("tombstone: %+v", records[2])
	}
}

func TestTornAndCorrupt(t *testing.T) {
	j, h, p, q := newTestJournal(t)
	j.WritePrepare(3, 1, bytes.Repeat([]byte{7}, 5000), func(error) {})
	j.WriteHeader(3, 2, HeaderDurable, []byte("h3"), func(error) {})
	run(q)
	// Tear the prepare: its second sector never reached the disk.
	clear(p.data[3*2*SectorSize+SectorSize : 4*2*SectorSize])
	var rerr error
	j.ReadPrepare(3, 5000, func(_ []byte, err error) { rerr = err })
	run(q)
	if !errors.Is(rerr, ErrFaulty) {
		t.Fatalf("torn prepare read as %v", rerr)
	}
	// Corrupt a header byte.
	h.data[3*SectorSize+recordFrameSize+1] ^= 1
	var records []HeaderRecord
	j.ReadHeaders(func(r []HeaderRecord) { records = r })
	run(q)
	if !errors.Is(records[3].Err, ErrFaulty) {
		t.Fatalf("corrupt header read as %+v", records[3])
	}
	// A latent read error of the zone falls back to per-sector reads.
	h.readErr = true
	j.ReadHeaders(func(r []HeaderRecord) { records = r })
	run(q)
	for _, r := range records {
		if !errors.Is(r.Err, ErrFaulty) {
			t.Fatalf("unreadable slot %d not faulty", r.Slot)
		}
	}
}

func TestLimits(t *testing.T) {
	j, _, _, q := newTestJournal(t)
	var err error
	j.WriteHeader(1, 1, HeaderDurable, make([]byte, HeaderPayloadMax+1), func(e error) { err = e })
	run(q)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized header: %v", err)
	}
	j.WritePrepare(1, 1, make([]byte, j.PrepareSizeMax()+1), func(e error) { err = e })
	run(q)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("oversized prepare: %v", err)
	}
	if _, err := New(Config{Slots: 0, PrepareSlotSize: SectorSize}, nil, nil); !errors.Is(err, ErrConfig) {
		t.Fatalf("zero slots: %v", err)
	}
}

func FuzzUnframe(f *testing.F) {
	buf := make([]byte, SectorSize)
	frame(buf, uint8(HeaderDurable), 5, 9, []byte("payload"))
	f.Add(buf)
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := unframe(data)
		if err != nil {
			return
		}
		out := make([]byte, recordFrameSize+len(rec.payload))
		frame(out, rec.kind, rec.op, rec.seq, rec.payload)
		again, err := unframe(out)
		if err != nil || again.op != rec.op || again.seq != rec.seq || again.kind != rec.kind || !bytes.Equal(again.payload, rec.payload) {
			t.Fatalf("unframe(frame(x)) != x: %v", err)
		}
	})
}

// lateDevice lands a write only when its completion runs, and runs its
// completions in the order the test picks (a device may complete
// concurrent writes in any order).
type lateDevice struct {
	data    []byte
	pending []func()
}

func (d *lateDevice) Read(offset uint64, buf []byte, done func(error)) {
	copy(buf, d.data[offset:])
	d.pending = append(d.pending, func() { done(nil) })
}

func (d *lateDevice) Write(offset uint64, data []byte, done func(error)) {
	buf := append([]byte(nil), data...)
	d.pending = append(d.pending, func() {
		copy(d.data[offset:], buf)
		done(nil)
	})
}

// runNewestFirst completes the pending requests newest first until none
// are left.
func (d *lateDevice) runNewestFirst() {
	for len(d.pending) > 0 {
		f := d.pending[len(d.pending)-1]
		d.pending = d.pending[:len(d.pending)-1]
		f()
	}
}

// TestRemovalIsInBothZones: an installed header or a removal replaces
// what the slot's prepare zone holds, so it is written to both zones; a
// header sector that reads back as it was before (a stale read, a latent
// error) then cannot bring the replaced prepare back. Seed 186599 of the
// wider swarm: the removal of op 34 lived in the header zone only, the
// header sector read stale after a restart, the old prepare of op 34
// reappeared in the log and was acked in a later view
// (scenarios/bug_ack_of_removed_prepare_186599.txt).
func TestRemovalIsInBothZones(t *testing.T) {
	for _, kind := range []HeaderKind{HeaderRemoved, HeaderInstalled, HeaderDurable} {
		j, _, p, q := newTestJournal(t)
		j.WritePrepare(10, 1, []byte("prepare-10"), func(error) {})
		run(q)
		var werr error = errors.New("not called")
		j.WriteHeader(10, 2, kind, []byte("header-10"), func(err error) { werr = err })
		run(q)
		if werr != nil {
			t.Fatal(werr)
		}
		var slot SlotRecord
		var rerr error
		j.ReadSlot(2, func(rec SlotRecord, err error) { slot, rerr = rec, err })
		run(q)
		if rerr != nil {
			t.Fatalf("kind %d: read slot: %v", kind, rerr)
		}
		if kind == HeaderDurable {
			// The second copy of the prepare beside it: the prepare stays.
			if slot.Kind != 0 || string(slot.Prepare) != "prepare-10" {
				t.Fatalf("a HeaderDurable record overwrote the prepare: %+v", slot)
			}
			continue
		}
		if slot.Kind != kind || slot.Op != 10 || slot.Seq != 2 || string(slot.Header) != "header-10" || slot.Prepare != nil {
			t.Fatalf("kind %d: the prepare zone holds %+v, want the record's copy", kind, slot)
		}
		if rec, err := ParseRecord(p.data[2*2*SectorSize:]); err != nil || rec.Prepare || rec.Kind != kind {
			t.Fatalf("kind %d: raw prepare zone: %+v %v", kind, rec, err)
		}
	}
}

// TestSlotWritesLandInOrder: writes to one slot are submitted one after
// the other, so the newest record is the one the sector keeps even on a
// device that completes concurrent writes newest first.
func TestSlotWritesLandInOrder(t *testing.T) {
	cfg := Config{Slots: 8, PrepareSlotSize: 2 * SectorSize}
	h := &lateDevice{data: make([]byte, cfg.Slots*SectorSize)}
	p := &lateDevice{data: make([]byte, cfg.Slots*cfg.PrepareSlotSize)}
	j, err := New(cfg, h, p)
	if err != nil {
		t.Fatal(err)
	}
	var done []string
	j.WritePrepare(10, 1, []byte("prepare-10"), func(error) { done = append(done, "prepare") })
	j.WriteHeader(10, 2, HeaderRemoved, nil, func(error) { done = append(done, "removal") })
	j.WritePrepare(10, 3, []byte("prepare-10b"), func(error) { done = append(done, "prepare b") })
	j.WriteHeader(10, 4, HeaderDurable, []byte("header-10b"), func(error) { done = append(done, "seal") })
	for len(h.pending)+len(p.pending) > 0 {
		h.runNewestFirst()
		p.runNewestFirst()
	}
	if len(done) != 4 {
		t.Fatalf("completions: %v", done)
	}
	hrec, herr := ParseRecord(h.data[2*SectorSize:])
	prec, perr := ParseRecord(p.data[2*2*SectorSize:])
	if herr != nil || hrec.Seq != 4 || hrec.Kind != HeaderDurable {
		t.Fatalf("header sector keeps %+v %v, want the seal (seq 4)", hrec, herr)
	}
	if perr != nil || prec.Seq != 3 || !prec.Prepare || string(prec.Payload) != "prepare-10b" {
		t.Fatalf("prepare slot keeps %+v %v, want the second prepare (seq 3)", prec, perr)
	}
}

// TestReadSlotTellsBlankFromTorn: ReadSlot reports a never-written slot as
// Blank and a torn one (an intact frame whose record fails its checksum)
// as Torn, with the op and write sequence its frame names, so that a
// replica can tell a hole nothing was written to from a write that tore,
// and which write it was.
func TestReadSlotTellsBlankFromTorn(t *testing.T) {
	j, _, p, q := newTestJournal(t)
	j.WritePrepare(3, 1, bytes.Repeat([]byte("p"), 100), func(error) {})
	run(q)
	p.data[3*j.cfg.PrepareSlotSize+RecordFrameSize+10] ^= 0xff
	var blank, torn SlotRecord
	var blankErr, tornErr error
	j.ReadSlot(2, func(rec SlotRecord, err error) { blank, blankErr = rec, err })
	j.ReadSlot(3, func(rec SlotRecord, err error) { torn, tornErr = rec, err })
	run(q)
	if !errors.Is(blankErr, ErrFaulty) || !blank.Blank {
		t.Fatalf("never-written slot: %+v, %v; want Blank and ErrFaulty", blank, blankErr)
	}
	if !errors.Is(tornErr, ErrFaulty) || torn.Blank || !torn.Torn || torn.Op != 3 || torn.Seq != 1 || torn.Kind != 0 {
		t.Fatalf("torn slot: %+v, %v; want ErrFaulty, Torn with the frame's op 3 and seq 1, not Blank", torn, tornErr)
	}
}
