package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/quic-go/quic-go"
)

// Transport names a way of carrying the binary protocol's frames
// (PROTOCOL.md §10). Every transport runs the same lockstep exchange: one
// request frame out, one reply (or eviction) frame back.
type Transport string

// The binary transports Dial understands, by option or by address scheme.
const (
	// TransportTCP is a plain TCP stream of frames (the default).
	TransportTCP Transport = "tcp"
	// TransportTLS is TLS over TCP carrying the same stream of frames.
	TransportTLS Transport = "tls"
	// TransportWebSocket carries one frame per binary WebSocket message.
	TransportWebSocket Transport = "ws"
	// TransportWebSocketTLS is TransportWebSocket over TLS.
	TransportWebSocketTLS Transport = "wss"
	// TransportQUIC opens one bidirectional QUIC stream per request.
	TransportQUIC Transport = "quic"
)

// QUICProtocol is the ALPN name a QUIC client offers (§10).
const QUICProtocol = "iggy"

// quicKeepAlivePeriod keeps an idle QUIC connection (and with it the
// session) alive under the default 30 s idle timeout.
const quicKeepAlivePeriod = 10 * time.Second

// ErrUnknownTransport reports an address scheme or transport name Dial
// does not know.
var ErrUnknownTransport = errors.New("client: unknown transport")

// ParseTransport maps a name ("tcp", "tls", "ws", "wss", "quic") to a
// Transport.
func ParseTransport(name string) (Transport, error) {
	switch t := Transport(strings.ToLower(name)); t {
	case TransportTCP, TransportTLS, TransportWebSocket, TransportWebSocketTLS, TransportQUIC:
		return t, nil
	}
	return "", fmt.Errorf("%w: %q", ErrUnknownTransport, name)
}

// splitAddress separates a "scheme://host:port" address into its transport
// and host:port; a plain host:port is TCP (an explicit option may still
// choose otherwise).
func splitAddress(address string) (Transport, string, error) {
	scheme, rest, ok := strings.Cut(address, "://")
	if !ok {
		return "", address, nil
	}
	t, err := ParseTransport(scheme)
	if err != nil {
		return "", "", err
	}
	return t, strings.TrimSuffix(rest, "/"), nil
}

// resolveTransport picks the transport for address under options o: the
// address scheme wins when present, then WithTransport, then WithQUIC /
// WithTLS, then TCP.
func resolveTransport(address string, o *options) (Transport, string, error) {
	t, hostPort, err := splitAddress(address)
	if err != nil {
		return "", "", err
	}
	if t == "" {
		t = o.transport
	}
	if t == "" {
		switch {
		case o.quic:
			t = TransportQUIC
		case o.tlsConfig != nil:
			t = TransportTLS
		default:
			t = TransportTCP
		}
	}
	return t, hostPort, nil
}

// tlsConfigFor returns a copy of the configured TLS settings (or defaults)
// with ServerName filled from hostPort when empty.
func tlsConfigFor(o *options, hostPort string) *tls.Config {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.tlsConfig != nil {
		cfg = o.tlsConfig.Clone()
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		if host, _, err := net.SplitHostPort(hostPort); err == nil {
			cfg.ServerName = host
		}
	}
	return cfg
}

// dialTransport opens a connection of transport t to hostPort. The
// returned net.Conn carries whole frames: each Write is called with
// exactly one frame.
func dialTransport(ctx context.Context, t Transport, hostPort string, o *options) (net.Conn, error) {
	switch t {
	case TransportTCP, TransportTLS:
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", hostPort)
		if err != nil {
			return nil, err
		}
		if tcp, ok := conn.(*net.TCPConn); ok {
			if err := tcp.SetNoDelay(true); err != nil {
				_ = conn.Close() // abandoned before use
				return nil, fmt.Errorf("client: set TCP_NODELAY: %w", err)
			}
		}
		if t == TransportTCP {
			return conn, nil
		}
		tc := tls.Client(conn, tlsConfigFor(o, hostPort))
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close() // abandoned before use
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		return tc, nil
	case TransportWebSocket, TransportWebSocketTLS:
		return dialWebSocket(ctx, t, hostPort, o)
	case TransportQUIC:
		return dialQUIC(ctx, hostPort, o)
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownTransport, t)
}

// dialWebSocket performs the WebSocket handshake and wraps the connection
// so each Write is one binary message and reads run across messages.
func dialWebSocket(ctx context.Context, t Transport, hostPort string, o *options) (net.Conn, error) {
	scheme := "ws://"
	opts := &websocket.DialOptions{}
	if t == TransportWebSocketTLS {
		scheme = "wss://"
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfigFor(o, hostPort)}}
	}
	ws, _, err := websocket.Dial(ctx, scheme+hostPort, opts)
	if err != nil {
		return nil, err
	}
	// NetConn lifts the read limit; the frame reader enforces MaxFrameSize.
	return websocket.NetConn(context.Background(), ws, websocket.MessageBinary), nil
}

