package client_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/server/httpapi"
)

// suiteClient is what the shared transport suite needs of a client; the
// binary Client and the HTTPClient both provide it.
type suiteClient interface {
	Ping(ctx context.Context) error
	GetMe(ctx context.Context) (*client.ClientDetails, error)
	GetStats(ctx context.Context) (*client.Stats, error)
	CreateStream(ctx context.Context, name string) (*client.StreamDetails, error)
	GetStream(ctx context.Context, stream client.Identifier) (*client.StreamDetails, error)
	GetStreams(ctx context.Context) ([]client.Stream, error)
	UpdateStream(ctx context.Context, stream client.Identifier, name string) error
	DeleteStream(ctx context.Context, stream client.Identifier) error
	CreateTopic(ctx context.Context, stream client.Identifier, name string, partitions uint32, options client.Options) (*client.TopicDetails, error)
	GetTopic(ctx context.Context, stream, topic client.Identifier) (*client.TopicDetails, error)
	GetTopics(ctx context.Context, stream client.Identifier) ([]client.Topic, error)
	DeleteTopic(ctx context.Context, stream, topic client.Identifier) error
	CreatePartitions(ctx context.Context, stream, topic client.Identifier, count uint32) error
	SendMessages(ctx context.Context, stream, topic client.Identifier, partitioning client.Partitioning, messages []client.Message) ([]client.SendConfirmation, error)
	PollMessages(ctx context.Context, req client.PollRequest) (*client.PolledMessages, error)
	StoreConsumerOffset(ctx context.Context, consumer client.Consumer, stream, topic client.Identifier, partition uint32, offset uint64) error
	GetConsumerOffset(ctx context.Context, consumer client.Consumer, stream, topic client.Identifier, partition uint32) (*client.ConsumerOffset, error)
	CreateUser(ctx context.Context, username, password string, status uint8, permissions *client.Permissions) (*client.UserDetails, error)
	DeleteUser(ctx context.Context, user client.Identifier) error
	CreatePersonalAccessToken(ctx context.Context, name string, expiryMicros uint64) (string, error)
	GetPersonalAccessTokens(ctx context.Context) ([]client.PersonalAccessToken, error)
	DeletePersonalAccessToken(ctx context.Context, name string) error
	Close() error
}

// transportCase is one transport under test: dial connects and logs in
// with the given login option (WithCredentials or WithToken).
type transportCase struct {
	name string
	// transport is the ClientInfo transport code the server should report.
	transport uint8
	dial      func(ctx context.Context, login client.Option) (suiteClient, error)
}

