package storage_test

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
)

// BenchmarkLogAppendFlush writes flushes of 1000 separate 1 KiB batches
// to a real file (no fdatasync): "gathered" copies them into one buffer
// and calls Append, as the broker did, the copy included in the time;
// "vectored" hands them to AppendBatches.
func BenchmarkLogAppendFlush(b *testing.B) {
	const (
		batchesPerFlush = 1000
		batchBytes      = 1024
		// logBytesMax bounds the disk a run uses: the log is purged
		// (outside the timer) when it grows past it.
		logBytesMax = 256 << 20
	)
	for _, vectored := range []bool{false, true} {
		name := "gathered"
		if vectored {
			name = "vectored"
		}
		b.Run(name, func(b *testing.B) {
			l, _, err := storage.OpenLog(storage.OSFS{}, b.TempDir(), storage.LogOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}()
			batches := make([][]byte, batchesPerFlush)
			var builder wire.BatchBuilder
			payload := make([]byte, batchBytes-wire.BatchHeaderSize-wire.MessageHeaderSize)
			for i := range batches {
				builder.Reset()
				if err := builder.Add(wire.MessageID{Low: uint64(i + 1)}, payload, nil, 1); err != nil {
					b.Fatal(err)
				}
				batch, err := builder.Finish()
				if err != nil {
					b.Fatal(err)
				}
				batches[i] = append([]byte(nil), batch...)
			}
			gather := make([]byte, 0, batchesPerFlush*batchBytes)
			b.SetBytes(int64(batchesPerFlush * batchBytes))
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				if l.Stats().Bytes > logBytesMax {
					if err := l.Purge(0); err != nil {
						b.Fatal(err)
					}
				}
				next := l.NextOffset()
				for i, batch := range batches {
					if err := wire.StampBatch(batch, 0, next+uint64(i), next+uint64(i)); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if vectored {
					err = l.AppendBatches(batches)
				} else {
					gather = gather[:0]
					for _, batch := range batches {
						gather = append(gather, batch...)
					}
					err = l.Append(gather)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
