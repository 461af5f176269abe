package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
)

// startWebSocket binds the [websocket] listener: a plain RFC 6455 upgrade
// on any path, no subprotocol, each binary message carrying exactly one
// protocol frame (PROTOCOL.md §10).
func (s *Server) startWebSocket(bound *string) error {
	ln, err := s.listenOnShardZero("tcp", s.cfg.WebSocket.Address)
	if err != nil {
		return fmt.Errorf("bind websocket %s: %w", s.cfg.WebSocket.Address, err)
	}
	if s.cfg.WebSocket.TLS.Enabled {
		tlsConf, err := serverTLSConfig(s.cfg.WebSocket.TLS)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("websocket: %w", err)
		}
		ln = tls.NewListener(ln, tlsConf)
	}
	// An HTTP connection that has not upgraded is not logged in either:
	// it may sit idle between requests no longer than one that has.
	srv := &http.Server{Handler: http.HandlerFunc(s.serveWebSocket), ReadHeaderTimeout: httpReadHeaderTimeout,
		IdleTimeout: time.Duration(s.cfg.WebSocket.UnauthenticatedIdleTimeout)}
	s.mu.Lock()
	s.listeners = append(s.listeners, ln)
	s.wsServer = srv
	s.mu.Unlock()
	*bound = ln.Addr().String()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			s.log.Error("websocket server failed", zap.Error(err))
		}
	}()
	s.log.Info("listening", zap.String("transport", "websocket"), zap.String("address", *bound))
	return nil
}

// serveWebSocket upgrades one connection and serves its frames in order.
// Past [message_bus] connections_max the upgrade is answered 503 instead.
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	if !s.guard.admit(transportWebSocket, r.RemoteAddr) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "connection limit reached", http.StatusServiceUnavailable)
		return
	}
	defer s.guard.leave()
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	// A backstop: readRequest reads no more than the frame's size.
	ws.SetReadLimit(int64(s.cfg.MessageBus.MaxMessageSize))
	c := &connection{id: s.nextConnID.Add(1), transport: transportWebSocket, address: r.RemoteAddr, lastSeen: s.now(), shard: s.assignShard(),
		done: make(chan struct{})}
	s.initBuffers(c)
	defer c.releaseBuffers()
	s.addConn(c)
	defer s.removeConn(c)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c.closeFn = func() { _ = ws.CloseNow() }
	// expiry cancels ctx, which closes the WebSocket, when the deadline
	// of the wait or read in progress passes.
	var expired atomic.Bool
	expiry := time.AfterFunc(time.Hour, func() { expired.Store(true); cancel() })
	expiry.Stop()
	defer expiry.Stop()
	arm := func(deadline time.Time) {
		if deadline.IsZero() {
			expiry.Stop()
			return
		}
		expiry.Reset(time.Until(deadline))
	}
	limits := s.guard.limitsFor(transportWebSocket)
	var extra [1]byte
	for {
		bound, _, _, _ := c.binding()
		lastSeen := c.lastRequest()
		arm(idleDeadline(bound, lastSeen, limits))
		typ, message, err := ws.Reader(ctx)
		if err != nil {
			s.wsReadEnded(c, bound, expired.Load(), err)
			return
		}
		if typ != websocket.MessageBinary {
			_ = ws.Close(websocket.StatusUnsupportedData, "one binary protocol frame per message")
			return
		}
		deadline := requestDeadline(bound, lastSeen, time.Now(), limits)
		arm(deadline)
		frame, err := s.readRequest(c, message, bound, limits, deadline)
		if err == nil {
			// The message must end where the frame does.
			if n, readErr := message.Read(extra[:]); n != 0 || !errors.Is(readErr, io.EOF) {
				s.releaseRequest(&frame)
				err = fmt.Errorf("%w: message longer than its frame", wire.ErrBadFrameSize)
			}
		}
		expiry.Stop()
		if err != nil {
			switch {
			case errors.Is(err, wire.ErrBadHeader):
				_ = ws.Close(websocket.StatusProtocolError, "invalid command byte")
			case errors.Is(err, wire.ErrBadFrameSize), errors.Is(err, wire.ErrTruncated):
				_ = ws.Close(websocket.StatusUnsupportedData, "one binary protocol frame per message")
			case errors.Is(err, errUnauthenticatedFrameSize):
				_ = ws.Close(websocket.StatusMessageTooBig, "frame too large before login")
			}
			s.wsReadEnded(c, bound, expired.Load(), err)
			return
		}
		reply, keep := s.handleFrame(c, frame.header, frame.body)
		if !keep {
			s.releaseRequest(&frame)
			_ = ws.Close(websocket.StatusNormalClosure, "")
			return
		}
		if reply.head == nil {
			s.releaseRequest(&frame)
			continue
		}
		// One binary message per frame: header and body joined.
		c.out = reply.join(c.out)
		s.releaseRequest(&frame)
		writeCtx, cancelWrite := context.WithTimeout(ctx, connWriteTimeout)
		err = ws.Write(writeCtx, websocket.MessageBinary, c.out)
		cancelWrite()
		c.keepScratch()
		if err != nil {
			return
		}
	}
}

// wsReadEnded records why a WebSocket connection's read stopped; expired
// says the connection's deadline passed (its context was cancelled).
func (s *Server) wsReadEnded(c *connection, bound, expired bool, err error) {
	if expired && limitOf(err, bound) == "" {
		err = fmt.Errorf("%w: %w", os.ErrDeadlineExceeded, err)
	}
	s.readEnded(c, bound, err)
}