// startBroker starts a real broker in-process over a temporary data
// directory with the given STRATA_ overrides and returns its [bound]
// addresses.
func startBroker(t *testing.T, env ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	environ := append([]string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"}, env...)
	if engine := os.Getenv("STRATA_SYSTEM_IO_ENGINE"); engine != "" {
		environ = append(environ, "STRATA_SYSTEM_IO_ENGINE="+engine)
	}
	cfg, err := config.Load("", environ)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Logger: zap.NewNop(),
		Root: server.RootCredentials{Username: "iggy", Password: "iggy"},
		HTTP: func(s *server.Server) (http.Handler, error) { return httpapi.New(s, httpapi.Config{}) }})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	data, err := os.ReadFile(filepath.Join(dir, "runtime", "current_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Bound map[string]string `toml:"bound"`
	}
	if _, err := toml.Decode(string(data), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Bound
}

// binaryDial dials the binary Client at address with options.
func binaryDial(address string, opts ...client.Option) func(context.Context, client.Option) (suiteClient, error) {
	return func(ctx context.Context, login client.Option) (suiteClient, error) {
		all := append([]client.Option{login, client.WithTransientBackoff(0)}, opts...)
		return client.Dial(ctx, address, all...)
	}
}

// httpDial dials the HTTPClient at baseURL with options.
func httpDial(baseURL string, opts ...client.Option) func(context.Context, client.Option) (suiteClient, error) {
	return func(ctx context.Context, login client.Option) (suiteClient, error) {
		return client.DialHTTP(ctx, baseURL, append([]client.Option{login}, opts...)...)
	}
}

// developmentCA writes a development CA and server certificate (as `make
// certs` does) and returns the directory and a TLS config that trusts the
// CA.
func developmentCA(t *testing.T) (string, *tls.Config) {
	t.Helper()
	dir := t.TempDir()
	if err := server.WriteDevelopmentCertificates(dir); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, server.DevCAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("development CA does not parse")
	}
	return dir, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// quicServerCompletesStreams records whether the broker's QUIC listener
// finishes each request stream's receive side. Until it does, a client
// FIN that arrives in a later packet than the frame's last bytes leaves
// the stream open on the server, and with one incoming stream allowed the
// next request can never open its stream (the request hangs). Large
// frames make that nearly certain, small ones under load occasionally, so
// the QUIC cases are skipped until server/transport_quic.go calls
// stream.CancelRead (or reads to io.EOF) after reading the frame. Set to
// true with that fix.
const quicServerCompletesStreams = true

// TestTransports runs the shared client suite over every transport, each
// against its own real broker (so each starts from an empty catalogue and
// its own failed-login budget) with only that transport's listener on
// 127.0.0.1:0. Every TLS connection verifies the server certificate
// against a development CA.
func TestTransports(t *testing.T) {
	certs, trusted := developmentCA(t)
	cert, key := filepath.Join(certs, server.DevServerCertFile), filepath.Join(certs, server.DevServerKeyFile)
	quicEnv := []string{"STRATA_QUIC_ENABLED=true", "STRATA_QUIC_ADDRESS=127.0.0.1:0",
		"STRATA_QUIC_CERTIFICATE_CERT_FILE=" + cert, "STRATA_QUIC_CERTIFICATE_KEY_FILE=" + key}
	tcpTLSEnv := []string{"STRATA_TCP_TLS_ENABLED=true", "STRATA_TCP_TLS_CERT_FILE=" + cert, "STRATA_TCP_TLS_KEY_FILE=" + key}
	wsEnv := []string{"STRATA_WEBSOCKET_ENABLED=true", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:0"}
	wssEnv := append([]string{"STRATA_WEBSOCKET_TLS_ENABLED=true", "STRATA_WEBSOCKET_TLS_CERT_FILE=" + cert,
		"STRATA_WEBSOCKET_TLS_KEY_FILE=" + key}, wsEnv...)
	httpEnv := []string{"STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0"}
	httpsEnv := append([]string{"STRATA_HTTP_TLS_ENABLED=true", "STRATA_HTTP_TLS_CERT_FILE=" + cert,
		"STRATA_HTTP_TLS_KEY_FILE=" + key}, httpEnv...)
	cases := []struct {
		name      string
		transport uint8
		env       []string
		dial      func(bound map[string]string) func(context.Context, client.Option) (suiteClient, error)
	}{
		{"tcp", wire.TransportTCP, nil, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial(b["tcp"])
		}},
		{"tcp-scheme", wire.TransportTCP, nil, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial("tcp://" + b["tcp"])
		}},
		{"tls", wire.TransportTCP, tcpTLSEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial(b["tcp"], client.WithTLS(trusted))
		}},
		{"tls-scheme", wire.TransportTCP, tcpTLSEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial("tls://"+b["tcp"], client.WithTLS(trusted))
		}},
		{"quic", wire.TransportQUIC, quicEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial(b["quic"], client.WithQUIC(trusted))
		}},
		{"quic-scheme", wire.TransportQUIC, quicEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial("quic://"+b["quic"], client.WithTLS(trusted))
		}},
		{"ws", wire.TransportWebSocket, wsEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial("ws://" + b["websocket"])
		}},
		{"wss", wire.TransportWebSocket, wssEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return binaryDial("wss://"+b["websocket"], client.WithTLS(trusted))
		}},
		{"http", wire.TransportHTTP, httpEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return httpDial("http://" + b["http"])
		}},
		{"https", wire.TransportHTTP, httpsEnv, func(b map[string]string) func(context.Context, client.Option) (suiteClient, error) {
			return httpDial("https://"+b["http"], client.WithTLS(trusted))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.transport == wire.TransportQUIC && !quicServerCompletesStreams {
				t.Skip("the QUIC listener leaves request streams half-open (see quicServerCompletesStreams)")
			}
			bound := startBroker(t, c.env...)
			runSuite(t, transportCase{name: c.name, transport: c.transport, dial: c.dial(bound)})
		})
	}
}

