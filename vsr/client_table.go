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
	// owner is the register's owner (RegisterBody; 0: none), whose
	// sessions Config.ClientsPerOwnerMax bounds.
	owner uint64
	// reply is the cached reply to request (nil before the first reply).
	reply *Message
	// older are the cached replies before reply, oldest first (at most
	// Config.ClientRepliesMax - 1).
	older []*Message
}

// cached returns the cached reply to request, if still held.
func (e *clientEntry) cached(request uint64) *Message {
	if e.reply != nil && e.reply.Request == request {
		return e.reply
	}
	for _, m := range e.older {
		if m.Request == request {
			return m
		}
	}
	return nil
}

// commitReply caches reply as the latest, keeping at most keep replies.
func (e *clientEntry) commitReply(reply *Message, keep int) {
	if e.reply != nil && e.reply.Operation != OperationRegister && keep > 1 {
		if len(e.older) >= keep-1 {
			e.older = append(e.older[:0], e.older[len(e.older)-(keep-2):]...)
		}
		e.older = append(e.older, e.reply)
	}
	e.reply = reply
}

// clientTable maps client ids to sessions, bounded by clientsMax. Entries
// are kept in a slice in insertion order, which every choice (eviction)
// walks; the index only finds an entry's position and is never iterated,
// so it adds no order of its own.
type clientTable struct {
	max int
	// perOwnerMax bounds one owner's sessions (0: no bound).
	perOwnerMax int
	// repliesMax is how many replies an entry caches (at least 1).
	repliesMax int
	// bytesMax bounds bytes, the table's encoded size as costed by
	// entryCost (0: no bound); trim keeps it.
	bytesMax int
	bytes    int
	entries  []clientEntry
	// index maps a client to its position in entries.
	index map[Uint128]int
	// owned counts the sessions of each non-zero owner.
	owned map[uint64]int
}

func (t *clientTable) init(clientsMax int) {
	t.max = clientsMax
	t.entries = make([]clientEntry, 0, min(clientsMax, 64))
	t.index = map[Uint128]int{}
	t.owned = map[uint64]int{}
}

func (t *clientTable) get(client Uint128) *clientEntry {
	if i, ok := t.index[client]; ok {
		return &t.entries[i]
	}
	return nil
}

// ownedBy returns how many sessions owner holds (0 for owner 0).
func (t *clientTable) ownedBy(owner uint64) int {
	if owner == 0 {
		return 0
	}
	return t.owned[owner]
}

// admits reports whether a register of a new client of owner makes room
// without ending another owner's session: the table has room, or owner
// has a session of its own to give up.
func (t *clientTable) admits(owner uint64) bool {
	return len(t.entries) < t.max || t.ownedBy(owner) > 0
}

// register opens a session for client at op and returns the client it
// evicted to make room, if any. The client must have no session: a second
// register would silently end the session the client uses. A register
// past the owner's bound (perOwnerMax), or into a full table while the
// owner holds a session, ends the owner's least recent session; into a
// full table otherwise, the table's least recent session.
func (t *clientTable) register(client Uint128, owner, op uint64) (evicted Uint128, didEvict bool) {
	if t.get(client) != nil {
		panic("vsr: register of a client that has a session")
	}
	n := t.ownedBy(owner)
	victim := -1
	switch {
	case n > 0 && ((t.perOwnerMax > 0 && n >= t.perOwnerMax) || len(t.entries) >= t.max):
		victim = t.leastRecent(func(e *clientEntry) bool { return e.owner == owner })
	case len(t.entries) >= t.max:
		victim = t.leastRecent(func(*clientEntry) bool { return true })
	}
	if victim >= 0 {
		evicted = t.entries[victim].client
		didEvict = true
		t.removeAt(victim)
	}
	t.index[client] = len(t.entries)
	t.entries = append(t.entries, clientEntry{client: client, session: op, lastOp: op, owner: owner})
	t.bytes += clientEntryBytes
	if owner != 0 {
		t.owned[owner]++
	}
	return evicted, didEvict
}

// leastRecent returns the position of the entry with the oldest lastOp
// among those match accepts (the first in insertion order on a tie), or
// -1.
func (t *clientTable) leastRecent(match func(*clientEntry) bool) int {
	oldest := -1
	for i := range t.entries {
		if match(&t.entries[i]) && (oldest < 0 || t.entries[i].lastOp < t.entries[oldest].lastOp) {
			oldest = i
		}
	}
	return oldest
}

// remove ends client's session, if it has one.
func (t *clientTable) remove(client Uint128) {
	if i, ok := t.index[client]; ok {
		t.removeAt(i)
	}
}

