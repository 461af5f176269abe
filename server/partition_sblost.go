package server

import (
	"fmt"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/vsr"
)

// A partition whose consensus superblock has no valid copy.
//
// The group's superblock copies live in its slot of the node's
// superblocks.sb (sbfile.go). Both copies damaged, or no slot for a
// group whose consensus.vsr exists (its header damaged: the slot was
// allocated before consensus.vsr was created, so it was there), means the replica lost its durable consensus state:
// the view it promised, its log view, its checkpoint and what it
// acknowledged. That partition alone is fenced; the server starts and
// serves every other partition (the issue's "missing history, checksum
// failures or contradictory state never become an empty healthy
// partition: the partition is fenced and repaired from peers").
//
//   - A replica of a cluster: vsr opens it as a replica that lost its
//     memory (vsr/memory_lost.go): it neither acks nor votes for the
//     group until the recovery protocol, with a quorum of peers that
//     includes the primary of the latest view, gave it a view and a log
//     (state transfer of a peer's checkpoint first when its journal
//     window cannot reach that log, the segments by segment state
//     transfer when they miss the checkpoint's history). The partition is
//     fenced meanwhile (sends refused, no poll served) and the fence lifts
//     once the recovery completed (liftMemoryLostFence); vsr then writes a
//     fresh superblock.
//   - A group of one has no peer: the partition is fenced as other fenced
//     partitions are: it serves the prefix its files verify (the files
//     are what a group of one trusts: Reset), refuses sends and deletes
//     nothing. Its consensus state lives in memory only
//     (openSuperblockLostAlone): consensus.vsr and its superblock slot
//     are left as they were found (a group without a slot was given one
//     that reads as lost: lostZoneImage), so the fence holds again at
//     every start until an operator repairs or restores the files.

// openSuperblockLostAlone opens the host of a group of one whose
// superblock has no valid copy: over consensus state in memory
// (a fresh group whose machine is the state recovered from the files),
// with the partition fenced.
func (g *vsrGroup) openSuperblockLostAlone(hc group.Config) error {
	p := g.p
	st := g.storage
	st.mem = make(map[vsr.Zone][]byte)
	for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneCheckpoint} {
		st.mem[z] = make([]byte, st.ZoneSize(z))
	}
	if err := g.openHost(hc); err != nil {
		return err
	}
	// After the open: the machine is then the state recovered from the
	// files, whose end the fence reports as served below.
	p.fence(fmt.Errorf("%s: %w: the partition's consensus state is lost and a group of one has no peer to recover it from; "+
		"it serves what its segments verify and takes no sends (repair or restore the files)", st.superblockName(), vsr.ErrSuperblockLost))
	return nil
}

// fenceMemoryLost fences the partition of a replica that opened without
// a valid superblock (vsr's MemoryLost) until it recovered from its peers.
func (g *vsrGroup) fenceMemoryLost() {
	p := g.p
	if !g.host.Replica().MemoryLost() {
		return
	}
	g.memoryLost = true
	if p.fenced == nil {
		p.fence(fmt.Errorf("%s: %w: the replica lost its consensus state and recovers it from its peers (it neither acks nor votes for the group until then)",
			g.storage.superblockName(), vsr.ErrSuperblockLost))
		g.memoryLostFence = p.fenced
	}
}

// liftMemoryLostFence lifts the fence of a replica that opened without a
// valid superblock once it recovered a view and a log from its peers
// (vsr's MemoryLost cleared), unless the segments still miss history (the
// segment transfer lifts it then) or the group failed meanwhile.
func (g *vsrGroup) liftMemoryLostFence() {
	if !g.memoryLost || g.host.Replica().MemoryLost() || g.host.Err() != nil {
		return
	}
	g.memoryLost = false
	if g.memoryLostFence == nil || g.p.fenced != g.memoryLostFence {
		return // no fence of its own, or another took its place
	}
	g.memoryLostFence = nil
	// The fence is now the state's, as for missing history: liftFence
	// lifts it at once when the segments hold the group's history, else
	// once the segment transfer brought it (the Reset after the install).
	g.repairable = true
	if !g.missing {
		g.liftFence()
	}
}
