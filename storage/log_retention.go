package storage

// SealedSegments describes a run of the oldest sealed segments of a log.
type SealedSegments struct {
	// Segments is how many there are.
	Segments int
	// EndOffset is the first offset after them: the start of the first
	// segment kept (the log's first offset when Segments is 0).
	EndOffset uint64
	// Messages and Bytes are what they hold.
	Messages uint64
	Bytes    int64
}

// OldestSealed describes the n oldest sealed segments (fewer when the log
// has fewer; never the active one) without changing anything: what a
// deletion of them would remove, measured before it is decided.
func (l *Log) OldestSealed(n int) SealedSegments {
	out := SealedSegments{EndOffset: l.segments[0].start}
	for _, seg := range l.segments[:len(l.segments)-1] {
		if out.Segments >= n {
			break
		}
		out.Segments++
		out.EndOffset = seg.next
		out.Messages += seg.messages
		out.Bytes += seg.size
	}
	return out
}

// DeleteSealedBelow removes the oldest sealed segments whose messages all
// lie below offset (never the active one) and returns how many it removed.
func (l *Log) DeleteSealedBelow(offset uint64) (int, error) {
	n := 0
	for _, seg := range l.segments[:len(l.segments)-1] {
		if seg.next > offset {
			break
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	return l.DeleteOldestSealed(n)
}
