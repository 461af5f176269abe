package group

import (
	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// trustedBodySum is the body checksum Submit seals a send's request with
// on a group whose prepares no one verifies against their bodies: a group
// of one (no peer runs Step on its prepares) in Replicated durability (no
// prepare journal, so Open never decodes one). There the batch's one pass
// is its admission (wire.ValidateSendBatch verified every frame checksum
// and the batch checksum before Submit); a second pass of vsr's checksum
// over up to 64 MiB would only compute a value nothing checks, so the
// prepare commits to the body through sendDigest instead. Every other
// group gets vsr's checksum of the whole body (ok false: Seal), which its
// backups and its journal verify.
func (h *Host) trustedBodySum(operation uint8, body []byte) (vsr.Uint128, bool) {
	if operation != partition.OperationSendMessages || h.cfg.Replica.ReplicaCount != 1 || h.cfg.Replica.Durability != vsr.Replicated {
		return vsr.Uint128{}, false
	}
	return sendDigest(body)
}

// sendDigest is a 128-bit XXH3 over a SendMessages body's envelope and
// its 256-byte batch header. The header holds the batch checksum, which
// the admission verified over the stored checksum of every frame, each of
// which it verified over its frame from byte 8 to its end (payload and
// user headers included): so the digest commits to the whole validated
// body, and reads about 300 bytes of it (walking the frames again would
// touch every frame of a batch that may no longer be in cache). ok is
// false when the body does not split into an envelope and a batch whose
// batch_length is its length.
func sendDigest(body []byte) (vsr.Uint128, bool) {
	_, send, err := partition.DecodeSendMessages(body)
	if err != nil || len(send.Batch) < wire.BatchHeaderSize || wire.BatchView(send.Batch).BatchLength() != uint64(len(send.Batch)) {
		return vsr.Uint128{}, false
	}
	d := xxh3.Hash128(body[:len(body)-len(send.Batch)+wire.BatchHeaderSize])
	return vsr.Uint128{Lo: d.Lo, Hi: d.Hi}, true
}
