package vsr

import (
	"testing"

	"pgregory.net/rapid"
)

// simpleReplicationQuorum restates DESIGN.md decision 4 as literally as
// possible, as the second implementation quorum.go is checked against.
func simpleReplicationQuorum(n int) int {
	if n == 2 {
		return 2
	}
	half := n / 2
	if n%2 == 1 {
		half++
	}
	if half > 3 {
		return 3
	}
	return half
}

func TestQuorumTable(t *testing.T) {
	want := map[int][2]int{1: {1, 1}, 2: {2, 2}, 3: {2, 2}, 4: {2, 3}, 5: {3, 3}, 6: {3, 4}}
	for n := 1; n <= 6; n++ {
		got := [2]int{ReplicationQuorum(n), ViewChangeQuorum(n)}
		if got != want[n] {
			t.Errorf("n=%d: quorums %v, want %v", n, got, want[n])
		}
	}
}

// TestQuorumsIntersect checks, for n = 1..16, that any replication quorum
// and any view-change quorum share a replica, by drawing both as explicit
// sets and intersecting them.
func TestQuorumsIntersect(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 16).Draw(t, "n")
		rq, vq := ReplicationQuorum(n), ViewChangeQuorum(n)
		simpleViewChange := n - simpleReplicationQuorum(n) + 1
		if n == 2 {
			simpleViewChange = 2 // two replicas need both for either quorum
		}
		if rq != simpleReplicationQuorum(n) || vq != simpleViewChange {
			t.Fatalf("n=%d: quorums %d,%d disagree with the simple version", n, rq, vq)
		}
		if rq < 1 || rq > n || vq < 1 || vq > n {
			t.Fatalf("n=%d: quorum out of range: %d %d", n, rq, vq)
		}
		perm := rapid.Permutation(rangeInts(n)).Draw(t, "replication")
		perm2 := rapid.Permutation(rangeInts(n)).Draw(t, "view_change")
		in := make([]bool, n)
		for _, r := range perm[:rq] {
			in[r] = true
		}
		for _, r := range perm2[:vq] {
			if in[r] {
				return
			}
		}
		t.Fatalf("n=%d: replication quorum %v and view-change quorum %v do not intersect", n, perm[:rq], perm2[:vq])
	})
}

func rangeInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
