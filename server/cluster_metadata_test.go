package server_test

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"go.uber.org/zap"

	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// TestClusterMetadataAdvertisesBoundTransports asks GetClusterMetadata over
// TCP with different transport sets enabled: each enabled transport is
// advertised on the port its listener actually bound (ephemeral :0
// resolved, checked against the [bound] table of current_config.toml), and
// every transport that is off is advertised as port 0, even when its
// configured address carries a port.
func TestClusterMetadataAdvertisesBoundTransports(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		on   map[string]bool
	}{
		{"tcp only, the others configured but off", []string{
			"STRATA_QUIC_ADDRESS=127.0.0.1:8080", "STRATA_HTTP_ADDRESS=127.0.0.1:3000", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:8092"},
			map[string]bool{"tcp": true}},
		{"tcp and websocket", []string{"STRATA_WEBSOCKET_ENABLED=true", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:0",
			"STRATA_QUIC_ADDRESS=127.0.0.1:8080", "STRATA_HTTP_ADDRESS=127.0.0.1:3000"},
			map[string]bool{"tcp": true, "websocket": true}},
		{"every transport", []string{"STRATA_WEBSOCKET_ENABLED=true", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:0",
			"STRATA_QUIC_ENABLED=true", "STRATA_QUIC_ADDRESS=127.0.0.1:0", "STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0"},
			map[string]bool{"tcp": true, "websocket": true, "quic": true, "http": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := startWithHTTP(t, dir, tc.env...)
			var doc struct {
				Bound map[string]string `toml:"bound"`
			}
			if _, err := toml.Decode(readCurrentConfig(t, dir), &doc); err != nil {
				t.Fatal(err)
			}
			c := connectTo(t, srv.TCPAddr().String())
			meta, err := c.GetClusterMetadata(ctx(t))
			if err != nil {
				t.Fatal(err)
			}
			if len(meta.Nodes) != 1 {
				t.Fatalf("nodes: %+v", meta.Nodes)
			}
			node := meta.Nodes[0]
			advertised := map[string]uint16{"tcp": node.TCPPort, "quic": node.QUICPort, "http": node.HTTPPort, "websocket": node.WebSocketPort}
			for transport, port := range advertised {
				bound := doc.Bound[transport]
				if !tc.on[transport] {
					if port != 0 || bound != "" {
						t.Errorf("%s is off: advertised port %d, bound %q", transport, port, bound)
					}
					continue
				}
				_, boundPort, err := net.SplitHostPort(bound)
				if err != nil {
					t.Fatalf("%s bound address %q: %v", transport, bound, err)
				}
				if port == 0 || strconv.Itoa(int(port)) != boundPort {
					t.Errorf("%s: advertised port %d, bound %s", transport, port, bound)
				}
			}
			if node.IP != "127.0.0.1" {
				t.Errorf("node ip %q", node.IP)
			}
			t.Logf("advertised %+v, bound %v", node, doc.Bound)
		})
	}
}

// startWithHTTP starts a broker over dir whose [http] listener, when
// enabled, serves a plain handler (the REST API lives in httpapi).
func startWithHTTP(t *testing.T, dir string, env ...string) *server.Server {
	t.Helper()
	environ := append([]string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"}, engineEnv()...)
	cfg, err := config.Load("", append(environ, env...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Logger: zap.NewNop(), Root: server.RootCredentials{Username: "iggy", Password: "iggy"},
		HTTP: func(*server.Server) (http.Handler, error) { return http.NotFoundHandler(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		_ = srv.Shutdown(context.Background())
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return srv
}
