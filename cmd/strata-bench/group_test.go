package main

import (
	"context"
	"errors"
	"testing"

	"github.com/stratabroker/strata/client"
)

// ledgerBatch builds partition p's messages at offsets from..to-1 as a
// pinned producer writes them.
func ledgerBatch(p uint32, from, to uint64) []client.Message {
	msgs := make([]client.Message, 0, to-from)
	for o := from; o < to; o++ {
		payload := make([]byte, 64)
		fillPayload(payload, p, o, 0, 0)
		msgs = append(msgs, client.Message{Offset: o, Payload: payload})
	}
	return msgs
}

func TestGroupLedgerExactlyOnce(t *testing.T) {
	l := newGroupLedger([]uint64{10, 10}, false)
	if err := l.check(0, 0, ledgerBatch(0, 0, 5)); err != nil {
		t.Fatal(err)
	}
	// Another member continuing the partition is fine.
	if err := l.check(1, 0, ledgerBatch(0, 5, 10)); err != nil {
		t.Fatal(err)
	}
	if err := l.check(1, 0, ledgerBatch(0, 9, 10)); !errors.Is(err, errDuplicate) {
		t.Fatalf("redelivery: %v", err)
	}
	if err := l.check(0, 1, ledgerBatch(1, 1, 3)); !errors.Is(err, ErrVerify) || errors.Is(err, errDuplicate) {
		t.Fatalf("gap: %v", err)
	}
	if err := l.check(0, 1, ledgerBatch(0, 0, 1)); !errors.Is(err, ErrVerify) {
		t.Fatalf("another partition's payload: %v", err)
	}
	if err := l.check(0, 2, ledgerBatch(2, 0, 1)); !errors.Is(err, ErrVerify) {
		t.Fatalf("unknown partition: %v", err)
	}
	if err := l.check(0, 1, ledgerBatch(1, 0, 10)); err != nil {
		t.Fatal(err)
	}
	if err := l.check(0, 1, ledgerBatch(1, 10, 11)); !errors.Is(err, ErrVerify) {
		t.Fatalf("beyond the pre-fill: %v", err)
	}
	if left := l.remaining.Load(); left != 0 {
		t.Fatalf("%d left", left)
	}
}

// forgetfulTarget is a Strata target whose members' first commit is
// silently lost, as a broker that drops group offsets would: the next
// poll redelivers the batch, and the run must fail.
type forgetfulTarget struct{ *strataTarget }

func (f forgetfulTarget) GroupMember(ctx context.Context, i int, name string) (GroupMemberConn, error) {
	m, err := f.strataTarget.GroupMember(ctx, i, name)
	return &forgetfulMember{GroupMemberConn: m}, err
}

type forgetfulMember struct {
	GroupMemberConn
	forgot bool
}

func (m *forgetfulMember) Commit(ctx context.Context, partition uint32, offset uint64) error {
	if !m.forgot {
		m.forgot = true
		return nil
	}
	return m.GroupMemberConn.Commit(ctx, partition, offset)
}

func TestGroupRunFailsOnRedelivery(t *testing.T) {
	target := inProcessTarget(t)
	w := tiny(ModeBalancedConsumerGroup)
	w.Consumers, w.Partitions = 2, 2
	_, err := Run(context.Background(), forgetfulTarget{target}, w, false)
	if !errors.Is(err, errDuplicate) {
		t.Fatalf("a redelivered message went through: %v", err)
	}
}

// rebalancingTarget makes the group rebalance under a running member: right
// after the member's first commit an outside client joins (taking half the
// partitions, cooperative), and right after the member's next sync that
// client leaves again (eager rebalance back to the member). The member
// must notice both through fenced polls and generation changes, and still
// read every message exactly once.
type rebalancingTarget struct {
	*strataTarget
	t *testing.T
}

func (rt rebalancingTarget) GroupMember(ctx context.Context, i int, name string) (GroupMemberConn, error) {
	m, err := rt.strataTarget.GroupMember(ctx, i, name)
	return &rebalancedMember{GroupMemberConn: m, rt: rt, name: name}, err
}

type rebalancedMember struct {
	GroupMemberConn
	rt       rebalancingTarget
	name     string
	outsider GroupMemberConn
	left     bool
}

func (m *rebalancedMember) Commit(ctx context.Context, partition uint32, offset uint64) error {
	if err := m.GroupMemberConn.Commit(ctx, partition, offset); err != nil {
		return err
	}
	if m.outsider != nil {
		return nil
	}
	o, err := m.rt.strataTarget.GroupMember(ctx, 99, m.name)
	if err != nil {
		return err
	}
	m.outsider = o
	m.rt.t.Cleanup(func() {
		if err := o.Close(); err != nil {
			m.rt.t.Error(err)
		}
	})
	return o.Join(ctx)
}

func (m *rebalancedMember) Sync(ctx context.Context, dst []uint32) (uint64, []uint32, error) {
	generation, parts, err := m.GroupMemberConn.Sync(ctx, dst)
	if err == nil && m.outsider != nil && !m.left {
		m.left = true
		err = m.outsider.Leave(ctx)
	}
	return generation, parts, err
}

func TestGroupMemberFollowsRebalances(t *testing.T) {
	target := inProcessTarget(t)
	w := tiny(ModeBalancedConsumerGroup)
	w.Consumers, w.Partitions = 1, 4
	res, err := Run(context.Background(), rebalancingTarget{target, t}, w, false)
	if err != nil {
		t.Fatal(err)
	}
	const want = 4 * 5 * 100
	if res.Verified != want || res.Consumers.Messages != want {
		t.Fatalf("verified %d, read %d; want %d", res.Verified, res.Consumers.Messages, want)
	}
	t.Logf("group: %+v", *res.Group)
	// Join (1 -> 2 members) and leave each bump the generation; the
	// member polled a partition it had lost at least once.
	if g := res.Group; g.FencedPolls == 0 || g.GenerationChanges < 2 || g.Generation < 3 {
		t.Fatalf("rebalances not followed: %+v", g)
	}
}
