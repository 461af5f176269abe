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
