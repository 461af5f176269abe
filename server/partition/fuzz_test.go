package partition

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/net/wire/statecodec"
	"github.com/zeebo/xxh3"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the checked-in fuzz seed corpus")

// seedBodies returns a valid body of each operation.
func seedBodies(t testing.TB) map[uint8][]byte {
	return map[uint8][]byte{
		OperationSendMessages:         EncodeSendMessages(Envelope{UserID: 1, Request: 2}, buildBatch(t, "seed", 2)),
		OperationStoreConsumerOffset:  StoreConsumerOffset{Consumer: ConsumerKey{Kind: 1, ID: 5}, Offset: 1, Mode: StoreAutoCommit}.Encode(Envelope{UserID: 1}),
		OperationDeleteConsumerOffset: DeleteConsumerOffset{Consumer: ConsumerKey{Kind: 2, ID: 5}}.Encode(Envelope{UserID: 1}),
		OperationSetFlushThresholds:   SetFlushThresholds{MessagesRequiredToSave: 2, SizeOfMessagesRequiredToSaveBytes: 4096}.Encode(Envelope{}),
		OperationPurgePartition:       PurgePartition{Generation: 3}.Encode(Envelope{}),
		OperationDeleteSegments:       DeleteSegments{BelowOffset: 2, Messages: 2, SizeBytes: 300}.Encode(Envelope{}),
	}
}

// FuzzApply: decoding and applying any body never panics, replies have the
// documented shapes, decoded offset ops re-encode to the same bytes, and
// the machine's invariants hold.
func FuzzApply(f *testing.F) {
	for operation, body := range seedBodies(f) {
		f.Add(operation, body)
	}
	f.Fuzz(func(t *testing.T, operation uint8, body []byte) {
		h := newHarness(t, Config{PartitionID: 0})
		h.send(10, buildBatch(t, "x", 3))
		reply := h.apply(20, operation, body)
		switch operation {
		case OperationSendMessages:
			if _, ok := SendConfirmationBaseOffset(reply); !ok && !bytes.Equal(reply, []byte{0, 0, 0, 0}) {
				t.Fatalf("send reply %x", reply)
			}
		default:
			replyCode(t, reply)
		}
		if env, o, err := DecodeStoreConsumerOffset(body); err == nil && !bytes.Equal(o.Encode(env), body) {
			t.Fatal("store round trip")
		}
		if env, o, err := DecodeDeleteConsumerOffset(body); err == nil && !bytes.Equal(o.Encode(env), body) {
			t.Fatal("delete round trip")
		}
		if env, o, err := DecodeSendMessages(body); err == nil && !bytes.Equal(EncodeSendMessages(env, o.Batch), body) {
			t.Fatal("send round trip")
		}
		if env, o, err := DecodeSetFlushThresholds(body); err == nil && !bytes.Equal(o.Encode(env), body) {
			t.Fatal("set flush thresholds round trip")
		}
		if env, o, err := DecodePurgePartition(body); err == nil && !bytes.Equal(o.Encode(env), body) {
			t.Fatal("purge round trip")
		}
		if env, o, err := DecodeDeleteSegments(body); err == nil && !bytes.Equal(o.Encode(env), body) {
			t.Fatal("delete segments round trip")
		}
		if err := h.m.invariantError(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzRestore: Restore never panics and an accepted checkpoint is stable.
func FuzzRestore(f *testing.F) {
	f.Add(New(Config{}).Checkpoint())
	f.Add(partitionCheckpointSeed(f))
	populated := partitionCheckpointSeed(f)
	f.Add(populated[statecodec.CheckpointHeaderSize : len(populated)-statecodec.CheckpointTrailerSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		// data is tried as a whole checkpoint and as a body sealed with a
		// valid header and checksum, so the fuzzer reaches the decoder.
		header := New(Config{}).Checkpoint()[:statecodec.CheckpointHeaderSize]
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
		m := New(Config{})
		if err := m.Restore(data); err != nil {
			return
		}
		first := m.Checkpoint()
		other := New(Config{})
		if err := other.Restore(first); err != nil {
			t.Fatalf("own checkpoint rejected: %v", err)
		}
		if !bytes.Equal(other.Checkpoint(), first) {
			t.Fatal("checkpoint not stable")
		}
	}
}

func partitionCheckpointSeed(t testing.TB) []byte {
	h := newHarness(t, Config{StreamID: 1, TopicID: 1, PartitionID: 0})
	h.send(10, buildBatch(t, "a", 2))
	h.send(20, buildBatch(t, "b", 1))
	h.m.MarkFlushed(1)
	h.store(ConsumerKey{Kind: 1, ID: 3}, 2, StoreExplicit)
	h.deleteSegments(DeleteSegments{BelowOffset: 1, Messages: 1, SizeBytes: 10})
	return h.m.Checkpoint()
}

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

// TestSeedCorpus checks the checked-in seed corpus matches today's
// encodings (rewrite with -update-corpus).
func TestSeedCorpus(t *testing.T) {
	want := map[string][]byte{
		filepath.Join("FuzzRestore", "empty"):     corpusEntry(New(Config{}).Checkpoint()),
		filepath.Join("FuzzRestore", "populated"): corpusEntry(partitionCheckpointSeed(t)),
		filepath.Join("FuzzRestore", "populated_body"): corpusEntry(func() []byte {
			b := partitionCheckpointSeed(t)
			return b[statecodec.CheckpointHeaderSize : len(b)-statecodec.CheckpointTrailerSize]
		}()),
	}
	for operation, body := range seedBodies(t) {
		want[filepath.Join("FuzzApply", fmt.Sprintf("op_%03d", operation))] = corpusEntry(operation, body)
	}
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
