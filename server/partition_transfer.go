package server

import (
	"errors"
	"fmt"
	"path"

	"github.com/zeebo/xxh3"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
)

// Segment state transfer in production (group.SegmentTransfer over the
// partition's files; server/group/transfer.go runs the protocol).
//
// A replica of a cluster whose segments miss the flushed history of the
// machine it restored (a peer's checkpoint, after it fell behind the
// journals; or its own, over segments a damage fenced at open) is fenced
// and fetches the history from a peer:
//
//   - Serving: a replica serves a range its log holds whole, fenced for
//     missing history of its own or not (two fenced replicas repair each
//     other: scenarios/bug_broker_fenced_pair_segment_transfer_ticks6000_2845.txt).
//     The manifest is the peer's segment files that hold the
//     range, each cut where the range ends (storage.Log.SegmentFiles: a
//     prefix of the file, which appends do not change), with the XXH3-64
//     of each, hashed once from the files in bounded reads and kept while
//     the files stay as they were; every chunk is read from the open
//     segment file (storage.Log.ReadSegmentFile), at most
//     transferChunkBytes, never gathered in memory.
//   - Installing: chunks are written into transfer.staging inside the
//     partition directory; once every file is verified against the
//     manifest (the host hashes them) storage.CommitStagedSegments checks
//     their batches, syncs them and the install record and renames the
//     directory to transfer.ready (the commit point), and
//     storage.FinishSegmentInstall puts the files in place (old segments
//     removed, new ones renamed in, the superblock of the new log
//     stored). The live storage.Log is closed around that and reopened
//     (recovered, every batch verified) over the new files. A crash before
//     the commit leaves the old files and a staging directory the next
//     open removes; after it, the next open finishes the install before the
//     log is opened (partitionSet.reopen). The installed files are the
//     whole log: whatever the old one held at or above the range's end is
//     what the cut to the machine would drop anyway (nothing is flushed
//     while the history is missing, below). Offset files are the machine's
//     (the checkpoint carries them): the cut to the machine rewrites them
//     (resetToMachine).
//   - While the history is missing nothing is flushed (the batches stay in
//     the machine, as unflushed ones do; the group host withholds the
//     flush effects, and flushUpTo refuses the binding's own flushes) and
//     no segment is deleted: the log ends where the hole begins, and an
//     append after it would leave a hole in the log. The host takes
//     no checkpoint meanwhile, and the replica never leads its group
//     (vsr.Replica.Abdicate): it acks and votes, it does not serve.

// transferChunkBytes bounds one chunk of a segment transfer: what the
// serving replica reads from a file and sends in one message.
const transferChunkBytes = 1 << 20

// transferHashBytes is the buffer the manifest's checksums are read with.
const transferHashBytes = 256 << 10

// servedManifest is the manifest this replica last served, kept while its
// files are unchanged (checked against the log on every chunk).
type servedManifest struct {
	generation, first, end uint64
	manifest               group.Manifest
}

// stagedTransfer is the receiving side's staging area.
type stagedTransfer struct {
	manifest *group.Manifest
	files    map[int]storage.File
	written  map[int]uint64
	// dir is set once the staging directory was made.
	dir bool
}

func (g *vsrGroup) stagingDir() string { return path.Join(g.p.dir, storage.TransferStagingDir) }

// errTransferNotHeld refuses a manifest of a range this replica does not
// hold whole.
var errTransferNotHeld = errors.New("segments do not hold the range")

