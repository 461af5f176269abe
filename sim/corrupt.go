package sim

import "github.com/stratabroker/strata/vsr"

// corruptMessage returns a copy of m with one fault a network link can
// introduce: a flipped bit, in the header or the body in proportion to
// their sizes (a link corrupts any byte alike), or, now and then, a body
// cut short. Every field of the header is covered by its checksum and the
// body by the body checksum, so the result never passes
// vsr.Message.Valid; the simulator delivers it flagged and checks that the
// receiver ignores it.
func corruptMessage(m *vsr.Message, r *PRNG) *vsr.Message {
	c := m.Clone()
	h := &c.Header
	if len(c.Body) > 0 && r.Chance(PPM/16) {
		c.Body = c.Body[:r.IntN(len(c.Body))]
		return c
	}
	if len(c.Body) > 0 && r.IntN(headerFieldBytes+len(c.Body)) >= headerFieldBytes {
		c.Body[r.IntN(len(c.Body))] ^= 1 << r.IntN(8)
		return c
	}
	words := []*uint64{
		&h.Checksum.Lo, &h.Checksum.Hi, &h.ChecksumBody.Lo, &h.ChecksumBody.Hi,
		&h.Parent.Lo, &h.Parent.Hi, &h.Client.Lo, &h.Client.Hi, &h.Context.Lo, &h.Context.Hi,
		&h.Cluster, &h.View, &h.LogView, &h.Op, &h.Commit, &h.Timestamp, &h.Request, &h.Session, &h.CheckpointOp,
	}
	bytes := []*uint8{&h.Operation, &h.Replica}
	switch choice := r.IntN(len(words) + len(bytes) + 2); {
	case choice < len(words):
		*words[choice] ^= 1 << r.IntN(64)
	case choice < len(words)+len(bytes):
		*bytes[choice-len(words)] ^= 1 << r.IntN(8)
	case choice == len(words)+len(bytes):
		h.Size ^= 1 << r.IntN(32)
	default:
		h.Command ^= vsr.Command(1 << r.IntN(8))
	}
	return c
}

// headerFieldBytes is the bytes of a header that carry fields.
const headerFieldBytes = 160
