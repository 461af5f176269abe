package clienttest

import (
	"encoding/binary"
	"strconv"

	"github.com/stratabroker/strata/net/wire"
)

// ident is a decoded Identifier.
type ident struct {
	numeric bool
	id      uint32
	name    string
}

func (i ident) key() string {
	if i.numeric {
		return "#" + strconv.FormatUint(uint64(i.id), 10)
	}
	return "$" + i.name
}

// body is a request body reader with a sticky failure flag.
type body struct {
	b   []byte
	pos int
	bad bool
}

func (r *body) take(n int) []byte {
	if r.bad || n < 0 || len(r.b)-r.pos < n {
		r.bad = true
		return nil
	}
	s := r.b[r.pos : r.pos+n]
	r.pos += n
	return s
}
func (r *body) u8() uint8 {
	if s := r.take(1); s != nil {
		return s[0]
	}
	return 0
}
func (r *body) u32() uint32 {
	if s := r.take(4); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}
func (r *body) u64() uint64 {
	if s := r.take(8); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}
func (r *body) name() string { return string(r.take(int(r.u8()))) }
func (r *body) ident() ident {
	kind, n := r.u8(), int(r.u8())
	v := r.take(n)
	switch {
	case r.bad:
	case kind == 1 && n == 4:
		return ident{numeric: true, id: binary.LittleEndian.Uint32(v)}
	case kind == 2 && n > 0:
		return ident{name: string(v)}
	default:
		r.bad = true
	}
	return ident{}
}
func (r *body) rest() []byte { return r.take(len(r.b) - r.pos) }

// answer is what a handler returns.
type answer struct {
	status wire.ErrorCode
	result wire.ErrorCode
	body   []byte
	evict  wire.EvictionReason
	drop   bool
}

func deny(code wire.ErrorCode) answer     { return answer{status: code} }
func rejected(code wire.ErrorCode) answer { return answer{result: code} }
func ok(b []byte) answer                  { return answer{body: b} }

// dispatch routes one valid request. Caller holds s.mu.
func (s *Server) dispatch(sess *session, req Request) ([]byte, bool) {
	r := &body{b: req.Body}
	var a answer
	switch req.Operation {
	case wire.OpRegister:
		a = s.register(sess, req, r)
		if a.evict == 0 && a.status == 0 && a.result == 0 {
			return reply(req, wire.OpRegister, 0, a.body), true
		}
	case wire.OpLogout:
		sess.bound = false
		return reply(req, wire.OpLogout, 0, nil), true
	case wire.OpNonReplicated:
		if req.Code == wire.CodeLoginUser || req.Code == wire.CodeLoginWithPersonalAccessToken {
			return evictionFrame(req, wire.EvictMalformedLogin), true
		}
		if req.Code != wire.CodePing && !sess.bound {
			return reply(req, req.Operation, wire.ErrUnauthenticated, nil), true
		}
		a = s.read(sess, req.Code, r)
		if a.status != 0 {
			return reply(req, req.Operation, a.status, nil), true
		}
		return reply(req, req.Operation, 0, a.body), true
	default:
		if !sess.bound {
			return evictionFrame(req, wire.EvictNoSession), true
		}
		if req.Operation.IsPartition() {
			a = s.partitionOp(sess, req.Operation, r)
			if a.status != 0 {
				return reply(req, req.Operation, a.status, nil), true
			}
			if req.Operation == wire.OpSendMessages {
				return reply(req, req.Operation, 0, a.body), true
			}
			return reply(req, req.Operation, 0, append(le32(nil, 0), a.body...)), true
		}
		a = s.metadata(sess, req.Operation, r)
	}
	switch {
	case a.drop:
		return nil, false
	case a.evict != 0:
		return evictionFrame(req, a.evict), true
	case a.status != 0:
		return reply(req, req.Operation, a.status, nil), true
	}
	op := wire.ResultReplyOperation(req.Operation)
	if a.result != 0 {
		return reply(req, op, 0, resultBody(a.result)), true
	}
	return reply(req, op, 0, append(le32(nil, 0), a.body...)), true
}

// register runs the login flow of §2.3.
func (s *Server) register(sess *session, req Request, r *body) answer {
	version := r.u32()
	r.name()
	r.name()
	if r.bad {
		return answer{evict: wire.EvictMalformedLogin}
	}
	if !wire.AcceptsProtocolVersion(version) {
		return answer{evict: wire.EvictIncompatibleProtocol}
	}
	tail := r.pos
	var uid uint32
	found, rejected := false, false
	username := r.name()
	password := r.name()
	r.u32()
	if !r.bad {
		if u := s.state.findUser(ident{name: username}); u != nil && u.password == password && u.status == 1 {
			uid, found = u.id, true
		} else {
			rejected = true
		}
	}
	if !found {
		r2 := &body{b: req.Body, pos: tail}
		token := r2.name()
		r2.u32()
		switch p, known := s.state.tokens[token]; {
		case known && !r2.bad:
			uid, found = p.userID, true
		case !rejected && !r2.bad:
			return answer{evict: wire.EvictInvalidToken}
		}
	}
	if !found {
		if rejected {
			return answer{evict: wire.EvictInvalidCredentials}
		}
		return answer{evict: wire.EvictMalformedLogin}
	}
	if !sess.bound {
		s.nextSess++
		sess.session, sess.userID, sess.bound = s.nextSess, uid, true
		sess.clientLo, sess.clientHi = req.ClientLo, req.ClientHi
	}
	b := le32(nil, 0)
	b = le32(b, sess.userID)
	b = le64(b, sess.session)
	b = le32(b, wire.ProtocolVersion)
	return ok(name8(b, wire.ServerVersion))
}