// SegmentManifest implements group.SegmentTransfer.
func (g *vsrGroup) SegmentManifest(generation, first, end uint64) (group.Manifest, error) {
	p := g.p
	// A replica fenced for missing history of its own (repairable: the
	// fence is that state's) still serves a range its log holds whole:
	// nothing is flushed above its hole, and what lies below is committed
	// history like any peer's (Holds refuses a damaged log). Any other
	// fence (a failed write or sync) refuses.
	if (p.fenced != nil && !(g.missing && g.repairable)) || p.machine.PurgeGeneration() != generation {
		return group.Manifest{}, fmt.Errorf("%s: generation %d: %w", p.dir, generation, errTransferNotHeld)
	}
	if sb, ok := p.log.Superblock(); !ok || sb.PurgeGeneration != generation {
		return group.Manifest{}, fmt.Errorf("%s: generation %d: %w", p.dir, generation, errTransferNotHeld)
	}
	files, err := p.log.SegmentFiles(first, end)
	if err != nil {
		return group.Manifest{}, err
	}
	if c := g.served; c != nil && c.generation == generation && c.first == first && c.end == end && sameFiles(c.manifest.Artifacts, files) {
		return c.manifest, nil
	}
	man := group.Manifest{Generation: generation, First: first, End: end, Artifacts: make([]group.Artifact, 0, len(files))}
	buf := make([]byte, transferHashBytes)
	for _, f := range files {
		h := xxh3.New()
		for at := int64(0); at < f.Size; {
			n, err := p.log.ReadSegmentFile(f.Name, at, buf[:min(int64(len(buf)), f.Size-at)])
			if err != nil {
				return group.Manifest{}, err
			}
			if n == 0 {
				return group.Manifest{}, fmt.Errorf("%s: %s ends at byte %d, before %d: %w", p.dir, f.Name, at, f.Size, errTransferNotHeld)
			}
			_, _ = h.Write(buf[:n])
			at += int64(n)
		}
		man.Artifacts = append(man.Artifacts, group.Artifact{Name: f.Name, Size: uint64(f.Size), Checksum: h.Sum64()})
	}
	g.served = &servedManifest{generation: generation, first: first, end: end, manifest: man}
	return man, nil
}

// sameFiles reports whether the log's files of a range are still those a
// manifest describes.
func sameFiles(artifacts []group.Artifact, files []storage.SegmentFile) bool {
	if len(artifacts) != len(files) {
		return false
	}
	for i, f := range files {
		if artifacts[i].Name != f.Name || artifacts[i].Size != uint64(f.Size) {
			return false
		}
	}
	return true
}

// ReadArtifact implements group.SegmentTransfer: at most
// transferChunkBytes (and len(buf)) bytes, read from the open file.
func (g *vsrGroup) ReadArtifact(generation, first, end uint64, index int, offset uint64, buf []byte) (int, error) {
	man, err := g.SegmentManifest(generation, first, end)
	if err != nil {
		return 0, err
	}
	if index < 0 || index >= len(man.Artifacts) || offset >= man.Artifacts[index].Size {
		return 0, fmt.Errorf("%s: artifact %d at %d: %w", g.p.dir, index, offset, errTransferNotHeld)
	}
	a := man.Artifacts[index]
	n := min(uint64(len(buf)), a.Size-offset, transferChunkBytes)
	read, err := g.p.log.ReadSegmentFile(a.Name, int64(offset), buf[:n])
	if hook := g.p.s.transferServeHook.Load(); hook != nil && err == nil {
		(*hook)(buf[:read])
	}
	return read, err
}

// StageArtifact implements group.SegmentTransfer: data goes to its file
// in the staging directory, in order.
func (g *vsrGroup) StageArtifact(m *group.Manifest, index int, offset uint64, data []byte) error {
	p := g.p
	st := &g.staged
	if st.manifest != m {
		g.DiscardStaged()
		if err := p.fs.MkdirAll(g.stagingDir()); err != nil {
			return fmt.Errorf("make %s: %w", g.stagingDir(), err)
		}
		*st = stagedTransfer{manifest: m, files: map[int]storage.File{}, written: map[int]uint64{}, dir: true}
	}
	if index < 0 || index >= len(m.Artifacts) {
		return fmt.Errorf("%s: artifact %d of %d", g.stagingDir(), index, len(m.Artifacts))
	}
	name := m.Artifacts[index].Name
	if _, _, ok := storage.ParseSegmentFileName(name); !ok {
		return fmt.Errorf("%s: artifact name %q is not a segment file", g.stagingDir(), name)
	}
	if st.written[index] != offset {
		return fmt.Errorf("%s: %s holds %d bytes, a chunk at %d", g.stagingDir(), name, st.written[index], offset)
	}
	f := st.files[index]
	if f == nil {
		var err error
		if f, err = p.fs.Create(path.Join(g.stagingDir(), name)); err != nil {
			return fmt.Errorf("create %s: %w", path.Join(g.stagingDir(), name), err)
		}
		st.files[index] = f
	}
	if _, err := f.WriteAt(data, int64(offset)); err != nil {
		return fmt.Errorf("write %s: %w", path.Join(g.stagingDir(), name), err)
	}
	st.written[index] += uint64(len(data))
	return nil
}

