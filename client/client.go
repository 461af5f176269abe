// Package client is Strata's Go client for Apache Iggy's binary protocol
// (PROTOCOL.md, the VSR generation with 256-byte headers) over TCP, TLS,
// WebSocket (ws/wss) or QUIC (transport.go), and for the REST API
// (HTTPClient, http.go). The CLI, the integration tests, the benchmark and
// the connectors use it.
//
// A Client owns one connection and runs it lockstep: one request in
// flight, then exactly one reply or eviction frame. Concurrent callers are
// serialised by a mutex. Request numbers, sessions and client ids follow
// §1.9 and §3.2: Register sends request 0 and session 0; metadata
// operations and Logout send the counter and then increment it; partition
// operations, NonReplicated reads and Ping send the current counter
// unchanged. Every login starts a fresh random client id.
//
// Lock order: Client.mu, then Client.connMu (which guards only the live
// connection so Close can break a blocked request without waiting for mu).
// Heartbeat and cancellation goroutines take mu or touch only the net.Conn
// (whose Close and deadline methods are safe for concurrent use).
package client

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/stratabroker/strata/net/wire"
)

// Client is a connection to one Strata (or Iggy) server. It is safe for
// concurrent use; requests are serialised.
type Client struct {
	address string
	opts    options

	mu sync.Mutex
	// Everything below is guarded by mu.
	conn   net.Conn
	closed bool
	// clientID is the protocol client id (u128 as two LE halves); never 0.
	clientIDLo, clientIDHi uint64
	// counter is the request number the next metadata op uses (§1.9).
	// Invariant: counter ≥ 1.
	counter uint64
	// session is the bound session number; 0 when not logged in.
	session uint64
	userID  uint32
	// relogin holds the credentials of the last successful login, replayed
	// after a reconnect.
	relogin *loginRequest
	// frame is the reused request frame buffer (header + body).
	frame []byte
	// reply is the reused reply buffer.
	reply []byte
	// batch builds SendMessages batches; headerScratch holds one
	// message's encoded user headers.
	batch         wire.BatchBuilder
	headerScratch []byte
	// lastUse is when the last request finished (heartbeat skips busy
	// periods).
	lastUse time.Time

	stopHeartbeat chan struct{}
	heartbeatDone chan struct{}

	// connMu guards liveConn, a copy of conn that Close may close while
	// another goroutine holds mu in a round trip. closing is set first.
	connMu   sync.Mutex
	liveConn net.Conn
	closing  bool
}

// Dial connects to address and, when WithCredentials or WithToken
// is given, logs in. The context bounds the connect and the login. The
// transport comes from the address scheme (tcp://, tls://, ws://, wss://,
// quic://; a plain host:port is TCP) or from WithTransport, WithTLS or
// WithQUIC; every method works the same over each.
func Dial(ctx context.Context, address string, opts ...Option) (*Client, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	c := &Client{address: address, opts: o, counter: 1}
	if err := c.newClientID(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	err := c.connectLocked(ctx)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	switch {
	case o.token != "":
		_, err = c.LoginWithToken(ctx, o.token)
	case o.username != "":
		_, err = c.LoginUser(ctx, o.username, o.password)
	}
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	if o.heartbeat > 0 {
		c.stopHeartbeat = make(chan struct{})
		c.heartbeatDone = make(chan struct{})
		go c.heartbeatLoop(o.heartbeat)
	}
	return c, nil
}

// Address returns the address the client dials.
func (c *Client) Address() string { return c.address }

// Close stops the heartbeat and closes the connection. It does not log
// out: the server logs a closed connection's session out itself (§2.1).
//
// A request blocked in a round trip fails with ErrConnectionLost: Close
// closes the socket first, then waits for the request to let go.
func (c *Client) Close() error {
	c.connMu.Lock()
	if c.closing {
		c.connMu.Unlock()
		return nil
	}
	c.closing = true
	var err error
	if c.liveConn != nil {
		err = c.liveConn.Close()
		c.liveConn = nil
	}
	c.connMu.Unlock()
	c.mu.Lock()
	c.closed = true
	c.conn = nil
	c.mu.Unlock()
	if c.stopHeartbeat != nil {
		close(c.stopHeartbeat)
		<-c.heartbeatDone
	}
	return err
}

// SessionInfo describes the client's protocol state.
type SessionInfo struct {
	// ClientIDLo and ClientIDHi are the low and high halves of the u128
	// protocol client id.
	ClientIDLo, ClientIDHi uint64
	// Session is the bound session number, 0 when not logged in.
	Session uint64
	// UserID is the logged-in user's id (meaningful when Session ≠ 0).
	UserID uint32
	// NextRequest is the request number the next metadata op will send.
	NextRequest uint64
}

// Session returns the client's current protocol state.
func (c *Client) Session() SessionInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return SessionInfo{ClientIDLo: c.clientIDLo, ClientIDHi: c.clientIDHi,
		Session: c.session, UserID: c.userID, NextRequest: c.counter}
}

