package vsr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrClientTable reports a client table encoding that cannot be decoded.
var ErrClientTable = errors.New("vsr: corrupt client table")

// clientEntry is one client session. It is replicated state: every replica
// derives the same table by applying the same ops.
type clientEntry struct {
	client  Uint128
	session uint64 // op of the register that opened the session
	request uint64 // latest applied request number
	// lastOp is the op that last committed for this client (for LRU
	// eviction).
	lastOp uint64
	// reply is the cached reply to request (nil before the first reply).
	reply *Message
}

// clientTable maps client ids to sessions, bounded by clientsMax. Entries
// are kept in a slice in insertion order; lookups are linear, which at
// ClientsMaxLimit entries is cheaper than the determinism risk of a map.
type clientTable struct {
	max     int
	entries []clientEntry
}

func (t *clientTable) init(clientsMax int) {
	t.max = clientsMax
	t.entries = make([]clientEntry, 0, clientsMax)
}

func (t *clientTable) get(client Uint128) *clientEntry {
	for i := range t.entries {
		if t.entries[i].client == client {
			return &t.entries[i]
		}
	}
	return nil
}

// register opens a session for client at op and returns the client it
// evicted to make room, if any. The client must have no session: a second
// register would silently end the session the client uses.
func (t *clientTable) register(client Uint128, op uint64) (evicted Uint128, didEvict bool) {
	if t.get(client) != nil {
		panic("vsr: register of a client that has a session")
	}
	if len(t.entries) == t.max {
		oldest := 0
		for i := range t.entries {
			if t.entries[i].lastOp < t.entries[oldest].lastOp {
				oldest = i
			}
		}
		evicted = t.entries[oldest].client
		didEvict = true
		t.entries = append(t.entries[:oldest], t.entries[oldest+1:]...)
	}
	t.entries = append(t.entries, clientEntry{client: client, session: op, lastOp: op})
	return evicted, didEvict
}

// forgetRequests drops request numbers and cached replies but keeps the
// sessions. Only BugForgetClientTableOnViewChange calls it.
func (t *clientTable) forgetRequests() {
	for i := range t.entries {
		t.entries[i].request = 0
		t.entries[i].reply = nil
	}
}

// encode appends the table to dst.
func (t *clientTable) encode(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(t.entries)))
	for i := range t.entries {
		e := &t.entries[i]
		dst = binary.LittleEndian.AppendUint64(dst, e.client.Lo)
		dst = binary.LittleEndian.AppendUint64(dst, e.client.Hi)
		dst = binary.LittleEndian.AppendUint64(dst, e.session)
		dst = binary.LittleEndian.AppendUint64(dst, e.request)
		dst = binary.LittleEndian.AppendUint64(dst, e.lastOp)
		if e.reply == nil {
			dst = binary.LittleEndian.AppendUint32(dst, 0)
			continue
		}
		dst = binary.LittleEndian.AppendUint32(dst, uint32(e.reply.EncodedSize()))
		dst = e.reply.Encode(dst)
	}
	return dst
}

// decode replaces the table with the encoding in src and returns the bytes
// after it.
func (t *clientTable) decode(src []byte) ([]byte, error) {
	if len(src) < 4 {
		return nil, fmt.Errorf("%w: short", ErrClientTable)
	}
	n := int(binary.LittleEndian.Uint32(src))
	src = src[4:]
	if n > t.max {
		return nil, fmt.Errorf("%w: %d entries over %d", ErrClientTable, n, t.max)
	}
	entries := make([]clientEntry, 0, t.max)
	for range n {
		if len(src) < 44 {
			return nil, fmt.Errorf("%w: short entry", ErrClientTable)
		}
		le := binary.LittleEndian
		e := clientEntry{
			client:  Uint128{Lo: le.Uint64(src[0:]), Hi: le.Uint64(src[8:])},
			session: le.Uint64(src[16:]),
			request: le.Uint64(src[24:]),
			lastOp:  le.Uint64(src[32:]),
		}
		size := int(le.Uint32(src[40:]))
		src = src[44:]
		if size > 0 {
			if size > len(src) {
				return nil, fmt.Errorf("%w: reply of %d bytes", ErrClientTable, size)
			}
			var m Message
			if err := m.Decode(src[:size]); err != nil {
				return nil, fmt.Errorf("%w: reply: %w", ErrClientTable, err)
			}
			e.reply = m.Clone()
			src = src[size:]
		}
		entries = append(entries, e)
	}
	t.entries = entries
	return src, nil
}