// removeAt deletes the entry at i, keeping the others' order.
func (t *clientTable) removeAt(i int) {
	e := &t.entries[i]
	t.bytes -= entryCost(e)
	delete(t.index, e.client)
	if e.owner != 0 {
		if t.owned[e.owner]--; t.owned[e.owner] <= 0 {
			delete(t.owned, e.owner)
		}
	}
	t.entries = append(t.entries[:i], t.entries[i+1:]...)
	for j := i; j < len(t.entries); j++ {
		t.index[t.entries[j].client] = j
	}
}

// forgetRequests drops request numbers and cached replies but keeps the
// sessions. Only BugForgetClientTableOnViewChange calls it.
func (t *clientTable) forgetRequests() {
	for i := range t.entries {
		t.entries[i].request = 0
		t.entries[i].reply = nil
		t.entries[i].older = nil
	}
	t.bytes = t.costAll()
}

// clientEntryBytes is what an entry costs in the table's encoding besides
// its replies: its fields, its owner and its count of older replies
// (encode); replyBytes what a cached reply adds.
const clientEntryBytes = 44 + 8 + 4

func replyBytes(m *Message) int {
	if m == nil {
		return 0
	}
	return 4 + m.EncodedSize()
}

// entryCost is e's share of the table's encoding (at least what encode
// writes for it).
func entryCost(e *clientEntry) int {
	n := clientEntryBytes + replyBytes(e.reply)
	for _, m := range e.older {
		n += replyBytes(m)
	}
	return n
}

// costAll is the table's cost counted entry by entry (bytes keeps it).
func (t *clientTable) costAll() int {
	n := 0
	for i := range t.entries {
		n += entryCost(&t.entries[i])
	}
	return n
}

// clientTableBytesMin is the least bound of a table's bytes: two entries,
// each with a reply of messageSizeMax (the one that committed, and one
// being trimmed).
func clientTableBytesMin(messageSizeMax uint32) uint64 {
	return 2 * (clientEntryBytes + 4 + uint64(messageSizeMax))
}

// setReply makes m the entry's latest reply (a register's), keeping the
// table's cost.
func (t *clientTable) setReply(e *clientEntry, m *Message) {
	t.bytes += replyBytes(m) - replyBytes(e.reply)
	e.reply = m
}

// commitReply caches reply as e's latest, keeping repliesMax and the
// table's cost.
func (t *clientTable) commitReply(e *clientEntry, reply *Message) {
	before := entryCost(e)
	e.commitReply(reply, t.repliesMax)
	t.bytes += entryCost(e) - before
}

// trim brings the table's bytes within bytesMax after an op of client
// committed, and returns the sessions it ended. It gives up, in order: the
// older replies of other sessions, least recent first; their latest
// replies (a duplicate of such a request is answered
// DispositionAlreadyApplied, never applied twice); client's own older
// replies; and, only then, other sessions themselves, least recent
// first. Every choice is a function of the replicated table, so every
// replica trims alike. The table's bytes bound its share of a checkpoint:
// without it, sessions caching large replies made a checkpoint larger than
// its area, and the replica failed at every checkpoint it took, restart
// after restart.
func (t *clientTable) trim(client Uint128) (evicted []Uint128) {
	for t.bytesMax > 0 && t.bytes > t.bytesMax {
		cur := t.get(client)
		other := func(e *clientEntry) bool { return e != cur }
		if i := t.leastRecent(func(e *clientEntry) bool { return other(e) && len(e.older) > 0 }); i >= 0 {
			e := &t.entries[i]
			before := entryCost(e)
			e.older = nil
			t.bytes -= before - entryCost(e)
			continue
		}
		if i := t.leastRecent(func(e *clientEntry) bool {
			return other(e) && e.reply != nil && e.reply.Operation != OperationRegister
		}); i >= 0 {
			t.setReply(&t.entries[i], nil)
			continue
		}
		if cur != nil && len(cur.older) > 0 {
			before := entryCost(cur)
			cur.older = nil
			t.bytes -= before - entryCost(cur)
			continue
		}
		i := t.leastRecent(other)
		if i < 0 {
			break
		}
		evicted = append(evicted, t.entries[i].client)
		t.removeAt(i)
	}
	return evicted
}

// clientOwnersMagic opens the table's owners section, which follows the
// entries only when some entry has an owner, and clientOlderMagic the
// older replies' section, only when some entry has one (a table without
// either encodes as it did before they existed).
const (
	clientOwnersMagic = 0x4f574e52 // "RNWO"
	clientOlderMagic  = 0x534c5052 // "RPLS"
)

