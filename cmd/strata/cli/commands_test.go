package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
)

func TestPingWithoutLogin(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	delete(c.env, "STRATA_USERNAME")
	out := c.ok("ping", "--count", "2")
	if strings.Count(out, "pong from "+srv.Addr()) != 2 {
		t.Fatalf("ping output %q", out)
	}
	objs := jsonLines(t, c.ok("ping", "-o", "json"))
	if len(objs) != 1 || objs[0]["address"] != srv.Addr() {
		t.Fatalf("ping json %v", objs)
	}
}

func TestStreamTopicPartitionCommands(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	if out := c.ok("stream", "create", "orders"); !strings.Contains(out, "created stream orders with id 0") {
		t.Fatalf("create: %q", out)
	}
	objs := jsonLines(t, c.ok("stream", "create", "audit", "-o", "json"))
	if objs[0]["name"] != "audit" || objs[0]["id"] != float64(1) {
		t.Fatalf("create json: %v", objs)
	}
	out := c.ok("stream", "list")
	if !strings.Contains(out, "orders") || !strings.Contains(out, "audit") || !strings.HasPrefix(out, "ID") {
		t.Fatalf("list: %q", out)
	}
	if objs := jsonLines(t, c.ok("stream", "list", "--output", "json")); len(objs) != 2 {
		t.Fatalf("list json: %v", objs)
	}
	out = c.ok("topic", "create", "orders", "eu", "--partitions", "3", "--durability", "persisted",
		"--consumer-offset-durability", "replicated", "--message-expiry", "7 days", "--max-topic-size", "unlimited",
		"--compression", "gzip", "--segment-size", "1048576")
	if !strings.Contains(out, "created topic eu with id 0 and 3 partitions") {
		t.Fatalf("topic create: %q", out)
	}
	c.fails(2, "--durability must be replicated or persisted", "topic", "create", "orders", "x", "--durability", "maybe")
	out = c.ok("topic", "get", "orders", "eu")
	for _, want := range []string{"durability=persisted", "consumer_offset_durability=replicated",
		"message_expiry=7 days", "compression_algorithm=gzip", "segment_size=1048576", "PARTITION"} {
		if !strings.Contains(out, want) {
			t.Fatalf("topic get lacks %q: %q", want, out)
		}
	}
	topic := jsonLines(t, c.ok("topic", "get", "0", "0", "-o", "json"))[0]
	if parts := topic["partitions"].([]any); len(parts) != 3 {
		t.Fatalf("topic json partitions: %v", topic)
	}
	if opts := topic["options"].(map[string]any); opts["durability"] != "persisted" {
		t.Fatalf("topic json options: %v", topic["options"])
	}
	c.ok("partition", "create", "orders", "eu", "--count", "2")
	c.ok("partition", "delete", "orders", "eu")
	topic = jsonLines(t, c.ok("topic", "get", "orders", "eu", "-o", "json"))[0]
	if topic["partitions_count"] != float64(4) {
		t.Fatalf("partitions after create 2 delete 1: %v", topic["partitions_count"])
	}
	c.ok("segment", "delete", "orders", "eu", "0", "--count", "1")
	c.ok("topic", "update", "orders", "eu", "--name", "europe", "--compression", "none")
	c.ok("topic", "update", "orders", "europe", "--message-expiry", "3600000000")
	if out := c.ok("topic", "list", "orders"); !strings.Contains(out, "europe") || !strings.Contains(out, "3600000000") {
		t.Fatalf("topic list: %q", out)
	}
	c.ok("topic", "purge", "orders", "europe")
	c.ok("stream", "update", "orders", "sales")
	out = c.ok("stream", "get", "sales")
	if !strings.Contains(out, "sales") || !strings.Contains(out, "europe") {
		t.Fatalf("stream get: %q", out)
	}
	c.ok("stream", "purge", "sales")
	c.ok("topic", "delete", "sales", "europe")
	c.fails(1, "error: topic europe of stream sales not found (2010 TopicIdNotFound)", "topic", "delete", "sales", "europe")
	c.ok("stream", "delete", "sales")
	c.fails(1, "error: stream sales not found (1009 StreamIdNotFound)", "stream", "delete", "sales")
	c.fails(1, "error: stream 42 not found (1009 StreamIdNotFound)", "stream", "get", "42")
	c.fails(1, "stream name already exists (1012 StreamNameAlreadyExists)", "stream", "create", "audit")
}

