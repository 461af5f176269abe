package cli_test

// The whole CLI surface against a real strata server on a real socket.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/cmd/strata/cli"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// realServer starts a broker over a temp dir and returns its address.
func realServer(t *testing.T) string {
	t.Helper()
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + t.TempDir(), "STRATA_TCP_ADDRESS=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv.TCPAddr().String()
}

// strata runs one CLI command as root and returns stdout, stderr and the
// exit code.
type runner struct {
	t    *testing.T
	addr string
	env  map[string]string
}

func (r runner) run(stdin string, args ...string) (string, string, int) {
	r.t.Helper()
	var stdout, stderr bytes.Buffer
	env := map[string]string{"STRATA_ADDRESS": r.addr, "STRATA_USERNAME": "iggy", "STRATA_PASSWORD": "iggy"}
	for k, v := range r.env {
		env[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := cli.Run(ctx, cli.Env{
		Args: args, Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
	})
	return stdout.String(), stderr.String(), code
}

// ok runs a command that must succeed and returns its stdout.
func (r runner) ok(args ...string) string {
	r.t.Helper()
	out, errOut, code := r.run("", args...)
	if code != 0 {
		r.t.Fatalf("strata %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// jsonLines decodes one JSON object per line.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objects []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("not a JSON line: %q: %v", line, err)
		}
		objects = append(objects, o)
	}
	return objects
}

func TestCLIAgainstRealServer(t *testing.T) {
	r := runner{t: t, addr: realServer(t)}

	r.ok("ping")
	r.ok("stream", "create", "orders")
	r.ok("stream", "update", "orders", "orders2")
	r.ok("stream", "get", "orders2")
	if streams := jsonLines(t, r.ok("--output", "json", "stream", "list")); len(streams) != 1 || streams[0]["name"] != "orders2" {
		t.Fatalf("stream list: %+v", streams)
	}
	r.ok("topic", "create", "orders2", "eu", "--partitions", "3", "--durability", "persisted",
		"--consumer-offset-durability", "persisted", "--message-expiry", "7 days", "--max-topic-size", "2 GiB")
	topic := jsonLines(t, r.ok("--output", "json", "topic", "get", "orders2", "eu"))
	if len(topic) != 1 || fmt.Sprint(topic[0]["partitions_count"]) != "3" {
		t.Fatalf("topic get: %+v", topic)
	}
	r.ok("topic", "update", "orders2", "eu", "--message-expiry", "1 day")
	r.ok("topic", "list", "orders2")
	r.ok("partition", "create", "orders2", "eu", "--count", "2")
	r.ok("partition", "delete", "orders2", "eu", "--count", "1")

	// Send from arguments with headers, and from stdin in batches.
	r.ok("message", "send", "orders2", "eu", "--partition", "0", "--header", "source=cli", "first", "second")
	var lines strings.Builder
	for i := 0; i < 2500; i++ {
		fmt.Fprintf(&lines, "line-%d\n", i)
	}
	if out, errOut, code := r.run(lines.String(), "message", "send", "orders2", "eu", "--partition", "1", "--batch-size", "700"); code != 0 {
		t.Fatalf("send from stdin: %d %s %s", code, out, errOut)
	}
	r.ok("message", "send", "orders2", "eu", "--key", "customer-42", "keyed")

	polled := jsonLines(t, r.ok("--output", "json", "message", "poll", "orders2", "eu", "--partition", "0", "--first", "--count", "2"))
	if len(polled) != 2 || polled[0]["payload"] != "first" || fmt.Sprint(polled[1]["offset"]) != "1" {
		t.Fatalf("poll: %+v", polled)
	}
	for _, key := range []string{"offset", "id", "timestamp", "headers", "payload"} {
		if _, ok := polled[0][key]; !ok {
			t.Fatalf("polled message lacks %q: %+v", key, polled[0])
		}
	}
	if !strings.Contains(fmt.Sprint(polled[0]["headers"]), "cli") {
		t.Fatalf("header lost: %+v", polled[0]["headers"])
	}
	all := jsonLines(t, r.ok("--output", "json", "message", "poll", "orders2", "eu", "--partition", "1", "--offset", "0", "--count", "3000"))
	if len(all) != 2500 || all[2499]["payload"] != "line-2499" {
		t.Fatalf("stdin messages polled back: %d", len(all))
	}
	last := jsonLines(t, r.ok("--output", "json", "message", "poll", "orders2", "eu", "--partition", "1", "--last", "--count", "2"))
	if len(last) != 2 || last[1]["payload"] != "line-2499" {
		t.Fatalf("last: %+v", last)
	}
	// A consumer walks with --next and --auto-commit; offsets commands.
	next := jsonLines(t, r.ok("--output", "json", "message", "poll", "orders2", "eu", "--partition", "1", "--next", "--consumer", "billing", "--auto-commit", "--count", "100"))
	if len(next) != 100 {
		t.Fatalf("next: %d", len(next))
	}
	offset := jsonLines(t, r.ok("--output", "json", "offset", "get", "orders2", "eu", "--consumer", "billing", "--partition", "1"))
	if len(offset) != 1 || fmt.Sprint(offset[0]["stored_offset"]) != "99" {
		t.Fatalf("offset get: %+v", offset)
	}
	r.ok("offset", "store", "orders2", "eu", "5", "--consumer", "billing", "--partition", "1")
	next = jsonLines(t, r.ok("--output", "json", "message", "poll", "orders2", "eu", "--partition", "1", "--next", "--consumer", "billing", "--count", "1"))
	if len(next) != 1 || fmt.Sprint(next[0]["offset"]) != "6" {
		t.Fatalf("next after store: %+v", next)
	}
	r.ok("offset", "delete", "orders2", "eu", "--consumer", "billing", "--partition", "1")

	// Users, permissions, tokens.
	r.ok("user", "create", "reader", "secret1", "--global", "read_streams,read_topics,poll_messages")
	r.ok("user", "list")
	r.ok("user", "get", "reader")
	r.ok("user", "update", "reader", "--status", "active")
	r.ok("user", "permissions", "reader", "--global", "read_streams")
	reader := runner{t: t, addr: r.addr, env: map[string]string{"STRATA_USERNAME": "reader", "STRATA_PASSWORD": "secret1"}}
	reader.ok("stream", "list")
	if _, errOut, code := reader.run("", "stream", "create", "nope"); code != 1 || !strings.Contains(errOut, "41") {
		t.Fatalf("unauthorized create: exit %d, %s", code, errOut)
	}
	reader.ok("user", "password", "reader", "secret1", "secret2")
	token := strings.TrimSpace(runner{t: t, addr: r.addr, env: map[string]string{"STRATA_USERNAME": "reader", "STRATA_PASSWORD": "secret2"}}.ok("pat", "create", "ci"))
	if token == "" {
		t.Fatal("no token printed")
	}
	tokenRunner := runner{t: t, addr: r.addr, env: map[string]string{"STRATA_USERNAME": "", "STRATA_PASSWORD": "", "STRATA_TOKEN": lastField(token)}}
	tokenRunner.ok("me")
	tokenRunner.ok("pat", "list")
	tokenRunner.ok("pat", "delete", "ci")
	r.ok("user", "delete", "reader")

	r.ok("me")
	r.ok("stats")
	r.ok("client", "list")
	r.ok("segment", "delete", "orders2", "eu", "0", "--count", "1")
	r.ok("topic", "purge", "orders2", "eu")
	if after := jsonLines(t, r.ok("--output", "json", "message", "poll", "orders2", "eu", "--partition", "1", "--first", "--count", "10")); len(after) != 0 {
		t.Fatalf("purged topic still has %d messages", len(after))
	}
	r.ok("stream", "purge", "orders2")
	r.ok("topic", "delete", "orders2", "eu")
	r.ok("stream", "delete", "orders2")

	// Errors name the protocol error and exit 1.
	if _, errOut, code := r.run("", "stream", "get", "missing"); code != 1 || errOut == "" {
		t.Fatalf("missing stream: exit %d %q", code, errOut)
	}
	if _, errOut, code := r.run("", "topic", "delete", "nostream", "t"); code != 1 || !strings.Contains(errOut, "1009") {
		t.Fatalf("delete topic of a missing stream: exit %d %q", code, errOut)
	}
	bad := runner{t: t, addr: r.addr, env: map[string]string{"STRATA_PASSWORD": "wrong"}}
	if _, errOut, code := bad.run("", "stream", "list"); code != 1 || !strings.Contains(errOut, "42") {
		t.Fatalf("wrong password: exit %d %q", code, errOut)
	}
}

// lastField returns the last whitespace-separated field of s (the token
// when the CLI prints a label before it).
func lastField(s string) string {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return ""
	}
	return fields[len(fields)-1]
}

// TestCLISizesAndDurations: size and duration flags are read by
// net/units, the parser of the server's config, so the forms that work
// for one flag work for all (`pat create --expiry "30 days"` failed where
// `--message-expiry "7 days"` worked), and a bad value is a usage error
// naming the flag, before anything is sent.
func TestCLISizesAndDurations(t *testing.T) {
	r := runner{t: t, addr: realServer(t)}
	r.ok("pat", "create", "monthly", "--expiry", "30 days")
	r.ok("pat", "create", "daily", "--expiry", "1.5 days")
	r.ok("pat", "create", "forever", "--expiry", "never")
	list := jsonLines(t, r.ok("--output", "json", "pat", "list"))
	if len(list) != 3 {
		t.Fatalf("pat list: %+v", list)
	}
	r.ok("stream", "create", "s")
	r.ok("topic", "create", "s", "t", "--message-expiry", "30 days", "--segment-size", "1.5 MiB", "--max-topic-size", "1.5 GiB")
	topic := jsonLines(t, r.ok("--output", "json", "topic", "get", "s", "t"))[0]
	if fmt.Sprint(topic["message_expiry"]) != fmt.Sprint(float64(30*86400e6)) || fmt.Sprint(topic["max_topic_size"]) != fmt.Sprint(float64(3<<29)) {
		t.Fatalf("topic: expiry %v size %v", topic["message_expiry"], topic["max_topic_size"])
	}
	r.ok("message", "send", "s", "t", "--partition", "0", "one")
	r.ok("message", "poll", "s", "t", "--partition", "0", "--first", "--count", "1", "--interval", "250 ms")
	for _, c := range []struct {
		fragment string
		args     []string
	}{
		{"--expiry", []string{"pat", "create", "x", "--expiry", "30 dayz"}},
		{"--message-expiry", []string{"topic", "create", "s", "u", "--message-expiry", "7 dayz"}},
		{"--segment-size", []string{"topic", "create", "s", "u", "--segment-size", "4 mb"}},
		{"--max-topic-size", []string{"topic", "create", "s", "u", "--max-topic-size", "lots"}},
		{"interval", []string{"message", "poll", "s", "t", "--partition", "0", "--interval", "5 MIN"}},
	} {
		_, errOut, code := r.run("", c.args...)
		if code != 2 || !strings.Contains(errOut, c.fragment) {
			t.Errorf("%v: exit %d %q; want 2 naming %s", c.args, code, errOut, c.fragment)
		}
	}
	if out := r.ok("topic", "list", "s"); strings.Contains(out, " u ") {
		t.Fatalf("a refused topic was created: %q", out)
	}
}
