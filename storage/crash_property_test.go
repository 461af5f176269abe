package storage_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// TestLogCrashProperty drives a log through seeded random appends, syncs,
// segment rolls, clean reopens, power losses and torn writes, and checks
// after every recovery that nothing synced was lost, nothing never
// appended appeared, every recovered message reads back intact, and a
// crash never looks like corruption.
func TestLogCrashProperty(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 8
	}
	truncations, crashes := 0, 0
	defer func() {
		// The run must have exercised recovery, or it proves nothing.
		if !t.Failed() && (truncations == 0 || crashes == 0) {
			t.Fatalf("%d crashes and %d truncations over %d seeds", crashes, truncations, seeds)
		}
	}()
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			fsys := memfs.New()
			opts := storage.LogOptions{SegmentSizeBytes: int64(1000 + rng.IntN(4000)), IndexIntervalBytes: int64(1 + rng.IntN(2000))}
			l, _, err := storage.OpenLog(fsys, partitionDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			var fb flushBuilder
			synced := uint64(0)
			for step := 0; step < 60; step++ {
				switch r := rng.IntN(10); {
				case r < 6:
					flush := fb.flush(t, 1+rng.IntN(3), 1+rng.IntN(4), 8+rng.IntN(300))
					if err := l.Append(flush); err != nil {
						t.Fatalf("step %d append: %v", step, err)
					}
				case r < 8:
					if err := l.Sync(); err != nil {
						t.Fatalf("step %d sync: %v", step, err)
					}
					synced = fb.next
				default:
					switch rng.IntN(3) {
					case 0:
						if err := l.Sync(); err != nil {
							t.Fatal(err)
						}
						synced = fb.next
						if err := l.Close(); err != nil {
							t.Fatal(err)
						}
					case 1:
						fsys.Crash()
					case 2:
						active := partitionDir + "/" + storage.SegmentLogName(l.Stats().FirstOffset)
						if entries, err := fsys.ReadDir(partitionDir); err == nil {
							for _, e := range entries {
								if len(e.Name) == 24 && e.Name[20:] == ".log" {
									active = partitionDir + "/" + e.Name
								}
							}
						}
						fsys.CrashTorn(active, int64(rng.IntN(3000)))
					}
					var report storage.RecoveryReport
					l, report, err = storage.OpenLog(fsys, partitionDir, opts)
					if err != nil {
						t.Fatalf("step %d reopen: %v", step, err)
					}
					if report.Corruption != nil {
						t.Fatalf("step %d: a crash produced corruption %+v", step, report.Corruption)
					}
					crashes++
					truncations += len(report.Truncations)
					next := l.Stats().NextOffset
					if next < synced || next > fb.next {
						t.Fatalf("step %d: recovered next %d, synced %d, appended %d (%+v)", step, next, synced, fb.next, report)
					}
					fb.next = next
					synced = next // what recovery kept it synced
				}
				if step%10 == 9 {
					expectRange(t, readAll(t, l, 0), 0, l.Stats().NextOffset)
				}
			}
			expectRange(t, readAll(t, l, 0), 0, l.Stats().NextOffset)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLogWithSuperblockCrashProperty is TestLogCrashProperty for a log
// kept with its partition superblock, used as the server uses it: every
// offset is reserved in the superblock before it is handed out, and the
// durable frontier is recorded now and then. After every recovery a
// crash never looks like corruption, nothing synced is lost, and no
// offset handed out before a crash is handed out again (recovery starts
// after the reservation); every message kept reads back, skipped offsets
// included in no read.
func TestLogWithSuperblockCrashProperty(t *testing.T) {
	seeds := 30
	if testing.Short() {
		seeds = 6
	}
	skips, crashes := 0, 0
	defer func() {
		if !t.Failed() && (skips == 0 || crashes == 0) {
			t.Fatalf("%d crashes and %d skips over %d seeds", crashes, skips, seeds)
		}
	}()
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5b5b))
			fsys := memfs.New()
			opts := storage.LogOptions{SegmentSizeBytes: int64(1000 + rng.IntN(4000)), IndexIntervalBytes: int64(1 + rng.IntN(2000))}
			if err := fsys.MkdirAll(partitionDir); err != nil {
				t.Fatal(err)
			}
			sb, err := storage.CreatePartitionSuperblock(fsys, partitionDir, storage.PartitionSuperblock{Flags: seed})
			if err != nil {
				t.Fatal(err)
			}
			opts.Superblock = &sb
			l, _, err := storage.OpenLog(fsys, partitionDir, opts)
			if err != nil {
				t.Fatal(err)
			}
			reservation := uint64(1 + rng.IntN(40))
			var fb flushBuilder
			var present []uint64 // offsets appended and kept, in order
			synced := uint64(0)  // every offset below it was synced
			handedEnd := uint64(0)
			for step := 0; step < 60; step++ {
				switch r := rng.IntN(12); {
				case r < 6:
					batches, perBatch := 1+rng.IntN(3), 1+rng.IntN(4)
					if need := fb.next + uint64(batches*perBatch); need > l.Reserved() {
						if err := l.StoreSuperblock(need + reservation); err != nil {
							t.Fatalf("step %d reserve: %v", step, err)
						}
					}
					from := fb.next
					if err := l.Append(fb.flush(t, batches, perBatch, 8+rng.IntN(300))); err != nil {
						t.Fatalf("step %d append: %v", step, err)
					}
					for o := from; o < fb.next; o++ {
						present = append(present, o)
					}
					handedEnd = fb.next
				case r < 8:
					if err := l.Sync(); err != nil {
						t.Fatalf("step %d sync: %v", step, err)
					}
					synced = fb.next
				case r < 9:
					if err := l.StoreSuperblock(l.Reserved()); err != nil {
						t.Fatalf("step %d frontier: %v", step, err)
					}
				default:
					switch rng.IntN(3) {
					case 0:
						if err := l.Sync(); err != nil {
							t.Fatal(err)
						}
						synced = fb.next
						if err := l.StoreSuperblock(l.NextOffset()); err != nil {
							t.Fatal(err)
						}
						if err := l.Close(); err != nil {
							t.Fatal(err)
						}
					case 1:
						fsys.Crash()
					case 2:
						active := ""
						if entries, err := fsys.ReadDir(partitionDir); err == nil {
							for _, e := range entries {
								if len(e.Name) == 24 && e.Name[20:] == ".log" {
									active = partitionDir + "/" + e.Name
								}
							}
						}
						fsys.CrashTorn(active, int64(rng.IntN(3000)))
					}
					loaded, _, err := storage.LoadPartitionSuperblock(fsys, partitionDir)
					if err != nil {
						t.Fatalf("step %d superblock: %v", step, err)
					}
					opts.Superblock = &loaded
					var report storage.RecoveryReport
					l, report, err = storage.OpenLog(fsys, partitionDir, opts)
					if err != nil {
						t.Fatalf("step %d reopen: %v", step, err)
					}
					if report.Corruption != nil {
						t.Fatalf("step %d: a crash produced corruption %+v (superblock %+v)", step, report.Corruption, loaded)
					}
					crashes++
					end := l.NextOffset() // where the kept messages end
					if report.Skip != nil {
						skips++
						end = report.Skip.From
					}
					if end < synced {
						t.Fatalf("step %d: recovered to %d, synced %d (%+v)", step, end, synced, report)
					}
					if l.NextOffset() < handedEnd {
						t.Fatalf("step %d: next offset %d, offsets up to %d were handed out", step, l.NextOffset(), handedEnd)
					}
					for len(present) > 0 && present[len(present)-1] >= end {
						present = present[:len(present)-1]
					}
					fb.next = l.NextOffset()
					synced = end
				}
				if step%10 == 9 {
					expectOffsets(t, readAll(t, l, 0), present)
				}
			}
			expectOffsets(t, readAll(t, l, 0), present)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// expectOffsets fails unless got equals want.
func expectOffsets(t *testing.T, got, want []uint64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("message %d has offset %d, want %d", i, got[i], want[i])
		}
	}
}