func TestMessageCommands(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	c.ok("stream", "create", "s")
	c.ok("topic", "create", "s", "t", "--partitions", "2")
	out := c.ok("message", "send", "s", "t", "--partition", "1", "--header", "source=cli", "--header", "n=1", "one", "two")
	if !strings.Contains(out, "sent 2 messages") {
		t.Fatalf("send: %q", out)
	}
	var lines strings.Builder
	for i := range 25 {
		fmt.Fprintf(&lines, "line-%02d\n", i)
	}
	lines.WriteString("\n\xff\xfe binary\n")
	r := c.stdin(lines.String(), "message", "send", "s", "t", "--partition", "1", "--batch-size", "10", "-o", "json")
	if r.code != 0 {
		t.Fatalf("send stdin: %d %q", r.code, r.stderr)
	}
	if sum := jsonLines(t, r.stdout)[0]; sum["messages"] != float64(26) || sum["batches"] != float64(3) {
		t.Fatalf("send summary %v", sum)
	}
	if !strings.HasPrefix(r.stderr, "warning: 1 of the stdin lines were not text") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("stderr when not on a terminal: %q, want only the warning about the binary line", r.stderr)
	}
	msgs := jsonLines(t, c.ok("message", "poll", "s", "t", "--partition", "1", "--count", "100", "-o", "json"))
	if len(msgs) != 28 {
		t.Fatalf("polled %d messages", len(msgs))
	}
	for i, m := range msgs {
		if m["offset"] != float64(i) || m["id"] != "0" || m["timestamp"] == float64(0) {
			t.Fatalf("message %d: %v", i, m)
		}
	}
	if h := msgs[0]["headers"].([]any); len(h) != 2 || fmt.Sprint(h[0]) != "map[key:source kind:string value:cli]" ||
		fmt.Sprint(h[1]) != "map[key:n kind:string value:1]" || msgs[0]["payload"] != "one" {
		t.Fatalf("first message %v", msgs[0])
	}
	if msgs[2]["payload"] != "line-00" || len(msgs[2]["headers"].([]any)) != 0 || msgs[2]["payload_encoding"] != "utf-8" {
		t.Fatalf("stdin message %v", msgs[2])
	}
	if last := msgs[27]; last["payload_encoding"] != "base64" || last["payload"] != "//4gYmluYXJ5" {
		t.Fatalf("binary message %v", last)
	}
	// Strategies; polls cross batch boundaries.
	got := jsonLines(t, c.ok("message", "poll", "s", "t", "--partition", "1", "--offset", "5", "--count", "12", "-o", "json"))
	if len(got) != 12 || got[0]["offset"] != float64(5) || got[11]["offset"] != float64(16) {
		t.Fatalf("offset poll %v", got)
	}
	got = jsonLines(t, c.ok("message", "poll", "s", "t", "--partition", "1", "--last", "--count", "2", "-o", "json"))
	if len(got) != 2 || got[0]["offset"] != float64(26) {
		t.Fatalf("last poll %v", got)
	}
	table := c.ok("message", "poll", "s", "t", "--partition", "1", "--count", "1")
	if !strings.HasPrefix(table, "OFFSET\tTIMESTAMP\tID\tPAYLOAD\n0\t") || strings.Contains(table, "source") || !strings.HasSuffix(table, "\tone\n") {
		t.Fatalf("table poll %q", table)
	}
	table = c.ok("message", "poll", "s", "t", "--partition", "1", "--count", "1", "--show-headers")
	if !strings.HasPrefix(table, "OFFSET\tTIMESTAMP\tID\tHEADERS\tPAYLOAD\n0\t") || !strings.Contains(table, "\tsource:string:cli,n:string:1\tone\n") {
		t.Fatalf("table poll with headers %q", table)
	}
	ts := uint64(msgs[12]["timestamp"].(float64))
	got = jsonLines(t, c.ok("message", "poll", "s", "t", "--partition", "1", "--timestamp", fmt.Sprint(ts), "--count", "1", "-o", "json"))
	if len(got) != 1 || got[0]["timestamp"].(float64) < float64(ts) {
		t.Fatalf("timestamp poll %v", got)
	}
	c.fails(2, "at most one of", "message", "poll", "s", "t", "--first", "--last")
	c.fails(1, "stream nope not found (1009 StreamIdNotFound)", "message", "poll", "nope", "t")
	// --next with auto-commit and the offset commands.
	got = jsonLines(t, c.ok("message", "poll", "s", "t", "--partition", "1", "--next", "--consumer", "rep", "--auto-commit", "--count", "5", "-o", "json"))
	if len(got) != 5 || got[4]["offset"] != float64(4) {
		t.Fatalf("next poll %v", got)
	}
	off := jsonLines(t, c.ok("offset", "get", "s", "t", "--consumer", "rep", "--partition", "1", "-o", "json"))[0]
	if off["stored_offset"] != float64(4) {
		t.Fatalf("offset after auto-commit %v", off)
	}
	c.ok("offset", "store", "s", "t", "20", "--consumer", "rep", "--partition", "1")
	got = jsonLines(t, c.ok("message", "poll", "s", "t", "--partition", "1", "--next", "--consumer", "rep", "-o", "json"))
	if len(got) != 7 || got[0]["offset"] != float64(21) {
		t.Fatalf("next after store: %v", got)
	}
	c.ok("offset", "delete", "s", "t", "--consumer", "rep", "--partition", "1")
	c.fails(1, "offset of consumer rep in partition 1 not found", "offset", "get", "s", "t", "--consumer", "rep", "--partition", "1")
	c.fails(1, "consumer offset not found (3021 ConsumerOffsetNotFound)", "offset", "delete", "s", "t", "--consumer", "rep", "--partition", "1")
	c.fails(1, "invalid offset (4100 InvalidOffset)", "offset", "store", "s", "t", "999", "--partition", "1")
	// Keyed and balanced sends.
	c.ok("message", "send", "s", "t", "--key", "customer-1", "k")
	c.ok("message", "send", "s", "t", "b")
	c.fails(2, "mutually exclusive", "message", "send", "s", "t", "--key", "a", "--partition", "0", "x")
	c.fails(2, "want KEY:KIND:VALUE", "message", "send", "s", "t", "--header", "novalue", "x")
}

