package server

import (
	"errors"
	"fmt"

	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
)

// Storage of a partition group with peers (replica_plane.go).
//
// A group of one trusts its files: every op it committed up to the last
// flush is in its segments, and nothing is applied again after a restart
// (vsrGroup.Reset). A replica of a cluster is restored to its descriptor
// checkpoint (or to nothing) and then applies the ops after it again, as
// the recovery protocol or a repair brings them back from its peers:
// whatever its segments hold beyond the restored state would be stored
// twice. So its storage is cut back to the restored machine, as the group
// host's Effects contract says (segment data at or beyond what the
// machine holds flushed is discarded, offset files are made the
// machine's), and the ops that follow rebuild it. A restored state ahead
// of the segments (a checkpoint transferred from a peer that flushed more
// than this replica holds) is missing history: the partition is fenced,
// never served as a shorter healthy one, until segment state transfer
// brings the files.

// resetClustered implements Reset for a replica of a cluster: storage is
// cut back to m once the next op is applied (BeforeApply), not at once.
// Until then nothing touches the segments (the replica applies nothing,
// and it serves no read before it applied everything it knows committed),
// and what they hold is not destroyed before the group has shown that it
// goes on from m: when every replica of a group restarts at once, none
// cuts flushed messages its peers cannot give back, and a checkpoint
// transferred meanwhile (Reset again, with the peer's state) may still
// find them.
//
// What Reset does check at once is that the segments hold m's flushed
// history: if not (a peer's checkpoint past them, a damage found at
// open, another purge generation), it reports group.ErrMissingHistory,
// the partition is fenced and the host repairs it by segment state
// transfer (partition_transfer.go); the Reset after the install finds the
// history and lifts the fence.
func (g *vsrGroup) resetClustered(m *partition.Machine) error {
	g.files = nil
	g.served = nil
	if err := g.checkHistory(m); err != nil {
		g.truncatePending = false
		g.missing = true
		return g.missingHistory(err)
	}
	g.missing = false
	g.liftFence()
	g.repairable = false
	g.truncatePending = true
	return nil
}

// resetToMachine cuts the partition's segments back to the offset where
// m's flushed messages end and makes the offset files m's.
func (g *vsrGroup) resetToMachine(m *partition.Machine) error {
	p := g.p
	if p.fenced != nil {
		return fmt.Errorf("partition %s: reset to the group's state: %w", p.dir, p.fenced)
	}
	upTo := m.FlushedEnd()
	if err := g.dropFlushedBelow(m); err != nil {
		p.fence(err)
		return err
	}
	p.drainSyncs()
	if err := p.drainSuperblock(); err != nil {
		return fmt.Errorf("partition %s: reset to the group's state: %w", p.dir, err)
	}
	if err := p.log.TruncateTo(upTo); err != nil {
		if errors.Is(err, storage.ErrLogShort) {
			err = fmt.Errorf("partition %s: the group's state holds messages up to offset %d, the segments end before it: missing history: %w",
				p.dir, upTo, err)
		} else {
			err = fmt.Errorf("partition %s: cut the segments back to offset %d: %w", p.dir, upTo, err)
		}
		p.fence(err)
		return err
	}
	if err := g.resetOffsets(m); err != nil {
		p.fence(err)
		return err
	}
	g.served = nil
	p.publishCounters()
	return nil
}

// resetOffsets makes the consumer offset files hold exactly m's offsets.
func (g *vsrGroup) resetOffsets(m *partition.Machine) error {
	p := g.p
	files, _, err := storage.LoadConsumerOffsets(p.fs, p.dir)
	if err != nil {
		return fmt.Errorf("partition %s: load the offsets to reset: %w", p.dir, err)
	}
	want := make(map[partition.ConsumerKey]uint64)
	for _, o := range m.StoredOffsets() {
		want[o.Key] = o.Offset
	}
	for _, f := range files {
		key := partition.ConsumerKey{Kind: uint8(f.Kind), ID: f.ID}
		if offset, ok := want[key]; ok && offset == f.Offset {
			delete(want, key)
			continue
		}
		if _, ok := want[key]; ok {
			continue // rewritten below
		}
		if err := storage.DeleteConsumerOffset(p.fs, p.dir, f.Kind, f.ID); err != nil {
			return fmt.Errorf("partition %s: reset the offsets: %w", p.dir, err)
		}
	}
	for key, offset := range want {
		if err := storage.StoreConsumerOffset(p.fs, p.dir, storage.OffsetKind(key.Kind), key.ID, offset, p.offsetsPersisted); err != nil {
			return fmt.Errorf("partition %s: reset the offsets: %w", p.dir, err)
		}
	}
	return nil
}