// LoggedIn reports whether a session is bound.
func (c *Client) LoggedIn() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session != 0
}

// newClientID picks a fresh random non-zero u128 and restarts the request
// counter at 1 (§1.9). Caller holds mu or owns c exclusively.
func (c *Client) newClientID() error {
	var b [16]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("client: random client id: %w", err)
		}
		c.clientIDLo = binary.LittleEndian.Uint64(b[0:8])
		c.clientIDHi = binary.LittleEndian.Uint64(b[8:16])
		if c.clientIDLo != 0 || c.clientIDHi != 0 {
			break
		}
	}
	c.counter = 1
	return nil
}

// connectLocked dials the server. Caller holds mu.
func (c *Client) connectLocked(ctx context.Context) error {
	if c.closed {
		return ErrClosed
	}
	dialCtx := ctx
	if _, ok := ctx.Deadline(); !ok && c.opts.dialTimeout > 0 {
		var cancel context.CancelFunc
		dialCtx, cancel = context.WithTimeout(ctx, c.opts.dialTimeout)
		defer cancel()
	}
	transport, hostPort, err := resolveTransport(c.address, &c.opts)
	if err != nil {
		return err
	}
	conn, err := dialTransport(dialCtx, transport, hostPort, &c.opts)
	if err != nil {
		return &DialError{Address: hostPort, Transport: transport, Err: err}
	}
	c.connMu.Lock()
	defer c.connMu.Unlock()
	if c.closing {
		_ = conn.Close() // Close ran while we dialled; nobody will use conn
		return ErrClosed
	}
	c.conn, c.liveConn = conn, conn
	return nil
}

// dropConnLocked closes the connection after a failure; the session dies
// with it (the server logs a closed connection out). Caller holds mu.
func (c *Client) dropConnLocked() {
	if c.conn != nil {
		_ = c.conn.Close() // the connection is being abandoned; its close error carries no information
		c.conn = nil
	}
	c.connMu.Lock()
	c.liveConn = nil
	c.connMu.Unlock()
	c.session = 0
}

// ensureConnLocked redials after a lost connection and logs in again with
// the credentials of the last successful login. Caller holds mu.
func (c *Client) ensureConnLocked(ctx context.Context) error {
	if c.closed {
		return ErrClosed
	}
	if c.conn != nil {
		return nil
	}
	if err := c.newClientID(); err != nil {
		return err
	}
	if err := c.connectLocked(ctx); err != nil {
		return err
	}
	if c.relogin != nil {
		if _, err := c.loginLocked(ctx, c.relogin); err != nil {
			return err
		}
	}
	return nil
}

// request describes one command to execute.
type request struct {
	body requestBody
	info wire.CodeInfo
	// decode receives the payload (result section stripped); the slice is
	// only valid during the call. nil ignores the payload.
	decode func(payload []byte) error
}

// newRequest describes the command of body.
func newRequest(body requestBody, decode func([]byte) error) (request, error) {
	info, ok := wire.LookupCode(body.Code())
	if !ok {
		return request{}, fmt.Errorf("%w: unknown command code %d", ErrInvalidArgument, body.Code())
	}
	return request{body: body, info: info, decode: decode}, nil
}

// exec runs one command: ensures the connection, builds the frame, sends
// it, reads the reply and decodes it, replaying on transient answers.
func (c *Client) exec(ctx context.Context, body requestBody, decode func([]byte) error) error {
	r, err := newRequest(body, decode)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ensureConnLocked(ctx); err != nil {
		return err
	}
	return c.execLocked(ctx, r)
}

