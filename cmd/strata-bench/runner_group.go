package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stratabroker/strata/client"
)

// Consumer-group runner limits.
const (
	// groupName is the group every member of a run joins (the topic is
	// fresh per run, so the name never collides).
	groupName = "strata-bench"
	// groupResyncPasses is how many passes over its partitions a member
	// makes before it syncs again to notice a generation change; a pass
	// that read nothing and a fenced poll also trigger a sync.
	groupResyncPasses = 64
	// groupIdlePause is how long a member waits after a pass that read
	// nothing (no partitions, or all drained).
	groupIdlePause = 200 * time.Microsecond
	// groupStalledRoundsMax bounds consecutive idle passes of a member
	// during which no member verified anything, while messages remain; it
	// spans well over the broker's 30 s rebalancing timeout.
	groupStalledRoundsMax = 200_000
)

// errDuplicate: a consumer group delivered a message twice.
var errDuplicate = fmt.Errorf("%w: consumer group delivered a message twice", ErrVerify)

// groupLedger checks, across every member of a group, that each partition
// is delivered exactly once: offsets contiguous from 0 with no repeat, to
// whichever member polls it, up to the pre-filled high-water mark.
type groupLedger struct {
	parts []partitionLedger
	// remaining counts pre-filled messages not yet verified.
	remaining atomic.Int64
}

// partitionLedger is one partition's shared verifier.
type partitionLedger struct {
	mu sync.Mutex
	v  *Verifier
	// high is the pre-filled message count (offsets 0..high-1).
	high uint64
	// lastMember delivered the previous batch (for error messages).
	lastMember int
}

// newGroupLedger returns a ledger for partitions pre-filled up to high[p].
func newGroupLedger(high []uint64, frames bool) *groupLedger {
	l := &groupLedger{parts: make([]partitionLedger, len(high))}
	var total int64
	for p := range high {
		l.parts[p].v = NewVerifier(uint32(p), 0, true)
		l.parts[p].v.frames = frames
		l.parts[p].high = high[p]
		l.parts[p].lastMember = -1
		total += int64(high[p])
	}
	l.remaining.Store(total)
	return l
}

// check verifies a batch member polled from partition.
func (l *groupLedger) check(member int, partition uint32, msgs []client.Message) error {
	if int(partition) >= len(l.parts) {
		return fmt.Errorf("%w: member %d polled partition %d of %d", ErrVerify, member, partition, len(l.parts))
	}
	pl := &l.parts[partition]
	pl.mu.Lock()
	defer pl.mu.Unlock()
	for j := range msgs {
		m := &msgs[j]
		if m.Offset < pl.v.Next() {
			return fmt.Errorf("%w: partition %d offset %d to member %d, already delivered (to offset %d, last to member %d)",
				errDuplicate, partition, m.Offset, member, pl.v.Next()-1, pl.lastMember)
		}
		if m.Offset >= pl.high {
			return fmt.Errorf("%w: partition %d offset %d to member %d, beyond the %d pre-filled messages", ErrVerify, partition, m.Offset, member, pl.high)
		}
		if err := pl.v.Check(m); err != nil {
			return fmt.Errorf("member %d: %w", member, err)
		}
	}
	pl.lastMember = member
	l.remaining.Add(-int64(len(msgs)))
	return nil
}

// groupMemberStats is what one member saw of the group.
type groupMemberStats struct {
	syncs, fenced, generationChanges, commits uint64
	generation                                uint64
	commitHist                                *hdrhistogram.Histogram
}

// runGroup opens and joins every member in index order (so the measured
// loops start on a settled assignment), runs the member loops until the
// ledger is empty, then leaves and closes. It fills res.Consumers and
// res.Group. Every poll is measured (the pre-filled volume is finite).
func (r *run) runGroup(ctx context.Context, gt GroupTarget, res *Result, live bool) (err error) {
	w := r.w
	high := make([]uint64, w.Partitions)
	for p := range high {
		high[p] = r.produced[w.slotIndex(0, uint32(p))].Load()
	}
	ledger := newGroupLedger(high, r.target.FramesVerifiable())
	if err := gt.CreateGroup(ctx, groupName); err != nil {
		return err
	}
	members := make([]GroupMemberConn, 0, w.Consumers)
	defer func() {
		for _, m := range members {
			err = errors.Join(err, m.Close())
		}
	}()
	for i := 0; i < w.Consumers; i++ {
		m, err := gt.GroupMember(ctx, i, groupName)
		if err != nil {
			return err
		}
		members = append(members, m)
		if err := m.Join(ctx); err != nil {
			return fmt.Errorf("member %d: %w", i, err)
		}
	}
	extra := make([]groupMemberStats, w.Consumers)
	r.schedule(time.Now(), 0)
	stop := r.sample(res, live, 0, w.Consumers)
	cons, err := r.actors(ctx, w.Consumers, func(ctx context.Context, i int, _ bool) (actorStats, error) {
		return r.groupMember(ctx, i, members[i], ledger, &extra[i])
	}, true)
	stop()
	if err != nil {
		return err
	}
	if left := ledger.remaining.Load(); left != 0 {
		return fmt.Errorf("%w: %d pre-filled messages were never delivered", ErrVerify, left)
	}
	for i, m := range members {
		if err := m.Leave(ctx); err != nil {
			return fmt.Errorf("member %d leave: %w", i, err)
		}
	}
	res.Consumers = role(cons)
	g := &GroupResult{Members: w.Consumers}
	commits := newHistogram()
	for _, e := range extra {
		g.Syncs += e.syncs
		g.FencedPolls += e.fenced
		g.GenerationChanges += e.generationChanges
		g.Commits += e.commits
		g.Generation = max(g.Generation, e.generation)
		commits.Merge(e.commitHist)
	}
	g.CommitLatency = summarise(commits)
	res.Group = g
	return nil
}

