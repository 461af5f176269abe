package vsr

import "testing"

// nackTestChain returns the headers of ops 0..n-1 of a log of cluster 7.
func nackTestChain(n int) []Header {
	chain := []Header{rootHeader(7, 0)}
	for op := uint64(1); op < uint64(n); op++ {
		m := Message{Header: Header{Command: CommandPrepare, Cluster: 7, Op: op, View: 1, Parent: chain[op-1].Checksum, Operation: OperationUserMin}}
		m.Seal()
		chain = append(chain, m.Header)
	}
	return chain
}

// nackTestVote is a DoViewChange of replica carrying chain, with the
// prepare of each op present unless nacked.
func nackTestVote(replica uint8, chain []Header, nacked map[uint64]bool) *Message {
	n := len(chain)
	body := make([]byte, n*HeaderSize+(n+7)/8)
	for i := range chain {
		chain[i].Encode(body[i*HeaderSize:])
		if !nacked[chain[i].Op] {
			body[n*HeaderSize+i/8] |= 1 << (i % 8)
		}
	}
	m := &Message{Header: Header{Command: CommandDoViewChange, Cluster: 7, Replica: replica, View: 2, LogView: 1, Op: chain[n-1].Op, Context: Uint128{Lo: uint64(n)}}, Body: body}
	m.Seal()
	return m
}

// TestTruncateNackedNeedsOnlyEnoughNacks: an uncommitted op that enough
// replicas nack that fewer than a replication quorum can hold it was never
// committed, whatever the other votes say. The rule used to demand that
// every vote nack it, so one replica holding the op's header with a faulty
// body (which must never nack: it may have acked) kept the op, nobody could
// repair it, and the view never committed again (two replicas: seed 90
// before issue 12's swarm, scenarios/bug_two_replica_nack_never_truncates.txt).
func TestTruncateNackedNeedsOnlyEnoughNacks(t *testing.T) {
	chain := nackTestChain(4) // ops 0..3; op 3 is the uncommitted head
	for _, tc := range []struct {
		replicas int
		nackers  int // votes nacking op 3; the others hold it (faulty)
		want     uint64
	}{
		{2, 1, 2}, // 1 >= 2-2+1: truncated
		{3, 2, 2}, // 2 >= 3-2+1
		{3, 1, 3}, // one nack of three: may be committed
		{5, 3, 2}, // 3 >= 5-3+1
		{5, 2, 3},
	} {
		cfg := DefaultConfig(7, uint8(tc.replicas), 0)
		cfg.JournalSlots = 64
		r := &Replica{cfg: cfg, replicationQuorum: ReplicationQuorum(tc.replicas), viewChangeQuorum: ViewChangeQuorum(tc.replicas)}
		votes := max(ViewChangeQuorum(tc.replicas), tc.nackers+1)
		for v := 0; v < votes; v++ {
			r.viewChange.dvcs[v] = nackTestVote(uint8(v), chain, map[uint64]bool{3: v < tc.nackers})
		}
		if got := r.truncateNacked(chain, 3, 2); got != tc.want {
			t.Errorf("%d replicas, %d of %d votes nack op 3: log ends at op %d, want %d", tc.replicas, tc.nackers, votes, got, tc.want)
		}
	}
}
