package metadata

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stratabroker/strata/net/wire"

	"github.com/stratabroker/strata/net/wire/statecodec"
	"github.com/zeebo/xxh3"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the checked-in fuzz seed corpus")

// seedOps returns one valid encoding of every operation kind.
func seedOps() []Op {
	perms := &Permissions{Global: GlobalPermissions{ReadUsers: true},
		Streams: []StreamPermissions{{StreamID: 1, PollMessages: true, Topics: []TopicPermissions{{TopicID: 2, SendMessages: true}}}}}
	topic := createTopicOp(NamedID("s"), "t", 2)
	topic.ExplicitOptions = block(wire.Uint64Option("segment_size", 1<<20))
	return []Op{
		&CreateStream{Name: "orders"},
		&UpdateStream{Stream: NumericID(1), Name: "renamed"},
		&DeleteStream{Stream: NamedID("orders")},
		&PurgeStream{Stream: NumericID(0)},
		topic,
		&UpdateTopic{Stream: NumericID(0), Topic: NamedID("t"), Name: "u", SetCompression: true, CompressionAlgorithm: 2,
			Options: block(wire.StringOption("compression_algorithm", "gzip"))},
		&DeleteTopic{Stream: NumericID(0), Topic: NumericID(0)},
		&PurgeTopic{Stream: NumericID(0), Topic: NamedID("t")},
		&CreatePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 3},
		&DeletePartitions{Stream: NumericID(0), Topic: NumericID(0), Count: 1},
		&DeleteSegments{Stream: NumericID(0), Topic: NumericID(0), PartitionID: 1, SegmentsCount: 2},
		&CreateUser{Username: "alice", PasswordHash: "$argon2id$x", Status: 1, Permissions: perms},
		&UpdateUser{User: NamedID("alice"), SetUsername: true, Username: "alicia", SetStatus: true, Status: 2},
		&DeleteUser{User: NumericID(3)},
		&ChangePassword{User: NumericID(1), VerifiedHash: "old", NewPasswordHash: "new"},
		&UpdatePermissions{User: NamedID("alice"), Permissions: perms},
		&CreatePersonalAccessToken{Name: "ci", TokenHash: "abc", ExpiryMicros: 60_000_000},
		&DeletePersonalAccessToken{Name: "ci"},
		&CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: "workers"},
		&DeleteConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Group: NamedID("old")},
		&JoinConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NamedID("workers"), InFlight: []uint32{1}},
		&LeaveConsumerGroup{Stream: NumericID(0), Topic: NumericID(0), Group: NumericID(0)},
		&RemoveConsumerGroupMember{Client: ClientID{Lo: 5, Hi: 6}},
		&CompleteConsumerGroupHandOff{StreamID: 0, TopicID: 0, GroupID: 0, PartitionID: 1},
	}
}

// FuzzDecodeOp: decoding never panics, a decoded op re-encodes to an
// encoding that decodes to the same op, and Apply never panics.
func FuzzDecodeOp(f *testing.F) {
	for _, o := range seedOps() {
		f.Add(o.Operation(), EncodeOp(Envelope{UserID: 1, ClientLo: 2, Request: 3}, o))
	}
	f.Add(OperationCreateStream, []byte{})
	f.Fuzz(func(t *testing.T, operation uint8, body []byte) {
		env, op, err := DecodeOp(operation, body)
		m := New()
		m.Apply(1, 1, OperationCreateUser, BootstrapRoot("root", "h", nil))
		m.Apply(2, 2, OperationCreateStream, EncodeOp(Envelope{}, &CreateStream{Name: "s"}))
		reply := m.Apply(3, 3, operation, body)
		if _, ok := ReplyCode(reply); !ok {
			t.Fatalf("reply %x is not result-framed", reply)
		}
		if err != nil {
			return
		}
		again := EncodeOp(env, op)
		env2, op2, err := DecodeOp(operation, again)
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if env2 != env || !reflect.DeepEqual(op2, op) {
			t.Fatalf("round trip changed the op:\n%+v\n%+v", op, op2)
		}
	})
}