// execLocked is exec with mu held and a connection present.
func (c *Client) execLocked(ctx context.Context, r request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.session == 0 && (r.info.Operation.IsReplicated() || r.info.Operation == wire.OpLogout) {
		// §1.8: such a request needs session > 0 or the server drops it
		// without a reply; fail here instead of waiting forever.
		return fmt.Errorf("%w: %s: %w", ErrNotLoggedIn, r.info.Name, wire.ErrUnauthenticated)
	}
	var number, session uint64
	switch r.info.Numbering {
	case wire.NumberZero:
		number, session = 0, 0
	default:
		number, session = c.counter, c.session
	}
	frame, err := c.buildFrameLocked(r, number, session)
	if err != nil {
		return err
	}
	if r.info.Numbering == wire.NumberNext {
		// The number is consumed whatever the outcome, as the SDKs do: a
		// replay after 57 reuses the same frame, a new request gets a new
		// number.
		c.counter++
	}
	backoff := c.opts.backoff
	for attempt := 0; ; attempt++ {
		payload, err := c.roundTripLocked(ctx, frame, r, number)
		code := CodeOf(err)
		if code != wire.ErrTransientNotCommitted && code != wire.ErrTransientNotAccepted {
			if err != nil {
				return err
			}
			if r.decode == nil {
				return nil
			}
			if err := r.decode(payload); err != nil {
				if errors.Is(err, ErrNotFound) {
					return ErrNotFound
				}
				return fmt.Errorf("%w: %s reply: %w", ErrProtocol, r.info.Name, err)
			}
			return nil
		}
		if attempt+1 >= transientRetriesMax {
			return fmt.Errorf("%w: %s: %w", ErrTransientRetriesExhausted, r.info.Name, err)
		}
		if err := sleepCtx(ctx, backoff); err != nil {
			return err
		}
		backoff = min(backoff*2, transientBackoffMax)
	}
}

// buildFrameLocked encodes the request header and body into c.frame.
func (c *Client) buildFrameLocked(r request, number, session uint64) ([]byte, error) {
	if cap(c.frame) < wire.HeaderSize {
		c.frame = make([]byte, wire.HeaderSize, 4096)
	}
	frame := c.frame[:wire.HeaderSize]
	frame, err := r.body.AppendTo(frame)
	if err != nil && !errors.Is(err, ErrInvalidArgument) {
		err = fmt.Errorf("%w: %s: %w", ErrInvalidArgument, r.info.Name, err)
	}
	if err != nil {
		return nil, err
	}
	if len(frame) > wire.MaxFrameSize {
		return nil, fmt.Errorf("%w: %s request of %d bytes exceeds the %d-byte frame limit",
			ErrInvalidArgument, r.info.Name, len(frame), wire.MaxFrameSize)
	}
	c.frame = frame[:0]
	h := wire.RequestHeader{
		Size:      uint32(len(frame)),
		Client:    wire.Uint128{Lo: c.clientIDLo, Hi: c.clientIDHi},
		Request:   number,
		Operation: r.info.Operation,
		Session:   session,
		Code:      r.body.Code(),
	}
	if c.opts.stampChecksums && stampsChecksum(r.info.Operation) {
		h.RequestChecksum = wire.RequestChecksum(frame[wire.HeaderSize:])
	}
	h.Encode((*[wire.HeaderSize]byte)(frame[:wire.HeaderSize]))
	return frame, nil
}

// stampsChecksum reports whether the Rust SDK stamps request_checksum on
// op: metadata ops, Register and Logout (§1.7).
func stampsChecksum(op wire.Operation) bool {
	return op.IsMetadata() || op == wire.OpRegister || op == wire.OpLogout
}

// roundTripLocked writes frame and reads one reply or eviction frame,
// returning the payload with any result section stripped.
func (c *Client) roundTripLocked(ctx context.Context, frame []byte, r request, number uint64) ([]byte, error) {
	conn := c.conn
	if conn == nil {
		return nil, ErrConnectionLost
	}
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		c.dropConnLocked()
		return nil, fmt.Errorf("%w: %w", ErrConnectionLost, err)
	}
	stop := context.AfterFunc(ctx, func() {
		_ = conn.SetDeadline(time.Unix(1, 0)) // wakes the blocked read; the failure surfaces there
	})
	defer stop()
	if _, err := conn.Write(frame); err != nil {
		c.dropConnLocked()
		return nil, c.ioError(ctx, err)
	}
	reply, err := readFrame(conn, c.reply[:0])
	if err != nil {
		c.dropConnLocked()
		return nil, c.ioError(ctx, err)
	}
	c.reply = reply[:0]
	c.lastUse = time.Now()
	return c.checkReplyLocked(reply, r, number)
}

// ioError turns a read/write failure into ErrConnectionLost, or the
// context's error when the context ended the wait.
func (c *Client) ioError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%w: %w", ErrConnectionLost, ctxErr)
	}
	c.connMu.Lock()
	closing := c.closing
	c.connMu.Unlock()
	if closing {
		return fmt.Errorf("%w: %w", ErrConnectionLost, ErrClosed)
	}
	var netErr net.Error
	if deadline, ok := ctx.Deadline(); ok && errors.As(err, &netErr) && netErr.Timeout() && !time.Now().Before(deadline) {
		// The socket deadline (set from ctx) fired a moment before ctx's
		// own timer.
		return fmt.Errorf("%w: %w", ErrConnectionLost, context.DeadlineExceeded)
	}
	return fmt.Errorf("%w: %w", ErrConnectionLost, err)
}

