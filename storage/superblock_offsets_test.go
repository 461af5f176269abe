package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/storage/memfs"
)

func TestPartitionSuperblockAlternatesAndFallsBack(t *testing.T) {
	dir := t.TempDir()
	fsys := storage.OSFS{}
	if _, report, err := storage.LoadPartitionSuperblock(fsys, dir); err != nil || report.Found {
		t.Fatalf("fresh partition: %+v %v", report, err)
	}
	first := storage.PartitionSuperblock{Version: storage.PartitionSuperblockVersion, Sequence: 1, FirstOffset: 0, DurableOffset: 0}
	if err := storage.StorePartitionSuperblock(fsys, dir, first); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "superblock.b")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("StorePartitionSuperblock at sequence 1 writes only superblock.a")
	}
	second := storage.PartitionSuperblock{Version: storage.PartitionSuperblockVersion, Sequence: 2, PurgeGeneration: 1, FirstOffset: 5, DurableOffset: 90, Flags: 0,
		DurableMessages: 85, ReservedOffset: 200}
	if err := storage.StorePartitionSuperblock(fsys, dir, second); err != nil {
		t.Fatal(err)
	}
	got, report, err := storage.LoadPartitionSuperblock(fsys, dir)
	if err != nil || got != second || report.File != filepath.Join(dir, "superblock.b") {
		t.Fatalf("load: %+v %+v %v", got, report, err)
	}
	// Tear superblock.b: the older copy is used and the damage reported.
	if err := os.WriteFile(filepath.Join(dir, "superblock.b"), make([]byte, 60), 0o644); err != nil {
		t.Fatal(err)
	}
	got, report, err = storage.LoadPartitionSuperblock(fsys, dir)
	if err != nil || got != first || len(report.Invalid) != 1 {
		t.Fatalf("fallback: %+v %+v %v", got, report, err)
	}
	// Both damaged: an error, never a default.
	if err := os.WriteFile(filepath.Join(dir, "superblock.a"), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := storage.LoadPartitionSuperblock(fsys, dir); !errors.Is(err, storage.ErrNoSuperblock) {
		t.Fatalf("both damaged: %v", err)
	}
	if err := storage.StorePartitionSuperblock(fsys, dir, storage.PartitionSuperblock{}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("sequence 0: %v", err)
	}
}

func TestPartitionSuperblockTornWriteOnCrash(t *testing.T) {
	fsys := memfs.New()
	if err := fsys.MkdirAll("/p"); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if err := storage.StorePartitionSuperblock(fsys, "/p", storage.PartitionSuperblock{Sequence: seq, DurableOffset: seq * 10}); err != nil {
			t.Fatal(err)
		}
	}
	// Write sequence 4 by hand without syncing, then lose power with the
	// write torn: superblock.b must fall back to... superblock.a (seq 3).
	f, err := fsys.Create("/p/superblock.b")
	if err != nil {
		t.Fatal(err)
	}
	image := storage.EncodePartitionSuperblock(storage.PartitionSuperblock{Sequence: 4, DurableOffset: 40})
	if _, err := f.WriteAt(image[:], 0); err != nil {
		t.Fatal(err)
	}
	fsys.CrashTorn("/p/superblock.b", 64)
	got, _, err := storage.LoadPartitionSuperblock(fsys, "/p")
	if err != nil || got.Sequence != 3 || got.DurableOffset != 30 {
		t.Fatalf("after torn write: %+v %v", got, err)
	}
}

