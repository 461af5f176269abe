package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/zeebo/xxh3"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
)

// The flushed state of a replicated partition with peers
// (server/group/flushed.go): flushed.state in the partition directory
// holds the partition's state at its last synced flush, encoded as a vsr
// checkpoint of that op, so that a restart of the group after every
// process crashed keeps the flushed messages past the last descriptor
// checkpoint (vsr/restart.go). Layout (storage/FORMATS.md): magic "SPFS"
// (4), version u16 = 1, reserved (2), op u64, flushed end u64, purge
// generation u64, data length u32, the data, XXH3-64 of everything
// before it. It is written as flushed.state.tmp, synced, renamed over
// flushed.state and the directory synced, only after the segment and
// offset writes up to the op are synced; it is removed (durably) before
// the segments are cut below it, purged, or replaced by a transfer.

// flushedFileName is the partition's flushed state.
const flushedFileName = "flushed.state"

const (
	flushedFileMagic   = "SPFS"
	flushedFileVersion = 1
	// flushedHeaderSize is the bytes before the data.
	flushedHeaderSize = 4 + 2 + 2 + 8 + 8 + 8 + 4
	// flushedDataMax bounds the data: a vsr checkpoint area.
	flushedDataMax = vsrCheckpointMax
)

// errFlushedFormat reports a flushed.state that does not verify.
var errFlushedFormat = errors.New("partition flushed state does not verify")

// flushedFile is what the binding knows of flushed.state.
type flushedFile struct {
	// enabled: the partition keeps one (replicated, with peers).
	enabled bool
	// state is the one on disk (verified at open, or last stored); its
	// Data is nil when there is none. bound, when set (a store that
	// failed), is a newer state the file may hold instead: what decides
	// whether a cut must remove it.
	state, bound group.FlushedState
}

// encodeFlushedState lays out flushed.state.
func encodeFlushedState(s group.FlushedState) []byte {
	out := make([]byte, 0, flushedHeaderSize+len(s.Data)+8)
	out = append(out, flushedFileMagic...)
	out = binary.LittleEndian.AppendUint16(out, flushedFileVersion)
	out = append(out, 0, 0)
	out = binary.LittleEndian.AppendUint64(out, s.Op)
	out = binary.LittleEndian.AppendUint64(out, s.FlushedEnd)
	out = binary.LittleEndian.AppendUint64(out, s.PurgeGeneration)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(s.Data)))
	out = append(out, s.Data...)
	return binary.LittleEndian.AppendUint64(out, xxh3.Hash(out))
}

// decodeFlushedState checks and decodes flushed.state; it never panics on
// bytes read from disk.
func decodeFlushedState(b []byte) (group.FlushedState, error) {
	var s group.FlushedState
	if len(b) < flushedHeaderSize+8 || string(b[:4]) != flushedFileMagic {
		return s, fmt.Errorf("%w: frame of %d bytes", errFlushedFormat, len(b))
	}
	if v := binary.LittleEndian.Uint16(b[4:]); v != flushedFileVersion {
		return s, fmt.Errorf("%w: format version %d, this build reads version %d", errFlushedFormat, v, flushedFileVersion)
	}
	n := uint64(binary.LittleEndian.Uint32(b[32:]))
	if n > flushedDataMax || uint64(len(b)) != flushedHeaderSize+n+8 {
		return s, fmt.Errorf("%w: %d bytes of data in a file of %d", errFlushedFormat, n, len(b))
	}
	body := b[:len(b)-8]
	if xxh3.Hash(body) != binary.LittleEndian.Uint64(b[len(body):]) {
		return s, fmt.Errorf("%w: checksum", errFlushedFormat)
	}
	s.Op = binary.LittleEndian.Uint64(b[8:])
	s.FlushedEnd = binary.LittleEndian.Uint64(b[16:])
	s.PurgeGeneration = binary.LittleEndian.Uint64(b[24:])
	s.Data = append([]byte(nil), body[flushedHeaderSize:]...)
	return s, nil
}

// flushedPath is the partition's flushed.state.
func (g *vsrGroup) flushedPath() string { return path.Join(g.p.dir, flushedFileName) }

