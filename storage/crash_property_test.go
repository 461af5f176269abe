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

// TestMetaJournalCrashProperty does the same for the metadata journal with
// checkpoints: after each recovery the restored snapshot plus the replayed
// ops are exactly ops 1..n for some n between the last synced op and the
// last appended op.
func TestMetaJournalCrashProperty(t *testing.T) {
	truncations, checkpoints := 0, 0
	defer func() {
		if !t.Failed() && (truncations == 0 || checkpoints == 0) {
			t.Fatalf("%d truncations and %d checkpoints: recovery not exercised", truncations, checkpoints)
		}
	}()
	for seed := uint64(1); seed <= 25; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0xfeed))
			fsys := memfs.New()
			slots := 3 + rng.IntN(6)
			open := func() (*storage.MetaJournal, uint64) {
				t.Helper()
				var restoredOp uint64
				var ops []uint64
				j, report, err := storage.OpenMetaJournal(fsys, "/m", storage.MetaJournalOptions{Slots: slots},
					func(op uint64, state []byte) error {
						if string(state) != fmt.Sprintf("state@%d", op) {
							return fmt.Errorf("snapshot op %d holds %q", op, state)
						}
						restoredOp = op
						return nil
					},
					func(e storage.MetaEntry) error {
						ops = append(ops, e.Op)
						return nil
					})
				if err != nil {
					t.Fatalf("open: %v", err)
				}
				if report.Truncation != nil {
					truncations++
				}
				for i, op := range ops {
					if op != restoredOp+1+uint64(i) {
						t.Fatalf("replayed %v after snapshot %d (%+v)", ops, restoredOp, report)
					}
				}
				return j, j.LastOp()
			}
			j, _ := open()
			synced, appended := uint64(0), uint64(0)
			for step := 0; step < 80; step++ {
				switch r := rng.IntN(10); {
				case r < 6:
					if j.NeedsCheckpoint() {
						if err := j.Checkpoint(fmt.Appendf(nil, "state@%d", j.LastOp())); err != nil {
							t.Fatal(err)
						}
						checkpoints++
						synced = j.LastOp()
					}
					sync := rng.IntN(2) == 0
					op := j.LastOp() + 1
					if err := j.Append(storage.MetaEntry{Op: op, Body: fmt.Appendf(nil, "op-%d", op)}, sync); err != nil {
						t.Fatalf("append: %v", err)
					}
					appended = op
					if sync {
						synced = op
					}
				case r < 8:
					if rng.IntN(2) == 0 {
						fsys.Crash()
					} else {
						fsys.CrashTorn("/m/journal.wal", int64(rng.IntN(200)))
					}
					var last uint64
					j, last = open()
					if last < synced || last > appended {
						t.Fatalf("step %d: recovered op %d, synced %d, appended %d", step, last, synced, appended)
					}
					synced, appended = last, last
				default:
					if err := j.Sync(); err != nil {
						t.Fatal(err)
					}
					synced = appended
				}
			}
		})
	}
}
