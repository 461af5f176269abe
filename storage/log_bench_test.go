package storage_test

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
)

// BenchmarkLogAppend appends 1 KiB batches (one message each, one batch
// per flush) to a real file, with and without an fdatasync per flush.
func BenchmarkLogAppend(b *testing.B) {
	for _, c := range []struct {
		name string
		sync bool
	}{{"nosync", false}, {"sync", true}} {
		b.Run(c.name, func(b *testing.B) {
			l, _, err := storage.OpenLog(storage.OSFS{}, b.TempDir(), storage.LogOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}()
			var builder wire.BatchBuilder
			payload := make([]byte, 1024-wire.BatchHeaderSize-wire.MessageHeaderSize)
			if err := builder.Add(wire.MessageID{Low: 1}, payload, nil, 1); err != nil {
				b.Fatal(err)
			}
			batch, err := builder.Finish()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			next := uint64(0)
			for b.Loop() {
				if err := wire.StampBatch(batch, 0, next, next); err != nil {
					b.Fatal(err)
				}
				if err := l.Append(batch); err != nil {
					b.Fatal(err)
				}
				if c.sync {
					if err := l.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				next++
			}
		})
	}
}

// BenchmarkLogRead polls 100 messages at a time from a log of 1 KiB
// batches of 10 messages.
func BenchmarkLogRead(b *testing.B) {
	l, _, err := storage.OpenLog(storage.OSFS{}, b.TempDir(), storage.LogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}()
	var fb flushBuilder
	for i := 0; i < 100; i++ {
		if err := l.Append(fb.flush(b, 10, 10, 50)); err != nil {
			b.Fatal(err)
		}
	}
	var dst []byte
	from := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		var n uint32
		dst, n, err = l.Read(dst[:0], from, 100, 0)
		if err != nil || n != 100 {
			b.Fatalf("read %d: %v", n, err)
		}
		b.SetBytes(int64(len(dst)))
		from = (from + 100) % (fb.next - 100)
	}
}
