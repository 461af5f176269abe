package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"
)

// QUIC transport settings (PROTOCOL.md §9-§10).
const (
	// QUICProtocol is the ALPN name Strata's QUIC listener offers. Iggy
	// sets none, but QUIC (RFC 9001 §8.1) and quic-go require one, so
	// clients must offer it.
	QUICProtocol        = "iggy"
	quicKeepAlivePeriod = 10 * time.Second
	quicMaxIdleTimeout  = 30 * time.Second
	// quicCloseAuthFailed, quicCloseProtocolViolation and
	// quicCloseShutdown are connection close codes of §10;
	// quicCloseConnectionLimit is Strata's own, past connections_max.
	quicCloseAuthFailed        quic.ApplicationErrorCode = 0x1002
	quicCloseProtocolViolation quic.ApplicationErrorCode = 0x1004
	quicCloseShutdown          quic.ApplicationErrorCode = 0x1003
	quicCloseConnectionLimit   quic.ApplicationErrorCode = 0x1005
)

// startQUIC binds the [quic] listener: one bidirectional stream per
// request, one reply frame per stream, at most one stream at a time.
func (s *Server) startQUIC(bound *string) error {
	cert, err := loadCertificate(s.cfg.QUIC.Certificate.CertFile, s.cfg.QUIC.Certificate.KeyFile)
	if err != nil {
		return fmt.Errorf("quic: %w", err)
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{QUICProtocol}, MinVersion: tls.VersionTLS13}
	var ln *quic.Listener
	callErr := s.shards[0].Call(func() { // shard 0 binds the listeners
		ln, err = quic.ListenAddr(s.cfg.QUIC.Address, tlsConf, &quic.Config{
			MaxIncomingStreams:    1,
			MaxIncomingUniStreams: -1,
			KeepAlivePeriod:       quicKeepAlivePeriod,
			MaxIdleTimeout:        quicMaxIdleTimeout,
		})
	})
	if err = errors.Join(callErr, err); err != nil {
		return fmt.Errorf("bind quic %s: %w", s.cfg.QUIC.Address, err)
	}
	s.mu.Lock()
	s.quicListener = ln
	s.mu.Unlock()
	*bound = ln.Addr().String()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			qc, err := ln.Accept(context.Background())
			if err != nil {
				if !errors.Is(err, quic.ErrServerClosed) {
					s.log.Debug("quic accept ended", zap.Error(err))
				}
				return
			}
			if !s.guard.admit(transportQUIC, qc.RemoteAddr().String()) {
				_ = qc.CloseWithError(quicCloseConnectionLimit, "connection limit reached")
				continue
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer s.guard.leave()
				s.serveQUIC(qc)
			}()
		}
	}()
	s.log.Info("listening", zap.String("transport", "quic"), zap.String("address", *bound))
	return nil
}

// serveQUIC serves the streams of one QUIC connection in order.
func (s *Server) serveQUIC(qc *quic.Conn) {
	c := &connection{id: s.nextConnID.Add(1), transport: transportQUIC, address: qc.RemoteAddr().String(), lastSeen: s.now(), shard: s.assignShard(),
		done: make(chan struct{})}
	c.closeFn = func() { _ = qc.CloseWithError(quicCloseShutdown, "server shutting down") }
	s.initBuffers(c)
	defer c.releaseBuffers()
	s.addConn(c)
	defer s.removeConn(c)
	limits := s.guard.limitsFor(transportQUIC)
	for {
		bound, _, _, _ := c.binding()
		lastSeen := c.lastRequest()
		waitCtx, cancelWait := context.Background(), context.CancelFunc(func() {})
		if idle := idleDeadline(bound, lastSeen, limits); !idle.IsZero() {
			waitCtx, cancelWait = context.WithDeadline(waitCtx, idle)
		}
		stream, err := qc.AcceptStream(waitCtx)
		idleExpired := waitCtx.Err() != nil
		cancelWait()
		if err != nil {
			if idleExpired {
				s.guard.stopped(transportQUIC, limitUnauthenticatedIdle, c.address, err)
				_ = qc.CloseWithError(quicCloseAuthFailed, "not logged in")
			}
			return
		}
		deadline := requestDeadline(bound, lastSeen, time.Now(), limits)
		_ = stream.SetReadDeadline(deadline)
		frame, err := s.readRequest(c, stream, bound, limits, deadline)
		if err != nil {
			stream.CancelRead(0)
			s.readEnded(c, bound, err)
			_ = qc.CloseWithError(quicCloseProtocolViolation, "malformed frame")
			return
		}
		// The request is whole: stop reading so the stream completes even
		// when the client's FIN arrives later (one stream at a time).
		stream.CancelRead(0)
		reply, keep := s.handleFrame(c, frame.header, frame.body)
		if reply.head != nil {
			c.out = reply.join(c.out)
			s.releaseRequest(&frame)
			_ = stream.SetWriteDeadline(time.Now().Add(connWriteTimeout))
			_, err := stream.Write(c.out)
			c.keepScratch()
			if err != nil {
				return
			}
		}
		s.releaseRequest(&frame)
		_ = stream.Close()
		if !keep {
			return
		}
	}
}
