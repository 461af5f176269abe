package metadata

import (
	"reflect"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// TestRepliesDecodeWithWire checks that the payloads Apply returns decode
// with net/wire's record decoders into the expected values.
func TestRepliesDecodeWithWire(t *testing.T) {
	h := newHarness(t)
	var stream wire.StreamDetails
	if err := stream.Decode(h.mustOK(&CreateStream{Name: "s"})); err != nil {
		t.Fatal(err)
	}
	if stream.ID != 0 || stream.Name != "s" || stream.CreatedAt != h.ts || stream.TopicsCount != 0 || len(stream.Topics) != 0 {
		t.Fatalf("stream %+v", stream)
	}
	op := createTopicOp(NumericID(0), "t", 2)
	op.ExplicitOptions = block(wire.Uint64Option("segment_size", 1<<20))
	op.DerivedOptions = block(wire.StringOption("compression_algorithm", "none"), wire.BoolOption("enforce_fsync", false))
	var topic wire.TopicDetails
	if err := topic.Decode(h.mustOK(op)); err != nil {
		t.Fatal(err)
	}
	if topic.Name != "t" || topic.PartitionsCount != 2 || len(topic.Partitions) != 2 || topic.Partitions[1].ID != 1 ||
		topic.MessageExpiry != NeverExpires || topic.CompressionAlgorithm != CompressionNone {
		t.Fatalf("topic %+v", topic)
	}
	if v, ok := topic.Options.Get("segment_size"); !ok || v.Kind != wire.TLVUint64 {
		t.Fatalf("explicit options %+v", topic.Options)
	}
	if len(topic.Derived) != 2 || topic.Derived[0].Key != "compression_algorithm" {
		t.Fatalf("derived options %+v", topic.Derived)
	}
	perms := &Permissions{Global: GlobalPermissions{SendMessages: true},
		Streams: []StreamPermissions{{StreamID: 0, ReadStream: true, Topics: []TopicPermissions{{TopicID: 0, PollMessages: true}}}}}
	var user wire.UserDetails
	if err := user.Decode(h.mustOK(&CreateUser{Username: "alice", PasswordHash: "x", Status: UserStatusActive, Permissions: perms})); err != nil {
		t.Fatal(err)
	}
	if user.Username != "alice" || user.ID != 1 || user.Status != wire.UserActive {
		t.Fatalf("user %+v", user)
	}
	if got := PermissionsFromWire(user.Permissions); !reflect.DeepEqual(got, perms) {
		t.Fatalf("permissions %+v", got)
	}
	if got := PermissionsFromWire(perms.Wire()); !reflect.DeepEqual(got, perms) {
		t.Fatal("Wire/PermissionsFromWire do not round trip")
	}
	if PermissionsFromWire(nil) != nil || (*Permissions)(nil).Wire() != nil {
		t.Fatal("nil permissions do not stay nil")
	}
}
