package partition

import (
	"bytes"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// action is one input to a partition machine: an operation through Apply,
// or one of the server-side calls (MarkFlushed, Purge) that happen in
// commit order too.
type action struct {
	timestamp uint64
	operation uint8
	body      []byte
	flushUpTo uint64
	markFlush bool
	purge     bool
}

func drawAction(t *rapid.T, batches [][]byte, timestamp uint64) action {
	key := ConsumerKey{Kind: rapid.Uint8Range(1, 2).Draw(t, "kind"), ID: rapid.Uint32Range(0, 2).Draw(t, "id")}
	switch rapid.IntRange(0, 9).Draw(t, "action") {
	case 0, 1, 2, 3:
		batch := batches[rapid.IntRange(0, len(batches)-1).Draw(t, "batch")]
		return action{timestamp: timestamp, operation: OperationSendMessages, body: EncodeSendMessages(Envelope{UserID: 1}, batch)}
	case 4, 5:
		o := StoreConsumerOffset{Consumer: key, Offset: rapid.Uint64Range(0, 15).Draw(t, "offset"),
			Mode: StoreMode(rapid.Uint8Range(0, 1).Draw(t, "mode"))}
		return action{timestamp: timestamp, operation: OperationStoreConsumerOffset, body: o.Encode(Envelope{})}
	case 6:
		return action{timestamp: timestamp, operation: OperationDeleteConsumerOffset, body: DeleteConsumerOffset{Consumer: key}.Encode(Envelope{})}
	case 7, 8:
		return action{markFlush: true, flushUpTo: rapid.Uint64Range(0, 20).Draw(t, "flushUpTo")}
	default:
		if rapid.IntRange(0, 3).Draw(t, "purgeRarely") == 0 {
			return action{purge: true}
		}
		return action{timestamp: timestamp, operation: OperationSendMessages, body: rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "junk")}
	}
}

// TestPropertyPartitionCheckpointMidway: two machines fed the same random
// inputs, one replaced midway by a restore of its own checkpoint, give the
// same replies, effects, flush signals and final state.
func TestPropertyPartitionCheckpointMidway(t *testing.T) {
	batches := [][]byte{buildBatch(t, "a", 1), buildBatch(t, "b", 3), buildBatch(t, "c", 2)}
	rapid.Check(t, func(t *rapid.T) {
		cfg := Config{StreamID: 1, TopicID: 2, PartitionID: 3, MessagesRequiredToSave: rapid.Uint32Range(1, 6).Draw(t, "threshold")}
		n := rapid.IntRange(1, 50).Draw(t, "steps")
		actions := make([]action, n)
		timestamp := uint64(1)
		for i := range actions {
			if rapid.Bool().Draw(t, "advance") {
				timestamp += rapid.Uint64Range(1, 100).Draw(t, "by")
			} else if timestamp > 50 {
				timestamp -= 50 // the clock may step back; base timestamps must not
			}
			actions[i] = drawAction(t, batches, timestamp)
		}
		cut := rapid.IntRange(0, n).Draw(t, "cut")
		a, b := New(cfg), New(cfg)
		for i, act := range actions {
			if i == cut {
				restored := New(Config{})
				if err := restored.Restore(b.Checkpoint()); err != nil {
					t.Fatalf("restore at %d: %v", cut, err)
				}
				b = restored
			}
			switch {
			case act.markFlush:
				a.MarkFlushed(act.flushUpTo)
				b.MarkFlushed(act.flushUpTo)
			case act.purge:
				a.Purge()
				b.Purge()
			default:
				ra := a.Apply(uint64(i+1), act.timestamp, act.operation, act.body)
				rb := b.Apply(uint64(i+1), act.timestamp, act.operation, act.body)
				if !bytes.Equal(ra, rb) {
					t.Fatalf("step %d: replies differ %x %x", i, ra, rb)
				}
			}
			if ea, eb := a.TakeEffects(), b.TakeEffects(); !reflect.DeepEqual(ea, eb) {
				t.Fatalf("step %d: effects differ %+v %+v", i, ea, eb)
			}
			if a.FlushDue() != b.FlushDue() {
				t.Fatalf("step %d: flush signals differ", i)
			}
			if err := a.invariantError(); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if !bytes.Equal(a.Checkpoint(), b.Checkpoint()) {
			t.Fatal("final states differ")
		}
	})
}