// TestTransportFailures: a plaintext client on a TLS port and a TLS client
// that does not trust the server certificate fail promptly with
// ErrConnectionLost, on every TLS transport.
func TestTransportFailures(t *testing.T) {
	certs, _ := developmentCA(t)
	cert, key := filepath.Join(certs, server.DevServerCertFile), filepath.Join(certs, server.DevServerKeyFile)
	bound := startBroker(t, "STRATA_TCP_TLS_ENABLED=true", "STRATA_TCP_TLS_CERT_FILE="+cert, "STRATA_TCP_TLS_KEY_FILE="+key,
		"STRATA_WEBSOCKET_ENABLED=true", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:0",
		"STRATA_WEBSOCKET_TLS_ENABLED=true", "STRATA_WEBSOCKET_TLS_CERT_FILE="+cert, "STRATA_WEBSOCKET_TLS_KEY_FILE="+key,
		"STRATA_QUIC_ENABLED=true", "STRATA_QUIC_ADDRESS=127.0.0.1:0",
		"STRATA_QUIC_CERTIFICATE_CERT_FILE="+cert, "STRATA_QUIC_CERTIFICATE_KEY_FILE="+key)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := client.Dial(ctx, bound["tcp"], client.WithCredentials("iggy", "iggy")); !errors.Is(err, client.ErrConnectionLost) || ctx.Err() != nil {
		t.Fatalf("plaintext login on the TLS port: %v, want a prompt ErrConnectionLost", err)
	}
	if _, err := client.Dial(ctx, "ws://"+bound["websocket"], client.WithCredentials("iggy", "iggy")); !errors.Is(err, client.ErrConnectionLost) || ctx.Err() != nil {
		t.Fatalf("plain WebSocket on the WSS port: %v, want a prompt ErrConnectionLost", err)
	}
	for _, address := range []string{"tls://" + bound["tcp"], "wss://" + bound["websocket"], "quic://" + bound["quic"]} {
		_, err := client.Dial(ctx, address, client.WithCredentials("iggy", "iggy"))
		var unknown x509.UnknownAuthorityError
		if !errors.Is(err, client.ErrConnectionLost) || !errors.As(err, &unknown) {
			t.Fatalf("%s without the CA: %v, want an unknown-authority failure", address, err)
		}
	}
	if _, err := client.Dial(ctx, "carrier-pigeon://"+bound["tcp"]); !errors.Is(err, client.ErrUnknownTransport) {
		t.Fatalf("unknown scheme: %v, want ErrUnknownTransport", err)
	}
}

