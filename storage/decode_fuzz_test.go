package storage

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzIndexDecode(f *testing.F) {
	var two [2 * IndexEntrySize]byte
	PutIndexEntry(two[:], IndexEntry{Offset: 0, Timestamp: 5, Position: 0})
	PutIndexEntry(two[IndexEntrySize:], IndexEntry{Offset: 10, Timestamp: 6, Position: 4096})
	f.Add(two[:])
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		entries, valid := DecodeIndex(b)
		if valid > len(b) || valid != len(entries)*IndexEntrySize {
			t.Fatalf("valid bytes %d for %d entries of %d bytes", valid, len(entries), len(b))
		}
		var image [IndexEntrySize]byte
		for i, e := range entries {
			PutIndexEntry(image[:], e)
			if !bytes.Equal(image[:], b[i*IndexEntrySize:(i+1)*IndexEntrySize]) {
				t.Fatal("re-encoded entry differs")
			}
			if i > 0 && (e.Position <= entries[i-1].Position || e.Offset <= entries[i-1].Offset) {
				t.Fatal("entries out of order")
			}
		}
	})
}

func FuzzPartitionSuperblockDecode(f *testing.F) {
	good := EncodePartitionSuperblock(PartitionSuperblock{Sequence: 2, PurgeGeneration: 1, FirstOffset: 10, DurableOffset: 99,
		Flags: 7, DurableMessages: 80, ReservedOffset: 16483})
	f.Add(good[:], uint64(0))
	v1 := EncodePartitionSuperblock(PartitionSuperblock{Version: 1, Sequence: 3, FirstOffset: 5, DurableOffset: 90})
	f.Add(v1[:], uint64(1))
	f.Add(make([]byte, SuperblockSize), uint64(2))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		s, err := DecodePartitionSuperblock(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v", err)
			}
		} else {
			if s.Version != 1 && s.Version != PartitionSuperblockVersion {
				t.Fatalf("version %d", s.Version)
			}
			again := EncodePartitionSuperblock(s)
			if !bytes.Equal(again[:], b) {
				t.Fatal("decode(encode) differs")
			}
		}
		// Round trip of a current-version superblock built from the input.
		built := PartitionSuperblock{Version: PartitionSuperblockVersion, Sequence: seed, PurgeGeneration: seed >> 1,
			FirstOffset: uint64(len(b)), DurableOffset: seed ^ 0x5555, Flags: seed * 3, DurableMessages: seed >> 3, ReservedOffset: seed + 1}
		image := EncodePartitionSuperblock(built)
		if got, err := DecodePartitionSuperblock(image[:]); err != nil || got != built {
			t.Fatalf("round trip: %+v %v", got, err)
		}
	})
}

func FuzzOffsetFileDecode(f *testing.F) {
	good := EncodeOffsetFile(12345)
	f.Add(good[:])
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		offset, err := DecodeOffsetFile(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v", err)
			}
			return
		}
		again := EncodeOffsetFile(offset)
		if len(b) == OffsetFileSize && !bytes.Equal(again[:], b) {
			t.Fatal("decode(encode) differs")
		}
		if len(b) == offsetFileLegacySize && !bytes.Equal(again[:8], b) {
			t.Fatal("legacy offset differs")
		}
	})
}