// encode appends the table to dst.
func (t *clientTable) encode(dst []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(t.entries)))
	owners := false
	for i := range t.entries {
		e := &t.entries[i]
		owners = owners || e.owner != 0
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
	if owners {
		dst = binary.LittleEndian.AppendUint32(dst, clientOwnersMagic)
		for i := range t.entries {
			dst = binary.LittleEndian.AppendUint64(dst, t.entries[i].owner)
		}
	}
	older := false
	for i := range t.entries {
		older = older || len(t.entries[i].older) > 0
	}
	if older {
		dst = binary.LittleEndian.AppendUint32(dst, clientOlderMagic)
		for i := range t.entries {
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(t.entries[i].older)))
			for _, m := range t.entries[i].older {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(m.EncodedSize()))
				dst = m.Encode(dst)
			}
		}
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
	entries := make([]clientEntry, 0, min(t.max, max(n, 64)))
	index := make(map[Uint128]int, n)
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
		if _, dup := index[e.client]; dup {
			return nil, fmt.Errorf("%w: client %x:%x twice", ErrClientTable, e.client.Hi, e.client.Lo)
		}
		index[e.client] = len(entries)
		entries = append(entries, e)
	}
	owned := map[uint64]int{}
	if len(src) >= 4 && binary.LittleEndian.Uint32(src) == clientOwnersMagic {
		src = src[4:]
		if len(src) < 8*n {
			return nil, fmt.Errorf("%w: short owners", ErrClientTable)
		}
		for i := range entries {
			entries[i].owner = binary.LittleEndian.Uint64(src[8*i:])
			if o := entries[i].owner; o != 0 {
				owned[o]++
			}
		}
		src = src[8*n:]
	}
	if len(src) >= 4 && binary.LittleEndian.Uint32(src) == clientOlderMagic {
		src = src[4:]
		for i := range entries {
			if len(src) < 4 {
				return nil, fmt.Errorf("%w: short older replies", ErrClientTable)
			}
			k := int(binary.LittleEndian.Uint32(src))
			src = src[4:]
			if k >= max(t.repliesMax, 1) {
				return nil, fmt.Errorf("%w: %d older replies", ErrClientTable, k)
			}
			for range k {
				if len(src) < 4 {
					return nil, fmt.Errorf("%w: short older reply", ErrClientTable)
				}
				size := int(binary.LittleEndian.Uint32(src))
				src = src[4:]
				if size > len(src) {
					return nil, fmt.Errorf("%w: older reply of %d bytes", ErrClientTable, size)
				}
				var m Message
				if err := m.Decode(src[:size]); err != nil {
					return nil, fmt.Errorf("%w: older reply: %w", ErrClientTable, err)
				}
				entries[i].older = append(entries[i].older, m.Clone())
				src = src[size:]
			}
		}
	}
	t.entries, t.index, t.owned = entries, index, owned
	t.bytes = t.costAll()
	return src, nil
}

// RegisterBody is the body of a register that names owner, the principal
// whose sessions Config.ClientsPerOwnerMax bounds (an empty body names
// none).
func RegisterBody(owner uint64) []byte {
	return binary.LittleEndian.AppendUint64(nil, owner)
}

// registerOwner decodes a register's body: empty (no owner) or an owner.
func registerOwner(body []byte) (uint64, bool) {
	switch len(body) {
	case 0:
		return 0, true
	case 8:
		return binary.LittleEndian.Uint64(body), true
	}
	return 0, false
}

// ClientSession is a client's entry in the client table, as a host reads
// it (Replica.ClientSession).
type ClientSession struct {
	// Session is the op of the register that opened it.
	Session uint64
	// Request is the latest applied request number.
	Request uint64
	// Owner is the register's owner.
	Owner uint64
	// LastOp is the op that last committed for the client.
	LastOp uint64
}

// ClientSession returns client's session in the applied client table.
func (r *Replica) ClientSession(client Uint128) (ClientSession, bool) {
	e := r.clients.get(client)
	if e == nil {
		return ClientSession{}, false
	}
	return ClientSession{Session: e.session, Request: e.request, Owner: e.owner, LastOp: e.lastOp}, true
}

// ClientTableAdmits reports whether a register of a new client of owner
// would find room without ending another owner's session (the table has
// room, or owner holds a session of its own to give up).
func (r *Replica) ClientTableAdmits(owner uint64) bool { return r.clients.admits(owner) }

// ClientSessions returns how many sessions the client table holds.
func (r *Replica) ClientSessions() int { return len(r.clients.entries) }
