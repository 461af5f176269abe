package clienttest

import (
	"encoding/base64"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// partitionsPerRequestMax mirrors §5.5.
const partitionsPerRequestMax = 1000

// metadata applies a metadata operation.
func (s *Server) metadata(sess *session, op wire.Operation, r *body) answer {
	st := s.state
	switch op {
	case wire.OpCreateStream:
		name := r.name()
		if r.bad || name == "" {
			return deny(wire.ErrInvalidCommand)
		}
		if len(r.rest()) != 0 {
			return deny(wire.ErrUnsupportedOptionKey)
		}
		if st.findStream(ident{name: name}) != nil {
			return rejected(wire.ErrStreamNameAlreadyExists)
		}
		str := &stream{id: st.nextStreamID, name: name, created: st.now(), topics: map[uint32]*topic{}}
		st.nextStreamID++
		st.streams[str.id] = str
		return ok(appendStreamDetails(nil, str))
	case wire.OpUpdateStream, wire.OpDeleteStream, wire.OpPurgeStream:
		id := r.ident()
		var name string
		if op == wire.OpUpdateStream {
			name = r.name()
		}
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		str := st.findStream(id)
		if str == nil {
			return rejected(wire.ErrStreamIdNotFound)
		}
		switch op {
		case wire.OpUpdateStream:
			if other := st.findStream(ident{name: name}); other != nil && other != str {
				return rejected(wire.ErrStreamNameAlreadyExists)
			}
			str.name = name
		case wire.OpDeleteStream:
			delete(st.streams, str.id)
		default:
			for _, t := range str.topics {
				t.purge()
			}
		}
		return ok(nil)
	case wire.OpCreateTopic:
		sid := r.ident()
		count := r.u32()
		name := r.name()
		opts := r.rest()
		if r.bad || name == "" {
			return deny(wire.ErrInvalidCommand)
		}
		if count > partitionsPerRequestMax {
			return deny(wire.ErrTooManyPartitions)
		}
		if a, bad := checkTopicOptions(opts, true); bad {
			return a
		}
		str := st.findStream(sid)
		if str == nil {
			return rejected(wire.ErrStreamIdNotFound)
		}
		if str.findTopic(ident{name: name}) != nil {
			return rejected(wire.ErrTopicNameAlreadyExists)
		}
		t := &topic{id: str.nextTopicID, name: name, created: st.now(), expiry: ^uint64(0),
			compression: 1, maxSize: ^uint64(0), options: append([]byte(nil), opts...)}
		str.nextTopicID++
		for i := uint32(0); i < count; i++ {
			t.partitions = append(t.partitions, &partition{id: i, created: t.created, offsets: map[string]uint64{}})
		}
		str.topics[t.id] = t
		return ok(appendTopicDetails(nil, t, 0))
	case wire.OpUpdateTopic, wire.OpDeleteTopic, wire.OpPurgeTopic,
		wire.OpCreatePartitions, wire.OpDeletePartitions, wire.OpDeleteSegments:
		sid, tid := r.ident(), r.ident()
		var name string
		var count uint32
		var opts []byte
		switch op {
		case wire.OpUpdateTopic:
			name = r.name()
			opts = r.rest()
		case wire.OpCreatePartitions, wire.OpDeletePartitions:
			count = r.u32()
		case wire.OpDeleteSegments:
			r.u32()
			r.u32()
		}
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		if (op == wire.OpCreatePartitions || op == wire.OpDeletePartitions) && (count == 0 || count > partitionsPerRequestMax) {
			return deny(wire.ErrTooManyPartitions)
		}
		if op == wire.OpUpdateTopic {
			if a, bad := checkTopicOptions(opts, false); bad {
				return a
			}
		}
		str := st.findStream(sid)
		if str == nil {
			return rejected(wire.ErrStreamIdNotFound)
		}
		t := str.findTopic(tid)
		if t == nil {
			return rejected(wire.ErrTopicIdNotFound)
		}
		switch op {
		case wire.OpUpdateTopic:
			t.name = name
			if len(opts) > 0 {
				t.options = append([]byte(nil), opts...)
			}
		case wire.OpDeleteTopic:
			delete(str.topics, t.id)
		case wire.OpPurgeTopic:
			t.purge()
		case wire.OpCreatePartitions:
			next := uint32(len(t.partitions))
			for i := uint32(0); i < count; i++ {
				t.partitions = append(t.partitions, &partition{id: next + i, created: st.now(), offsets: map[string]uint64{}})
			}
		case wire.OpDeletePartitions:
			if int(count) > len(t.partitions) {
				return rejected(wire.ErrInvalidPartitionsCount)
			}
			t.partitions = t.partitions[:len(t.partitions)-int(count)]
		}
		return ok(nil)
	case wire.OpCreateConsumerGroup, wire.OpDeleteConsumerGroup, wire.OpJoinConsumerGroup, wire.OpLeaveConsumerGroup:
		return s.groupOp(sess, op, r)
	case wire.OpCreateUser:
		name := r.name()
		password := r.name()
		status := r.u8()
		perms := r.optionalPermissions()
		if r.bad || name == "" {
			return deny(wire.ErrInvalidCommand)
		}
		if len(name) < 3 || len(name) > 50 {
			return rejected(wire.ErrInvalidUsername)
		}
		if st.findUser(ident{name: name}) != nil {
			return rejected(wire.ErrUserAlreadyExists)
		}
		if status != 2 {
			status = 1
		}
		u := &user{id: st.nextUserID, created: st.now(), status: status, name: name, password: password, permissions: perms}
		st.nextUserID++
		st.users[u.id] = u
		return ok(appendUserDetails(nil, u))
	case wire.OpUpdateUser, wire.OpDeleteUser, wire.OpChangePassword, wire.OpUpdatePermissions:
		id := r.ident()
		var newName, current, next string
		var hasName, hasStatus bool
		var status uint8
		var perms []byte
		switch op {
		case wire.OpUpdateUser:
			if hasName = r.u8() == 1; hasName {
				newName = r.name()
			}
			if hasStatus = r.u8() == 1; hasStatus {
				status = r.u8()
			}
		case wire.OpChangePassword:
			current, next = r.name(), r.name()
		case wire.OpUpdatePermissions:
			perms = r.optionalPermissions()
		}
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		u := st.findUser(id)
		if u == nil {
			return rejected(wire.ErrResourceNotFound)
		}
		switch op {
		case wire.OpUpdateUser:
			if hasName {
				if other := st.findUser(ident{name: newName}); other != nil && other != u {
					return rejected(wire.ErrUserAlreadyExists)
				}
				u.name = newName
			}
			if hasStatus && (status == 1 || status == 2) {
				u.status = status
			}
		case wire.OpDeleteUser:
			if u.id == 0 {
				return rejected(wire.ErrCannotDeleteUser)
			}
			delete(st.users, u.id)
		case wire.OpChangePassword:
			if current != u.password || next == "" {
				return rejected(wire.ErrInvalidCredentials)
			}
			u.password = next
		case wire.OpUpdatePermissions:
			if u.id == 0 {
				return rejected(wire.ErrCannotChangePermissions)
			}
			u.permissions = perms
		}
		return ok(nil)
	case wire.OpCreatePersonalAccessToken:
		name := r.name()
		expiry := r.u64()
		if r.bad || name == "" {
			return deny(wire.ErrInvalidCommand)
		}
		for _, p := range st.tokens {
			if p.userID == sess.userID && p.name == name {
				return rejected(wire.ErrPersonalAccessTokenAlreadyExists)
			}
		}
		st.tokenSeq++
		token := base64.StdEncoding.EncodeToString([]byte("fake-token-" + strconv.FormatUint(st.tokenSeq, 10)))
		var at uint64
		if expiry != 0 && expiry != ^uint64(0) {
			at = st.now() + expiry
		}
		st.tokens[token] = &pat{userID: sess.userID, name: name, expiry: at}
		return ok(name8(nil, token))
	case wire.OpDeletePersonalAccessToken:
		name := r.name()
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		for tok, p := range st.tokens {
			if p.userID == sess.userID && p.name == name {
				delete(st.tokens, tok)
				return ok(nil)
			}
		}
		return rejected(wire.ErrResourceNotFound)
	}
	return deny(wire.ErrFeatureUnavailable)
}

func (t *topic) purge() {
	for _, p := range t.partitions {
		p.batches, p.next, p.offsets = nil, 0, map[string]uint64{}
	}
}

// optionalPermissions reads [flag][len u32][block].
func (r *body) optionalPermissions() []byte {
	if r.u8() != 1 {
		return nil
	}
	n := r.u32()
	return append([]byte(nil), r.take(int(n))...)
}

// topicOptionKeys are the keys the fake accepts at create; update accepts
// the first three.
var topicOptionKeys = []string{"compression_algorithm", "message_expiry", "max_topic_size",
	"segment_size", "enforce_fsync", "messages_required_to_save",
	"size_of_messages_required_to_save", "preallocate_segments", "durability",
	"consumer_offset_durability"}

// checkTopicOptions validates an options block's keys (§4.8).
func checkTopicOptions(block []byte, create bool) (answer, bool) {
	allowed := topicOptionKeys
	if !create {
		allowed = allowed[:3]
	}
	pos := 0
	for pos < len(block) {
		var items [2][]byte
		for i := range items {
			if len(block)-pos < 5 {
				return deny(wire.ErrInvalidCommand), true
			}
			n := int(uint32(block[pos+1]) | uint32(block[pos+2])<<8 | uint32(block[pos+3])<<16 | uint32(block[pos+4])<<24)
			if block[pos] == 0 || n == 0 || n > 255 || len(block)-pos-5 < n {
				return deny(wire.ErrInvalidCommand), true
			}
			if i == 0 && block[pos] != 2 {
				return deny(wire.ErrInvalidCommand), true
			}
			items[i] = block[pos+5 : pos+5+n]
			pos += 5 + n
		}
		key := string(items[0])
		found := false
		for _, k := range allowed {
			found = found || k == key
		}
		if !found {
			return deny(wire.ErrUnsupportedOptionKey), true
		}
		if (key == "durability" || key == "consumer_offset_durability") &&
			string(items[1]) != "replicated" && string(items[1]) != "persisted" {
			return deny(wire.ErrInvalidOptionValue), true
		}
	}
	return answer{}, false
}

// partitionOp handles send and offset writes.
func (s *Server) partitionOp(sess *session, op wire.Operation, r *body) answer {
	if op == wire.OpSendMessages {
		return s.send(r)
	}
	_, p, key, a := s.offsetTarget(r, false)
	if p == nil {
		return a
	}
	if op == wire.OpStoreConsumerOffset {
		offset := r.u64()
		r.u8()
		if r.bad {
			return deny(wire.ErrResourceNotFound)
		}
		if p.next == 0 || offset > p.currentOffset() {
			return deny(wire.ErrInvalidOffset)
		}
		p.offsets[key] = offset
		return ok(nil)
	}
	r.u8()
	if _, found := p.offsets[key]; !found {
		return deny(wire.ErrConsumerOffsetNotFound)
	}
	delete(p.offsets, key)
	return ok(nil)
}

// offsetTarget reads Consumer, stream, topic, partition. read selects the
// error style of GetConsumerOffset (empty body / 3007) over the writes'
// Deny 20.
func (s *Server) offsetTarget(r *body, read bool) (*topic, *partition, string, answer) {
	kind := r.u8()
	cid := r.ident()
	sid, tid := r.ident(), r.ident()
	hasPartition := r.u8()
	pid := r.u32()
	notFound := deny(wire.ErrResourceNotFound)
	if read {
		notFound = ok(nil)
	}
	if r.bad || (kind != 1 && kind != 2) {
		return nil, nil, "", notFound
	}
	if hasPartition != 1 {
		if !read {
			return nil, nil, "", notFound
		}
		pid = 0
	}
	str := s.state.findStream(sid)
	if str == nil {
		return nil, nil, "", notFound
	}
	t := str.findTopic(tid)
	if t == nil {
		return nil, nil, "", notFound
	}
	if int(pid) >= len(t.partitions) {
		if read {
			return nil, nil, "", deny(wire.ErrPartitionNotFound)
		}
		return nil, nil, "", notFound
	}
	return t, t.partitions[pid], strconv.Itoa(int(kind)) + cid.key(), answer{}
}

// groupOp applies the consumer-group metadata operations.
func (s *Server) groupOp(sess *session, op wire.Operation, r *body) answer {
	sid, tid := r.ident(), r.ident()
	var gid ident
	var name string
	if op == wire.OpCreateConsumerGroup {
		name = r.name()
	} else {
		gid = r.ident()
	}
	if r.bad {
		return deny(wire.ErrInvalidCommand)
	}
	str := s.state.findStream(sid)
	if str == nil {
		return rejected(wire.ErrStreamIdNotFound)
	}
	t := str.findTopic(tid)
	if t == nil {
		return rejected(wire.ErrTopicIdNotFound)
	}
	if op == wire.OpCreateConsumerGroup {
		if t.findGroup(ident{name: name}) != nil {
			return rejected(wire.ErrConsumerGroupNameAlreadyExists)
		}
		if t.groups == nil {
			t.groups = map[uint32]*group{}
		}
		g := &group{id: t.nextGroupID, name: name}
		t.nextGroupID++
		t.groups[g.id] = g
		return ok(appendGroupDetails(nil, t, g))
	}
	g := t.findGroup(gid)
	if g == nil {
		return rejected(wire.ErrConsumerGroupIdNotFound)
	}
	me := member{sess.clientLo, sess.clientHi}
	at := -1
	for i, m := range g.members {
		if m == me {
			at = i
		}
	}
	switch op {
	case wire.OpDeleteConsumerGroup:
		delete(t.groups, g.id)
	case wire.OpJoinConsumerGroup:
		if at < 0 {
			g.members = append(g.members, me)
			g.generation++
		}
	case wire.OpLeaveConsumerGroup:
		if at < 0 {
			return rejected(wire.ErrConsumerGroupMemberNotFound)
		}
		g.members = append(g.members[:at], g.members[at+1:]...)
		g.generation++
	}
	return ok(nil)
}

// groupRead answers GetConsumerGroup(s) and SyncConsumerGroup.
func (s *Server) groupRead(sess *session, code wire.Code, r *body) answer {
	sid, tid := r.ident(), r.ident()
	var gid ident
	if code != wire.CodeGetConsumerGroups {
		gid = r.ident()
	}
	if r.bad {
		if code == wire.CodeSyncConsumerGroup {
			return ok(nil)
		}
		return deny(wire.ErrInvalidCommand)
	}
	str := s.state.findStream(sid)
	if str == nil {
		return deny(wire.ErrStreamIdNotFound)
	}
	t := str.findTopic(tid)
	if t == nil {
		return deny(wire.ErrTopicIdNotFound)
	}
	if code == wire.CodeGetConsumerGroups {
		var b []byte
		for id := uint32(0); id < t.nextGroupID; id++ {
			if g, found := t.groups[id]; found {
				b = appendGroup(b, t, g)
			}
		}
		return ok(b)
	}
	g := t.findGroup(gid)
	if g == nil {
		return ok(nil)
	}
	if code == wire.CodeGetConsumerGroup {
		return ok(appendGroupDetails(nil, t, g))
	}
	for i, m := range g.members {
		if m == (member{sess.clientLo, sess.clientHi}) {
			parts := g.assigned(t, i)
			b := le64(nil, g.generation)
			b = le32(b, uint32(len(parts)))
			for _, p := range parts {
				b = le32(b, p)
			}
			return ok(b)
		}
	}
	return ok(nil)
}
