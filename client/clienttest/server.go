// Package clienttest runs a small in-memory fake of a Strata server that
// speaks the client protocol of PROTOCOL.md over TCP on 127.0.0.1. It is a
// test helper for the client and CLI tests (like net/http/httptest): it
// knows streams, topics, partitions, messages, consumer offsets, users and
// personal access tokens, records every request header it receives, and
// lets tests inject denials, committed results, transient answers and
// evictions. It is not a reference implementation of the server.
package clienttest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
)

// Default root credentials of the fake server.
const (
	RootUsername = "iggy"
	RootPassword = "iggy"
)

// Header layout (PROTOCOL.md §1.2-1.5).
const (
	headerSize   = 256
	frameSizeMax = 64 << 20
)

// Request is the header of one received request, plus its body.
type Request struct {
	ClientLo, ClientHi uint64
	Checksum           uint64
	Request            uint64
	Operation          wire.Operation
	Session            uint64
	Code               wire.Code
	Body               []byte
}

// Injection overrides the answer to one request.
type Injection struct {
	// Status, when non-zero, answers with this Reply status and an empty
	// body.
	Status wire.ErrorCode
	// Result, when non-zero, answers with a result section carrying it.
	Result wire.ErrorCode
	// Evict, when non-zero, answers with an Eviction of this reason.
	Evict wire.EvictionReason
	// Drop sends no answer at all.
	Drop bool
	// WrongEcho answers normally but with request number + 1 in the reply.
	WrongEcho bool
}

// Server is a running fake server.
type Server struct {
	ln   net.Listener
	addr string

	mu sync.Mutex
	// Everything below is guarded by mu.
	requests   []Request
	violations []string
	inject     func(Request) *Injection
	state      *state
	conns      map[net.Conn]struct{}
	nextConnID uint32
	nextSess   uint64

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Start listens on 127.0.0.1:0 and serves until Close.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, addr: ln.Addr().String(), state: newState(), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// Addr returns the listening address.
func (s *Server) Addr() string { return s.addr }

// Close stops the server and waits for its goroutines. Later calls
// return the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close() // shutting down: the peer sees the close
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s.closeErr
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Violations returns the §1.8 header rule violations seen (such frames
// are dropped without reply, as the reference server does).
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Inject sets a function consulted before every request; a non-nil
// Injection overrides the normal answer. nil removes it.
func (s *Server) Inject(f func(Request) *Injection) {
	s.mu.Lock()
	s.inject = f
	s.mu.Unlock()
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[conn] = struct{}{}
		s.nextConnID++
		id := s.nextConnID
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(conn, id)
	}
}

// conn is one connection's session state.
type session struct {
	id       uint32
	addr     string
	userID   uint32
	session  uint64
	bound    bool
	clientLo uint64
	clientHi uint64
}

func (s *Server) serve(conn net.Conn, id uint32) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.state.dropClient(id)
		s.mu.Unlock()
		_ = conn.Close() // connection finished
	}()
	sess := &session{id: id, addr: conn.RemoteAddr().String()}
	s.mu.Lock()
	s.state.clients[id] = sess
	s.mu.Unlock()
	header := make([]byte, headerSize)
	for {
		if _, err := io.ReadFull(conn, header); err != nil {
			return
		}
		size := binary.LittleEndian.Uint32(header[48:])
		if size < headerSize || size > frameSizeMax {
			return
		}
		frame := make([]byte, size)
		copy(frame, header)
		if _, err := io.ReadFull(conn, frame[headerSize:]); err != nil {
			return
		}
		out, ok := s.handle(sess, frame)
		if !ok {
			continue
		}
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}