// FuzzRestore: Restore never panics; an accepted checkpoint re-encodes to
// bytes that restore to the same encoding.
func FuzzRestore(f *testing.F) {
	f.Add(New().Checkpoint())
	f.Add(checkpointSeed())
	f.Add([]byte("STMD"))
	populated := checkpointSeed()
	f.Add(populated[statecodec.CheckpointHeaderSize : len(populated)-statecodec.CheckpointTrailerSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		// data is tried as a whole checkpoint and as a body sealed with a
		// valid header and checksum, so the fuzzer reaches the decoder.
		header := New().Checkpoint()[:statecodec.CheckpointHeaderSize]
		sealed := append(append([]byte(nil), header...), data...)
		sealed = binary.LittleEndian.AppendUint64(sealed, xxh3.Hash(sealed))
		for _, candidate := range [][]byte{data, sealed} {
			checkStableRestore(t, candidate)
		}
	})
}

// checkStableRestore restores data if it is accepted and checks that the
// checkpoint of the result restores to the same bytes.
func checkStableRestore(t *testing.T, data []byte) {
	{
		m := New()
		if err := m.Restore(data); err != nil {
			return
		}
		first := m.Checkpoint()
		other := New()
		if err := other.Restore(first); err != nil {
			t.Fatalf("own checkpoint rejected: %v", err)
		}
		if !bytes.Equal(other.Checkpoint(), first) {
			t.Fatal("checkpoint not stable")
		}
	}
}

// FuzzDecodePermissions: never panics; decode(encode(p)) == p.
func FuzzDecodePermissions(f *testing.F) {
	for _, o := range seedOps() {
		if cu, ok := o.(*CreateUser); ok {
			f.Add(cu.Permissions.Encode(nil))
		}
	}
	f.Add(make([]byte, 11))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePermissions(data)
		if err != nil {
			return
		}
		q, err := DecodePermissions(p.Encode(nil))
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, p, q)
		}
	})
}

// checkpointSeed is a checkpoint of a small populated machine.
func checkpointSeed() []byte {
	m := New()
	m.Apply(1, 1, OperationCreateUser, BootstrapRoot("root", "h", nil))
	for i, o := range seedOps() {
		m.Apply(uint64(i+2), uint64(i+2), o.Operation(), EncodeOp(Envelope{}, o))
	}
	m.Apply(100, 100, OperationCreateStream, EncodeOp(Envelope{}, &CreateStream{Name: "s"}))
	m.Apply(101, 101, OperationCreateTopic, EncodeOp(Envelope{}, createTopicOp(NamedID("s"), "t", 2)))
	group := &CreateConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Name: "g"}
	m.Apply(102, 102, OperationCreateConsumerGroup, EncodeOp(Envelope{}, group))
	for i := uint64(1); i <= 2; i++ {
		join := &JoinConsumerGroup{Stream: NamedID("s"), Topic: NamedID("t"), Group: NamedID("g"), InFlight: []uint32{1}}
		m.Apply(102+i, 102+i, OperationJoinConsumerGroup, EncodeOp(Envelope{ClientLo: i}, join))
	}
	return m.Checkpoint()
}

// corpusEntry formats values in the Go fuzz corpus file format.
func corpusEntry(values ...any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, v := range values {
		switch v := v.(type) {
		case uint8:
			fmt.Fprintf(&b, "byte(%q)\n", rune(v))
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		}
	}
	return []byte(b.String())
}

// TestSeedCorpus checks the checked-in seed corpus exists for every fuzz
// target and still holds what the seeds encode today (run with
// -update-corpus to rewrite it after a format change).
func TestSeedCorpus(t *testing.T) {
	want := map[string][]byte{}
	for i, o := range seedOps() {
		want[filepath.Join("FuzzDecodeOp", fmt.Sprintf("op_%03d", o.Operation()))] =
			corpusEntry(o.Operation(), EncodeOp(Envelope{UserID: uint32(i), ClientLo: 9, Request: 1}, o))
	}
	want[filepath.Join("FuzzRestore", "empty")] = corpusEntry(New().Checkpoint())
	want[filepath.Join("FuzzRestore", "populated")] = corpusEntry(checkpointSeed())
	populated := checkpointSeed()
	want[filepath.Join("FuzzRestore", "populated_body")] = corpusEntry(populated[statecodec.CheckpointHeaderSize : len(populated)-statecodec.CheckpointTrailerSize])
	want[filepath.Join("FuzzDecodePermissions", "scoped")] = corpusEntry(seedOps()[11].(*CreateUser).Permissions.Encode(nil))
	for name, content := range want {
		path := filepath.Join("testdata", "fuzz", name)
		if *updateCorpus {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("seed corpus: %v", err)
		}
		if !bytes.Equal(got, content) {
			t.Fatalf("seed %s is stale; run go test -run TestSeedCorpus -update-corpus", name)
		}
	}
}
