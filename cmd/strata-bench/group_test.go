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
