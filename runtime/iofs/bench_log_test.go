package iofs

import (
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
)

// BenchmarkLogAppend appends one stamped batch per iteration to a
// partition log (storage.Log) on each engine, with and without a Log.Sync
// after every append: the broker's write path minus the network. The
// batch holds one message of 1 KiB or 1 MiB; stamping it (offset and
// checksum) is part of each iteration, as in the broker.
func BenchmarkLogAppend(b *testing.B) {
	runAppendBenchmarks(b, benchLogAppend)
}

func benchLogAppend(b *testing.B, fsys storage.FS, payloadBytes int, sync bool) {
	var builder wire.BatchBuilder
	if err := builder.Add(wire.MessageID{Low: 1}, pattern(payloadBytes, 5), nil, 1); err != nil {
		b.Fatal(err)
	}
	batch, err := builder.Finish()
	if err != nil {
		b.Fatal(err)
	}
	// Segments larger than what the log is allowed to hold before a purge:
	// no roll (and its sync of the sealed segment) inside the timed loop.
	opts := storage.LogOptions{SegmentSizeBytes: 2 * benchFileBytesMax}
	l, _, err := storage.OpenLog(fsys, filepath.Join(b.TempDir(), "partition"), opts)
	if err != nil {
		b.Fatal(err)
	}
	next := uint64(0)
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := wire.StampBatch(batch, 1, next, 1000+next); err != nil {
			b.Fatal(err)
		}
		if err := l.Append(batch); err != nil {
			b.Fatalf("append at %d: %v", next, err)
		}
		next++
		if sync {
			if err := l.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		if l.Stats().Bytes >= benchFileBytesMax {
			b.StopTimer()
			if err := l.Purge(0); err != nil {
				b.Fatal(err)
			}
			next = 0
			b.StartTimer()
		}
	}
	b.StopTimer()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
}
