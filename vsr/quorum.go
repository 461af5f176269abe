package vsr

// ReplicationQuorum returns how many replicas (the primary included) must
// hold a prepare before it commits: min(ceil(n/2), 3), except that two
// replicas need both. See DESIGN.md decision 4.
func ReplicationQuorum(replicaCount int) int {
	if replicaCount <= 0 {
		panic("vsr: replica count must be positive")
	}
	if replicaCount == 2 {
		return 2
	}
	return min((replicaCount+1)/2, 3)
}

// ViewChangeQuorum returns how many replicas must take part in a view
// change: n - ReplicationQuorum(n) + 1, so that every view-change quorum
// intersects every replication quorum; two replicas need both.
func ViewChangeQuorum(replicaCount int) int {
	if replicaCount == 2 {
		return 2
	}
	return replicaCount - ReplicationQuorum(replicaCount) + 1
}