func TestProgressBarOnTerminal(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	c.ok("stream", "create", "s")
	c.ok("topic", "create", "s", "t")
	c.terminal = true
	r := c.stdin(strings.Repeat("payload\n", 500), "message", "send", "s", "t")
	if r.code != 0 || r.stderr == "" || !strings.Contains(r.stderr, "sending") {
		t.Fatalf("send on a terminal: exit %d, stderr %q", r.code, r.stderr)
	}
	c.terminal = false
	r = c.run("message", "poll", "s", "t", "--count", "2500", "-o", "json")
	if r.code != 0 || r.stderr != "" || len(jsonLines(t, r.stdout)) != 500 {
		t.Fatalf("poll piped: exit %d stderr %q", r.code, r.stderr)
	}
	c.terminal = true
	r = c.run("message", "poll", "s", "t", "--count", "2500", "-o", "json")
	if r.code != 0 || !strings.Contains(r.stderr, "polling") {
		t.Fatalf("poll on a terminal: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestFollow(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	c.ok("stream", "create", "s")
	c.ok("topic", "create", "s", "t")
	c.ok("message", "send", "s", "t", "a", "b")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	counter := &lineCounter{want: 4, reach: make(chan struct{})}
	done := make(chan result, 1)
	go func() {
		done <- c.runIn(ctx, "", counter, "message", "poll", "s", "t", "--follow", "--interval", "1ms", "-o", "json")
	}()
	// The follower prints the first two, then picks up two more sent later.
	c.ok("message", "send", "s", "t", "c", "d")
	select {
	case <-counter.reach:
	case <-ctx.Done():
		t.Fatal("follow did not print the later messages")
	}
	cancel()
	r := <-done
	if r.code != 0 {
		t.Fatalf("interrupted follow: exit %d %q", r.code, r.stderr)
	}
	msgs := jsonLines(t, r.stdout)
	for i, want := range []string{"a", "b", "c", "d"} {
		if msgs[i]["payload"] != want || msgs[i]["offset"] != float64(i) {
			t.Fatalf("followed %v", msgs)
		}
	}
}

func TestUserAndTokenCommands(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	out := c.ok("user", "create", "alice", "secret1", "--global", "read_streams,poll_messages")
	if !strings.Contains(out, "created user alice with id 1") {
		t.Fatalf("user create: %q", out)
	}
	u := jsonLines(t, c.ok("user", "get", "alice", "-o", "json"))[0]
	g := u["permissions"].(map[string]any)["global"].(map[string]any)
	if g["read_streams"] != true || g["poll_messages"] != true || g["manage_users"] != false {
		t.Fatalf("permissions %v", u["permissions"])
	}
	c.ok("user", "permissions", "alice", "--permissions-json", `{"streams":[{"stream_id":3,"read_stream":true,"topics":[{"topic_id":1,"send_messages":true}]}]}`)
	if out := c.ok("user", "get", "1"); !strings.Contains(out, `"stream_id":3`) || !strings.Contains(out, `"send_messages":true`) {
		t.Fatalf("user get after permissions: %q", out)
	}
	c.ok("user", "permissions", "alice", "--none")
	if out := c.ok("user", "get", "alice"); !strings.Contains(out, "permissions:  none") {
		t.Fatalf("permissions removed: %q", out)
	}
	c.fails(2, "unknown global permission", "user", "permissions", "alice", "--global", "fly")
	c.ok("user", "update", "alice", "--name", "alicia", "--status", "inactive")
	if out := c.ok("user", "list"); !strings.Contains(out, "alicia") || !strings.Contains(out, "inactive") {
		t.Fatalf("user list: %q", out)
	}
	c.ok("user", "password", "alicia", "secret1", "secret2")
	c.fails(1, "invalid credentials (42 InvalidCredentials)", "user", "password", "alicia", "wrong", "x")
	c.fails(1, "user already exists (46 UserAlreadyExists)", "user", "create", "alicia", "pw")
	c.ok("user", "delete", "alicia")
	c.fails(1, "user alicia not found", "user", "get", "alicia")

	token := jsonLines(t, c.ok("pat", "create", "ci", "-o", "json"))[0]["token"].(string)
	if out := c.ok("pat", "list"); !strings.Contains(out, "ci") || !strings.Contains(out, "never") {
		t.Fatalf("pat list: %q", out)
	}
	tc := newCLI(t, srv)
	delete(tc.env, "STRATA_USERNAME")
	delete(tc.env, "STRATA_PASSWORD")
	tc.env["STRATA_TOKEN"] = token
	if out := tc.ok("me"); !strings.Contains(out, "user id:") {
		t.Fatalf("me with token: %q", out)
	}
	c.ok("pat", "delete", "ci")
	c.fails(1, "resource not found (20 ResourceNotFound)", "pat", "delete", "ci")
}

func TestSystemCommands(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	if out := c.ok("stats"); !strings.Contains(out, "server version:") || !strings.Contains(out, "0.9.0-edge.5") {
		t.Fatalf("stats: %q", out)
	}
	me := jsonLines(t, c.ok("me", "-o", "json"))[0]
	if me["user_id"] != float64(0) || me["transport"] != "tcp" {
		t.Fatalf("me json %v", me)
	}
	if out := c.ok("client", "list"); !strings.Contains(out, "tcp") || !strings.HasPrefix(out, "ID") {
		t.Fatalf("client list: %q", out)
	}
	// A client that stays connected while the CLI looks it up.
	other, err := client.Dial(context.Background(), srv.Addr(), client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otherMe, err := other.GetMe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(otherMe.ClientID)
	if out := c.ok("client", "get", id); !strings.Contains(out, "client id:") {
		t.Fatalf("client get: %q", out)
	}
	c.fails(1, "client 999 not found", "client", "get", "999")
	c.fails(2, "CLIENT_ID must be a number", "client", "get", "x")
}

func TestErrorsAndExitCodes(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	c.fails(2, "unknown flag", "stream", "list", "--bogus")
	c.fails(2, "accepts 1 arg", "stream", "get")
	c.fails(2, "--output must be table or json", "stream", "list", "-o", "yaml")
	c.fails(2, "unknown command", "nonsense")
	c.env["STRATA_PASSWORD"] = "wrong"
	c.fails(1, "error: invalid credentials (42 InvalidCredentials)", "stream", "list")
	delete(c.env, "STRATA_USERNAME")
	c.fails(1, "not authenticated (40 Unauthenticated); log in with", "stream", "list")
	// Flags override the environment.
	c.ok("stream", "list", "--username", "iggy", "--password", "iggy")
	// An address where nothing listens.
	dead := startServer(t)
	addr := dead.Addr()
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	c.fails(3, "cannot connect to "+addr, "ping", "--address", addr)
}

func TestHelpHidesEnvironmentSecrets(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	c.env["STRATA_PASSWORD"] = "hunter2-secret"
	c.env["STRATA_TOKEN"] = "token-secret"
	for _, args := range [][]string{{"--help"}, {"stream", "list", "--help"}} {
		out := c.ok(args...)
		if strings.Contains(out, "secret") || !strings.Contains(out, "--password") {
			t.Fatalf("help output for %v leaks or lacks flags: %q", args, out)
		}
	}
}

func TestGroupCommands(t *testing.T) {
	srv := startServer(t)
	c := newCLI(t, srv)
	c.ok("stream", "create", "s")
	c.ok("topic", "create", "s", "t", "--partitions", "3")
	if out := c.ok("group", "create", "s", "t", "workers"); !strings.Contains(out, "created consumer group workers with id 0") {
		t.Fatalf("group create: %q", out)
	}
	c.fails(1, "consumer group name already exists (5004 ConsumerGroupNameAlreadyExists)", "group", "create", "s", "t", "workers")
	if out := c.ok("group", "list", "s", "t"); !strings.Contains(out, "workers") || !strings.HasPrefix(out, "ID") {
		t.Fatalf("group list: %q", out)
	}
	g := jsonLines(t, c.ok("group", "get", "s", "t", "workers", "-o", "json"))[0]
	if g["name"] != "workers" || g["partitions_count"] != float64(3) {
		t.Fatalf("group get: %v", g)
	}
	c.ok("group", "delete", "s", "t", "0")
	c.fails(1, "consumer group workers of topic s/t not found (5003 ConsumerGroupNameNotFound)", "group", "get", "s", "t", "workers")
	c.fails(1, "consumer group workers of topic s/t not found (5000 ConsumerGroupIdNotFound)", "group", "delete", "s", "t", "workers")
}
