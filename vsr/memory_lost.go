package vsr

import "fmt"

// A replica whose superblock is lost.
//
// Every superblock copy damaged (a latent sector error, a bit flip, a
// misdirected write over both) leaves the replica without its durable
// consensus state: the view it promised, its log view, the checkpoint and
// what it acknowledged. Formatting the storage afresh would make it a
// member of view 0 that may vote and ack with an empty log, although it
// may have acknowledged ops a quorum needed (it was one of the
// replication quorum of a committed op): a view change it then voted in
// could lose that op. So a replica of a group with peers opens as one
// that lost its memory, the case VSR's recovery protocol is for
// (openMemoryLost):
//
//   - it keeps nothing: no view (0), no log view, the root checkpoint; a
//     persisted replica's journal is wiped first, since its records name
//     ops of log views the replica can no longer vouch for (left there, a
//     later log that reaches them would chain them back in at a restart);
//   - it runs the recovery protocol without a view promise (viewKept
//     false): it rejoins only with the answers of a view-change quorum of
//     peers that includes the primary of the latest view, normal in it
//     (or of every other replica), and neither acks nor votes before;
//   - a log its journal window cannot hold is reached by state transfer
//     of a peer's checkpoint first (chainHoldable), then the ops above by
//     repair;
//   - it takes no part in a restart of the group from checkpoints
//     (restart.go): it answers no Recovery with a "recovering" answer and
//     never casts a restart vote, because it lost the restart promises it
//     may have made;
//   - every superblock it writes until the recovery completes records
//     MemoryLost, so a restart meanwhile opens it the same way (and a
//     persisted one does not vote with the journal it rebuilt so far).
//
// A group of one has nobody to recover from: Open fails with
// ErrSuperblockLost and the host decides (the partition is fenced and
// serves what its files verify).

// openMemoryLost starts a replica of a group with peers whose superblock
// copies are all damaged: it recovers from its peers as a replica that
// lost its memory. done runs once the recovery started.
func (r *Replica) openMemoryLost(done func(error)) {
	r.memoryLost = true
	r.sb.durable = superblockState{}
	if !r.persisted() {
		r.resume()
		done(nil)
		return
	}
	r.wipeJournal(func(err error) {
		if err != nil {
			done(fmt.Errorf("wipe the journal of a replica without a superblock: %w", err))
			return
		}
		r.resume()
		done(nil)
	})
}

// wipeJournal blanks the journal: every header record, and the frame of
// every prepare slot (the first sector, which holds the record's frame
// and checksum), then syncs. A crash meanwhile leaves the superblock as
// damaged as before, and the next open wipes again.
func (r *Replica) wipeJournal(done func(error)) {
	slots := r.cfg.JournalSlots
	r.storage.Write(ZoneWALHeaders, 0, make([]byte, slots*SectorSize), func(err error) {
		if err != nil {
			done(err)
			return
		}
		r.wipePrepareSlots(0, make([]byte, SectorSize), done)
	})
}

func (r *Replica) wipePrepareSlots(slot uint64, blank []byte, done func(error)) {
	if slot == r.cfg.JournalSlots {
		r.storage.Sync(done)
		return
	}
	r.storage.Write(ZoneWALPrepares, slot*uint64(r.cfg.MessageSizeMax), blank, func(err error) {
		if err != nil {
			done(err)
			return
		}
		r.wipePrepareSlots(slot+1, blank, done)
	})
}

// memoryRecovered ends the memory loss: the recovery protocol gave the
// replica a view and a log from a quorum that includes the primary of the
// latest view (or from every other replica). The next superblock records
// it (its view is a promise again from then on).
func (r *Replica) memoryRecovered() {
	if r.memoryLost {
		r.memoryLost = false
		r.requestSuperblock()
	}
}

// MemoryLost reports whether the replica is recovering from the loss of
// its superblock (openMemoryLost): it serves nothing and neither acks nor
// votes until its peers gave it a view and a log.
func (r *Replica) MemoryLost() bool { return r.memoryLost }