// runSuite runs every scenario over one transport. Scenarios share the
// broker, so each uses its own stream names (prefixed by the transport).
func runSuite(t *testing.T, tc transportCase) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	root, err := tc.dial(ctx, client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer func() {
		if err := root.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	prefix := tc.name + "-"
	t.Run("ping-me-stats", func(t *testing.T) { scenarioPing(ctx, t, tc, root) })
	t.Run("stream-topic-lifecycle", func(t *testing.T) { scenarioLifecycle(ctx, t, root, prefix) })
	t.Run("send-poll", func(t *testing.T) { scenarioSendPoll(ctx, t, root, prefix) })
	t.Run("offsets", func(t *testing.T) { scenarioOffsets(ctx, t, root, prefix) })
	t.Run("error-codes", func(t *testing.T) { scenarioErrors(ctx, t, root, prefix) })
	t.Run("permissions", func(t *testing.T) { scenarioPermissions(ctx, t, tc, root, prefix) })
	t.Run("personal-access-tokens", func(t *testing.T) { scenarioTokens(ctx, t, tc, root, prefix) })
}

func scenarioPing(ctx context.Context, t *testing.T, tc transportCase, c suiteClient) {
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	me, err := c.GetMe(ctx)
	if err != nil {
		t.Fatalf("me: %v", err)
	}
	if me.UserID != 0 || me.ClientID == 0 || me.Transport != tc.transport {
		t.Fatalf("me as root: %+v, want user 0 over transport %d", me, tc.transport)
	}
	stats, err := c.GetStats(ctx)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	if stats.ServerVersion == "" || stats.ClientsCount == 0 {
		t.Fatalf("stats: %+v", stats)
	}
}

func scenarioLifecycle(ctx context.Context, t *testing.T, c suiteClient, prefix string) {
	name := prefix + "life"
	s, err := c.CreateStream(ctx, name)
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	if s.Name != name {
		t.Fatalf("created stream %+v", s)
	}
	got, err := c.GetStream(ctx, client.Named(name))
	if err != nil || got.ID != s.ID {
		t.Fatalf("get stream by name: %+v, %v (want id %d)", got, err, s.ID)
	}
	streams, err := c.GetStreams(ctx)
	if err != nil || !hasStream(streams, name) {
		t.Fatalf("list streams lacks %s: %v", name, err)
	}
	topic, err := c.CreateTopic(ctx, client.ID(s.ID), "t", 2, nil)
	if err != nil {
		t.Fatalf("create topic: %v", err)
	}
	if topic.Name != "t" || topic.PartitionsCount != 2 {
		t.Fatalf("created topic %+v", topic)
	}
	if err := c.CreatePartitions(ctx, client.ID(s.ID), client.Named("t"), 1); err != nil {
		t.Fatalf("create partitions: %v", err)
	}
	td, err := c.GetTopic(ctx, client.Named(name), client.ID(topic.ID))
	if err != nil || td.PartitionsCount != 3 || len(td.Partitions) != 3 {
		t.Fatalf("topic after adding a partition: %+v, %v", td, err)
	}
	topics, err := c.GetTopics(ctx, client.ID(s.ID))
	if err != nil || len(topics) != 1 || topics[0].Name != "t" {
		t.Fatalf("list topics: %+v, %v", topics, err)
	}
	renamed := name + "-renamed"
	if err := c.UpdateStream(ctx, client.ID(s.ID), renamed); err != nil {
		t.Fatalf("rename stream: %v", err)
	}
	if got, err := c.GetStream(ctx, client.ID(s.ID)); err != nil || got.Name != renamed || len(got.Topics) != 1 {
		t.Fatalf("renamed stream: %+v, %v", got, err)
	}
	if err := c.DeleteTopic(ctx, client.ID(s.ID), client.ID(topic.ID)); err != nil {
		t.Fatalf("delete topic: %v", err)
	}
	if _, err := c.GetTopic(ctx, client.ID(s.ID), client.ID(topic.ID)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get deleted topic: %v, want ErrNotFound", err)
	}
	if err := c.DeleteStream(ctx, client.ID(s.ID)); err != nil {
		t.Fatalf("delete stream: %v", err)
	}
	if _, err := c.GetStream(ctx, client.ID(s.ID)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get deleted stream: %v, want ErrNotFound", err)
	}
}

func hasStream(streams []client.Stream, name string) bool {
	for _, s := range streams {
		if s.Name == name {
			return true
		}
	}
	return false
}

// createTopic makes a stream with one topic of partitions partitions.
func createTopic(ctx context.Context, t *testing.T, c suiteClient, stream string, partitions uint32) {
	t.Helper()
	if _, err := c.CreateStream(ctx, stream); err != nil {
		t.Fatalf("create stream %s: %v", stream, err)
	}
	if _, err := c.CreateTopic(ctx, client.Named(stream), "t", partitions, nil); err != nil {
		t.Fatalf("create topic: %v", err)
	}
}

func scenarioSendPoll(ctx context.Context, t *testing.T, c suiteClient, prefix string) {
	stream := prefix + "sendpoll"
	createTopic(ctx, t, c, stream, 2)
	sent := make([]client.Message, 6)
	for i := range sent {
		sent[i] = client.Message{
			ID:      client.MessageID{Low: uint64(1000 + i), High: uint64(i)},
			Payload: []byte(fmt.Sprintf("payload-%d-%s", i, bytes.Repeat([]byte{'x'}, i*10))),
		}
		if i == len(sent)-1 {
			// A frame far larger than a QUIC packet or a WebSocket read
			// buffer.
			sent[i].Payload = bytes.Repeat([]byte("0123456789abcdef"), 20_000)
		}
		if i%2 == 0 {
			sent[i].Headers = []client.Header{client.StringHeader("k", fmt.Sprintf("v%d", i)),
				{Key: client.StringValue("n"), Value: client.Uint32Value(uint32(i))}}
		}
	}
	if _, err := c.SendMessages(ctx, client.Named(stream), client.Named("t"), client.PartitionID(1), sent[:3]); err != nil {
		t.Fatalf("send: %v", err)
	}
	if _, err := c.SendMessages(ctx, client.Named(stream), client.Named("t"), client.PartitionID(1), sent[3:]); err != nil {
		t.Fatalf("second send: %v", err)
	}
	polled, err := c.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.Named(stream), Topic: client.Named("t"), Partition: 1, Strategy: client.PollOffset(0), Count: 100})
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	if polled.PartitionID != 1 || polled.CurrentOffset != uint64(len(sent)-1) || len(polled.Messages) != len(sent) {
		t.Fatalf("poll: partition %d current %d, %d messages", polled.PartitionID, polled.CurrentOffset, len(polled.Messages))
	}
	for i, m := range polled.Messages {
		want := sent[i]
		if m.Offset != uint64(i) || m.ID != want.ID || !bytes.Equal(m.Payload, want.Payload) {
			t.Fatalf("message %d: offset %d id %v payload %q, want id %v payload %q", i, m.Offset, m.ID, m.Payload, want.ID, want.Payload)
		}
		if !sameHeaders(m.Headers, want.Headers) {
			t.Fatalf("message %d headers %+v, want %+v", i, m.Headers, want.Headers)
		}
	}
	// The other partition stays empty; a poll from the middle starts there.
	empty, err := c.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.Named(stream), Topic: client.Named("t"), Partition: 0, Strategy: client.PollOffset(0), Count: 10})
	if err != nil || len(empty.Messages) != 0 {
		t.Fatalf("poll of the empty partition: %v, %+v", err, empty)
	}
	mid, err := c.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.Named(stream), Topic: client.Named("t"), Partition: 1, Strategy: client.PollOffset(3), Count: 1})
	if err != nil || len(mid.Messages) != 1 || mid.Messages[0].Offset != 3 || !bytes.Equal(mid.Messages[0].Payload, sent[3].Payload) {
		t.Fatalf("poll from offset 3: %v, %+v", err, mid)
	}
}

