package metadata

import "fmt"

// checkInvariants verifies the cross-index invariants of the state and
// panics on a violation, which can only be a bug in this package. Apply
// calls it after every operation when built with -tags invariants.
func (m *Machine) checkInvariants() {
	if err := m.invariantError(); err != nil {
		panic(fmt.Sprintf("metadata: invariant broken after op %d: %v", m.lastOp, err))
	}
	if got, want := m.stateBytes(), len(m.Checkpoint()); got != want {
		panic(fmt.Sprintf("metadata: state counted as %d bytes after op %d, its checkpoint is %d", got, m.lastOp, want))
	}
}

// invariantError returns the first broken invariant, or nil.
func (m *Machine) invariantError() error {
	if len(m.streamNames) != len(m.streams) || len(m.userNames) != len(m.users) {
		return fmt.Errorf("name index sizes %d/%d streams, %d/%d users",
			len(m.streamNames), len(m.streams), len(m.userNames), len(m.users))
	}
	consensusGroups := map[uint64]bool{}
	if m.nextConsensusGroup > ConsensusGroupLimit {
		return fmt.Errorf("next consensus group %d beyond %d", m.nextConsensusGroup, ConsensusGroupLimit)
	}
	for _, s := range m.Streams() {
		if id, ok := m.streamNames[s.Name]; !ok || id != s.ID {
			return fmt.Errorf("stream %d name index", s.ID)
		}
		if len(s.topicNames) != len(s.topics) {
			return fmt.Errorf("stream %d topic index size", s.ID)
		}
		for _, t := range s.Topics() {
			if id, ok := s.topicNames[t.Name]; !ok || id != t.ID || t.StreamID != s.ID {
				return fmt.Errorf("topic %d/%d index", s.ID, t.ID)
			}
			for i := range t.Partitions {
				if t.Partitions[i].ID >= partitionIDLimit || (i > 0 && t.Partitions[i].ID <= t.Partitions[i-1].ID) {
					return fmt.Errorf("topic %d/%d partitions out of order", s.ID, t.ID)
				}
				g := t.Partitions[i].ConsensusGroup
				if g >= m.nextConsensusGroup || consensusGroups[g] {
					return fmt.Errorf("topic %d/%d partition %d: consensus group %d given out twice or not yet (next %d)", s.ID, t.ID, t.Partitions[i].ID, g, m.nextConsensusGroup)
				}
				consensusGroups[g] = true
			}
			if err := t.groupsError(); err != nil {
				return fmt.Errorf("stream %d: %w", s.ID, err)
			}
		}
	}
	tokens := 0
	for _, u := range m.Users() {
		if id, ok := m.userNames[u.Username]; !ok || id != u.ID {
			return fmt.Errorf("user %d name index", u.ID)
		}
		if len(u.Tokens) > TokensPerUserMax {
			return fmt.Errorf("user %d holds %d tokens", u.ID, len(u.Tokens))
		}
		for i, t := range u.Tokens {
			if owner, ok := m.tokenHashes[t.Hash]; !ok || owner != u.ID {
				return fmt.Errorf("user %d token %q hash index", u.ID, t.Name)
			}
			if u.token(t.Name) != i {
				return fmt.Errorf("user %d token %q duplicated", u.ID, t.Name)
			}
		}
		tokens += len(u.Tokens)
	}
	if tokens != len(m.tokenHashes) {
		return fmt.Errorf("token index holds %d hashes for %d tokens", len(m.tokenHashes), tokens)
	}
	return nil
}
