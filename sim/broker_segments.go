package sim

import (
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
)

// ErrMissingHistory reports a segment store that holds less than the
// partition machine restored over it says was flushed: the partition must
// be fenced (and repaired from peers), never served with a hole.
var ErrMissingHistory = fmt.Errorf("sim: segments miss flushed messages: %w", group.ErrMissingHistory)

// errNotHeld is a segment store's refusal to serve a range it does not
// hold whole.
var errNotHeld = errors.New("sim: segments do not hold the range")

// segmentFileBatches is how many batches one simulated segment file holds
// (an artifact of a segment state transfer).
const segmentFileBatches = 4

func batchView(b []byte) wire.BatchView { return wire.BatchView(b) }

// simSegments is one node's segment and offset files of one partition
// (group.Effects), with a file system's crash semantics: a flush writes
// into the page cache, which survives a process crash; a power loss keeps
// only what a sync covered (and, with UnsyncedKeepPPM, a prefix of what the
// disk happened to write back). A persisted topic's flush syncs before
// its reply (the host waits for the ticket); a replicated topic's flush
// does not sync, but the descriptor checkpoint's does (group.Syncer): a
// checkpoint is recorded only once its segment frontier is durable.
type simSegments struct {
	w         *brokerWorld
	node      int
	group     int
	persisted bool
	// batches are the flushed, stamped batches in offset order; those
	// that end at or below syncedEnd are durable.
	batches   [][]byte
	syncedEnd uint64
	// epoch counts purges: a sync started before one covers nothing after.
	epoch   uint64
	offsets []partition.StoredOffset
	ticket  uint64
	// staged holds the artifacts of a segment state transfer, by index,
	// until they are installed (a crash drops them, as a restart removes
	// a staging directory).
	staged map[int][]byte
	// Installs counts segment transfers installed.
	installs uint64
}

// end returns the offset after the last flushed message (0 if none).
func (s *simSegments) end() uint64 {
	if len(s.batches) == 0 {
		return 0
	}
	v := batchView(s.batches[len(s.batches)-1])
	return v.BaseOffset() + uint64(v.MessageCount())
}

// CarryOut implements group.Effects.
func (s *simSegments) CarryOut(m *partition.Machine, e partition.Effect) (uint64, wire.ErrorCode, error) {
	switch e.Kind {
	case partition.EffectFlush:
		for _, b := range m.Unflushed() {
			v := batchView(b)
			if v.BaseOffset()+uint64(v.MessageCount())-1 > e.UpTo {
				break
			}
			if end := s.end(); len(s.batches) > 0 && v.BaseOffset() != end {
				// The host never flushes above a hole (it withholds flushes
				// while the history is missing): segments stay contiguous.
				return 0, wire.ErrCannotSaveMessagesToSegment, fmt.Errorf("sim: node %d group %d: a flush at offset %d above a hole (the segments end at %d)", s.node, s.group, v.BaseOffset(), end)
			}
			s.batches = append(s.batches, append([]byte(nil), b...))
		}
		m.MarkFlushed(e.UpTo)
		if s.persisted {
			return s.sync(), wire.ErrorCodeOK, nil
		}
	case partition.EffectOffsetStored:
		s.setOffset(e.Consumer, e.Offset, true)
	case partition.EffectOffsetDeleted:
		s.setOffset(e.Consumer, 0, false)
	case partition.EffectPurged:
		s.batches, s.offsets, s.syncedEnd = nil, nil, 0
		s.epoch++
	case partition.EffectSegmentsDeleted:
		kept := s.batches[:0]
		for _, b := range s.batches {
			v := batchView(b)
			if v.BaseOffset()+uint64(v.MessageCount()) > e.Below {
				kept = append(kept, b)
			}
		}
		s.batches = kept
	default:
		return 0, wire.ErrError, fmt.Errorf("sim: unknown effect %d", e.Kind)
	}
	return 0, wire.ErrorCodeOK, nil
}

