package metadata

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/stratabroker/strata/net/wire"

	"pgregory.net/rapid"
)

// Small pools make names collide, ids hit and miss, and permissions both
// pass and fail.
var (
	streamNames = []string{"s0", "s1", "s2"}
	topicNames  = []string{"t0", "t1", "t2"}
	userNames   = []string{"alice", "bobby", "carol", "al"}
	tokenNames  = []string{"ci", "dev"}
	groupNames  = []string{"g0", "g1"}
)

// drawGroupOp draws one consumer-group operation (kind 0..5).
func drawGroupOp(t *rapid.T, kind int) Op {
	// Mostly the first stream, topic and group, so the operations meet.
	stream, topic, group := NumericID(0), NumericID(0), NumericID(0)
	if rapid.IntRange(0, 5).Draw(t, "otherTarget") == 5 {
		stream = drawIdentifier(t, "stream", streamNames)
		topic = drawIdentifier(t, "topic", topicNames)
		group = drawIdentifier(t, "group", groupNames)
	}
	switch kind {
	case 0:
		return &CreateConsumerGroup{Stream: stream, Topic: topic, Name: rapid.SampledFrom(groupNames).Draw(t, "name")}
	case 1:
		return &DeleteConsumerGroup{Stream: stream, Topic: topic, Group: group}
	case 2:
		return &JoinConsumerGroup{Stream: stream, Topic: topic, Group: group,
			InFlight: rapid.SliceOfDistinct(rapid.Uint32Range(0, 5), func(v uint32) uint32 { return v }).Draw(t, "inFlight")}
	case 3:
		return &LeaveConsumerGroup{Stream: stream, Topic: topic, Group: group}
	case 4:
		return &RemoveConsumerGroupMember{Client: ClientID{Lo: rapid.Uint64Range(1, 4).Draw(t, "client")}}
	default:
		return &CompleteConsumerGroupHandOff{PartitionID: rapid.Uint32Range(0, 5).Draw(t, "partitionID")}
	}
}

func drawIdentifier(t *rapid.T, label string, names []string) Identifier {
	if rapid.Bool().Draw(t, label+"Numeric") {
		return NumericID(rapid.Uint32Range(0, 3).Draw(t, label+"ID"))
	}
	return NamedID(rapid.SampledFrom(names).Draw(t, label+"Name"))
}

func drawPermissions(t *rapid.T) *Permissions {
	if rapid.Bool().Draw(t, "noPermissions") {
		return nil
	}
	p := &Permissions{Global: GlobalPermissions{
		ManageStreams: rapid.Bool().Draw(t, "manageStreams"),
		ManageTopics:  rapid.Bool().Draw(t, "manageTopics"),
		ManageUsers:   rapid.Bool().Draw(t, "manageUsers"),
	}}
	if rapid.Bool().Draw(t, "streamEntry") {
		p.Streams = []StreamPermissions{{
			StreamID:     rapid.Uint32Range(0, 2).Draw(t, "permStream"),
			ManageStream: rapid.Bool().Draw(t, "manageStream"),
			ManageTopics: rapid.Bool().Draw(t, "streamManageTopics"),
			Topics:       []TopicPermissions{{TopicID: 0, ManageTopic: rapid.Bool().Draw(t, "manageTopic")}},
		}}
	}
	return p
}

