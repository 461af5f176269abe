package server

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
)

// Partition consensus group ids.
//
// A partition's consensus group id is metadata.Partition.ConsensusGroup:
// the metadata machine gives every partition it creates the next value
// of a counter it keeps in its replicated state (and its checkpoint), so
// the id depends only on the sequence of partition creations, the same
// on every replica, and is never given out twice. A topic deleted and
// created again under the same stream, topic and partition ids (Iggy
// gives out the lowest free id) is a new group: a lagging replica's
// messages of the old one (prepares, commits, start views, transfer
// chunks, announcements) name a group no partition has any more and are
// dropped (ReplicaPlaneStats.Unroutable), never handed to the new one,
// whose vsr would drop a foreign group's message anyway.
//
// What is stored under a group id is checked against it: vsr's
// superblock copies, checkpoint and journal headers carry the group (vsr
// refuses another's, ErrForeignGroup), a superblocks.sb slot is handed
// only to the group its header names, and consensus.vsr records its
// group in its header. A consensus.vsr of another group is never
// adopted: the boot is refused, naming the file and both groups
// (errVSRForeignGroup). A re-created partition's directory is made anew,
// and an older partition's that a crash left is told apart by its
// creation time (reopen), so that is damage, not a case to repair.
//
// Ids the metadata gave out and took back never come again, so the boot
// tombstones the superblock slots still allocated to them
// (releaseRetiredSlots): a deletion a crash interrupted before its
// tombstone leaves no slot behind for good.

// The partitions' group ids are below metadata.ConsensusGroupLimit, so
// none is the metadata group's (this does not compile otherwise).
const _ = group.MetaGroupID - metadata.ConsensusGroupLimit

// addLocked registers p under its key and its consensus group; the
// caller holds ps.mu. A group id another partition holds is a bug of the
// metadata (its invariant), refused.
func (ps *partitionSet) addLocked(p *partitionRuntime) error {
	if other, taken := ps.groups[p.consensusGroup]; taken && other != p {
		return fmt.Errorf("partition %s: consensus group %d is partition %s's", p.dir, p.consensusGroup, other.dir)
	}
	ps.parts[p.key] = p
	ps.groups[p.consensusGroup] = p
	return nil
}

// add registers p (create, reopen).
func (ps *partitionSet) add(p *partitionRuntime) error {
	ps.mu.Lock()
	err := ps.addLocked(p)
	ps.mu.Unlock()
	return err
}

// removeLocked forgets the runtime registered under k; the caller holds
// ps.mu.
func (ps *partitionSet) removeLocked(k partKey) (*partitionRuntime, bool) {
	p, ok := ps.parts[k]
	if !ok {
		return nil, false
	}
	delete(ps.parts, k)
	if ps.groups[p.consensusGroup] == p {
		delete(ps.groups, p.consensusGroup)
	}
	return p, true
}

// byGroup returns the partition whose consensus group is g: the only way
// the replica plane finds a message's partition.
func (ps *partitionSet) byGroup(g uint64) (*partitionRuntime, bool) {
	ps.mu.RLock()
	defer ps.mu.RUnlock()
	p, ok := ps.groups[g]
	return p, ok
}

// releaseRetiredSlots tombstones the superblock slots still allocated to
// consensus groups the metadata gave out and no partition has any more
// (a deletion whose tombstone a crash or an IO error stopped): those ids
// never come again. Slots of ids the metadata never gave out (another
// data directory's, damage) are left as found. It runs at boot, once
// every partition opened, on shard 0; only a stopped shard 0 fails it.
func (ps *partitionSet) releaseRetiredSlots() error {
	m := ps.s.meta.machine
	next := m.NextConsensusGroup()
	live := map[uint64]bool{}
	for _, stream := range m.Streams() {
		for _, topic := range stream.Topics() {
			for _, part := range topic.Partitions {
				live[part.ConsensusGroup] = true
			}
		}
	}
	retired := func(g uint64) bool { return g < next && !live[g] }
	var released []uint32
	var err error
	if callErr := runOnOwner(nil, ps.s.shards[0], func() { released, err = ps.s.superblocks.releaseRetired(ps.s.shards[0], retired) }); callErr != nil {
		return callErr
	}
	if len(released) > 0 {
		ps.s.log.Warn("tombstoned the superblock slots of deleted partitions (a deletion did not finish)",
			zap.String("file", ps.s.superblocks.name), zap.Int("slots", len(released)))
	}
	if err != nil {
		// As when a deletion's tombstone fails: the slots stay unused
		// (no group ever asks for them), and the next boot tries again.
		ps.s.log.Warn("tombstoning the superblock slots of deleted partitions failed; the slots stay unused",
			zap.String("file", ps.s.superblocks.name), zap.Error(err))
	}
	return nil
}
