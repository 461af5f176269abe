package client

import (
	"crypto/tls"
	"time"

	"github.com/stratabroker/strata/net/wire"
)

// Limits and defaults of the client, named as STYLE.md rule 5 asks.
const (
	// DefaultAddress is the TCP address of a default server.
	DefaultAddress = "127.0.0.1:8090"
	// SDKName is what the client announces at login (§2.3).
	SDKName = wire.SDKName
	// SDKVersion is the client's version string announced at login.
	SDKVersion = "0.1.0"
	// HeartbeatInterval is the ping period the Iggy SDKs use (§2.6).
	HeartbeatInterval = 5 * time.Second
	// transientRetriesMax bounds replays after 57/58 answers.
	transientRetriesMax = 10
	// transientBackoffDefault is the first pause between transient retries;
	// each retry doubles it up to transientBackoffMax.
	transientBackoffDefault = 20 * time.Millisecond
	transientBackoffMax     = 1 * time.Second
	// dialTimeoutDefault bounds the TCP connect when ctx has no deadline.
	dialTimeoutDefault = 10 * time.Second
)

// Option configures Dial.
type Option func(*options)

type options struct {
	username, password string
	token              string
	heartbeat          time.Duration
	onHeartbeatError   func(error)
	backoff            time.Duration
	dialTimeout        time.Duration
	sdkName            string
	sdkVersion         string
	protocolVersion    uint32
	stampChecksums     bool
	transport          Transport
	tlsConfig          *tls.Config
	quic               bool
}

func defaultOptions() options {
	return options{
		backoff:         transientBackoffDefault,
		dialTimeout:     dialTimeoutDefault,
		sdkName:         SDKName,
		sdkVersion:      SDKVersion,
		protocolVersion: wire.ProtocolVersion,
		stampChecksums:  true,
	}
}

// WithCredentials makes Dial log in with a username and password (§2.3)
// right after connecting, and log in again after a reconnect.
func WithCredentials(username, password string) Option {
	return func(o *options) { o.username, o.password, o.token = username, password, "" }
}

// WithToken makes Dial log in with a personal access token.
func WithToken(token string) Option {
	return func(o *options) { o.token, o.username, o.password = token, "", "" }
}

// WithHeartbeat pings the server every interval while the client is idle
// (the Iggy SDKs use 5 s, HeartbeatInterval). onError, if not nil, receives
// every failed ping. Zero disables the heartbeat (the default).
func WithHeartbeat(interval time.Duration, onError func(error)) Option {
	return func(o *options) { o.heartbeat, o.onHeartbeatError = interval, onError }
}

// WithTransientBackoff sets the first pause before replaying a request the
// server answered with 57 or 58 (doubling up to 1 s). Zero retries at once.
func WithTransientBackoff(d time.Duration) Option {
	return func(o *options) { o.backoff = d }
}

// WithDialTimeout bounds the connect (and TLS / WebSocket / QUIC
// handshake) when the context has no deadline.
func WithDialTimeout(d time.Duration) Option {
	return func(o *options) { o.dialTimeout = d }
}

// WithSDK sets the SDK name and version announced at login.
func WithSDK(name, version string) Option {
	return func(o *options) { o.sdkName, o.sdkVersion = name, version }
}

// WithProtocolVersion overrides the packed protocol version announced at
// login (tests of the server's version window use it).
func WithProtocolVersion(v uint32) Option {
	return func(o *options) { o.protocolVersion = v }
}

// WithRequestChecksums turns stamping of request_checksum on metadata ops,
// Register and Logout on or off (on by default, as the Rust SDK does).
func WithRequestChecksums(on bool) Option {
	return func(o *options) { o.stampChecksums = on }
}

// WithTransport selects the binary transport when the address has no
// scheme (an address scheme takes precedence).
func WithTransport(t Transport) Option {
	return func(o *options) { o.transport = t }
}

// WithTLS sets the TLS settings of the tls, wss and quic transports and,
// for a plain host:port address, selects TLS over TCP. A nil config uses
// the system roots. The config is cloned; ServerName defaults to the
// address's host.
func WithTLS(cfg *tls.Config) Option {
	return func(o *options) {
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		o.tlsConfig = cfg
	}
}

// WithQUIC selects QUIC (one stream per request, ALPN "iggy") for a plain
// host:port address, with cfg as its TLS settings (nil: system roots).
func WithQUIC(cfg *tls.Config) Option {
	return func(o *options) {
		o.quic = true
		if cfg != nil {
			o.tlsConfig = cfg
		}
	}
}
