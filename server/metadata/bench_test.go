package metadata

import (
	"fmt"
	"testing"
)

func BenchmarkApplyCreateTopic(b *testing.B) {
	m := New()
	m.Apply(1, 1, OperationCreateUser, BootstrapRoot("root", "h", nil))
	m.Apply(2, 2, OperationCreateStream, EncodeOp(Envelope{}, &CreateStream{Name: "s"}))
	bodies := make([][]byte, topicsPerStreamMax)
	for i := range bodies {
		bodies[i] = EncodeOp(Envelope{}, createTopicOp(NumericID(0), fmt.Sprint("t", i), 4))
	}
	deleteBody := EncodeOp(Envelope{}, &DeleteTopic{Stream: NumericID(0), Topic: NumericID(0)})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Apply(uint64(2*i+3), 5, OperationCreateTopic, bodies[i%len(bodies)])
		m.Apply(uint64(2*i+4), 5, OperationDeleteTopic, deleteBody)
		m.TakeEffects()
	}
}

func BenchmarkCheckpoint(b *testing.B) {
	m := New()
	m.Apply(1, 1, OperationCreateUser, BootstrapRoot("root", "h", nil))
	op := uint64(1)
	for s := 0; s < 100; s++ {
		op++
		m.Apply(op, op, OperationCreateStream, EncodeOp(Envelope{}, &CreateStream{Name: fmt.Sprint("s", s)}))
		for t := 0; t < 10; t++ {
			op++
			m.Apply(op, op, OperationCreateTopic, EncodeOp(Envelope{}, createTopicOp(NumericID(uint32(s)), fmt.Sprint("t", t), 3)))
		}
	}
	data := m.Checkpoint()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		restored := New()
		if err := restored.Restore(m.Checkpoint()); err != nil {
			b.Fatal(err)
		}
	}
}
