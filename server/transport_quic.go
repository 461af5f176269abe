package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/quic-go/quic-go"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/net/wire"
)

// QUIC transport settings (PROTOCOL.md §9-§10).
const (
	// QUICProtocol is the ALPN name Strata's QUIC listener offers. Iggy
	// sets none, but QUIC (RFC 9001 §8.1) and quic-go require one, so
	// clients must offer it.
	QUICProtocol        = "iggy"
	quicKeepAlivePeriod = 10 * time.Second
	quicMaxIdleTimeout  = 30 * time.Second
	// quicStreamTimeout closes a stream that sends no whole request.
	quicStreamTimeout = 60 * time.Second
	// quicCloseProtocolViolation and quicCloseShutdown are the connection
	// close codes of §10.
	quicCloseProtocolViolation quic.ApplicationErrorCode = 0x1004
	quicCloseShutdown          quic.ApplicationErrorCode = 0x1003
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
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serveQUIC(qc)
			}()
		}
	}()
	s.log.Info("listening", zap.String("transport", "quic"), zap.String("address", *bound))
	return nil
}

// serveQUIC serves the streams of one QUIC connection in order.
func (s *Server) serveQUIC(qc *quic.Conn) {
	c := &connection{id: s.nextConnID.Add(1), transport: transportQUIC, address: qc.RemoteAddr().String(), lastSeen: s.now(), shard: s.assignShard()}
	c.closeFn = func() { _ = qc.CloseWithError(quicCloseShutdown, "server shutting down") }
	s.initBuffers(c)
	defer c.releaseBuffers()
	s.addConn(c)
	defer s.removeConn(c)
	for {
		stream, err := qc.AcceptStream(context.Background())
		if err != nil {
			return
		}
		_ = stream.SetDeadline(time.Now().Add(quicStreamTimeout))
		header, body, err := wire.ReadFrameLimit(stream, c.frameBuf.data, s.cfg.MessageBus.MaxMessageSize)
		if err != nil {
			stream.CancelRead(0)
			_ = qc.CloseWithError(quicCloseProtocolViolation, "malformed frame")
			return
		}
		// The request is whole: stop reading so the stream completes even
		// when the client's FIN arrives later (one stream at a time).
		stream.CancelRead(0)
		if n := len(header) + len(body); n > len(c.frameBuf.data) && n <= connFrameBufferKeepMax {
			// The reader allocated for this frame; take a pooled buffer
			// that fits frames of this size from now on.
			c.frameBuf.grow(n)
		}
		reply, keep := s.handleFrame(c, header, body)
		if reply.head != nil {
			c.out = reply.join(c.out)
			_, err := stream.Write(c.out)
			c.keepScratch()
			if err != nil {
				return
			}
		}
		_ = stream.Close()
		if !keep {
			return
		}
	}
}
