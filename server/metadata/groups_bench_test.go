package metadata

import "testing"

// BenchmarkGroupJoinLeave measures a join (cooperative rebalance) and a
// leave (eager rebalance) of one member in a group of 64 members over a
// topic of 1000 partitions.
func BenchmarkGroupJoinLeave(b *testing.B) {
	const members, partitions = 64, 1000
	m := New()
	m.Apply(1, 1, OperationCreateUser, BootstrapRoot("root", "h", nil))
	m.Apply(2, 2, OperationCreateStream, EncodeOp(Envelope{}, &CreateStream{Name: "s"}))
	m.Apply(3, 3, OperationCreateTopic, EncodeOp(Envelope{}, createTopicOp(NumericID(0), "t", partitions)))
	m.Apply(4, 4, OperationCreateConsumerGroup, EncodeOp(Envelope{}, &CreateConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Name: "g"}))
	target := &JoinConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Group: NumericID(0)}
	op := uint64(4)
	for c := uint64(1); c <= members; c++ {
		op++
		m.Apply(op, op, OperationJoinConsumerGroup, EncodeOp(Envelope{ClientLo: c}, target))
	}
	joinBody := EncodeOp(Envelope{ClientLo: members + 1}, target)
	leaveBody := EncodeOp(Envelope{ClientLo: members + 1}, &LeaveConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Group: NumericID(0)})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		op += 2
		if code, _ := ReplyCode(m.Apply(op-1, op-1, OperationJoinConsumerGroup, joinBody)); code != CodeOK {
			b.Fatalf("join: %d", code)
		}
		if code, _ := ReplyCode(m.Apply(op, op, OperationLeaveConsumerGroup, leaveBody)); code != CodeOK {
			b.Fatalf("leave: %d", code)
		}
	}
}
