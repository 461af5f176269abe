// Package storagetest damages real partition files the way a disk would,
// for the tests of the server and of strata-server repair.
package storagetest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/stratabroker/strata/net/wire"
)

// Damage is a byte flipped inside one stored batch of a segment file.
type Damage struct {
	File     string // the segment file
	Position int64  // byte where the damaged batch starts
	Offset   uint64 // base offset of the damaged batch: the first offset not served
	// Segments are the segment (.log) files of the partition, ascending.
	Segments []string
}

// DamageMiddleSegment flips one byte inside the middle batch of the middle
// segment of partitionDir (its server must be stopped). The batches and
// segments after it stay intact, so this is damage in the middle of the
// log, not a torn tail. It needs at least 3 segments of at least 3
// batches.
func DamageMiddleSegment(partitionDir string) (Damage, error) {
	logs, err := filepath.Glob(filepath.Join(partitionDir, "*.log"))
	if err != nil {
		return Damage{}, err
	}
	sort.Strings(logs)
	if len(logs) < 3 {
		return Damage{}, fmt.Errorf("%d segments in %s, want at least 3", len(logs), partitionDir)
	}
	file := logs[len(logs)/2]
	data, err := os.ReadFile(file)
	if err != nil {
		return Damage{}, err
	}
	type batch struct {
		pos, length int64
		base        uint64
	}
	var batches []batch
	for pos := int64(0); pos < int64(len(data)); {
		if int64(len(data))-pos < wire.BatchHeaderSize {
			return Damage{}, fmt.Errorf("%s: partial batch header at byte %d", file, pos)
		}
		v := wire.BatchView(data[pos:])
		n := int64(v.BatchLength())
		if n < wire.BatchHeaderSize || n > int64(len(data))-pos {
			return Damage{}, fmt.Errorf("%s: unreadable batch at byte %d", file, pos)
		}
		batches = append(batches, batch{pos, n, v.BaseOffset()})
		pos += n
	}
	if len(batches) < 3 {
		return Damage{}, fmt.Errorf("%s holds %d batches, want at least 3", file, len(batches))
	}
	b := batches[len(batches)/2]
	data[b.pos+b.length-3] ^= 0xFF // inside the last message's payload
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return Damage{}, err
	}
	return Damage{File: file, Position: b.pos, Offset: b.base, Segments: logs}, nil
}