// groupMember is member i's loop: sync, poll each assigned partition from
// the group's offset, verify through the ledger, commit, and re-sync when
// a poll is fenced, when a pass reads nothing, or every groupResyncPasses
// passes (a generation change replaces the assignment).
func (r *run) groupMember(ctx context.Context, i int, conn GroupMemberConn, ledger *groupLedger, gs *groupMemberStats) (actorStats, error) {
	st := actorStats{index: i, partition: partitionUnknown, hist: newHistogram()}
	gs.commitHist = newHistogram()
	var parts []uint32
	var msgs []client.Message
	needSync, synced := true, false
	passes, stalled := 0, 0
	for ledger.remaining.Load() > 0 {
		if needSync {
			generation, p, err := conn.Sync(ctx, parts)
			if err != nil {
				return st, fmt.Errorf("member %d: %w", i, err)
			}
			parts = p
			gs.syncs++
			if synced && generation != gs.generation {
				gs.generationChanges++
			}
			gs.generation, synced, needSync, passes = generation, true, false, 0
		}
		before := ledger.remaining.Load()
		read := 0
		for _, p := range parts {
			n, fenced, err := r.groupPoll(ctx, i, conn, p, ledger, &st, gs, &msgs)
			if err != nil {
				return st, err
			}
			if fenced {
				gs.fenced++
				needSync = true
				break
			}
			read += n
		}
		passes++
		if passes >= groupResyncPasses {
			needSync = true
		}
		if read > 0 {
			stalled = 0
			continue
		}
		needSync = true
		if ledger.remaining.Load() == before {
			if stalled++; stalled > groupStalledRoundsMax {
				return st, fmt.Errorf("%w: member %d, %d messages outstanding, partitions %v", errStalled, i, before, parts)
			}
		} else {
			stalled = 0
		}
		if err := pause(ctx, groupIdlePause); err != nil {
			return st, err
		}
	}
	return st, nil
}

// groupPoll polls partition p once, verifies and commits what came back
// and records it; it returns the message count and whether the poll was
// fenced.
func (r *run) groupPoll(ctx context.Context, i int, conn GroupMemberConn, p uint32, ledger *groupLedger, st *actorStats, gs *groupMemberStats, msgs *[]client.Message) (int, bool, error) {
	t0 := time.Now()
	got, fenced, err := conn.Poll(ctx, p, r.w.MessagesPerBatch, *msgs)
	*msgs = got
	if err != nil {
		return 0, false, fmt.Errorf("member %d poll of partition %d: %w", i, p, err)
	}
	end := time.Now()
	if fenced || len(got) == 0 {
		return 0, fenced, nil
	}
	if err := ledger.check(i, p, got); err != nil {
		return 0, false, err
	}
	var bytes uint64
	for j := range got {
		bytes += uint64(len(got[j].Payload))
	}
	last := got[len(got)-1].Offset
	c0 := time.Now()
	if err := conn.Commit(ctx, p, last); err != nil {
		return 0, false, fmt.Errorf("member %d commit of partition %d offset %d: %w", i, p, last, err)
	}
	committed := time.Now()
	recordMicros(gs.commitHist, committed.Sub(c0))
	gs.commits++
	r.verified.Add(uint64(len(got)))
	if st.messages == 0 {
		st.first = t0
	}
	// The member's throughput window includes its commits.
	st.end = committed
	st.messages += uint64(len(got))
	st.bytes += bytes
	recordMicros(st.hist, end.Sub(t0))
	r.meters.consumers[i].record(bytes, uint64(len(got)), end.Sub(t0))
	return len(got), false, nil
}