// sync starts a sync of every segment write so far, completed as an IO of
// the node, and returns its ticket.
func (s *simSegments) sync() uint64 {
	s.ticket++
	ticket, end, epoch, node, g := s.ticket, s.end(), s.epoch, s.w.nodes[s.node], s.group
	s.w.submitIO(s.node, func() {
		if s.epoch == epoch {
			s.syncedEnd = max(s.syncedEnd, min(end, s.end()))
		}
		if h := node.hosts[g]; h != nil {
			h.EffectsDurable(ticket)
		}
	})
	return ticket
}

// SyncForCheckpoint implements group.Syncer.
func (s *simSegments) SyncForCheckpoint() uint64 { return s.sync() }

// FlushAll implements group.Syncer.
func (s *simSegments) FlushAll(m *partition.Machine) error {
	for _, b := range m.Unflushed() {
		s.batches = append(s.batches, append([]byte(nil), b...))
	}
	if m.NextOffset() > 0 {
		m.MarkFlushed(m.NextOffset() - 1)
	}
	return nil
}

func (s *simSegments) setOffset(key partition.ConsumerKey, offset uint64, stored bool) {
	for i, o := range s.offsets {
		if o.Key == key {
			if stored {
				s.offsets[i].Offset = offset
			} else {
				s.offsets = append(s.offsets[:i], s.offsets[i+1:]...)
			}
			return
		}
	}
	if stored {
		s.offsets = append(s.offsets, partition.StoredOffset{Key: key, Offset: offset})
	}
}

// Reset implements group.Effects: the segments keep what m holds flushed
// and drop what lies beyond (its ops are applied again). Segments that end
// before m's flushed frontier miss history: Reset fails, and the host
// reports it (Host.Err), which fences the partition on this node.
func (s *simSegments) Reset(m *partition.Machine) error {
	frontier := m.FlushedEnd()
	kept := s.batches[:0]
	for _, b := range s.batches {
		if batchView(b).BaseOffset() < frontier {
			kept = append(kept, b)
		}
	}
	s.batches = kept
	s.syncedEnd = min(s.syncedEnd, s.end())
	s.offsets = append(s.offsets[:0], m.StoredOffsets()...)
	// The segments must hold every flushed message, from the machine's
	// first offset to its flush frontier, without a gap: a restart that
	// lost some (a power loss of unsynced files) and kept later ones has a
	// hole, not a shorter log.
	next := m.FirstOffset()
	for _, b := range s.batches {
		v := batchView(b)
		if end := v.BaseOffset() + uint64(v.MessageCount()); end <= next {
			continue // below the first offset still held
		}
		if v.BaseOffset() != next {
			return fmt.Errorf("%w: node %d group %d: segments hold offset %d after %d, the restored machine flushed up to %d",
				ErrMissingHistory, s.node, s.group, v.BaseOffset(), next, frontier)
		}
		next = v.BaseOffset() + uint64(v.MessageCount())
	}
	if next < frontier {
		return fmt.Errorf("%w: node %d group %d: segments end at offset %d, the restored machine flushed up to %d",
			ErrMissingHistory, s.node, s.group, next, frontier)
	}
	return nil
}

// heldRange returns the batches that hold every message in [first, end)
// of purge generation generation, grouped into files, or errNotHeld.
func (s *simSegments) heldRange(m *partition.Machine, generation, first, end uint64) ([][][]byte, error) {
	if m.PurgeGeneration() != generation || m.FirstOffset() > first {
		return nil, errNotHeld
	}
	var run [][]byte
	next := first
	for _, b := range s.batches {
		v := batchView(b)
		bEnd := v.BaseOffset() + uint64(v.MessageCount())
		if bEnd <= first || v.BaseOffset() >= end {
			continue
		}
		if (len(run) == 0 && v.BaseOffset() > first) || (len(run) > 0 && v.BaseOffset() != next) {
			return nil, errNotHeld
		}
		run = append(run, b)
		next = bEnd
	}
	if next < end {
		return nil, errNotHeld
	}
	var files [][][]byte
	for len(run) > 0 {
		k := min(len(run), segmentFileBatches)
		files = append(files, run[:k])
		run = run[k:]
	}
	return files, nil
}

