package group_test

import (
	"testing"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// lastSendHeader is the header of the newest send prepare node's log holds.
func lastSendHeader(t *testing.T, h *group.Host) vsr.Header {
	t.Helper()
	chain := h.Replica().LogChain()
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i].Operation == partition.OperationSendMessages {
			return chain[i]
		}
	}
	t.Fatal("no send prepare in the log")
	return vsr.Header{}
}

// TestSendBodyChecksummedOncePerReplica: on a group of one in Replicated
// durability (the single-node path: no peer and no journal ever verify a
// prepare's body) a send's payload bytes are hashed once, by their
// admission (wire.ValidateSendBatch), and the prepare commits to them
// through the digest of the frame checksums; a group with backups, or
// with a prepare journal, seals the whole body with vsr's checksum, which
// its backups and its journal verify, and it commits.
func TestSendBodyChecksummedOncePerReplica(t *testing.T) {
	b, _ := batch(t, 1, 5)
	if err := wire.ValidateSendBatch(b, 5); err != nil {
		t.Fatal(err)
	}
	body := partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b)
	digest, ok := group.SendDigest(body)
	if !ok {
		t.Fatal("no digest of a valid send body")
	}
	for _, tc := range []struct {
		name       string
		replicas   uint8
		durability vsr.Durability
		want       vsr.Uint128
	}{
		{"group of one, replicated", 1, vsr.Replicated, digest},
		{"group of one, persisted (a prepare journal)", 1, vsr.Persisted, vsr.Checksum(body)},
		{"three replicas", 3, vsr.Replicated, vsr.Checksum(body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, testConfig(tc.replicas, 0, tc.durability), false)
			w := newWorkload(t, c)
			primary := -1
			for attempt := 0; attempt < 200 && primary < 0; attempt++ {
				if primary = c.Primary(); primary < 0 {
					c.Tick(5)
				}
			}
			if primary < 0 {
				t.Fatalf("no primary:\n%s", c.Status())
			}
			answers := w.submit(primary, partition.OperationSendMessages, body)
			if len(answers) != 1 {
				t.Fatalf("%d answers to one send", len(answers))
			}
			if _, ok := answers[0].BaseOffset(); !ok {
				t.Fatalf("send not committed: code %d (%s)", answers[0].Code, answers[0].Disposition)
			}
			if got := lastSendHeader(t, c.Nodes[primary].Host).ChecksumBody; got != tc.want {
				t.Fatalf("send prepare sealed with body checksum %x, want %x (vsr's checksum of the body %x, the digest %x)",
					got, tc.want, vsr.Checksum(body), digest)
			}
		})
	}
}

// TestSendDigestCommitsToTheBody: the digest changes with any byte of
// the envelope and of the batch header, whose batch checksum covers every
// frame checksum; a flipped frame checksum or payload byte is refused by
// the admission (wire.ValidateSendBatch) that the digest stands on; a body
// without a whole batch has no digest.
func TestSendDigestCommitsToTheBody(t *testing.T) {
	b, _ := batch(t, 1, 3)
	body := partition.EncodeSendMessages(partition.Envelope{UserID: 1}, b)
	base, ok := group.SendDigest(body)
	if !ok {
		t.Fatal("no digest")
	}
	envelope := len(body) - len(b)
	for at := 0; at < envelope+wire.BatchHeaderSize; at++ {
		changed := append([]byte(nil), body...)
		changed[at] ^= 0x10
		if d, ok := group.SendDigest(changed); ok && d == base {
			t.Fatalf("flipping byte %d leaves the digest unchanged", at)
		}
	}
	for _, at := range []int{envelope + wire.BatchHeaderSize, envelope + wire.BatchHeaderSize + 7, len(body) - 1} {
		changed := append([]byte(nil), body...)
		changed[at] ^= 0x10
		if err := wire.ValidateSendBatch(changed[envelope:], 3); err == nil {
			t.Errorf("flipping byte %d (a frame) passes the admission that the digest relies on", at)
		}
	}
	if _, ok := group.SendDigest(body[:len(body)-1]); ok {
		t.Error("a truncated body has a digest")
	}
	if _, ok := group.SendDigest(body[:envelope+10]); ok {
		t.Error("a body without a whole batch header has a digest")
	}
}

// BenchmarkSendChecksumPasses is the checksum work of one 1 MiB send
// (1024 messages of 1 KiB) on its way to the prepare: the admission
// (wire.ValidateSendBatch, every frame checksum) and then the seal of the
// request, with vsr's checksum of the whole body (what every group did
// before, and what a group with backups or a journal does) or with the
// digest a group of one in Replicated durability uses.
func BenchmarkSendChecksumPasses(b *testing.B) {
	var bb wire.BatchBuilder
	payload := make([]byte, 1024-wire.MessageHeaderSize)
	for i := range payload {
		payload[i] = byte(i)
	}
	for i := range 1024 {
		if err := bb.Add(wire.MessageID{Low: uint64(i + 1)}, payload, nil, 1); err != nil {
			b.Fatal(err)
		}
	}
	batch, err := bb.Finish()
	if err != nil {
		b.Fatal(err)
	}
	body := partition.EncodeSendMessages(partition.Envelope{UserID: 1}, batch)
	batch = body[partition.EnvelopeSize:]
	for _, mode := range []string{"full-body-seal", "digest-seal"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			m := &vsr.Message{Header: vsr.Header{Command: vsr.CommandRequest, Operation: partition.OperationSendMessages}, Body: body}
			for b.Loop() {
				if err := wire.ValidateSendBatch(batch, 1024); err != nil {
					b.Fatal(err)
				}
				if mode == "full-body-seal" {
					m.Seal()
					continue
				}
				sum, ok := group.SendDigest(body)
				if !ok {
					b.Fatal("no digest")
				}
				m.SealBody(sum)
			}
		})
	}
}