func parseRequest(frame []byte) (Request, string) {
	r := Request{
		ClientLo:  binary.LittleEndian.Uint64(frame[128:]),
		ClientHi:  binary.LittleEndian.Uint64(frame[136:]),
		Checksum:  binary.LittleEndian.Uint64(frame[144:]),
		Request:   binary.LittleEndian.Uint64(frame[168:]),
		Operation: wire.Operation(frame[176]),
		Session:   binary.LittleEndian.Uint64(frame[184:]),
		Body:      append([]byte(nil), frame[headerSize:]...),
	}
	if r.Operation == wire.OpNonReplicated {
		r.Code = wire.Code(binary.LittleEndian.Uint32(frame[196:]))
	}
	switch {
	case frame[60] != 5:
		return r, "command is not Request"
	case !r.Operation.Defined() || r.Operation == wire.OpReserved:
		return r, "undefined operation"
	case r.ClientLo == 0 && r.ClientHi == 0:
		return r, "client id 0"
	case r.Operation == wire.OpRegister && (r.Session != 0 || r.Request != 0):
		return r, "register with non-zero session or request"
	case r.Operation != wire.OpRegister && r.Operation != wire.OpNonReplicated && (r.Session == 0 || r.Request == 0):
		return r, "replicated op with zero session or request"
	}
	for _, b := range frame[152:160] {
		if b != 0 {
			return r, "request_checksum high half non-zero"
		}
	}
	return r, ""
}

// handle answers one frame; ok=false means "drop without reply".
func (s *Server) handle(sess *session, frame []byte) ([]byte, bool) {
	req, violation := parseRequest(frame)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if violation != "" {
		s.violations = append(s.violations, violation)
		return nil, false
	}
	if req.Checksum != 0 && req.Checksum != xxh3.Hash(req.Body) {
		return reply(req, req.Operation, wire.ErrInvalidFormat, nil), true
	}
	if s.inject != nil {
		if inj := s.inject(req); inj != nil {
			switch {
			case inj.Drop:
				return nil, false
			case inj.WrongEcho:
				out, sent := s.dispatch(sess, req)
				if sent {
					binary.LittleEndian.PutUint64(out[200:], req.Request+1)
				}
				return out, sent
			case inj.Evict != 0:
				if inj.Evict != wire.EvictStaleClient {
					sess.bound = false
				}
				return evictionFrame(req, inj.Evict), true
			case inj.Status != 0:
				return reply(req, req.Operation, inj.Status, nil), true
			case inj.Result != 0:
				return reply(req, wire.ResultReplyOperation(req.Operation), 0, resultBody(inj.Result)), true
			}
		}
	}
	return s.dispatch(sess, req)
}

// reply builds a Reply frame.
func reply(req Request, op wire.Operation, status wire.ErrorCode, body []byte) []byte {
	out := make([]byte, headerSize+len(body))
	binary.LittleEndian.PutUint32(out[48:], uint32(len(out)))
	out[60] = 8
	binary.LittleEndian.PutUint64(out[128:], req.Checksum)
	binary.LittleEndian.PutUint64(out[160:], req.ClientLo)
	binary.LittleEndian.PutUint64(out[168:], req.ClientHi)
	binary.LittleEndian.PutUint64(out[200:], req.Request)
	out[208] = byte(op)
	binary.LittleEndian.PutUint32(out[216:], uint32(status))
	copy(out[headerSize:], body)
	return out
}

func evictionFrame(req Request, reason wire.EvictionReason) []byte {
	out := make([]byte, headerSize)
	binary.LittleEndian.PutUint32(out[48:], headerSize)
	out[60] = 13
	binary.LittleEndian.PutUint64(out[128:], req.ClientLo)
	binary.LittleEndian.PutUint64(out[136:], req.ClientHi)
	if reason == wire.EvictIncompatibleProtocol {
		binary.LittleEndian.PutUint32(out[144:], wire.ProtocolVersionMax)
		binary.LittleEndian.PutUint32(out[148:], wire.ProtocolVersionMin)
	}
	out[255] = byte(reason)
	return out
}

// resultBody is a committed rejection [1][0][code].
func resultBody(code wire.ErrorCode) []byte {
	b := make([]byte, 12)
	binary.LittleEndian.PutUint32(b, 1)
	binary.LittleEndian.PutUint32(b[8:], uint32(code))
	return b
}

// errDecode marks an undecodable request body.
var errDecode = errors.New("clienttest: undecodable body")