// sameHeaders compares header lists by key and value kind and bytes.
func sameHeaders(got, want []client.Header) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Key.Kind != want[i].Key.Kind || !bytes.Equal(got[i].Key.Data, want[i].Key.Data) ||
			got[i].Value.Kind != want[i].Value.Kind || !bytes.Equal(got[i].Value.Data, want[i].Value.Data) {
			return false
		}
	}
	return true
}

func scenarioOffsets(ctx context.Context, t *testing.T, c suiteClient, prefix string) {
	stream := prefix + "offsets"
	createTopic(ctx, t, c, stream, 1)
	msgs := make([]client.Message, 6)
	for i := range msgs {
		msgs[i] = client.Message{ID: client.MessageID{Low: uint64(i + 1)}, Payload: []byte{byte('a' + i)}}
	}
	if _, err := c.SendMessages(ctx, client.Named(stream), client.Named("t"), client.PartitionID(0), msgs); err != nil {
		t.Fatalf("send: %v", err)
	}
	consumer := client.IndividualConsumer(client.ID(7))
	if err := c.StoreConsumerOffset(ctx, consumer, client.Named(stream), client.Named("t"), 0, 2); err != nil {
		t.Fatalf("store offset: %v", err)
	}
	off, err := c.GetConsumerOffset(ctx, consumer, client.Named(stream), client.Named("t"), 0)
	if err != nil || off.StoredOffset != 2 || off.CurrentOffset != 5 {
		t.Fatalf("stored offset: %+v, %v", off, err)
	}
	next, err := c.PollMessages(ctx, client.PollRequest{Consumer: consumer, Stream: client.Named(stream), Topic: client.Named("t"),
		Partition: 0, Strategy: client.PollNext(), Count: 2, AutoCommit: true})
	if err != nil || len(next.Messages) != 2 || next.Messages[0].Offset != 3 || next.Messages[1].Offset != 4 {
		t.Fatalf("poll next after offset 2: %v, %+v", err, next)
	}
	off, err = c.GetConsumerOffset(ctx, consumer, client.Named(stream), client.Named("t"), 0)
	if err != nil || off.StoredOffset != 4 {
		t.Fatalf("offset after auto-commit: %+v, %v", off, err)
	}
	other := client.IndividualConsumer(client.ID(8))
	if off, err := c.GetConsumerOffset(ctx, other, client.Named(stream), client.Named("t"), 0); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("offset of a consumer that stored none: %+v, %v", off, err)
	}
}

