package journal

import (
	"bytes"
	"fmt"
	"testing"
)

// recordDevice is a memDevice that reads records by their frame, as
// RecordReader says, counting the bytes it reads.
type recordDevice struct {
	memDevice
	read uint64
}

func (d *recordDevice) ReadRecord(offset, max uint64, done func([]byte, error)) {
	buf, err := ReadRecordSectors(offset, max, func(at uint64, part []byte) error {
		d.read += uint64(len(part))
		copy(part, d.data[at:])
		return nil
	})
	*d.queue = append(*d.queue, func() { done(buf, err) })
}

// TestReadSlotByRecord: a prepare zone that reads records by their frame
// gives ReadSlot the same slot records as reading every slot whole (a
// short prepare, one of several sectors, one that fills the slot, a
// header copy, an empty slot, a torn record, a frame claiming more than
// the slot), and reads only the sectors of each record.
func TestReadSlotByRecord(t *testing.T) {
	q := &[]func(){}
	cfg := Config{Slots: 8, PrepareSlotSize: 4 * SectorSize}
	whole := &memDevice{data: make([]byte, cfg.Slots*cfg.PrepareSlotSize), queue: q}
	byRecord := &recordDevice{memDevice: memDevice{data: whole.data, queue: q}}
	headers := &memDevice{data: make([]byte, cfg.Slots*SectorSize), queue: q}
	writer, err := New(cfg, headers, whole)
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{10, SectorSize, 3*SectorSize - 7, int(cfg.PrepareSlotSize) - recordFrameSize}
	for i, n := range sizes {
		op := uint64(i + 1)
		writer.WritePrepare(op, op, bytes.Repeat([]byte{byte(op)}, n), func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		})
	}
	writer.WriteHeaderCopies(5, 5, HeaderInstalled, []byte("header"), func(error) {})
	run(q)
	// Slot 6 stays empty; slot 7 holds a torn record (its last sector
	// lost) and slot 0 a frame whose length exceeds the slot.
	writer.WritePrepare(7, 7, bytes.Repeat([]byte{7}, 2*SectorSize), func(error) {})
	run(q)
	clear(whole.data[7*cfg.PrepareSlotSize+2*SectorSize : 8*cfg.PrepareSlotSize])
	writer.WritePrepare(8, 8, []byte("x"), func(error) {})
	run(q)
	whole.data[16] = 0xff
	whole.data[17] = 0xff
	whole.data[18] = 0xff

	readAll := func(d Device) []string {
		j, err := New(cfg, headers, d)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for slot := uint64(0); slot < cfg.Slots; slot++ {
			j.ReadSlot(slot, func(rec SlotRecord, err error) {
				got = append(got, fmt.Sprintf("slot %d: op %d seq %d kind %d prepare %x header %q err %v", slot, rec.Op, rec.Seq, rec.Kind, rec.Prepare, rec.Header, err != nil))
			})
			run(q)
		}
		return got
	}
	want, got := readAll(whole), readAll(byRecord)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("by record %s\nwhole     %s", got[i], want[i])
		}
	}
	if byRecord.read >= cfg.Slots*cfg.PrepareSlotSize*3/4 {
		t.Fatalf("read %d bytes of a %d-byte zone", byRecord.read, cfg.Slots*cfg.PrepareSlotSize)
	}
	t.Logf("%d of %d bytes read", byRecord.read, cfg.Slots*cfg.PrepareSlotSize)
}