// closeStaged closes the staged files.
func (g *vsrGroup) closeStaged() error {
	var first error
	for i, f := range g.staged.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
		delete(g.staged.files, i)
	}
	return first
}

// DiscardStaged implements group.SegmentTransfer: the staging directory
// goes.
func (g *vsrGroup) DiscardStaged() {
	_ = g.closeStaged()
	if g.staged.dir {
		if err := g.p.fs.RemoveAll(g.stagingDir()); err != nil {
			g.p.s.log.Warn("removing a segment transfer's staging directory", zap.String("dir", g.stagingDir()), zap.Error(err))
		}
	}
	g.staged = stagedTransfer{}
}

// InstallStaged implements group.SegmentTransfer: the staged files are
// committed and put in place, and the live log is reopened over them.
func (g *vsrGroup) InstallStaged(m *group.Manifest) error {
	p := g.p
	if err := g.dropFlushed(); err != nil {
		return fmt.Errorf("%s: before the install: %w", p.dir, err)
	}
	st := &g.staged
	if len(m.Artifacts) > 0 && st.manifest != m {
		return fmt.Errorf("%s: install of a manifest that was not staged", p.dir)
	}
	if !st.dir {
		if err := p.fs.MkdirAll(g.stagingDir()); err != nil {
			return fmt.Errorf("make %s: %w", g.stagingDir(), err)
		}
		st.dir = true
	}
	seen := map[string]bool{}
	for i, a := range m.Artifacts {
		if seen[a.Name] {
			g.DiscardStaged()
			return fmt.Errorf("%s: artifact %s twice in the manifest", p.dir, a.Name)
		}
		seen[a.Name] = true
		if a.Size == 0 {
			if _, _, ok := storage.ParseSegmentFileName(a.Name); !ok {
				g.DiscardStaged()
				return fmt.Errorf("%s: artifact name %q is not a segment file", p.dir, a.Name)
			}
			f, err := p.fs.Create(path.Join(g.stagingDir(), a.Name))
			if err != nil {
				g.DiscardStaged()
				return fmt.Errorf("create %s: %w", path.Join(g.stagingDir(), a.Name), err)
			}
			if err := f.Close(); err != nil {
				g.DiscardStaged()
				return err
			}
			continue
		}
		if st.written[i] != a.Size {
			g.DiscardStaged()
			return fmt.Errorf("%s: %s staged %d of %d bytes", p.dir, a.Name, st.written[i], a.Size)
		}
	}
	if err := g.closeStaged(); err != nil {
		g.DiscardStaged()
		return fmt.Errorf("%s: close the staged files: %w", p.dir, err)
	}
	// No sync may be in flight on a file that goes.
	p.drainSyncs()
	if err := p.drainSuperblock(); err != nil {
		g.DiscardStaged()
		return err
	}
	sb, _ := p.log.Superblock()
	if err := storage.CommitStagedSegments(p.fs, p.dir, m.Generation, m.First, m.End, sb.Flags); err != nil {
		g.DiscardStaged()
		return fmt.Errorf("commit the staged segments of %s: %w", p.dir, err)
	}
	g.staged = stagedTransfer{}
	// Committed: from here on the new files are the partition's, now or
	// at the next open.
	g.served = nil
	closeErr := p.log.Close()
	_, finishErr := storage.FinishSegmentInstall(p.fs, p.dir)
	log, reopenErr := g.reopenLog()
	if log != nil {
		p.log = log
	}
	if err := errors.Join(finishErr, reopenErr); err != nil {
		err = fmt.Errorf("%w: %s: %w", group.ErrInstallFailed, p.dir, errors.Join(err, closeErr))
		g.repairable = false
		p.fence(err)
		return err
	}
	p.s.metrics.segmentTransfers.Inc()
	p.s.log.Info("installed segments transferred from a peer", zap.String("dir", p.dir),
		zap.Uint64("first_offset", m.First), zap.Uint64("end_offset", m.End), zap.Int("files", len(m.Artifacts)))
	p.publishCounters()
	return nil
}

