package storage

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzMetaEntryDecode(f *testing.F) {
	h, _ := EncodeMetaEntryHeader(MetaEntry{Op: 3, Timestamp: 9, Operation: 2, Body: []byte("body")}, 77)
	f.Add(append(h[:], "body"...), uint64(77))
	f.Add([]byte("SMJE"), uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, previous uint64) {
		e, sum, n, err := DecodeMetaEntry(b, previous)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error %v is not ErrCorrupt", err)
			}
		} else {
			if n > len(b) || n != MetaEntryHeaderSize+len(e.Body) {
				t.Fatalf("length %d of %d", n, len(b))
			}
			again, againSum := EncodeMetaEntryHeader(e, previous)
			if againSum != sum || !bytes.Equal(again[:], b[:MetaEntryHeaderSize]) {
				t.Fatal("re-encoding a decoded entry differs")
			}
		}
		_ = validMetaHeaderAfter(b, 0)
		// Round trip of an entry built from the input.
		op := uint64(len(b))
		built := MetaEntry{Op: op, Timestamp: previous, Operation: uint8(op), Body: b}
		hdr, builtSum := EncodeMetaEntryHeader(built, previous)
		got, gotSum, gotN, err := DecodeMetaEntry(append(hdr[:], b...), previous)
		if err != nil || gotSum != builtSum || gotN != MetaEntryHeaderSize+len(b) ||
			got.Op != built.Op || got.Timestamp != built.Timestamp || got.Operation != built.Operation || !bytes.Equal(got.Body, b) {
			t.Fatalf("round trip: %+v %v", got, err)
		}
	})
}

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

func FuzzMetadataSuperblockDecode(f *testing.F) {
	good := EncodeMetadataSuperblock(MetadataSuperblock{Sequence: 1, CheckpointOp: 1024, StateChecksum: 5, StateLength: 77})
	f.Add(good[:])
	f.Add([]byte("SMSB"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeMetadataSuperblock(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v", err)
			}
			return
		}
		again := EncodeMetadataSuperblock(s)
		if !bytes.Equal(again[:], b) {
			t.Fatal("decode(encode) differs")
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

func FuzzSnapshotDecode(f *testing.F) {
	f.Add(EncodeSnapshot(42, []byte("state")))
	f.Add(EncodeSnapshot(0, nil))
	f.Add([]byte("SMSN"))
	f.Fuzz(func(t *testing.T, b []byte) {
		op, state, sum, err := DecodeSnapshot(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v", err)
			}
		} else if !bytes.Equal(EncodeSnapshot(op, state), b) {
			t.Fatalf("decode(encode) differs (sum %x)", sum)
		}
		op2, state2, _, err := DecodeSnapshot(EncodeSnapshot(uint64(len(b)), b))
		if err != nil || op2 != uint64(len(b)) || !bytes.Equal(state2, b) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
