package strata_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
)

// stack is a strata-server and a strata-connect moving messages, so that
// every series a dashboard shows has samples: sends, polls, an error,
// syncs (a persisted topic), a source and a sink.
type stack struct {
	server      *server
	connect     *process
	connectBase string
}

// startStack starts the server, makes traffic through the client, then
// strata-connect with a random source and a file sink, and waits until the
// sink has written messages.
func startStack(t *testing.T) *stack {
	t.Helper()
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, srv.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.LoginUser(ctx, "iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, "shop"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx, client.ID(0), "orders", 2, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "events", 2, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(uint32(i%2)), []client.Message{{Payload: []byte(fmt.Sprintf("order %d", i))}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.PollMessages(ctx, client.PollRequest{Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollFirst(), Count: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, "shop"); err == nil {
		t.Fatal("a duplicate stream was accepted")
	}

	configDir, stateDir := t.TempDir(), t.TempDir()
	sinkFile := filepath.Join(t.TempDir(), "sink.jsonl")
	writeTestFile(t, filepath.Join(configDir, "gen_source.toml"), `plugin = "random"
[[streams]]
stream = "shop"
topic = "events"
schema = "json"
[plugin_config]
messages_per_batch = 10
max_count = 200
interval = "20 ms"
`)
	writeTestFile(t, filepath.Join(configDir, "archive_sink.toml"), fmt.Sprintf(`plugin = "file"
[[streams]]
stream = "shop"
topics = ["events"]
schema = "json"
poll_interval = "10 ms"
[plugin_config]
path = %q
`, sinkFile))
	port := freePort(t)
	connect := startProgram(t, "strata-connect", append(cleanEnviron(),
		"STRATA_CONNECTORS_STRATA_ADDRESS="+srv.tcp, "STRATA_CONNECTORS_HTTP_ADDRESS="+port,
		"STRATA_CONNECTORS_STATE_PATH="+stateDir, "STRATA_CONNECTORS_CONNECTORS_CONFIG_DIR="+configDir))
	connect.waitFor(t, regexp.MustCompile(`strata-connect running`))
	deadline := time.Now().Add(time.Minute)
	for {
		if data, err := os.ReadFile(sinkFile); err == nil && strings.Count(string(data), "\n") >= 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink wrote nothing in a minute:\n%s", connect.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &stack{server: srv, connect: connect, connectBase: "http://" + port}
}

// freePort returns a loopback address that was free a moment ago (for a
// program that cannot report the port it bound).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scrape returns the text of url (a /metrics endpoint).
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(data)
}