// reopenLog opens the partition's log again over its files (after an
// install), with the options it was opened with.
func (g *vsrGroup) reopenLog() (*storage.Log, error) {
	p := g.p
	sb, report, err := storage.LoadPartitionSuperblock(p.fs, p.dir)
	if err == nil && !report.Found {
		err = fmt.Errorf("%s: %w", p.dir, storage.ErrNoSuperblock)
	}
	opts := p.logOptions
	if err != nil {
		opts.Superblock, opts.SuperblockErr = &storage.PartitionSuperblock{}, err
	} else {
		opts.Superblock = &sb
	}
	log, _, err := storage.OpenLog(p.fs, p.dir, opts)
	if err != nil {
		return nil, fmt.Errorf("reopen the log of %s: %w", p.dir, err)
	}
	return log, nil
}

// checkHistory reports, wrapping group.ErrMissingHistory, when the
// partition's segments do not hold the flushed messages of m, a machine a
// replica of a cluster restored: damaged, of another purge generation, or
// short of its flush frontier.
func (g *vsrGroup) checkHistory(m *partition.Machine) error {
	p := g.p
	first, end := m.FirstOffset(), m.FlushedEnd()
	if c := p.log.Fenced(); c != nil {
		return fmt.Errorf("%s: the segments are damaged (%s at byte %d, offset %d: %v), the group's state names messages [%d, %d) flushed: missing history (%w)",
			p.dir, c.File, c.Position, c.Offset, c.Err, first, end, group.ErrMissingHistory)
	}
	if sb, ok := p.log.Superblock(); ok && end > first && sb.PurgeGeneration != m.PurgeGeneration() {
		return fmt.Errorf("%s: the segments are of purge %d, the group's state of purge %d with messages [%d, %d) flushed: missing history (%w)",
			p.dir, sb.PurgeGeneration, m.PurgeGeneration(), first, end, group.ErrMissingHistory)
	}
	if !p.log.Holds(first, end) {
		st := p.log.Stats()
		return fmt.Errorf("%s: the group's state holds messages [%d, %d) flushed, the segments [%d, %d): missing history (%w)",
			p.dir, first, end, st.FirstOffset, st.NextOffset, group.ErrMissingHistory)
	}
	return nil
}

// liftFence lifts a fence the segments' state set (missing history, a
// damage found at open), once they hold the machine's history again.
func (g *vsrGroup) liftFence() {
	p := g.p
	if !g.repairable || p.fenced == nil || p.log.Fenced() != nil || (g.host != nil && g.host.Replica().MemoryLost()) {
		return // a replica without its consensus state: liftMemoryLostFence
	}
	g.repairable = false
	p.fenced = nil
	if p.fenceInfo.Swap(nil) != nil {
		p.s.metrics.partitionFenced.DeleteLabelValues(p.metricLabels()...)
	}
	p.s.log.Warn("partition repaired: its segments hold the group's history again; the fence is lifted", zap.String("dir", p.dir))
}

// finishSegmentInstall runs before a partition's log is opened: a staging
// directory left by an interrupted transfer goes, and an install a crash
// interrupted after its commit is finished.
func finishSegmentInstall(s *Server, dir string) error {
	report, err := storage.FinishSegmentInstall(s.fs, dir)
	if err != nil {
		return fmt.Errorf("finish the segment install of %s: %w", dir, err)
	}
	if report.StagingRemoved {
		s.log.Warn("removed the staging directory of a segment transfer a restart interrupted", zap.String("dir", dir))
	}
	if report.Installed {
		s.log.Warn("finished installing the segments of a transfer a restart interrupted", zap.String("dir", dir))
	}
	return nil
}