func scenarioErrors(ctx context.Context, t *testing.T, c suiteClient, prefix string) {
	stream := prefix + "errors"
	createTopic(ctx, t, c, stream, 1)
	if _, err := c.CreateStream(ctx, stream); client.CodeOf(err) != wire.ErrStreamNameAlreadyExists {
		t.Fatalf("duplicate stream: %v, want code %d", err, wire.ErrStreamNameAlreadyExists)
	}
	if _, err := c.CreateTopic(ctx, client.Named(stream), "t", 1, nil); client.CodeOf(err) == 0 {
		t.Fatalf("duplicate topic: %v, want a server error code", err)
	}
	missing := client.Named(prefix + "no-such-stream")
	if err := c.DeleteStream(ctx, missing); client.CodeOf(err) != wire.ErrStreamIdNotFound {
		t.Fatalf("delete missing stream: %v, want code %d", err, wire.ErrStreamIdNotFound)
	}
	_, err := c.SendMessages(ctx, client.Named(stream), client.Named("t"), client.PartitionID(9),
		[]client.Message{{Payload: []byte("x")}})
	if client.CodeOf(err) == 0 {
		t.Fatalf("send to a missing partition: %v, want a server error code", err)
	}
	var apiErr *client.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("server error %v is not a *client.Error", err)
	}
}

func scenarioPermissions(ctx context.Context, t *testing.T, tc transportCase, root suiteClient, prefix string) {
	stream := prefix + "perms"
	createTopic(ctx, t, root, stream, 1)
	username := prefix + "reader"
	perms := &client.Permissions{Global: client.GlobalPermissions{ReadStreams: true, ReadTopics: true, PollMessages: true}}
	u, err := root.CreateUser(ctx, username, "secret-pass", client.UserActive, perms)
	if err != nil {
		t.Fatalf("create user: %v", err)
	}
	if u.Username != username || u.Permissions == nil || !u.Permissions.Global.ReadStreams || u.Permissions.Global.ManageStreams {
		t.Fatalf("created user %+v perms %+v", u, u.Permissions)
	}
	if _, err := tc.dial(ctx, client.WithCredentials(username, "wrong-pass")); client.CodeOf(err) != wire.ErrInvalidCredentials {
		t.Fatalf("login with a wrong password: %v, want code %d", err, wire.ErrInvalidCredentials)
	}
	reader, err := tc.dial(ctx, client.WithCredentials(username, "secret-pass"))
	if err != nil {
		t.Fatalf("login as reader: %v", err)
	}
	defer func() {
		if err := reader.Close(); err != nil {
			t.Errorf("close reader: %v", err)
		}
	}()
	if _, err := reader.GetStream(ctx, client.Named(stream)); err != nil {
		t.Fatalf("reader reads a stream: %v", err)
	}
	if _, err := reader.CreateStream(ctx, prefix+"forbidden"); client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("reader creates a stream: %v, want code %d", err, wire.ErrUnauthorized)
	}
	_, err = reader.SendMessages(ctx, client.Named(stream), client.Named("t"), client.PartitionID(0), []client.Message{{Payload: []byte("no")}})
	if client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("reader sends: %v, want code %d", err, wire.ErrUnauthorized)
	}
	if _, err := root.GetStream(ctx, client.Named(prefix+"forbidden")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("the refused stream exists: %v", err)
	}
	polled, err := reader.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.Named(stream), Topic: client.Named("t"), Strategy: client.PollFirst(), Count: 10})
	if err != nil || len(polled.Messages) != 0 {
		t.Fatalf("reader polls: %v, %+v", err, polled)
	}
	me, err := reader.GetMe(ctx)
	if err != nil || me.UserID != u.ID {
		t.Fatalf("reader's me: %+v, %v (want user %d)", me, err, u.ID)
	}
	if err := root.DeleteUser(ctx, client.ID(u.ID)); err != nil {
		t.Fatalf("delete user: %v", err)
	}
}

