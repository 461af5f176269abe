package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/zeebo/xxh3"
)

// Consumer offset files (PROTOCOL.md §6.8): `offsets/consumers/{id}` and
// `offsets/groups/{id}` under the partition directory, each 16 bytes
// `[offset u64][XXH3-64 of those 8 bytes]`; an 8-byte file (no checksum)
// is accepted on read. Writes go to `{id}.tmp` and are renamed over the
// file, so a reader sees the old or the new value, never a mix.
const (
	// OffsetFileSize is the size of an offset file written by Strata.
	OffsetFileSize = 16
	// offsetFileLegacySize is the checksum-less form accepted on read.
	offsetFileLegacySize = 8
	offsetsDir           = "offsets"
	tempSuffix           = ".tmp"
)

// OffsetKind says whose offset a file holds.
type OffsetKind uint8

// Offset kinds, numbered as the protocol's consumer kinds (§4.3).
const (
	ConsumerOffset OffsetKind = 1 // an individual consumer
	GroupOffset    OffsetKind = 2 // a consumer group
)

func (k OffsetKind) dirName() (string, error) {
	switch k {
	case ConsumerOffset:
		return "consumers", nil
	case GroupOffset:
		return "groups", nil
	}
	return "", fmt.Errorf("offset kind %d: %w", k, ErrInvalidArgument)
}

// EncodeOffsetFile returns the 16-byte image of an offset file.
func EncodeOffsetFile(offset uint64) [OffsetFileSize]byte {
	var b [OffsetFileSize]byte
	binary.LittleEndian.PutUint64(b[0:], offset)
	binary.LittleEndian.PutUint64(b[8:], xxh3.Hash(b[0:8]))
	return b
}

// DecodeOffsetFile decodes an offset file image: 16 bytes with a verified
// checksum, or 8 bytes without one.
func DecodeOffsetFile(b []byte) (uint64, error) {
	switch len(b) {
	case OffsetFileSize:
		if binary.LittleEndian.Uint64(b[8:]) != xxh3.Hash(b[0:8]) {
			return 0, fmt.Errorf("offset file checksum: %w", ErrCorrupt)
		}
		return binary.LittleEndian.Uint64(b), nil
	case offsetFileLegacySize:
		return binary.LittleEndian.Uint64(b), nil
	}
	return 0, fmt.Errorf("offset file of %d bytes: %w", len(b), ErrCorrupt)
}

// StoredOffset is one consumer or group offset of a partition.
type StoredOffset struct {
	Kind   OffsetKind
	ID     uint32
	Offset uint64
}

// InvalidOffsetFile is an offset file that could not be read as one.
type InvalidOffsetFile struct {
	File string
	Err  error
}

// offsetPath returns the directory and file path of an offset.
func offsetPath(partitionDir string, kind OffsetKind, id uint32) (string, string, error) {
	sub, err := kind.dirName()
	if err != nil {
		return "", "", err
	}
	dir := path.Join(partitionDir, offsetsDir, sub)
	return dir, path.Join(dir, strconv.FormatUint(uint64(id), 10)), nil
}

// StoreConsumerOffset writes an offset file through a temporary file and
// a rename. With durable, the temporary file is synced before the rename
// and the directory after it, so the new value survives a power loss.
func StoreConsumerOffset(fsys FS, partitionDir string, kind OffsetKind, id uint32, offset uint64, durable bool) error {
	dir, p, err := offsetPath(partitionDir, kind, id)
	if err != nil {
		return err
	}
	image := EncodeOffsetFile(offset)
	return writeFileAtomic(fsys, dir, p, image[:], durable)
}

// WriteFileAtomic replaces the file p in directory dir with data,
// durably and crash-atomically, as the offset files are written: p.tmp is
// written and synced, renamed over p, and dir synced. A crash leaves the
// old file or the new one, whole (a small state file of the server's:
// a partition's flushed.state).
func WriteFileAtomic(fsys FS, dir, p string, data []byte) error {
	return writeFileAtomic(fsys, dir, p, data, true)
}

// writeFileAtomic replaces p with data via p.tmp and a rename.
func writeFileAtomic(fsys FS, dir, p string, data []byte, durable bool) error {
	if err := fsys.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp := p + tempSuffix
	if err := writeFull(fsys, tmp, data, durable); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, p); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if durable {
		if err := fsys.SyncDir(dir); err != nil {
			return fmt.Errorf("sync directory %s: %w", dir, err)
		}
	}
	return nil
}

// DeleteConsumerOffset removes an offset file; a missing one is not an
// error.
func DeleteConsumerOffset(fsys FS, partitionDir string, kind OffsetKind, id uint32) error {
	_, p, err := offsetPath(partitionDir, kind, id)
	if err != nil {
		return err
	}
	if err := fsys.Remove(p); err != nil && !errors.Is(err, ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}

// PurgeConsumerOffsets removes every offset file of the partition.
func PurgeConsumerOffsets(fsys FS, partitionDir string) error {
	p := path.Join(partitionDir, offsetsDir)
	if err := fsys.RemoveAll(p); err != nil {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}

// LoadConsumerOffsets reads every offset file of the partition, consumers
// first, each kind in file-name order. Files that cannot be decoded are
// returned in invalid (never silently skipped) for the caller to report;
// leftover temporary files are ignored. I/O errors are returned.
func LoadConsumerOffsets(fsys FS, partitionDir string) (offsets []StoredOffset, invalid []InvalidOffsetFile, err error) {
	for _, kind := range []OffsetKind{ConsumerOffset, GroupOffset} {
		sub, err := kind.dirName()
		if err != nil {
			return nil, nil, err
		}
		dir := path.Join(partitionDir, offsetsDir, sub)
		entries, err := fsys.ReadDir(dir)
		if errors.Is(err, ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("list %s: %w", dir, err)
		}
		for _, e := range entries {
			if e.IsDir || strings.HasSuffix(e.Name, tempSuffix) {
				continue
			}
			p := path.Join(dir, e.Name)
			id, perr := strconv.ParseUint(e.Name, 10, 32)
			if perr != nil {
				invalid = append(invalid, InvalidOffsetFile{File: p, Err: fmt.Errorf("file name is not a u32 id: %w", ErrCorrupt)})
				continue
			}
			image, err := readFull(fsys, p)
			if err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", p, err)
			}
			offset, derr := DecodeOffsetFile(image)
			if derr != nil {
				invalid = append(invalid, InvalidOffsetFile{File: p, Err: derr})
				continue
			}
			offsets = append(offsets, StoredOffset{Kind: kind, ID: uint32(id), Offset: offset})
		}
	}
	return offsets, invalid, nil
}