// loadFlushed reads flushed.state at open, for a partition that keeps
// one. A file that does not verify (torn, or never synced before a power
// loss) is reported and removed, never trusted: the restart then starts
// from the descriptor checkpoints, as without one.
func (g *vsrGroup) loadFlushed() error {
	g.flushed.enabled = true
	p := g.p
	f, err := p.fs.Open(g.flushedPath())
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open %s: %w", g.flushedPath(), err)
	}
	size, err := f.Size()
	if err == nil && (size < flushedHeaderSize+8 || size > flushedHeaderSize+flushedDataMax+8) {
		err = fmt.Errorf("%w: %d bytes", errFlushedFormat, size)
	}
	var buf []byte
	if err == nil {
		buf = make([]byte, size)
		var n int
		if n, err = f.ReadAt(buf, 0); n == len(buf) && errors.Is(err, io.EOF) {
			err = nil
		}
	}
	err = errors.Join(err, f.Close())
	var s group.FlushedState
	if err == nil {
		s, err = decodeFlushedState(buf)
	}
	if errors.Is(err, errFlushedFormat) {
		p.s.log.Warn("the partition's flushed state does not verify: ignored", zap.String("dir", p.dir), zap.Error(err))
		return g.dropFlushed()
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", g.flushedPath(), err)
	}
	g.flushed.state = s
	return nil
}

// LoadFlushed implements group.FlushedStore.
func (g *vsrGroup) LoadFlushed() []byte { return g.flushed.state.Data }

// StoreFlushed implements group.FlushedStore, in place on the owning
// shard (one file and one directory sync per flush of a replicated
// partition with peers, after the segment sync the flush took anyway).
func (g *vsrGroup) StoreFlushed(s group.FlushedState) {
	p := g.p
	if !g.flushed.enabled || p.fenced != nil {
		return
	}
	if err := storage.WriteFileAtomic(p.fs, p.dir, g.flushedPath(), encodeFlushedState(s)); err != nil {
		// The old state stays (or the new one: both are prefixes of the
		// segments' history); a restart without it cuts back more.
		p.s.log.Warn("storing the partition's flushed state failed", zap.String("dir", p.dir), zap.Error(err))
		g.flushed.bound = group.FlushedState{Op: s.Op, FlushedEnd: s.FlushedEnd, PurgeGeneration: s.PurgeGeneration, Data: []byte{}}
		return
	}
	g.flushed.state, g.flushed.bound = s, group.FlushedState{}
}

// storeFlushedNow stores flushed.state of everything applied, on a
// graceful close once every batch is flushed and synced
// (group.Host.StoreFlushedNow).
func (g *vsrGroup) storeFlushedNow() {
	if g == nil || g.host == nil || !g.opened || !g.flushed.enabled {
		return
	}
	g.enter()
	g.host.StoreFlushedNow()
	g.leave()
}

// dropFlushedBelow removes flushed.state before the segments are cut back
// to m (resetToMachine): a state that names flushed messages m does not
// hold would restore a history the segments no longer have.
func (g *vsrGroup) dropFlushedBelow(m *partition.Machine) error {
	for _, s := range []group.FlushedState{g.flushed.state, g.flushed.bound} {
		if s.Data != nil && (s.Op > m.LastOp() || s.FlushedEnd > m.FlushedEnd() || s.PurgeGeneration != m.PurgeGeneration()) {
			return g.dropFlushed()
		}
	}
	return nil
}

// dropFlushed removes flushed.state durably (before a purge, a segment
// deletion or a transfer install changes what the segments hold).
func (g *vsrGroup) dropFlushed() error {
	p := g.p
	if !g.flushed.enabled {
		return nil
	}
	g.flushed.state, g.flushed.bound = group.FlushedState{}, group.FlushedState{}
	if err := p.fs.Remove(g.flushedPath()); err != nil {
		if errors.Is(err, storage.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("remove %s: %w", g.flushedPath(), err)
	}
	if err := p.fs.SyncDir(p.dir); err != nil {
		return fmt.Errorf("sync directory %s: %w", p.dir, err)
	}
	return nil
}