// dialQUIC connects over QUIC with ALPN "iggy".
//
// The UDP socket is connected to the server: the kernel then reports an
// ICMP "port unreachable" as ECONNREFUSED on the next read, and the dial
// fails at once with "connection refused" instead of waiting out the
// QUIC handshake timeout (5 s) when nothing listens. quic-go sees the
// socket through connectedUDP, a plain net.PacketConn: a connected socket
// must not be written to with an address, which quic-go's optimised path
// for *net.UDPConn does.
func dialQUIC(ctx context.Context, hostPort string, o *options) (net.Conn, error) {
	cfg := tlsConfigFor(o, hostPort)
	cfg.NextProtos = []string{QUICProtocol}
	var d net.Dialer
	c, err := d.DialContext(ctx, "udp", hostPort)
	if err != nil {
		return nil, err
	}
	udp, ok := c.(*net.UDPConn)
	if !ok {
		_ = c.Close() // not usable; nothing was sent
		return nil, fmt.Errorf("client: dial udp %s: got a %T", hostPort, c)
	}
	qc, err := quic.Dial(ctx, &connectedUDP{conn: udp}, udp.RemoteAddr(), cfg, &quic.Config{KeepAlivePeriod: quicKeepAlivePeriod})
	if err != nil {
		_ = udp.Close() // the handshake failed; the socket is ours to release
		return nil, err
	}
	return &quicConn{conn: qc, udp: udp}, nil
}

// connectedUDP presents a connected UDP socket to quic-go as a
// net.PacketConn whose only peer is the server.
type connectedUDP struct {
	conn *net.UDPConn
}

func (c *connectedUDP) ReadFrom(b []byte) (int, net.Addr, error) {
	n, err := c.conn.Read(b)
	return n, c.conn.RemoteAddr(), err
}

func (c *connectedUDP) WriteTo(b []byte, _ net.Addr) (int, error) { return c.conn.Write(b) }
func (c *connectedUDP) Close() error                              { return c.conn.Close() }
func (c *connectedUDP) LocalAddr() net.Addr                       { return c.conn.LocalAddr() }
func (c *connectedUDP) SetDeadline(t time.Time) error             { return c.conn.SetDeadline(t) }
func (c *connectedUDP) SetReadDeadline(t time.Time) error         { return c.conn.SetReadDeadline(t) }
func (c *connectedUDP) SetWriteDeadline(t time.Time) error        { return c.conn.SetWriteDeadline(t) }

// SetReadBuffer and SetWriteBuffer let quic-go size the socket buffers.
func (c *connectedUDP) SetReadBuffer(n int) error  { return c.conn.SetReadBuffer(n) }
func (c *connectedUDP) SetWriteBuffer(n int) error { return c.conn.SetWriteBuffer(n) }

// quicConn adapts a QUIC connection to the lockstep net.Conn the client
// drives: Write opens a new stream, writes the whole frame and closes the
// send side; Read reads the reply from that stream (§10: one bidirectional
// stream per request).
type quicConn struct {
	conn *quic.Conn
	// udp is the socket under conn, closed after it.
	udp *net.UDPConn

	mu sync.Mutex
	// Guarded by mu: the current request's stream and the deadline applied
	// to it and to the next stream.
	stream   *quic.Stream
	deadline time.Time
}

// Write opens a stream for one request frame.
func (q *quicConn) Write(frame []byte) (int, error) {
	q.mu.Lock()
	if q.stream != nil {
		// The previous reply was read in full; release the receive side.
		q.stream.CancelRead(0)
		q.stream = nil
	}
	deadline := q.deadline
	q.mu.Unlock()
	ctx := context.Background()
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	stream, err := q.conn.OpenStreamSync(ctx)
	if err != nil {
		return 0, err
	}
	if err := stream.SetDeadline(deadline); err != nil {
		stream.CancelRead(0)
		return 0, err
	}
	q.mu.Lock()
	q.stream = stream
	q.mu.Unlock()
	n, err := stream.Write(frame)
	if err != nil {
		return n, err
	}
	// Close fails only when the server already stopped reading (a
	// STOP_SENDING after it had the whole frame, overtaking our FIN); the
	// reply still follows on the stream, and Read reports it or the
	// failure.
	_ = stream.Close()
	return n, nil
}

// Read reads from the current request's stream.
func (q *quicConn) Read(p []byte) (int, error) {
	q.mu.Lock()
	stream := q.stream
	q.mu.Unlock()
	if stream == nil {
		return 0, fmt.Errorf("%w: QUIC read without a request stream", ErrProtocol)
	}
	return stream.Read(p)
}

// Close closes the QUIC connection.
func (q *quicConn) Close() error {
	err := q.conn.CloseWithError(0, "")
	return errors.Join(err, q.udp.Close())
}

// LocalAddr is the local UDP address.
func (q *quicConn) LocalAddr() net.Addr { return q.conn.LocalAddr() }

// RemoteAddr is the server's UDP address.
func (q *quicConn) RemoteAddr() net.Addr { return q.conn.RemoteAddr() }

// SetDeadline applies t to the current stream and to streams opened later.
func (q *quicConn) SetDeadline(t time.Time) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.deadline = t
	if q.stream != nil {
		return q.stream.SetDeadline(t)
	}
	return nil
}

// SetReadDeadline is SetDeadline (the client sets both together).
func (q *quicConn) SetReadDeadline(t time.Time) error { return q.SetDeadline(t) }

// SetWriteDeadline is SetDeadline (the client sets both together).
func (q *quicConn) SetWriteDeadline(t time.Time) error { return q.SetDeadline(t) }
