package partition

import (
	"bytes"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// action is one operation for a partition machine.
type action struct {
	timestamp uint64
	operation uint8
	body      []byte
}

func drawAction(t *rapid.T, batches [][]byte, timestamp uint64) action {
	key := ConsumerKey{Kind: rapid.Uint8Range(1, 2).Draw(t, "kind"), ID: rapid.Uint32Range(0, 2).Draw(t, "id")}
	switch rapid.IntRange(0, 11).Draw(t, "action") {
	case 0, 1, 2, 3:
		batch := batches[rapid.IntRange(0, len(batches)-1).Draw(t, "batch")]
		return action{timestamp, OperationSendMessages, EncodeSendMessages(Envelope{UserID: 1}, batch)}
	case 4, 5:
		o := StoreConsumerOffset{Consumer: key, Offset: rapid.Uint64Range(0, 15).Draw(t, "offset"),
			Mode: StoreMode(rapid.Uint8Range(0, 1).Draw(t, "mode"))}
		return action{timestamp, OperationStoreConsumerOffset, o.Encode(Envelope{})}
	case 6:
		return action{timestamp, OperationDeleteConsumerOffset, DeleteConsumerOffset{Consumer: key}.Encode(Envelope{})}
	case 7:
		o := SetFlushThresholds{MessagesRequiredToSave: rapid.Uint32Range(0, 8).Draw(t, "messages"),
			SizeOfMessagesRequiredToSaveBytes: rapid.Uint64Range(0, 2000).Draw(t, "bytes")}
		return action{timestamp, OperationSetFlushThresholds, o.Encode(Envelope{})}
	case 8:
		o := DeleteSegments{BelowOffset: rapid.Uint64Range(0, 30).Draw(t, "below"),
			Messages: rapid.Uint64Range(0, 30).Draw(t, "messages"), SizeBytes: rapid.Uint64Range(0, 5000).Draw(t, "bytes")}
		return action{timestamp, OperationDeleteSegments, o.Encode(Envelope{})}
	case 9:
		if rapid.IntRange(0, 3).Draw(t, "purgeRarely") == 0 {
			o := PurgePartition{Generation: rapid.Uint64Range(0, 5).Draw(t, "generation")}
			return action{timestamp, OperationPurgePartition, o.Encode(Envelope{})}
		}
		fallthrough
	default:
		operation := []uint8{OperationSendMessages, OperationPurgePartition, OperationDeleteSegments, 99}[rapid.IntRange(0, 3).Draw(t, "junkOperation")]
		return action{timestamp, operation, rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "junk")}
	}
}

// drawActions draws a run of operations whose clock may step back.
func drawActions(t *rapid.T, batches [][]byte) []action {
	actions := make([]action, rapid.IntRange(1, 60).Draw(t, "steps"))
	timestamp := uint64(1)
	for i := range actions {
		if rapid.Bool().Draw(t, "advance") {
			timestamp += rapid.Uint64Range(1, 100).Draw(t, "by")
		} else if timestamp > 50 {
			timestamp -= 50 // the clock may step back; base timestamps must not
		}
		actions[i] = drawAction(t, batches, timestamp)
	}
	return actions
}

func drawConfig(t *rapid.T) Config {
	return Config{StreamID: 1, TopicID: 2, PartitionID: 3, MessagesRequiredToSave: rapid.Uint32Range(1, 6).Draw(t, "threshold"),
		FlushEveryBatch: rapid.IntRange(0, 3).Draw(t, "flushEvery") == 0}
}

// TestPropertyPartitionCheckpointMidway: two machines fed the same random
// operations, one replaced midway by a restore of its own checkpoint, give
// the same replies, effects, flush signals and final state.
func TestPropertyPartitionCheckpointMidway(t *testing.T) {
	batches := [][]byte{buildBatch(t, "a", 1), buildBatch(t, "b", 3), buildBatch(t, "c", 2)}
	rapid.Check(t, func(t *rapid.T) {
		cfg := drawConfig(t)
		actions := drawActions(t, batches)
		cut := rapid.IntRange(0, len(actions)).Draw(t, "cut")
		a, b := New(cfg), New(cfg)
		for i, act := range actions {
			if i == cut {
				restored := New(Config{})
				if err := restored.Restore(b.Checkpoint()); err != nil {
					t.Fatalf("restore at %d: %v", cut, err)
				}
				b = restored
			}
			ra := a.Apply(uint64(i+1), act.timestamp, act.operation, act.body)
			rb := b.Apply(uint64(i+1), act.timestamp, act.operation, act.body)
			if !bytes.Equal(ra, rb) {
				t.Fatalf("step %d: replies differ %x %x", i, ra, rb)
			}
			if a.FlushDue() != b.FlushDue() {
				t.Fatalf("step %d: flush signals differ", i)
			}
			if ea, eb := carryOut(a), carryOut(b); !reflect.DeepEqual(ea, eb) {
				t.Fatalf("step %d: effects differ %+v %+v", i, ea, eb)
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

// TestPropertyReplayGivesTheSameCheckpoint: replaying the operations a
// machine applied into a fresh one, carrying out the flushes they asked
// for, yields a byte-identical checkpoint after every operation: the
// state, flush frontier included, is a function of the operations.
func TestPropertyReplayGivesTheSameCheckpoint(t *testing.T) {
	batches := [][]byte{buildBatch(t, "a", 1), buildBatch(t, "b", 3), buildBatch(t, "c", 2)}
	rapid.Check(t, func(t *rapid.T) {
		cfg := drawConfig(t)
		actions := drawActions(t, batches)
		live := New(cfg)
		checkpoints := make([][]byte, len(actions))
		for i, act := range actions {
			live.Apply(uint64(i+1), act.timestamp, act.operation, act.body)
			carryOut(live)
			checkpoints[i] = live.Checkpoint()
		}
		replay := New(cfg)
		for i, act := range actions {
			replay.Apply(uint64(i+1), act.timestamp, act.operation, act.body)
			carryOut(replay)
			if !bytes.Equal(replay.Checkpoint(), checkpoints[i]) {
				t.Fatalf("step %d (operation %d): the replay's checkpoint differs", i, act.operation)
			}
		}
	})
}