func scenarioTokens(ctx context.Context, t *testing.T, tc transportCase, c suiteClient, prefix string) {
	name := prefix + "pat"
	token, err := c.CreatePersonalAccessToken(ctx, name, 0)
	if err != nil || token == "" {
		t.Fatalf("create PAT: %q, %v", token, err)
	}
	list, err := c.GetPersonalAccessTokens(ctx)
	if err != nil || !hasToken(list, name) {
		t.Fatalf("list PATs lacks %s: %+v, %v", name, list, err)
	}
	withToken, err := tc.dial(ctx, client.WithToken(token))
	if err != nil {
		t.Fatalf("login with the PAT: %v", err)
	}
	me, err := withToken.GetMe(ctx)
	if err != nil || me.UserID != 0 {
		t.Fatalf("me over the PAT login: %+v, %v", me, err)
	}
	if err := withToken.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := c.DeletePersonalAccessToken(ctx, name); err != nil {
		t.Fatalf("delete PAT: %v", err)
	}
	if _, err := tc.dial(ctx, client.WithToken(token)); client.CodeOf(err) == 0 {
		t.Fatalf("login with a deleted PAT: %v, want a server error code", err)
	}
	list, err = c.GetPersonalAccessTokens(ctx)
	if err != nil || hasToken(list, name) {
		t.Fatalf("deleted PAT still listed: %+v, %v", list, err)
	}
}

func hasToken(list []client.PersonalAccessToken, name string) bool {
	for _, p := range list {
		if p.Name == name {
			return true
		}
	}
	return false
}

// TestDialNothingListening: a connection that is never made is a
// *DialError (ErrCannotConnect, also ErrConnectionLost) naming the address
// and the cause, on TCP, WebSocket and QUIC. QUIC learns of the closed
// port from the ICMP answer (connection refused) instead of waiting out
// its 5 s handshake timeout.
func TestDialNothingListening(t *testing.T) {
	addr := closedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, tc := range []struct {
		address   string
		transport client.Transport
	}{{addr, client.TransportTCP}, {"ws://" + addr, client.TransportWebSocket}, {"quic://" + addr, client.TransportQUIC}} {
		var opts []client.Option
		if tc.transport == client.TransportQUIC {
			opts = append(opts, client.WithTLS(&tls.Config{InsecureSkipVerify: true}))
		}
		start := time.Now()
		_, err := client.Dial(ctx, tc.address, opts...)
		t.Logf("%s: %v after %s", tc.address, err, time.Since(start))
		var de *client.DialError
		if !errors.As(err, &de) || de.Address != addr || de.Transport != tc.transport {
			t.Fatalf("%s: %v, want a *DialError for %s over %s", tc.address, err, addr, tc.transport)
		}
		if !errors.Is(err, client.ErrCannotConnect) || !errors.Is(err, client.ErrConnectionLost) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("%s: %v, want ErrCannotConnect, ErrConnectionLost and ECONNREFUSED", tc.address, err)
		}
		if want := "cannot connect to " + addr + " over " + string(tc.transport) + ": "; !strings.HasPrefix(err.Error(), want) ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("%s: message %q, want %q... connection refused", tc.address, err, want)
		}
	}
}

// closedPort returns a 127.0.0.1 port that was free for TCP and UDP a
// moment ago.
func closedPort(t *testing.T) string {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		u, uerr := net.ListenPacket("udp", addr)
		_ = l.Close() // probed only
		if uerr != nil {
			continue // UDP port taken: try another
		}
		_ = u.Close() // probed only
		return addr
	}
	t.Fatal("no free port pair")
	return ""
}
