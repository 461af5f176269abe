package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/runtime/shard"
)

// Transport codes reported in ClientInfo (PROTOCOL.md §4.11.9).
const (
	transportTCP       = 1
	transportQUIC      = 2
	transportWebSocket = 4
)

// Connection buffer sizes.
const (
	// connReadBufferBytes is a TCP connection's read buffer: a small
	// request arrives in one read, a large body is read past it.
	connReadBufferBytes = 8 << 10
	// connFrameBufferBytes is the largest frame buffer a connection keeps
	// between requests; a larger frame is lent under the request budget
	// ([message_bus] in_flight_bytes_max) for its one request.
	connFrameBufferBytes = 64 << 10
	// connReplyBufferKeepMax is the largest reply buffer a connection
	// keeps between requests; larger replies allocate each time.
	connReplyBufferKeepMax = 8 << 20
	// connWriteTimeout bounds a reply write to a client that stopped
	// reading.
	connWriteTimeout = 30 * time.Second
)

// userIDNone is the ClientInfo user id of a connection that is not bound.
const userIDNone = 0xFFFFFFFF

// connection is one client connection's server-side state. Its fields
// below mu are read by other goroutines (GetClients) and change on login
// and logout.
type connection struct {
	id        uint32
	transport uint8
	address   string
	// netConn is the socket of a TCP connection; closeFn closes a
	// connection of another transport. Both are nil for a local session.
	netConn net.Conn
	closeFn func()
	// gateway marks an in-process session of a gateway (the HTTP API)
	// that limits failed logins itself.
	gateway bool
	// admit, set by a gateway before it logs in, is asked once a login's
	// credentials are verified and before its session is committed; false
	// refuses the login with TransientNotAccepted (LocalSession.SetAdmission).
	admit func(userID uint32) bool
	// shard serves the connection (conn_route.go); nil for an in-process
	// session.
	shard *shard.Shard
	// done is closed when the server closes the connection (nil for an
	// in-process session): a reader waiting for the request budget gives
	// up.
	done      chan struct{}
	closeOnce sync.Once

	mu sync.Mutex
	// Invariant: bound implies userID is a valid user and session > 0.
	bound   bool
	userID  uint32
	client  wire.Uint128
	session uint64
	// lastSeen is when the connection last sent a request.
	lastSeen time.Time

	// scratch is the reply body buffer, reused across requests (see
	// keepScratch); only the request in progress touches it.
	scratch []byte
	// frameBuf holds request frames and bodyBuf backs scratch; both are
	// lent by the memory pool for network connections.
	frameBuf, bodyBuf connBuffer
	// head is the reply header; out joins header and body for message
	// transports (WebSocket, QUIC, tests).
	head [wire.HeaderSize]byte
	out  []byte
	// requestHead receives each request's header before its size is
	// checked (readRequest).
	requestHead [wire.HeaderSize]byte
}

// close closes the connection's transport, if it has one.
func (c *connection) close() {
	c.closeOnce.Do(func() {
		if c.done != nil {
			close(c.done)
		}
	})
	switch {
	case c.netConn != nil:
		_ = c.netConn.Close()
	case c.closeFn != nil:
		c.closeFn()
	}
}

// lastRequest returns when the connection last sent a request.
func (c *connection) lastRequest() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeen
}

// binding returns a consistent copy of the connection's session binding.
func (c *connection) binding() (bound bool, userID uint32, client wire.Uint128, session uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bound, c.userID, c.client, c.session
}

// bind attaches a committed session to the connection.
func (c *connection) bind(userID uint32, client wire.Uint128, session uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bound, c.userID, c.client, c.session = true, userID, client, session
}

// unbind returns the connection to the Connected state.
func (c *connection) unbind() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bound, c.userID, c.client, c.session = false, 0, wire.Uint128{}, 0
}

// response is what a handler decided to send back for one request.
type response struct {
	// drop sends nothing (the reference server's silent drop).
	drop bool
	// evict sends an Eviction frame with this reason instead of a reply.
	evict wire.EvictionReason
	// status, when non-zero, denies the request with an empty body.
	status wire.ErrorCode
	// operation overrides the reply operation (0: the request's).
	operation wire.Operation
	// body is the reply body (already result-framed where required).
	body []byte
	// op and commit fill the informational reply fields.
	op, commit uint64
}

// deny returns a pre-commit denial with an empty body.
func deny(code wire.ErrorCode) response { return response{status: code} }

