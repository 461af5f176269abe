package metadata

import (
	"testing"

	"pgregory.net/rapid"
)

// drawGroupScenarioOp draws a consumer-group operation (or a partition
// count change) on stream 0 / topic 0, from clients 1..4. Hand-off
// completions mostly pick one of the hand-offs pending in shadow.
func drawGroupScenarioOp(t *rapid.T, shadow *Machine) Op {
	s, tp := NumericID(0), NumericID(0)
	group := NumericID(rapid.Uint32Range(0, 2).Draw(t, "group"))
	switch rapid.IntRange(0, 9).Draw(t, "op") {
	case 0:
		return &CreateConsumerGroup{Stream: s, Topic: tp, Name: rapid.SampledFrom(groupNames).Draw(t, "name")}
	case 1:
		return &DeleteConsumerGroup{Stream: s, Topic: tp, Group: group}
	case 2, 3, 4:
		return &JoinConsumerGroup{Stream: s, Topic: tp, Group: group,
			InFlight: rapid.SliceOfDistinct(rapid.Uint32Range(0, 7), func(v uint32) uint32 { return v }).Draw(t, "inFlight")}
	case 5:
		return &LeaveConsumerGroup{Stream: s, Topic: tp, Group: group}
	case 6:
		return &RemoveConsumerGroupMember{Client: ClientID{Lo: rapid.Uint64Range(1, 4).Draw(t, "removed")}}
	case 7:
		if pending := shadow.PendingHandOffs(); len(pending) > 0 && rapid.Bool().Draw(t, "pendingOne") {
			h := pending[rapid.IntRange(0, len(pending)-1).Draw(t, "which")]
			return &CompleteConsumerGroupHandOff{StreamID: h.StreamID, TopicID: h.TopicID, GroupID: h.GroupID, PartitionID: h.PartitionID}
		}
		return &CompleteConsumerGroupHandOff{GroupID: rapid.Uint32Range(0, 2).Draw(t, "groupID"), PartitionID: rapid.Uint32Range(0, 7).Draw(t, "partitionID")}
	case 8:
		return &CreatePartitions{Stream: s, Topic: tp, Count: rapid.Uint32Range(1, 2).Draw(t, "count")}
	default:
		return &DeletePartitions{Stream: s, Topic: tp, Count: 1}
	}
}

// TestPropertyGroupsCheckpointMidway drives consumer groups through random
// joins, leaves, removals, hand-offs and partition changes on two
// machines, one restored from its own checkpoint midway: replies, effects
// and states must match, and after every step a group with members owns
// every partition of the topic exactly once.
func TestPropertyGroupsCheckpointMidway(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		steps := []step{
			{timestamp: 1, operation: OperationCreateUser, body: BootstrapRoot("root", "h", nil)},
			{timestamp: 2, operation: OperationCreateStream, body: EncodeOp(Envelope{}, &CreateStream{Name: "s0"})},
			{timestamp: 3, operation: OperationCreateTopic, body: EncodeOp(Envelope{}, createTopicOp(NumericID(0), "t0", rapid.Uint32Range(0, 6).Draw(t, "partitions")))},
			{timestamp: 4, operation: OperationCreateConsumerGroup, body: EncodeOp(Envelope{}, &CreateConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Name: "g"})},
		}
		shadow := New()
		for i, s := range steps {
			shadow.Apply(uint64(i+1), s.timestamp, s.operation, s.body)
		}
		n := rapid.IntRange(1, 80).Draw(t, "steps")
		timestamp := uint64(4)
		for i := 0; i < n; i++ {
			timestamp += rapid.Uint64Range(0, 1000).Draw(t, "advance")
			o := drawGroupScenarioOp(t, shadow)
			env := Envelope{ClientLo: rapid.Uint64Range(1, 4).Draw(t, "client"), Request: uint64(i)}
			steps = append(steps, step{timestamp: timestamp, operation: o.Operation(), body: EncodeOp(env, o)})
			shadow.Apply(uint64(len(steps)), timestamp, o.Operation(), steps[len(steps)-1].body)
		}
		cut := rapid.IntRange(0, len(steps)).Draw(t, "cut")
		replayMidway(t, steps, cut, func(i int, a *Machine, _ []byte) {
			if err := a.invariantError(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			checkFullCoverage(t, a, i)
		})
	})
}

// checkFullCoverage fails unless every group with members owns each
// partition of its topic exactly once.
func checkFullCoverage(t *rapid.T, m *Machine, stepIndex int) {
	for _, s := range m.Streams() {
		for _, topic := range s.Topics() {
			for _, g := range topic.Groups() {
				if len(g.Members()) == 0 {
					continue
				}
				owned := map[uint32]int{}
				for _, member := range g.Members() {
					for _, p := range member.Partitions {
						owned[p]++
					}
				}
				for _, p := range topic.Partitions {
					if owned[p.ID] != 1 {
						t.Fatalf("step %d: group %d owns partition %d %d times", stepIndex, g.ID, p.ID, owned[p.ID])
					}
				}
			}
		}
	}
}
