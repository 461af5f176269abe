package server

import (
	"fmt"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/storage"
)

// applied is the outcome of one partition operation: the machine's reply
// and the status its request gets.
type applied struct {
	reply  []byte
	status wire.ErrorCode
	// err is the storage failure behind a status other than the machine's
	// own (an effect that could not be carried out), for the caller's log.
	err error
}

// failure describes a result that is not OK as an error: what failed on
// dir, the status and the storage failure behind it (if any).
func (r applied) failure(what, dir string) error {
	if r.err != nil {
		return fmt.Errorf("%s %s: status %d: %w", what, dir, r.status, r.err)
	}
	return fmt.Errorf("%s %s: status %d", what, dir, r.status)
}

// completion receives the outcome of a submitted operation, on the owning
// shard. complete must not block.
type completion interface {
	complete(applied)
}

// submit is the one door to a partition's replicated state. Every
// operation that changes it (a send, an offset store or delete, a poll's
// auto-commit, a flush-threshold change, a purge, a deletion of segments)
// comes through here, on the owning shard, and goes to the partition's
// consensus group (partition_vsr.go): the group's replica sequences it
// (op number, timestamp), commits it, the group host applies it to the
// machine and carries out its effects (carryOut), and done gets the
// outcome once the operation is applied and, when its reply promises
// durability (a persisted send), once the group commit synced it. done
// may be nil: the submitter does not wait (a poll's auto-commit), and the
// operation is applied all the same. body must not change until submit
// returns. On a single node the group is of one: the op commits inside
// this call, and done runs before submit returns unless the reply waits
// for a sync; the callers are written for a done that runs later.
func (p *partitionRuntime) submit(operation uint8, body []byte, done completion) {
	if operation == partition.OperationSendMessages {
		if p.fenced != nil {
			completeWith(done, applied{status: fencedSendCode})
			return
		}
		// The offsets the send takes must lie inside the reservation the
		// superblock durably records before they are handed out.
		if batch := body[partition.EnvelopeSize:]; len(batch) >= wire.BatchHeaderSize {
			if err := p.reserveOffsets(uint64(wire.BatchView(batch).MessageCount())); err != nil {
				p.fence(err)
				completeWith(done, applied{status: wire.ErrCannotSaveMessagesToSegment, err: err})
				return
			}
		}
	}
	p.vsr.submit(operation, body, done)
}

func completeWith(done completion, result applied) {
	if done != nil {
		done.complete(result)
	}
}

// countSent adds an applied send to the metrics.
func (p *partitionRuntime) countSent(batch []byte) {
	messages := float64(wire.BatchView(batch).MessageCount())
	p.s.metrics.messagesSent.Add(messages)
	p.s.metrics.bytesSent.Add(float64(len(batch)))
	p.appended.Add(messages)
	p.appendedBytes.Add(float64(len(batch)))
}

