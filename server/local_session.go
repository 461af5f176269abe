package server

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/stratabroker/strata/net/wire"
)

// LocalSession is an in-process client session for gateways that speak
// another protocol to their own clients (the HTTP API): it runs binary
// protocol requests through the same dispatch as a socket, with its own
// client id, request numbers and session binding. Calls are serialised.
type LocalSession struct {
	s    *Server
	conn *connection

	mu      sync.Mutex
	client  wire.Uint128
	counter uint64
}

// OpenLocalSession registers a session that ClientInfo lists with the
// given transport code and address. Close it when done.
func (s *Server) OpenLocalSession(transport uint8, address string) (*LocalSession, error) {
	c := &connection{id: s.nextConnID.Add(1), transport: transport, address: address, lastSeen: s.now(), gateway: true}
	ls := &LocalSession{s: s, conn: c, counter: 1}
	if err := ls.newClientID(); err != nil {
		return nil, err
	}
	s.addConn(c)
	return ls, nil
}

// newClientID draws a fresh random non-zero client id, as SDKs do for
// every login.
func (ls *LocalSession) newClientID() error {
	var b [16]byte
	for ls.client.IsZero() {
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("client id: %w", err)
		}
		ls.client = wire.Uint128{Lo: binary.LittleEndian.Uint64(b[:8]), Hi: binary.LittleEndian.Uint64(b[8:])}
	}
	ls.counter = 1
	return nil
}

// SetAdmission installs admit, which a later login of this session asks
// once its credentials are verified and before its session is committed:
// false refuses the login with TransientNotAccepted and commits nothing.
// The HTTP gateway applies its per-user limits with it.
func (ls *LocalSession) SetAdmission(admit func(userID uint32) bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.conn.admit = admit
}

// UserID returns the logged-in user, ok false when not logged in.
func (ls *LocalSession) UserID() (uint32, bool) {
	bound, userID, _, _ := ls.conn.binding()
	return userID, bound
}

// Login logs the session in with a username and password.
func (ls *LocalSession) Login(username, password string) (uint32, error) {
	req := wire.LoginRegisterRequest{Version: wire.DefaultClientVersionInfo(), Username: username, Password: password}
	return ls.login(&req)
}

// LoginWithToken logs the session in with a personal access token.
func (ls *LocalSession) LoginWithToken(token string) (uint32, error) {
	req := wire.LoginRegisterWithPatRequest{Version: wire.DefaultClientVersionInfo(), Token: token}
	return ls.login(&req)
}

// login runs a Register request.
func (ls *LocalSession) login(req wire.Request) (uint32, error) {
	body, err := req.AppendTo(nil)
	if err != nil {
		return 0, err
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	h := wire.RequestHeader{Client: ls.client, Operation: wire.OpRegister}
	r := ls.s.dispatch(ls.conn, &h, body)
	if r.evict != 0 {
		return 0, r.evict.SDKError(0, 0)
	}
	if r.status != wire.ErrorCodeOK {
		return 0, r.status
	}
	var reply wire.RegisterReply
	payload, code, err := wire.SplitResult(r.body)
	if err != nil {
		return 0, err
	}
	if code != wire.ErrorCodeOK {
		return 0, code
	}
	if err := reply.Decode(payload); err != nil {
		return 0, err
	}
	return reply.UserID, nil
}

// Do runs one request with the numbering rules of PROTOCOL.md §1.9 and
// returns the reply payload (result section removed). A denial, a
// committed rejection and an eviction come back as a wire.ErrorCode error.
// The payload is a copy the caller owns.
func (ls *LocalSession) Do(req wire.Request) ([]byte, error) {
	body, err := req.AppendTo(nil)
	if err != nil {
		return nil, err
	}
	code := req.Code()
	operation, ok := wire.OperationForCode(code)
	if !ok {
		return nil, wire.ErrInvalidCommand
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	_, _, _, session := ls.conn.binding()
	h := wire.RequestHeader{Client: ls.client, Operation: operation, Session: session, Request: ls.counter, Code: code}
	if operation.IsMetadata() || operation == wire.OpLogout {
		ls.counter++
	}
	r := ls.s.dispatch(ls.conn, &h, body)
	switch {
	case r.drop:
		return nil, wire.ErrInvalidCommand
	case r.evict != 0:
		return nil, r.evict.SDKError(0, 0)
	case r.status != wire.ErrorCodeOK:
		return nil, r.status
	}
	replyOperation := h.Operation
	if r.operation != 0 {
		replyOperation = r.operation
	}
	payload, err := wire.ReplyPayload(replyOperation, wire.ErrorCodeOK, r.body)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(payload))
	copy(out, payload)
	if operation == wire.OpLogout {
		if err := ls.newClientID(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Close ends the session and forgets it.
func (ls *LocalSession) Close() {
	ls.s.removeConn(ls.conn)
}
