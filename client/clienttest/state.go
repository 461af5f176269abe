package clienttest

import (
	"encoding/binary"
	"maps"
	"slices"
)

// state is the fake server's data. Guarded by Server.mu.
type state struct {
	streams      map[uint32]*stream
	nextStreamID uint32
	users        map[uint32]*user
	nextUserID   uint32
	// tokens maps a raw PAT to its owner and name.
	tokens    map[string]*pat
	tokenSeq  uint64
	clients   map[uint32]*session
	clock     uint64
	lastStats uint64
}

type stream struct {
	id          uint32
	name        string
	created     uint64
	topics      map[uint32]*topic
	nextTopicID uint32
}

type topic struct {
	id          uint32
	name        string
	created     uint64
	expiry      uint64
	compression uint8
	maxSize     uint64
	options     []byte
	partitions  []*partition
	roundRobin  uint32
	groups      map[uint32]*group
	nextGroupID uint32
}

type group struct {
	id         uint32
	name       string
	generation uint64
	// members are protocol client ids, in join order.
	members []member
}

type member struct{ lo, hi uint64 }

func (t *topic) findGroup(id ident) *group {
	return find(t.groups, id, func(g *group) string { return g.name })
}

// assigned returns member index i's partitions: round-robin by index.
func (g *group) assigned(t *topic, i int) []uint32 {
	var out []uint32
	for p := range t.partitions {
		if p%len(g.members) == i {
			out = append(out, uint32(p))
		}
	}
	return out
}

func appendGroup(b []byte, t *topic, g *group) []byte {
	b = le32(b, g.id)
	b = le32(b, uint32(len(t.partitions)))
	b = le32(b, uint32(len(g.members)))
	return name8(b, g.name)
}

func appendGroupDetails(b []byte, t *topic, g *group) []byte {
	b = appendGroup(b, t, g)
	for i := range g.members {
		parts := g.assigned(t, i)
		b = le32(b, uint32(i))
		b = le32(b, uint32(len(parts)))
		for _, p := range parts {
			b = le32(b, p)
		}
	}
	return b
}

type partition struct {
	id      uint32
	created uint64
	batches [][]byte
	// next is the offset the next message gets.
	next    uint64
	offsets map[string]uint64
}

type user struct {
	id          uint32
	created     uint64
	status      uint8
	name        string
	password    string
	permissions []byte // raw §4.10 block, nil = none
}

type pat struct {
	userID uint32
	name   string
	expiry uint64
}

func newState() *state {
	st := &state{streams: map[uint32]*stream{}, users: map[uint32]*user{}, tokens: map[string]*pat{},
		clients: map[uint32]*session{}, clock: 1_700_000_000_000_000}
	st.users[0] = &user{id: 0, created: st.clock, status: 1, name: RootUsername, password: RootPassword}
	st.nextUserID = 1
	return st
}

// now is a strictly increasing fake clock in micros.
func (st *state) now() uint64 {
	st.clock += 1000
	return st.clock
}

func (st *state) dropClient(id uint32) { delete(st.clients, id) }

func (st *state) streamIDs() []uint32 { return slices.Sorted(maps.Keys(st.streams)) }

func (s *stream) topicIDs() []uint32 { return slices.Sorted(maps.Keys(s.topics)) }

// find resolves an identifier (numeric or name) among records keyed by id.
func find[T any](records map[uint32]*T, id ident, name func(*T) string) *T {
	if id.numeric {
		return records[id.id]
	}
	for _, r := range records {
		if name(r) == id.name {
			return r
		}
	}
	return nil
}

func (st *state) findStream(id ident) *stream {
	return find(st.streams, id, func(s *stream) string { return s.name })
}

func (s *stream) findTopic(id ident) *topic {
	return find(s.topics, id, func(t *topic) string { return t.name })
}

func (st *state) findUser(id ident) *user {
	return find(st.users, id, func(u *user) string { return u.name })
}

func (t *topic) sizeAndCount() (size, count uint64) {
	for _, p := range t.partitions {
		s, c := p.sizeAndCount()
		size += s
		count += c
	}
	return size, count
}

func (p *partition) sizeAndCount() (size, count uint64) {
	for _, b := range p.batches {
		size += uint64(len(b))
		count += uint64(binary.LittleEndian.Uint32(b[48:]))
	}
	return size, count
}

func (p *partition) currentOffset() uint64 {
	if p.next == 0 {
		return 0
	}
	return p.next - 1
}

// Record encoders (§4.11).

func le32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func le64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }
func name8(b []byte, s string) []byte {
	b = append(b, byte(len(s)))
	return append(b, s...)
}
func text32(b []byte, s string) []byte {
	b = le32(b, uint32(len(s)))
	return append(b, s...)
}
func block32(b []byte, blk []byte) []byte {
	b = le32(b, uint32(len(blk)))
	return append(b, blk...)
}

func appendStream(b []byte, s *stream) []byte {
	var size, count uint64
	for _, t := range s.topics {
		sz, c := t.sizeAndCount()
		size += sz
		count += c
	}
	b = le32(b, s.id)
	b = le64(b, s.created)
	b = le32(b, uint32(len(s.topics)))
	b = le64(b, size)
	b = le64(b, count)
	b = name8(b, s.name)
	return block32(b, nil)
}

func appendStreamDetails(b []byte, s *stream) []byte {
	b = appendStream(b, s)
	for _, id := range s.topicIDs() {
		b = appendTopic(b, s.topics[id])
	}
	return b
}

func appendTopic(b []byte, t *topic) []byte {
	size, count := t.sizeAndCount()
	b = le32(b, t.id)
	b = le64(b, t.created)
	b = le32(b, uint32(len(t.partitions)))
	b = le64(b, t.expiry)
	b = append(b, t.compression)
	b = le64(b, t.maxSize)
	b = le64(b, size)
	b = le64(b, count)
	b = name8(b, t.name)
	b = block32(b, t.options)
	return block32(b, nil)
}

func appendTopicDetails(b []byte, t *topic, segments uint32) []byte {
	b = appendTopic(b, t)
	for _, p := range t.partitions {
		size, count := p.sizeAndCount()
		b = le32(b, p.id)
		b = le64(b, p.created)
		b = le32(b, segments)
		b = le64(b, p.currentOffset())
		b = le64(b, size)
		b = le64(b, count)
	}
	return b
}

func appendUser(b []byte, u *user) []byte {
	b = le32(b, u.id)
	b = le64(b, u.created)
	b = append(b, u.status)
	b = name8(b, u.name)
	return block32(b, nil)
}

func appendUserDetails(b []byte, u *user) []byte {
	b = appendUser(b, u)
	if u.permissions == nil {
		return le32(b, 0)
	}
	b = append(b, 1)
	return block32(b, u.permissions)
}

func appendClientInfo(b []byte, c *session) []byte {
	b = le32(b, c.id)
	uid := uint32(0xFFFFFFFF)
	if c.bound {
		uid = c.userID
	}
	b = le32(b, uid)
	b = append(b, 1)
	b = text32(b, c.addr)
	return le32(b, 0)
}
