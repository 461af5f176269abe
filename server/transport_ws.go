package server

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/http"

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
	srv := &http.Server{Handler: http.HandlerFunc(s.serveWebSocket), ReadHeaderTimeout: httpReadHeaderTimeout}
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
func (s *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(int64(s.cfg.MessageBus.MaxMessageSize))
	c := &connection{id: s.nextConnID.Add(1), transport: transportWebSocket, address: r.RemoteAddr, lastSeen: s.now(), shard: s.assignShard()}
	s.initBuffers(c)
	defer c.releaseBuffers()
	s.addConn(c)
	defer s.removeConn(c)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c.closeFn = func() { _ = ws.CloseNow() }
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageBinary || len(data) < wire.HeaderSize ||
			binary.LittleEndian.Uint32(data[48:]) != uint32(len(data)) {
			_ = ws.Close(websocket.StatusUnsupportedData, "one binary protocol frame per message")
			return
		}
		if wire.PeekCommand(data) >= wire.CommandInvalidFrom {
			_ = ws.Close(websocket.StatusProtocolError, "invalid command byte")
			return
		}
		reply, keep := s.handleFrame(c, data[:wire.HeaderSize], data[wire.HeaderSize:])
		if !keep {
			_ = ws.Close(websocket.StatusNormalClosure, "")
			return
		}
		if reply.head == nil {
			continue
		}
		// One binary message per frame: header and body joined.
		c.out = reply.join(c.out)
		writeCtx, cancelWrite := context.WithTimeout(ctx, connWriteTimeout)
		err = ws.Write(writeCtx, websocket.MessageBinary, c.out)
		cancelWrite()
		c.keepScratch()
		if err != nil {
			return
		}
	}
}