// checkReplyLocked validates a reply frame against the request (§1.4):
// eviction → mapped error; request echo; status; result section.
func (c *Client) checkReplyLocked(frame []byte, r request, number uint64) ([]byte, error) {
	switch wire.PeekCommand(frame) {
	case wire.CommandEviction:
		var ev wire.EvictionHeader
		// The eviction ends the session; the Go SDK also closes the socket,
		// which keeps a late unsolicited frame from desynchronising us.
		c.dropConnLocked()
		if err := ev.Decode(frame); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrProtocol, err)
		}
		switch ev.Reason {
		case wire.EvictStaleClient, wire.EvictNoSession, wire.EvictSessionTooLow:
			// The session ended but the credentials are still good: the
			// next call reconnects and logs in again, as the SDKs do.
		default:
			c.relogin = nil
		}
		code := ev.Reason.SDKError(ev.ServerProtocolVersion, ev.ServerProtocolVersionMin)
		return nil, &Error{Code: code, Operation: r.info.Operation, Command: uint32(r.body.Code()), Eviction: uint8(ev.Reason)}
	case wire.CommandReply:
	default:
		c.dropConnLocked()
		return nil, fmt.Errorf("%w: frame command %d, want reply", ErrProtocol, wire.PeekCommand(frame))
	}
	var h wire.ReplyHeader
	if err := h.Decode(frame); err != nil {
		c.dropConnLocked()
		return nil, fmt.Errorf("%w: %w", ErrProtocol, err)
	}
	if h.Request != number {
		c.dropConnLocked()
		return nil, fmt.Errorf("%w: reply echoes request %d, sent %d", ErrProtocol, h.Request, number)
	}
	body := frame[wire.HeaderSize:]
	if h.Status != wire.ErrorCodeOK {
		return nil, &Error{Code: h.Status, Operation: r.info.Operation, Command: uint32(r.body.Code())}
	}
	if !h.Operation.IsResultFramed() || (h.Operation == wire.OpRegister && len(body) == 0) {
		return body, nil
	}
	payload, code, err := wire.SplitResult(body)
	if err != nil {
		c.dropConnLocked()
		return nil, fmt.Errorf("%w: %s: %w", ErrProtocol, r.info.Name, err)
	}
	if code != wire.ErrorCodeOK {
		return nil, &Error{Code: code, Operation: r.info.Operation, Command: uint32(r.body.Code())}
	}
	return payload, nil
}

// readFrame reads one 256-byte header and its body into buf, reusing buf
// (wire.ReadFrame cannot hand a grown buffer back for reuse).
func readFrame(r io.Reader, buf []byte) ([]byte, error) {
	if cap(buf) < wire.HeaderSize {
		buf = make([]byte, wire.HeaderSize, 64*1024)
	}
	buf = buf[:wire.HeaderSize]
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	size := wire.PeekSize(buf)
	if size < wire.HeaderSize || size > wire.MaxFrameSize {
		return nil, fmt.Errorf("%w: reply frame size %d", ErrProtocol, size)
	}
	if cap(buf) < int(size) {
		grown := make([]byte, size)
		copy(grown, buf)
		buf = grown
	}
	buf = buf[:size]
	if _, err := io.ReadFull(r, buf[wire.HeaderSize:]); err != nil {
		return nil, err
	}
	return buf, nil
}

// sleepCtx pauses for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// heartbeatPingTimeoutMin bounds a heartbeat ping from below: a short
// interval must not turn a slow moment into a lost connection.
const heartbeatPingTimeoutMin = 10 * time.Second

// heartbeatLoop pings every interval while the client is idle.
func (c *Client) heartbeatLoop(interval time.Duration) {
	defer close(c.heartbeatDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-c.stopHeartbeat:
			return
		case <-t.C:
		}
		c.mu.Lock()
		idle := time.Since(c.lastUse) >= interval
		c.mu.Unlock()
		if !idle {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(interval, heartbeatPingTimeoutMin))
		err := c.Ping(ctx)
		cancel()
		if err != nil && !errors.Is(err, ErrClosed) && c.opts.onHeartbeatError != nil {
			c.opts.onHeartbeatError(err)
		}
	}
}
