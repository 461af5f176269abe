package partition

import "testing"

// TestApplyAllocations guards the hot paths: a send costs the stamped copy,
// its reply and amortised buffer growth; an auto-commit only its reply.
func TestApplyAllocations(t *testing.T) {
	m := New(Config{MessagesRequiredToSave: 1 << 30, SizeOfMessagesRequiredToSaveBytes: 1 << 60})
	body := EncodeSendMessages(Envelope{}, buildBatch(t, "a", 10))
	op := uint64(0)
	sends := testing.AllocsPerRun(200, func() {
		op++
		m.Apply(op, op, OperationSendMessages, body)
	})
	if sends > 3 {
		t.Fatalf("send allocates %.1f times", sends)
	}
	store := StoreConsumerOffset{Consumer: ConsumerKey{Kind: ConsumerKindConsumer, ID: 1}, Offset: 5, Mode: StoreAutoCommit}.Encode(Envelope{})
	m.TakeEffects()
	stores := testing.AllocsPerRun(200, func() {
		op++
		m.Apply(op, op, OperationStoreConsumerOffset, store)
	})
	if stores > 1 {
		t.Fatalf("auto-commit allocates %.1f times", stores)
	}
}

func BenchmarkApplySend(b *testing.B) {
	m := New(Config{})
	body := EncodeSendMessages(Envelope{}, buildBatch(b, "bench", 100))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Apply(uint64(i+1), uint64(i+1), OperationSendMessages, body)
		carryOut(m)
	}
}

func BenchmarkApplyAutoCommit(b *testing.B) {
	m := New(Config{})
	m.Apply(1, 1, OperationSendMessages, EncodeSendMessages(Envelope{}, buildBatch(b, "x", 1)))
	body := StoreConsumerOffset{Consumer: ConsumerKey{Kind: ConsumerKindConsumer, ID: 1}, Mode: StoreAutoCommit}.Encode(Envelope{})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Apply(uint64(i+2), 1, OperationStoreConsumerOffset, body)
	}
}