// SegmentManifest implements group.SegmentTransfer: one artifact per
// simulated segment file, its bytes the file's batches, checksummed as
// they are read (never gathered in one buffer).
func (s *simSegments) SegmentManifest(generation, first, end uint64) (group.Manifest, error) {
	h := s.w.nodes[s.node].hosts[s.group]
	if h == nil {
		return group.Manifest{}, errNotHeld
	}
	files, err := s.heldRange(h.Machine(), generation, first, end)
	if err != nil {
		return group.Manifest{}, err
	}
	man := group.Manifest{Generation: generation, First: first, End: end}
	for _, f := range files {
		hasher := xxh3.New()
		var size uint64
		for _, b := range f {
			_, _ = hasher.Write(b)
			size += uint64(len(b))
		}
		man.Artifacts = append(man.Artifacts, group.Artifact{Name: fmt.Sprintf("%020d.log", batchView(f[0]).BaseOffset()), Size: size, Checksum: hasher.Sum64()})
	}
	return man, nil
}

// ReadArtifact implements group.SegmentTransfer: it copies the file's
// bytes at offset.
func (s *simSegments) ReadArtifact(generation, first, end uint64, index int, offset uint64, buf []byte) (int, error) {
	h := s.w.nodes[s.node].hosts[s.group]
	if h == nil {
		return 0, errNotHeld
	}
	files, err := s.heldRange(h.Machine(), generation, first, end)
	if err != nil || index >= len(files) {
		return 0, errNotHeld
	}
	n := 0
	var at uint64
	for _, b := range files[index] {
		if n == len(buf) {
			break
		}
		if bEnd := at + uint64(len(b)); bEnd > offset {
			from := max(offset, at) - at
			n += copy(buf[n:], b[from:])
		}
		at += uint64(len(b))
	}
	return n, nil
}

// StageArtifact implements group.SegmentTransfer.
func (s *simSegments) StageArtifact(m *group.Manifest, index int, offset uint64, data []byte) error {
	if s.staged == nil {
		s.staged = map[int][]byte{}
	}
	if uint64(len(s.staged[index])) != offset {
		return fmt.Errorf("sim: staged artifact %d holds %d bytes, a chunk at %d", index, len(s.staged[index]), offset)
	}
	s.staged[index] = append(s.staged[index], data...)
	return nil
}

// InstallStaged implements group.SegmentTransfer: the staged files'
// batches replace the segments below m.End.
func (s *simSegments) InstallStaged(m *group.Manifest) error {
	var batches [][]byte
	for i := range m.Artifacts {
		b := s.staged[i]
		for len(b) > 0 {
			if len(b) < wire.BatchHeaderSize {
				return fmt.Errorf("sim: staged artifact %d: a truncated batch", i)
			}
			n := batchView(b).BatchLength()
			if n < wire.BatchHeaderSize || n > uint64(len(b)) {
				return fmt.Errorf("sim: staged artifact %d: a batch of %d bytes", i, n)
			}
			batches = append(batches, append([]byte(nil), b[:n]...))
			b = b[n:]
		}
	}
	for _, b := range s.batches {
		if batchView(b).BaseOffset() >= m.End {
			batches = append(batches, b)
		}
	}
	s.batches = batches
	// Production syncs the staged files before it renames them into
	// place: what was installed is durable.
	s.syncedEnd = max(s.syncedEnd, m.End)
	s.staged = nil
	s.installs++
	return nil
}

// DiscardStaged implements group.SegmentTransfer.
func (s *simSegments) DiscardStaged() { s.staged = nil }

// crash loses the page cache on power loss: what no sync covered is gone,
// but for a prefix the disk wrote back on its own (UnsyncedKeepPPM per
// batch, in order).
func (s *simSegments) crash(powerLoss bool) {
	s.staged = nil
	if !powerLoss {
		return
	}
	keep := 0
	for keep < len(s.batches) {
		v := batchView(s.batches[keep])
		if v.BaseOffset()+uint64(v.MessageCount()) > s.syncedEnd {
			break
		}
		keep++
	}
	for keep < len(s.batches) && s.w.ioPRNG.Chance(s.w.params.UnsyncedKeepPPM) {
		keep++
	}
	s.batches = s.batches[:keep]
	s.syncedEnd = s.end()
}
