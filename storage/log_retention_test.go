package storage_test

import (
	"testing"

	"github.com/stratabroker/strata/storage"
)

// TestOldestSealedMeasuresWhatDeleteSealedBelowRemoves: the measurement of
// the oldest sealed segments matches what deleting below its end offset
// removes, the active segment is never counted nor deleted, and nothing
// changes until the deletion.
func TestOldestSealedMeasuresWhatDeleteSealedBelowRemoves(t *testing.T) {
	l, _ := openLog(t, storage.OSFS{}, t.TempDir(), storage.LogOptions{SegmentSizeBytes: 4096})
	var fb flushBuilder
	for i := 0; i < 20; i++ {
		if err := l.Append(fb.flush(t, 2, 3, 200)); err != nil {
			t.Fatal(err)
		}
	}
	before := l.Stats()
	if before.Segments < 4 {
		t.Fatalf("%d segments", before.Segments)
	}
	if none := l.OldestSealed(0); none != (storage.SealedSegments{EndOffset: 0}) {
		t.Fatalf("zero segments: %+v", none)
	}
	two := l.OldestSealed(2)
	if two.Segments != 2 || two.EndOffset == 0 || two.Messages != two.EndOffset || two.Bytes <= 0 || l.Stats() != before {
		t.Fatalf("two oldest: %+v (stats %+v)", two, l.Stats())
	}
	if all := l.OldestSealed(1000); all.Segments != before.Segments-1 || all.EndOffset >= before.NextOffset {
		t.Fatalf("all sealed: %+v", all)
	}
	if deleted, err := l.DeleteSealedBelow(two.EndOffset - 1); err != nil || deleted != 1 {
		t.Fatalf("below the second segment's end: %d %v", deleted, err)
	}
	if deleted, err := l.DeleteSealedBelow(two.EndOffset); err != nil || deleted != 1 {
		t.Fatalf("below the second segment's end, again: %d %v", deleted, err)
	}
	after := l.Stats()
	if after.Segments != before.Segments-2 || after.FirstOffset != two.EndOffset || after.Messages != before.Messages-two.Messages || after.Bytes != before.Bytes-two.Bytes {
		t.Fatalf("after the deletion %+v, before %+v, measured %+v", after, before, two)
	}
	if deleted, err := l.DeleteSealedBelow(^uint64(0)); err != nil || deleted != after.Segments-1 || l.Stats().Segments != 1 {
		t.Fatalf("everything: %d %v, %d segments left", deleted, err, l.Stats().Segments)
	}
	expectRange(t, readAll(t, l, 0), l.Stats().FirstOffset, before.NextOffset)
}