func TestConsumerOffsets(t *testing.T) {
	dir := t.TempDir()
	fsys := storage.OSFS{}
	if offsets, invalid, err := storage.LoadConsumerOffsets(fsys, dir); err != nil || len(offsets) != 0 || len(invalid) != 0 {
		t.Fatalf("empty: %v %v %v", offsets, invalid, err)
	}
	writes := []storage.StoredOffset{
		{Kind: storage.ConsumerOffset, ID: 1, Offset: 10},
		{Kind: storage.ConsumerOffset, ID: 7, Offset: 3},
		{Kind: storage.GroupOffset, ID: 0, Offset: 99},
		{Kind: storage.ConsumerOffset, ID: 1, Offset: 12}, // overwrite
	}
	for i, w := range writes {
		if err := storage.StoreConsumerOffset(fsys, dir, w.Kind, w.ID, w.Offset, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	image, err := os.ReadFile(filepath.Join(dir, "offsets", "consumers", "1"))
	if err != nil || len(image) != storage.OffsetFileSize {
		t.Fatalf("offset file of %d bytes: %v", len(image), err)
	}
	// A legacy 8-byte file, a damaged one and a leftover temporary file.
	if err := os.WriteFile(filepath.Join(dir, "offsets", "groups", "4"), []byte{5, 0, 0, 0, 0, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "offsets", "groups", "5"), []byte{5, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "offsets", "groups", "6.tmp"), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	offsets, invalid, err := storage.LoadConsumerOffsets(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.StoredOffset{
		{Kind: storage.ConsumerOffset, ID: 1, Offset: 12},
		{Kind: storage.ConsumerOffset, ID: 7, Offset: 3},
		{Kind: storage.GroupOffset, ID: 0, Offset: 99},
		{Kind: storage.GroupOffset, ID: 4, Offset: 5},
	}
	if len(offsets) != len(want) {
		t.Fatalf("offsets %+v", offsets)
	}
	for i := range want {
		if offsets[i] != want[i] {
			t.Fatalf("offset %d: %+v, want %+v", i, offsets[i], want[i])
		}
	}
	if len(invalid) != 1 || invalid[0].File != filepath.Join(dir, "offsets", "groups", "5") || !errors.Is(invalid[0].Err, storage.ErrCorrupt) {
		t.Fatalf("invalid %+v", invalid)
	}
	if err := storage.DeleteConsumerOffset(fsys, dir, storage.ConsumerOffset, 7); err != nil {
		t.Fatal(err)
	}
	if err := storage.DeleteConsumerOffset(fsys, dir, storage.ConsumerOffset, 7); err != nil {
		t.Fatalf("deleting a missing offset: %v", err)
	}
	if err := storage.PurgeConsumerOffsets(fsys, dir); err != nil {
		t.Fatal(err)
	}
	if offsets, _, _ := storage.LoadConsumerOffsets(fsys, dir); len(offsets) != 0 {
		t.Fatalf("after purge %+v", offsets)
	}
	if err := storage.StoreConsumerOffset(fsys, dir, 3, 1, 1, false); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("bad kind: %v", err)
	}
}

func TestConsumerOffsetDurability(t *testing.T) {
	fsys := memfs.New()
	if err := storage.StoreConsumerOffset(fsys, "/p", storage.ConsumerOffset, 1, 100, true); err != nil {
		t.Fatal(err)
	}
	// A non-durable overwrite may be lost by a power loss, but the file is
	// then the old value or the new, never damaged.
	if err := storage.StoreConsumerOffset(fsys, "/p", storage.ConsumerOffset, 1, 200, false); err != nil {
		t.Fatal(err)
	}
	if err := storage.StoreConsumerOffset(fsys, "/p", storage.ConsumerOffset, 2, 300, true); err != nil {
		t.Fatal(err)
	}
	fsys.Crash()
	offsets, invalid, err := storage.LoadConsumerOffsets(fsys, "/p")
	if err != nil {
		t.Fatal(err)
	}
	// Offset 2 was durable. Offset 1's non-durable rename survived (memfs
	// namespace changes are durable at once) without its data: the file
	// reads empty and is reported invalid, never taken as a wrong value.
	if len(offsets) != 1 || offsets[0] != (storage.StoredOffset{Kind: storage.ConsumerOffset, ID: 2, Offset: 300}) {
		t.Fatalf("after crash: %+v", offsets)
	}
	if len(invalid) != 1 || invalid[0].File != "/p/offsets/consumers/1" || !errors.Is(invalid[0].Err, storage.ErrCorrupt) {
		t.Fatalf("invalid after crash: %+v", invalid)
	}
}
