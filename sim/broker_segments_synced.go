package sim

// The one place broker_bugs.go and broker_segment_faults.go learn how far
// a simSegments is synced (its sync field is the segment store's own).

// batchSynced reports whether s's flushed batch k is durable.
func (s *simSegments) batchSynced(k int) bool {
	v := batchView(s.batches[k])
	return v.BaseOffset()+uint64(v.MessageCount()) <= s.syncedEnd
}

// truncateBatches keeps s's first k batches (a loader that found batch k
// unreadable), and no more of them synced than are kept.
func (s *simSegments) truncateBatches(k int) {
	s.batches = s.batches[:k]
	s.syncedEnd = min(s.syncedEnd, s.end())
}