// carryOut does on storage what one effect of an applied operation asks
// for, in op order, on the owning shard. It returns the status to answer
// with when it fails. An effect that fails leaves the machine ahead of
// its files: the partition is fenced (a failed offset write excepted:
// the offset stays applied, the request is refused).
func (p *partitionRuntime) carryOut(e partition.Effect) (wire.ErrorCode, error) {
	switch e.Kind {
	case partition.EffectFlush:
		if err := p.flushUpTo(e.UpTo); err != nil {
			return wire.ErrCannotSaveMessagesToSegment, err
		}
	case partition.EffectOffsetStored:
		// An explicit store is synced when the topic's offsets are
		// persisted; a poll's auto-commit never is (nobody waits for it).
		durable := p.offsetsPersisted && !e.AutoCommit
		if durable {
			// A durable offset's predecessors must stay recoverable (the
			// durability seed), whatever the messages' own durability:
			// the messages still only in memory go to the segments first,
			// and the reply waits for their sync (vsrGroup.CarryOut).
			if err := p.flushAll(); err != nil {
				return wire.ErrCannotSaveMessagesToSegment, err
			}
		}
		if err := storage.StoreConsumerOffset(p.fs, p.dir, storage.OffsetKind(e.Consumer.Kind), e.Consumer.ID, e.Offset, durable); err != nil {
			p.s.log.Error("consumer offset write failed", zap.String("dir", p.dir), zap.Error(err))
			return wire.ErrCannotWriteToFile, err
		}
	case partition.EffectOffsetDeleted:
		if err := storage.DeleteConsumerOffset(p.fs, p.dir, storage.OffsetKind(e.Consumer.Kind), e.Consumer.ID); err != nil {
			p.s.log.Error("consumer offset write failed", zap.String("dir", p.dir), zap.Error(err))
			return wire.ErrCannotWriteToFile, err
		}
	case partition.EffectPurged:
		if err := p.purgeFiles(e.Generation); err != nil {
			p.fence(err)
			return wire.ErrCannotDeletePartitionDirectory, err
		}
	case partition.EffectSegmentsDeleted:
		// No sync may be in flight on a file that goes, and the log stores
		// its superblock (the new first offset) before it deletes.
		if err := p.drainSuperblock(); err != nil {
			p.fence(err)
			return wire.ErrCannotDeletePartition, err
		}
		if _, err := p.log.DeleteSealedBelow(e.Below); err != nil {
			p.fence(err)
			return wire.ErrCannotDeletePartition, fmt.Errorf("delete segments of %s: %w", p.dir, err)
		}
	default:
		err := fmt.Errorf("unknown partition effect %d", e.Kind)
		p.fence(err)
		return wire.ErrError, err
	}
	return wire.ErrorCodeOK, nil
}

// purgeFiles carries out a purge: every segment and offset file goes, and
// the superblock records the purge generation so a replay of the metadata
// journal does not purge again.
func (p *partitionRuntime) purgeFiles(generation uint64) error {
	// The log records the purge in its superblock: no copy may be syncing.
	if err := p.drainSuperblock(); err != nil {
		return err
	}
	if err := p.log.Purge(generation); err != nil {
		return fmt.Errorf("purge %s: %w", p.dir, err)
	}
	if err := storage.PurgeConsumerOffsets(p.fs, p.dir); err != nil {
		return fmt.Errorf("purge offsets of %s: %w", p.dir, err)
	}
	p.clearFence() // the damaged files went with everything else
	return nil
}

// opWait is a caller's wait for one operation it submitted on the owner:
// the outcome arrives on the owner, at once or later (a group commit).
type opWait struct {
	result   applied
	finished bool
	// ch is made on the owner when the outcome is still to come, and
	// closed when it arrives.
	ch chan struct{}
}

func (w *opWait) complete(result applied) {
	w.result, w.finished = result, true
	if w.ch != nil {
		close(w.ch)
	}
}

// detach runs on the owner after submit: an outcome still to come will be
// signalled on ch.
func (w *opWait) detach() {
	if !w.finished {
		w.ch = make(chan struct{})
	}
}

// wait returns the outcome, waiting for it if it was still to come when
// the owner's task ended. It runs off the owner.
func (w *opWait) wait() applied {
	if w.ch != nil {
		<-w.ch
	}
	return w.result
}

// submitFrom submits an operation from the shard on (nil for a goroutine;
// shard 0 for the metadata writer, see runOnOwner) and waits for its
// outcome. The metadata writer's operations (purge, delete segments,
// thresholds, a deleted group's offsets) reply without waiting for a sync.
func (p *partitionRuntime) submitFrom(on *shard.Shard, operation uint8, body []byte) applied {
	w := &opWait{}
	if err := runOnOwner(on, p.owner, func() {
		p.submit(operation, body, w)
		w.detach()
	}); err != nil {
		return applied{status: wire.ErrTransientNotAccepted, err: err}
	}
	return w.wait()
}

// partitionOpObserverFunc sees every partition operation just before it is
// applied, on the owning shard (test hook; body is only valid during the
// call).
type partitionOpObserverFunc = func(p *partitionRuntime, op, timestamp uint64, operation uint8, body []byte)

// partitionOpObserver is the Server's hook for partitionOpObserverFunc;
// nil (the default) observes nothing.
type partitionOpObserver = atomic.Pointer[partitionOpObserverFunc]