// read answers NonReplicated commands.
func (s *Server) read(sess *session, code wire.Code, r *body) answer {
	st := s.state
	switch code {
	case wire.CodePing:
		return ok(nil)
	case wire.CodeGetStats:
		return ok(s.stats())
	case wire.CodeGetClusterMetadata:
		b := text32(nil, "single-node")
		b = le32(b, 1)
		b = text32(b, "iggy-node")
		b = text32(b, "127.0.0.1")
		b = binary.LittleEndian.AppendUint16(b, 8090)
		b = binary.LittleEndian.AppendUint16(b, 8080)
		b = binary.LittleEndian.AppendUint16(b, 3000)
		b = binary.LittleEndian.AppendUint16(b, 8092)
		return ok(append(b, 0, 0))
	case wire.CodeGetMe:
		return ok(appendClientInfo(nil, sess))
	case wire.CodeGetClient:
		id := r.u32()
		if c, found := st.clients[id]; found && !r.bad {
			return ok(appendClientInfo(nil, c))
		}
		return ok(nil)
	case wire.CodeGetClients:
		var b []byte
		for id := uint32(0); id <= s.nextConnID; id++ {
			if c, found := st.clients[id]; found {
				b = appendClientInfo(b, c)
			}
		}
		return ok(b)
	case wire.CodeGetUser:
		id := r.ident()
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		if u := st.findUser(id); u != nil {
			return ok(appendUserDetails(nil, u))
		}
		return ok(nil)
	case wire.CodeGetUsers:
		var b []byte
		for id := uint32(0); id < st.nextUserID; id++ {
			if u, found := st.users[id]; found {
				b = appendUser(b, u)
			}
		}
		return ok(b)
	case wire.CodeGetPersonalAccessTokens:
		var b []byte
		for _, p := range st.tokens {
			if p.userID == sess.userID {
				b = name8(b, p.name)
				b = le64(b, p.expiry)
			}
		}
		return ok(b)
	case wire.CodeGetStream:
		id := r.ident()
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		if str := st.findStream(id); str != nil {
			return ok(appendStreamDetails(nil, str))
		}
		return ok(nil)
	case wire.CodeGetStreams:
		var b []byte
		for _, id := range st.streamIDs() {
			b = appendStream(b, st.streams[id])
		}
		return ok(b)
	case wire.CodeGetTopic:
		sid, tid := r.ident(), r.ident()
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		if str := st.findStream(sid); str != nil {
			if t := str.findTopic(tid); t != nil {
				return ok(appendTopicDetails(nil, t, 1))
			}
		}
		return ok(nil)
	case wire.CodeGetTopics:
		sid := r.ident()
		if r.bad {
			return deny(wire.ErrInvalidCommand)
		}
		str := st.findStream(sid)
		if str == nil {
			return ok(le32(nil, 0))
		}
		b := le32(nil, uint32(len(str.topics)))
		for _, id := range str.topicIDs() {
			b = appendTopic(b, str.topics[id])
		}
		return ok(b)
	case wire.CodePollMessages:
		return s.poll(r)
	case wire.CodeGetConsumerGroup, wire.CodeGetConsumerGroups, wire.CodeSyncConsumerGroup:
		return s.groupRead(sess, code, r)
	case wire.CodeGetConsumerOffset:
		_, p, key, a := s.offsetTarget(r, true)
		if p == nil {
			return a
		}
		stored, found := p.offsets[key]
		if !found {
			return ok(nil)
		}
		b := le32(nil, p.id)
		b = le64(b, p.currentOffset())
		return ok(le64(b, stored))
	}
	if _, known := wire.LookupCode(code); known {
		return deny(wire.ErrFeatureUnavailable)
	}
	return deny(wire.ErrInvalidCommand)
}

func (s *Server) stats() []byte {
	st := s.state
	var topics, partitions uint32
	var messages uint64
	for _, str := range st.streams {
		topics += uint32(len(str.topics))
		for _, t := range str.topics {
			partitions += uint32(len(t.partitions))
			_, c := t.sizeAndCount()
			messages += c
		}
	}
	b := le32(nil, 4242)
	b = le32(b, 0)
	b = le32(b, 0)
	for range 8 {
		b = le64(b, 1)
	}
	b = le32(b, uint32(len(st.streams)))
	b = le32(b, topics)
	b = le32(b, partitions)
	b = le32(b, partitions)
	b = le64(b, messages)
	b = le32(b, uint32(len(st.clients)))
	b = le32(b, 0)
	for _, t := range []string{"fakehost", "linux", "6.0", "6.0.0", wire.ServerVersion} {
		b = text32(b, t)
	}
	b = le32(b, wire.ServerSemver)
	b = le32(b, 0)
	b = le32(b, 2)
	b = le64(b, 100)
	return le64(b, 200)
}