// serveConn runs one client connection until it closes or the server
// shuts down. Frames are processed in order, one at a time. The caller
// admitted the connection (connGuard.admit).
func (s *Server) serveConn(nc net.Conn, transport uint8) {
	c := &connection{
		id:        s.nextConnID.Add(1),
		transport: transport,
		address:   nc.RemoteAddr().String(),
		netConn:   nc,
		lastSeen:  time.Now(),
		shard:     s.assignShard(),
		done:      make(chan struct{}),
	}
	s.initBuffers(c)
	defer c.releaseBuffers()
	s.addConn(c)
	defer s.removeConn(c)
	defer nc.Close()

	limits := s.guard.limitsFor(transport)
	reader := bufio.NewReaderSize(nc, connReadBufferBytes)
	var iov net.Buffers
	for {
		// Wait for the next request: without limit once logged in, for
		// unauthenticated_idle_timeout before.
		bound, _, _, _ := c.binding()
		lastSeen := c.lastRequest()
		_ = nc.SetReadDeadline(idleDeadline(bound, lastSeen, limits))
		if _, err := reader.Peek(1); err != nil {
			s.readEnded(c, bound, err)
			return
		}
		deadline := requestDeadline(bound, lastSeen, time.Now(), limits)
		_ = nc.SetReadDeadline(deadline)
		frame, err := s.readRequest(c, reader, bound, limits, deadline)
		if err != nil {
			s.readEnded(c, bound, err)
			return
		}
		reply, keep := s.handleFrame(c, frame.header, frame.body)
		if !keep || reply.head == nil {
			s.releaseRequest(&frame)
			if !keep {
				return
			}
			continue
		}
		_ = nc.SetWriteDeadline(time.Now().Add(connWriteTimeout))
		// Header and body in one writev; the body is written from the
		// buffer the handler filled (a poll's records are not copied).
		iov = append(iov[:0], reply.head, reply.body)
		_, err = iov.WriteTo(nc)
		s.releaseRequest(&frame)
		c.keepScratch()
		if err != nil {
			s.log.Debug("write failed", zap.Uint32("connection_id", c.id), zap.Error(err))
			return
		}
	}
}

// readEnded records why reading a connection's next request stopped: a
// limit (logged and counted by the guard), or the client going away or
// sending a malformed frame (debug log).
func (s *Server) readEnded(c *connection, bound bool, err error) {
	if reason := limitOf(err, bound); reason != "" {
		s.guard.stopped(c.transport, reason, c.address, err)
		return
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errConnClosing) {
		s.log.Debug("closing connection", zap.Uint32("connection_id", c.id), zap.String("address", c.address), zap.Error(err))
	}
}

// handleFrame processes one frame and returns the reply to write (a nil
// head for none) and whether to keep the connection open. The reply's body
// may alias c.scratch: write it before the next request.
func (s *Server) handleFrame(c *connection, header, body []byte) (replyFrame, bool) {
	if wire.PeekCommand(header) != wire.CommandRequest {
		// A defined non-Request command from a client is ignored.
		return replyFrame{}, true
	}
	var h wire.RequestHeader
	if err := h.Decode(header); err != nil {
		return replyFrame{}, true
	}
	if err := wire.ValidateRequest(&h); err != nil {
		return replyFrame{}, true
	}
	c.mu.Lock()
	c.lastSeen = time.Now()
	c.mu.Unlock()
	s.metrics.requests.Inc()
	started := time.Now()
	r := s.route(c, &h, body)
	s.metrics.observeRequest(&h, r, started)
	return c.encode(&h, r), true
}

// encode renders a response as a Reply or Eviction frame: the header in
// c.head, the body where the handler left it.
func (c *connection) encode(h *wire.RequestHeader, r response) replyFrame {
	if r.drop {
		return replyFrame{}
	}
	if r.evict != 0 {
		eviction := wire.EvictionHeader{Client: h.Client, Reason: r.evict}
		if r.evict == wire.EvictIncompatibleProtocol {
			eviction.ServerProtocolVersion = wire.ProtocolVersionMax
			eviction.ServerProtocolVersionMin = wire.ProtocolVersionMin
		}
		eviction.Encode(&c.head)
		return replyFrame{head: c.head[:]}
	}
	operation := h.Operation
	if r.operation != 0 {
		operation = r.operation
	}
	body := r.body
	if r.status != wire.ErrorCodeOK {
		body = nil
	}
	reply := wire.ReplyHeader{
		RequestChecksum: h.RequestChecksum,
		Client:          h.Client,
		Op:              r.op,
		Commit:          r.commit,
		Timestamp:       h.Timestamp,
		Request:         h.Request,
		Operation:       operation,
		Status:          r.status,
	}
	if len(body) > wire.MaxFrameSize-wire.HeaderSize {
		// The body exceeds the frame limit: answer with a denial instead.
		reply.Status, body = wire.ErrorCode(wire.ErrCannotSerializeResource), nil
	}
	reply.Size = uint32(wire.HeaderSize + len(body))
	reply.Encode(&c.head)
	return replyFrame{head: c.head[:], body: body}
}