// drawOp draws one operation of any kind the machine applies.
func drawOp(t *rapid.T) Op {
	stream := func() Identifier { return drawIdentifier(t, "stream", streamNames) }
	topic := func() Identifier { return drawIdentifier(t, "topic", topicNames) }
	user := func() Identifier { return drawIdentifier(t, "user", userNames) }
	if rapid.IntRange(0, 3).Draw(t, "family") == 1 {
		// Consumer groups: joins weigh most, so groups gain members.
		kinds := []int{0, 2, 2, 2, 1, 3, 4, 5, 2, 0}
		return drawGroupOp(t, rapid.SampledFrom(kinds).Draw(t, "groupKind"))
	}
	kind := rapid.IntRange(0, 23).Draw(t, "kind")
	switch {
	case kind >= 21:
		kind = 4 // creating topics and streams often keeps the rest busy
	case kind >= 18:
		kind = 0
	}
	switch kind {
	case 0:
		return &CreateStream{Name: rapid.SampledFrom(streamNames).Draw(t, "name")}
	case 1:
		return &UpdateStream{Stream: stream(), Name: rapid.SampledFrom(streamNames).Draw(t, "name")}
	case 2:
		return &DeleteStream{Stream: stream()}
	case 3:
		return &PurgeStream{Stream: stream()}
	case 4:
		o := createTopicOp(stream(), rapid.SampledFrom(topicNames).Draw(t, "name"), rapid.Uint32Range(0, 4).Draw(t, "partitions"))
		o.Options.CompressionAlgorithm = rapid.Uint8Range(1, 3).Draw(t, "compression")
		if rapid.Bool().Draw(t, "withOptions") {
			o.ExplicitOptions = block(wire.Uint64Option("message_expiry", rapid.Uint64().Draw(t, "expiry")))
		}
		return o
	case 5:
		o := &UpdateTopic{Stream: stream(), Topic: topic(), Name: rapid.SampledFrom(topicNames).Draw(t, "name"),
			SetMessageExpiry: rapid.Bool().Draw(t, "setExpiry"), MessageExpiryMicros: rapid.Uint64Range(0, 9).Draw(t, "expiry"),
			SetMaxTopicSize: rapid.Bool().Draw(t, "setMax"), MaxTopicSizeBytes: rapid.SampledFrom([]uint64{0, 5, NeverExpires, 1 << 31}).Draw(t, "max")}
		if o.SetMessageExpiry {
			o.Options = block(wire.Uint64Option("message_expiry", o.MessageExpiryMicros))
		}
		return o
	case 6:
		return &DeleteTopic{Stream: stream(), Topic: topic()}
	case 7:
		return &PurgeTopic{Stream: stream(), Topic: topic()}
	case 8:
		return &CreatePartitions{Stream: stream(), Topic: topic(), Count: rapid.Uint32Range(0, 3).Draw(t, "count")}
	case 9:
		return &DeletePartitions{Stream: stream(), Topic: topic(), Count: rapid.Uint32Range(0, 3).Draw(t, "count")}
	case 10:
		return &DeleteSegments{Stream: stream(), Topic: topic(), PartitionID: rapid.Uint32Range(0, 4).Draw(t, "partition"), SegmentsCount: 1}
	case 11:
		return &CreateUser{Username: rapid.SampledFrom(userNames).Draw(t, "name"), PasswordHash: "h",
			Status: rapid.Uint8Range(0, 3).Draw(t, "status"), Permissions: drawPermissions(t)}
	case 12:
		return &UpdateUser{User: user(), SetUsername: rapid.Bool().Draw(t, "setName"),
			Username: rapid.SampledFrom(userNames).Draw(t, "name"), SetStatus: rapid.Bool().Draw(t, "setStatus"), Status: 2}
	case 13:
		return &DeleteUser{User: user()}
	case 14:
		return &ChangePassword{User: user(), VerifiedHash: rapid.SampledFrom([]string{"h", "x", ""}).Draw(t, "verified"),
			NewPasswordHash: rapid.SampledFrom([]string{"h", "x", ""}).Draw(t, "new")}
	case 15:
		return &UpdatePermissions{User: user(), Permissions: drawPermissions(t)}
	case 16:
		return &CreatePersonalAccessToken{Name: rapid.SampledFrom(tokenNames).Draw(t, "name"),
			TokenHash: fmt.Sprint("hash", rapid.IntRange(0, 5).Draw(t, "hash")), ExpiryMicros: rapid.Uint64Range(0, 3).Draw(t, "expiry")}
	default:
		return &DeletePersonalAccessToken{Name: rapid.SampledFrom(tokenNames).Draw(t, "name")}
	}
}

// drawRequester returns root most of the time, else a user id that may or
// may not exist.
func drawRequester(t *rapid.T) uint32 {
	if rapid.IntRange(0, 9).Draw(t, "asRoot") < 7 {
		return RootUserID
	}
	return rapid.Uint32Range(1, 3).Draw(t, "user")
}

type step struct {
	timestamp uint64
	operation uint8
	body      []byte
}

// replayMidway applies steps to one machine, and to a second one that is
// replaced by a restore of its own checkpoint before step cut: every reply
// and every effect must match, and so must the final checkpoints. check
// runs after each step on the first machine and its reply. It returns the
// first machine.
func replayMidway(t *rapid.T, steps []step, cut int, check func(i int, a *Machine, reply []byte)) *Machine {
	a, b := New(), New()
	for i, s := range steps {
		if i == cut {
			restored := New()
			if err := restored.Restore(b.Checkpoint()); err != nil {
				t.Fatalf("restore at %d: %v", cut, err)
			}
			b = restored
		}
		ra := a.Apply(uint64(i+1), s.timestamp, s.operation, s.body)
		rb := b.Apply(uint64(i+1), s.timestamp, s.operation, s.body)
		if !bytes.Equal(ra, rb) {
			t.Fatalf("step %d (operation %d): replies differ\n%x\n%x", i, s.operation, ra, rb)
		}
		if ea, eb := a.TakeEffects(), b.TakeEffects(); !reflect.DeepEqual(ea, eb) {
			t.Fatalf("step %d: effects differ\n%+v\n%+v", i, ea, eb)
		}
		check(i, a, ra)
	}
	if !bytes.Equal(a.Checkpoint(), b.Checkpoint()) {
		t.Fatal("final states differ")
	}
	return a
}

// TestPropertyCheckpointMidway applies a random operation sequence to one
// machine, and to a second machine that is replaced midway by a restore of
// its own checkpoint: every reply, every effect and the final state must
// match.
func TestPropertyCheckpointMidway(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(t, "steps")
		steps := make([]step, 0, n+1)
		steps = append(steps, step{timestamp: 1, operation: OperationCreateUser, body: BootstrapRoot("root", "h", nil)})
		timestamp := uint64(1)
		for i := 0; i < n; i++ {
			timestamp += rapid.Uint64Range(0, 1000).Draw(t, "advance")
			o := drawOp(t)
			env := Envelope{UserID: drawRequester(t), ClientLo: rapid.Uint64Range(1, 4).Draw(t, "client"), Request: uint64(i)}
			steps = append(steps, step{timestamp: timestamp, operation: o.Operation(), body: EncodeOp(env, o)})
		}
		cut := rapid.IntRange(0, len(steps)).Draw(t, "cut")
		a := replayMidway(t, steps, cut, func(i int, a *Machine, reply []byte) {
			if _, ok := ReplyCode(reply); !ok {
				t.Fatalf("step %d: reply %x not result-framed", i, reply)
			}
		})
		if err := a.invariantError(); err != nil {
			t.Fatal(err)
		}
	})
}
