package main

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

// repairCaseDir is the partition directory of the repair cases.
const repairCaseDir = "/data/streams/0/topics/0/partitions/0"

// buildPartition writes a partition of segments of segmentBytes holding
// messages messages (10 a batch) on fsys, with its superblock at the end
// of the log, and returns the segment start offsets.
func buildPartition(t *testing.T, fsys storage.FS, messages int, segmentBytes int64) []uint64 {
	t.Helper()
	log, _, err := storage.OpenLog(fsys, repairCaseDir, storage.LogOptions{SegmentSizeBytes: segmentBytes})
	if err != nil {
		t.Fatal(err)
	}
	var b wire.BatchBuilder
	for next := 0; next < messages; next += 10 {
		b.Reset()
		for m := next; m < next+10; m++ {
			if err := b.Add(wire.MessageID{Low: uint64(m)}, []byte(fmt.Sprintf("message %d", m)), nil, 5); err != nil {
				t.Fatal(err)
			}
		}
		batch, err := b.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if err := wire.StampBatch(batch, 0, uint64(next), uint64(1000+next)); err != nil {
			t.Fatal(err)
		}
		if err := log.Append(batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	stats := log.Stats()
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	if err := storage.StorePartitionSuperblock(fsys, repairCaseDir, storage.PartitionSuperblock{Sequence: 1, DurableOffset: stats.NextOffset, DurableMessages: stats.Messages, ReservedOffset: stats.NextOffset, Flags: 7}); err != nil {
		t.Fatal(err)
	}
	files, err := segmentFiles(fsys, repairCaseDir)
	if err != nil {
		t.Fatal(err)
	}
	var starts []uint64
	for _, f := range files {
		if strings.HasSuffix(f.name, ".log") {
			starts = append(starts, f.start)
		}
	}
	if len(starts) < 3 {
		t.Fatalf("%d segments, want at least 3", len(starts))
	}
	return starts
}

// tree lists every file under dir on m with its content.
func tree(t *testing.T, m *memfs.FS, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := m.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name)
		if e.IsDir {
			for k, v := range tree(t, m, p) {
				out[k] = v
			}
			continue
		}
		data, _ := m.ReadFile(p)
		out[p] = string(data)
	}
	return out
}

// repairOn runs the repair of repairCaseDir on m and returns its output.
func repairOn(t *testing.T, m *memfs.FS, confirm bool) string {
	t.Helper()
	var out bytes.Buffer
	r := &repairer{disk: m, fs: m, out: &out, confirm: confirm, now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	if !confirm {
		r.fs = dryRunFS{disk: m}
	}
	if err := r.repairPartition(repairCaseDir); err != nil {
		t.Fatalf("repair: %v\n%s", err, out.String())
	}
	return out.String()
}

// reopen opens the repaired log and returns its stats, failing when it is
// still fenced or its superblock disagrees.
func reopen(t *testing.T, m *memfs.FS) storage.LogStats {
	t.Helper()
	log, _, err := storage.OpenLog(m, repairCaseDir, storage.LogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	if c := log.Fenced(); c != nil {
		t.Fatalf("still fenced after the repair: %+v", c)
	}
	sb, _, err := storage.LoadPartitionSuperblock(m, repairCaseDir)
	if err != nil || sb.DurableOffset != log.NextOffset() || sb.ReservedOffset < sb.DurableOffset || sb.Flags != 7 {
		t.Fatalf("superblock %+v (%v), log next %d", sb, err, log.NextOffset())
	}
	return log.Stats()
}

// TestRepairCases runs the repair on the fences it must handle besides
// damage in the middle of a segment (TestFencedPartitionAndRepairThroughTheBinary):
// damage in the first batch of the partition, a missing middle segment,
// and missing history at the end. A dry run never changes a file.
func TestRepairCases(t *testing.T) {
	aside := path.Join(repairCaseDir, "damaged-20250102T030405Z")
	cases := []struct {
		name   string
		damage func(t *testing.T, m *memfs.FS, starts []uint64)
		// next is the next offset after the repair; kept the segments left.
		next  func(starts []uint64) uint64
		kept  func(starts []uint64) []uint64
		moved func(starts []uint64) []uint64
	}{{
		name: "first batch damaged",
		damage: func(t *testing.T, m *memfs.FS, starts []uint64) {
			if !m.Corrupt(path.Join(repairCaseDir, storage.SegmentLogName(starts[0])), wire.BatchHeaderSize+20, 0xFF) {
				t.Fatal("corrupt")
			}
		},
		next:  func([]uint64) uint64 { return 0 },
		kept:  func(starts []uint64) []uint64 { return starts[:1] }, // recreated empty: it names where offsets start
		moved: func(starts []uint64) []uint64 { return starts },
	}, {
		name: "middle segment missing",
		damage: func(t *testing.T, m *memfs.FS, starts []uint64) {
			for _, name := range []string{storage.SegmentLogName(starts[1]), storage.SegmentIndexName(starts[1])} {
				if err := m.Remove(path.Join(repairCaseDir, name)); err != nil {
					t.Fatal(err)
				}
			}
		},
		next:  func(starts []uint64) uint64 { return starts[1] },
		kept:  func(starts []uint64) []uint64 { return starts[:1] },
		moved: func(starts []uint64) []uint64 { return starts[2:] },
	}, {
		name: "missing history at the end",
		damage: func(t *testing.T, m *memfs.FS, starts []uint64) {
			last := starts[len(starts)-1]
			for _, name := range []string{storage.SegmentLogName(last), storage.SegmentIndexName(last)} {
				if err := m.Remove(path.Join(repairCaseDir, name)); err != nil {
					t.Fatal(err)
				}
			}
		},
		next:  func(starts []uint64) uint64 { return starts[len(starts)-1] },
		kept:  func(starts []uint64) []uint64 { return starts[:len(starts)-1] },
		moved: func([]uint64) []uint64 { return nil },
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := memfs.New()
			starts := buildPartition(t, m, 300, 2048)
			tc.damage(t, m, starts)
			before := tree(t, m, "/data")
			dry := repairOn(t, m, false)
			if after := tree(t, m, "/data"); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("the dry run changed files:\n%s", dry)
			}
			out := repairOn(t, m, true)
			t.Logf("%s", out)
			stats := reopen(t, m)
			if stats.NextOffset != tc.next(starts) {
				t.Fatalf("next offset %d after the repair, want %d:\n%s", stats.NextOffset, tc.next(starts), out)
			}
			files, err := segmentFiles(m, repairCaseDir)
			if err != nil {
				t.Fatal(err)
			}
			var kept []uint64
			for _, f := range files {
				if strings.HasSuffix(f.name, ".log") {
					kept = append(kept, f.start)
				}
			}
			if fmt.Sprint(kept) != fmt.Sprint(tc.kept(starts)) {
				t.Fatalf("segments %v after the repair, want %v:\n%s", kept, tc.kept(starts), out)
			}
			var moved []string
			if entries, err := m.ReadDir(aside); err == nil {
				for _, e := range entries {
					if strings.HasSuffix(e.Name, ".log") {
						moved = append(moved, e.Name)
					}
				}
			}
			var want []string
			for _, s := range tc.moved(starts) {
				want = append(want, storage.SegmentLogName(s))
			}
			sort.Strings(moved)
			if fmt.Sprint(moved) != fmt.Sprint(want) {
				t.Fatalf("moved aside %v, want %v:\n%s", moved, want, out)
			}
		})
	}
}
