package cli_test

// Issue 14, items 2 to 6, through the CLI's command line against a real
// broker on a real socket: mistakes are errors, short forms, completion
// from the server, errors that name the thing, JSON for jq, messages from
// and to files with typed headers, and saved contexts.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fastRunner runs as root with a personal access token: a token login is
// a hash lookup where a password login costs a bcrypt comparison, and
// these tests run many commands.
func fastRunner(t *testing.T, addr string) runner {
	t.Helper()
	r := runner{t: t, addr: addr}
	token := decodeLines(t, "pat create", r.ok("-o", "json", "pat", "create", "tests"))[0]["token"].(string)
	return runner{t: t, addr: addr, env: map[string]string{"STRATA_USERNAME": "", "STRATA_PASSWORD": "", "STRATA_TOKEN": token}}
}

// TestMistakesAreErrors: a mistyped command inside a group exits 2 with
// "did you mean" (cobra printed the group's help and exited 0); the short
// forms of Iggy's CLI and nats work.
func TestMistakesAreErrors(t *testing.T) {
	r := fastRunner(t, realServer(t))
	r.ok("stream", "create", "orders")
	r.ok("topic", "create", "orders", "eu", "--partitions", "2")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stream", "lst"}, `error: unknown command "lst" for "strata stream"; did you mean "list"?`},
		{[]string{"topic", "lsit", "orders"}, `unknown command "lsit" for "strata topic"; did you mean "list"?`},
		{[]string{"strem", "list"}, `unknown command "strem" for "strata"; did you mean "stream"?`},
		{[]string{"message", "sned", "orders", "eu", "x"}, `did you mean "send"?`},
		{[]string{"help", "strem"}, `unknown command "strem" for "strata"; did you mean "stream"?`},
		{[]string{"stream", "frobnicate"}, `unknown command "frobnicate" for "strata stream" (run 'strata stream --help'`},
	} {
		out, errOut, code := r.run("", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.HasSuffix(errOut, "(3 InvalidCommand)\n") || out != "" {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
	// A group alone shows its help.
	if out := r.ok("stream"); !strings.Contains(out, "Available Commands:") {
		t.Errorf("strata stream: %q", out)
	}
	// Short forms.
	for _, args := range [][]string{{"stream", "ls"}, {"s", "l"}, {"s", "ls"}, {"s", "info", "orders"}, {"t", "ls", "orders"},
		{"t", "g", "orders", "eu"}, {"p", "c", "orders", "eu"}, {"m", "s", "orders", "eu", "--partition", "0", "hello"},
		{"m", "p", "orders", "eu", "--count", "1"}, {"o", "s", "orders", "eu", "0"}, {"o", "g", "orders", "eu"}, {"g", "ls", "orders", "eu"}, {"c", "ls"},
		{"u", "ls"}, {"seg", "d", "orders", "eu", "0"}, {"ctx", "ls"}} {
		r.ok(args...)
	}
	if out := r.ok("s", "ls"); !strings.Contains(out, "orders") {
		t.Errorf("strata s ls: %q", out)
	}
	if out := r.ok("m", "p", "orders", "eu", "--count", "1"); !strings.Contains(out, "\thello\n") {
		t.Errorf("strata m p: %q", out)
	}
}

// completions runs cobra's completion request for args and returns the
// offered words (descriptions dropped).
func completions(t *testing.T, r runner, args ...string) []string {
	t.Helper()
	out := r.ok(append([]string{"__complete"}, args...)...)
	var words []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, ":") || line == "" || strings.HasPrefix(line, "Completion ended") {
			continue
		}
		word, _, _ := strings.Cut(line, "\t")
		words = append(words, word)
	}
	sort.Strings(words)
	return words
}

// TestCompletionFromServer: stream, topic, partition and group arguments
// complete with the names on the server.
func TestCompletionFromServer(t *testing.T) {
	r := fastRunner(t, realServer(t))
	r.ok("stream", "create", "orders")
	r.ok("stream", "create", "audit")
	r.ok("topic", "create", "orders", "eu", "--partitions", "2")
	r.ok("topic", "create", "orders", "us")
	r.ok("group", "create", "orders", "eu", "workers")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topic", "get", ""}, "audit orders"},
		{[]string{"topic", "get", "or"}, "orders"},
		{[]string{"topic", "get", "orders", ""}, "eu us"},
		{[]string{"t", "ls", ""}, "audit orders"},
		{[]string{"message", "poll", "orders", "e"}, "eu"},
		{[]string{"segment", "delete", "orders", "eu", ""}, "0 1"},
		{[]string{"group", "get", "orders", "eu", ""}, "workers"},
		{[]string{"user", "get", ""}, "iggy"},
		{[]string{"topic", "get", "orders", "eu", ""}, ""},
	} {
		if got := strings.Join(completions(t, r, tc.args...), " "); got != tc.want {
			t.Errorf("complete strata %q: %q, want %q", tc.args, got, tc.want)
		}
	}
	// The completion scripts themselves.
	for _, shell := range []string{"bash", "zsh", "fish"} {
		if out := r.ok("completion", shell); !strings.Contains(out, "strata") || len(out) < 500 {
			t.Errorf("completion %s: %d bytes", shell, len(out))
		}
	}
}

// closedPort returns a 127.0.0.1 port free for TCP and UDP a moment ago.
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
		if uerr == nil {
			_ = u.Close() // probed only
			return addr
		}
	}
	t.Fatal("no free port")
	return ""
}

// TestErrorsNameTheThing: every error reads "MESSAGE (CODE NAME)" and
// names the stream, topic, partition or address.
func TestErrorsNameTheThing(t *testing.T) {
	r := fastRunner(t, realServer(t))
	r.ok("stream", "create", "orders")
	r.ok("topic", "create", "orders", "eu", "--partitions", "2")
	r.ok("group", "create", "orders", "eu", "workers")
	dead := closedPort(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"message", "send", "nosuch", "eu", "hi"}, 1, "error: stream nosuch not found (20 ResourceNotFound)\n"},
		{[]string{"message", "send", "orders", "nosuch", "hi"}, 1, "error: topic nosuch of stream orders not found (20 ResourceNotFound)\n"},
		{[]string{"message", "send", "orders", "eu", "--partition", "7", "hi"}, 1, "error: partition 7 of topic orders/eu not found; it has partitions 0..1 (20 ResourceNotFound)\n"},
		{[]string{"message", "poll", "orders", "eu", "--partition", "9"}, 1, "error: partition 9 of topic orders/eu not found; it has partitions 0..1 (3007 PartitionNotFound)\n"},
		{[]string{"message", "poll", "orders", "us"}, 1, "error: topic us of stream orders not found ("},
		{[]string{"topic", "delete", "orders", "us"}, 1, "error: topic us of stream orders not found (2010 TopicIdNotFound)\n"},
		{[]string{"topic", "get", "orders", "us"}, 1, "error: topic us of stream orders not found (2011 TopicNameNotFound)\n"},
		{[]string{"stream", "get", "nosuch"}, 1, "error: stream nosuch not found (1010 StreamNameNotFound)\n"},
		{[]string{"topic", "get", "nosuch", "eu"}, 1, "error: stream nosuch not found (1010 StreamNameNotFound)\n"},
		{[]string{"topic", "get", "7", "eu"}, 1, "error: stream 7 not found (1009 StreamIdNotFound)\n"},
		{[]string{"group", "get", "orders", "us", "workers"}, 1, "error: topic us of stream orders not found ("},
		{[]string{"offset", "get", "nosuch", "eu"}, 1, "error: stream nosuch not found (1010 StreamNameNotFound)\n"},
		{[]string{"offset", "get", "orders", "eu", "--consumer", "nobody"}, 1, "error: offset of consumer nobody in partition 0 not found (3021 ConsumerOffsetNotFound)\n"},
		{[]string{"stream", "delete", "nosuch"}, 1, "error: stream nosuch not found (1009 StreamIdNotFound)\n"},
		{[]string{"group", "delete", "orders", "eu", "idlers"}, 1, "error: consumer group idlers of topic orders/eu not found ("},
		{[]string{"stream", "create", "orders"}, 1, "error: stream name already exists (1012 StreamNameAlreadyExists)\n"},
		{[]string{"--address", dead, "ping"}, 3, "error: cannot connect to " + dead + " over tcp: connection refused (9 CannotEstablishConnection)\n"},
		{[]string{"--address", "ws://" + dead, "ping"}, 3, "error: cannot connect to " + dead + " over ws: connection refused (9 CannotEstablishConnection)\n"},
		{[]string{"--address", "quic://" + dead, "--tls-insecure", "ping"}, 3, "error: cannot connect to " + dead + " over quic: connection refused (9 CannotEstablishConnection)\n"},
		{[]string{"stream", "get"}, 2, "error: accepts 1 arg(s), received 0 (3 InvalidCommand)\n"},
		{[]string{"message", "send", "orders", "eu", "-H", "n:uint8:300", "x"}, 2, `error: --header "n:uint8:300": "300" is not a uint8 (3 InvalidCommand)` + "\n"},
	} {
		start := time.Now()
		_, errOut, code := r.run("", tc.args...)
		t.Logf("strata %s: %s (%s)", strings.Join(tc.args, " "), strings.TrimSpace(errOut), time.Since(start).Round(time.Millisecond))
		if code != tc.code || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("strata %s: exit %d, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.want)
		}
	}
}

// jqSafe fails when a JSON number in v would not survive a double (jq
// turns u64::MAX into 18446744073709552000).
func jqSafe(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil || strconv.FormatFloat(f, 'f', -1, 64) != strings.TrimSuffix(x.String(), ".0") && !strings.ContainsAny(x.String(), ".eE") {
			t.Errorf("%s: number %s does not survive a double", where, x)
		}
	case map[string]any:
		for k, e := range x {
			jqSafe(t, where+"."+k, e)
		}
	case []any:
		for i, e := range x {
			jqSafe(t, fmt.Sprintf("%s[%d]", where, i), e)
		}
	}
}

// decodeLines decodes JSON lines with json.Number, checking every number.
func decodeLines(t *testing.T, what, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("%s: not a JSON object line %q: %v", what, sc.Text(), err)
		}
		jqSafe(t, what, m)
		objs = append(objs, m)
	}
	return objs
}

// TestJSONForJQ: sentinels are names, enums are names, empty lists are
// [], every number survives a double; the table says "unlimited".
func TestJSONForJQ(t *testing.T) {
	r := fastRunner(t, realServer(t))
	r.ok("stream", "create", "orders")
	r.ok("stream", "create", "empty")
	r.ok("topic", "create", "orders", "eu", "--partitions", "2")
	r.ok("topic", "create", "orders", "capped", "--message-expiry", "7 days", "--max-topic-size", "2 GiB")
	r.ok("group", "create", "orders", "eu", "workers")

	topic := decodeLines(t, "topic get", r.ok("-o", "json", "topic", "get", "orders", "eu"))[0]
	for k, want := range map[string]any{"message_expiry": "never", "max_topic_size": "unlimited", "compression_algorithm": "none"} {
		if topic[k] != want {
			t.Errorf("topic get .%s = %#v, want %#v", k, topic[k], want)
		}
	}
	derived := topic["derived_options"].(map[string]any)
	if derived["message_expiry"] != "never" || derived["max_topic_size"] != "unlimited" {
		t.Errorf("derived options %v", derived)
	}
	if opts, ok := topic["options"].(map[string]any); !ok || len(opts) != 0 {
		t.Errorf("options of a topic created without any: %#v, want {}", topic["options"])
	}
	capped := decodeLines(t, "topic get", r.ok("-o", "json", "topic", "get", "orders", "capped"))[0]
	if capped["message_expiry"] != json.Number("604800000000") || capped["max_topic_size"] != json.Number(strconv.Itoa(2<<30)) {
		t.Errorf("capped topic: expiry %v, size %v", capped["message_expiry"], capped["max_topic_size"])
	}
	table := r.ok("topic", "get", "orders", "eu")
	if strings.Contains(table, "18446744073709551615") || !strings.Contains(table, "max_topic_size=unlimited") ||
		!strings.Contains(table, "message_expiry=never") {
		t.Errorf("topic get table shows the sentinel: %s", table)
	}
	emptyStream := decodeLines(t, "stream get", r.ok("-o", "json", "stream", "get", "empty"))[0]
	if topics, ok := emptyStream["topics"].([]any); !ok || len(topics) != 0 {
		t.Errorf("stream get of an empty stream: topics %#v, want []", emptyStream["topics"])
	}
	group := decodeLines(t, "group get", r.ok("-o", "json", "group", "get", "orders", "eu", "workers"))[0]
	if members, ok := group["members"].([]any); !ok || len(members) != 0 {
		t.Errorf("group get: members %#v, want []", group["members"])
	}
	me := decodeLines(t, "me", r.ok("-o", "json", "me"))[0]
	if groups, ok := me["consumer_groups"].([]any); !ok || len(groups) != 0 || me["transport"] != "tcp" {
		t.Errorf("me: %v", me)
	}
	user := decodeLines(t, "user get", r.ok("-o", "json", "user", "get", "iggy"))[0]
	if user["status"] != "active" {
		t.Errorf("user get: status %#v", user["status"])
	}
	r.ok("pat", "create", "ci")
	token := decodeLines(t, "pat list", r.ok("-o", "json", "pat", "list"))[0]
	if v, ok := token["expiry_at"]; !ok || v != nil {
		t.Errorf("pat list: expiry_at %#v, want null", token["expiry_at"])
	}
	clients := decodeLines(t, "client list", r.ok("-o", "json", "client", "list"))
	if len(clients) == 0 || clients[0]["transport"] != "tcp" {
		t.Errorf("client list: %v", clients)
	}
	decodeLines(t, "stats", r.ok("-o", "json", "stats"))
	version := decodeLines(t, "version", r.ok("-o", "json", "version"))[0]
	if version["protocol_version"] != "0.11.0" || version["program"] != "strata" {
		t.Errorf("version: %v", version)
	}
}

// readmeRecords parses cmd/strata/README.md: record name → documented
// field names.
func readmeRecords(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile("^#### `([a-z ]+)`$")
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\|")
	records := map[string][]string{}
	current := ""
	for _, line := range strings.Split(string(b), "\n") {
		if m := heading.FindStringSubmatch(line); m != nil {
			current = m[1]
			continue
		}
		if m := row.FindStringSubmatch(line); m != nil && current != "" {
			records[current] = append(records[current], m[1])
		}
	}
	return records
}

// TestJSONRecordsMatchREADME: the fields each command prints are the ones
// cmd/strata/README.md documents for its record, no more and no fewer.
func TestJSONRecordsMatchREADME(t *testing.T) {
	doc := readmeRecords(t)
	r := fastRunner(t, realServer(t))
	cfg := t.TempDir()
	withConfig := runner{t: t, addr: r.addr, env: map[string]string{"STRATA_CONFIG_DIR": cfg, "STRATA_USERNAME": "", "STRATA_PASSWORD": "", "STRATA_TOKEN": r.env["STRATA_TOKEN"]}}
	first := func(what, out string) map[string]any {
		t.Helper()
		objs := decodeLines(t, what, out)
		if len(objs) == 0 {
			t.Fatalf("%s printed no record", what)
		}
		return objs[0]
	}
	got := map[string]map[string]any{}
	got["stream"] = first("stream create", r.ok("-o", "json", "stream", "create", "orders"))
	got["topic"] = first("topic create", r.ok("-o", "json", "topic", "create", "orders", "eu"))
	got["stream details"] = first("stream get", r.ok("-o", "json", "stream", "get", "orders"))
	got["topic details"] = first("topic get", r.ok("-o", "json", "topic", "get", "orders", "eu"))
	got["partition"] = got["topic details"]["partitions"].([]any)[0].(map[string]any)
	got["send summary"] = first("message send", r.ok("-o", "json", "message", "send", "orders", "eu", "-H", "a:uint8:1", "x"))
	got["partition sent"] = got["send summary"]["partitions"].([]any)[0].(map[string]any)
	got["message"] = first("message poll", r.ok("-o", "json", "message", "poll", "orders", "eu"))
	got["header"] = got["message"]["headers"].([]any)[0].(map[string]any)
	got["poll written"] = first("poll --output-file", r.ok("-o", "json", "message", "poll", "orders", "eu", "--output-file", filepath.Join(t.TempDir(), "p")))
	got["user details"] = first("user create", r.ok("-o", "json", "user", "create", "alice", "secret1"))
	got["user"] = first("user list", r.ok("-o", "json", "user", "list"))
	got["created token"] = first("pat create", r.ok("-o", "json", "pat", "create", "ci"))
	got["token"] = first("pat list", r.ok("-o", "json", "pat", "list"))
	got["client"] = first("client list", r.ok("-o", "json", "client", "list"))
	got["client details"] = first("me", r.ok("-o", "json", "me"))
	got["group"] = first("group create", r.ok("-o", "json", "group", "create", "orders", "eu", "workers"))
	got["group details"] = first("group get", r.ok("-o", "json", "group", "get", "orders", "eu", "workers"))
	r.ok("message", "poll", "orders", "eu", "--consumer", "c1", "--auto-commit")
	got["offset"] = first("offset get", r.ok("-o", "json", "offset", "get", "orders", "eu", "--consumer", "c1"))
	got["ping"] = first("ping", r.ok("-o", "json", "ping"))
	got["done"] = first("stream update", r.ok("-o", "json", "stream", "purge", "orders"))
	got["stats"] = first("stats", r.ok("-o", "json", "stats"))
	got["version"] = first("version", r.ok("-o", "json", "version"))
	withConfig.ok("context", "add", "local", "--address", r.addr)
	got["context"] = first("context list", withConfig.ok("-o", "json", "context", "list"))

	// Records that extend another print its fields too.
	extends := map[string]string{"stream details": "stream", "topic details": "topic", "user details": "user",
		"client details": "client", "group details": "group"}
	for name, obj := range got {
		want := append([]string(nil), doc[name]...)
		if base, ok := extends[name]; ok {
			want = append(want, doc[base]...)
		}
		if len(doc[name]) == 0 {
			t.Errorf("README documents no record %q", name)
			continue
		}
		var keys []string
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sort.Strings(want)
		if strings.Join(keys, " ") != strings.Join(want, " ") {
			t.Errorf("record %q: prints %v, README documents %v", name, keys, want)
		}
	}
	for name := range doc {
		if _, ok := got[name]; !ok {
			t.Errorf("README documents record %q that the test does not check", name)
		}
	}
}

// TestMessagesFilesHeadersPartitions: a file is one message, byte for
// byte, and polls back into a file; typed headers round-trip; the poll
// table has a header row; a keyed send says where its messages went.
func TestMessagesFilesHeadersPartitions(t *testing.T) {
	r := fastRunner(t, realServer(t))
	r.ok("stream", "create", "s")
	r.ok("topic", "create", "s", "t", "--partitions", "3")
	dir := t.TempDir()
	blob := make([]byte, 3000)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	blob[100], blob[200] = '\n', '\n' // line breaks do not split a file
	in := filepath.Join(dir, "bin.dat")
	if err := os.WriteFile(in, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	if out := r.ok("message", "send", "s", "t", "--partition", "1", "--input-file", in); out != "sent 1 message (2.9 KiB) in 1 batch to partition 1 (offset 0)\n" {
		t.Errorf("send --input-file: %q", out)
	}
	back := filepath.Join(dir, "back.dat")
	if out := r.ok("message", "poll", "s", "t", "--partition", "1", "--offset", "0", "--count", "10", "--output-file", back); out != "wrote 1 message (2.9 KiB) to "+back+"\n" {
		t.Errorf("poll --output-file: %q", out)
	}
	if got, err := os.ReadFile(back); err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("the polled file differs from the sent one (%d bytes, %v)", len(got), err)
	}
	// Stdin whole with --input-file -.
	if out, errOut, code := r.run(string(blob), "message", "send", "s", "t", "--partition", "1", "--input-file", "-"); code != 0 || !strings.HasPrefix(out, "sent 1 message (2.9 KiB)") {
		t.Errorf("send --input-file -: exit %d %q %q", code, out, errOut)
	}
	if _, errOut, code := r.run("", "message", "send", "s", "t", "--input-file", in, "extra"); code != 2 || !strings.Contains(errOut, "not both") {
		t.Errorf("--input-file with MESSAGE: exit %d %q", code, errOut)
	}

	// Typed headers, as Iggy's CLI takes them, comma separated or repeated.
	r.ok("message", "send", "s", "t", "--partition", "2",
		"-H", "src:string:cli,tags=a,b,ok:bool:true", "--header", "n:uint32:42",
		"-H", "neg:int128:-170141183460469231731687303715884105728,big:uint64:18446744073709551615,f:float64:2.5,r:raw:xyz", "payload")
	msg := decodeLines(t, "poll", r.ok("-o", "json", "message", "poll", "s", "t", "--partition", "2"))[0]
	var hs []string
	for _, h := range msg["headers"].([]any) {
		m := h.(map[string]any)
		hs = append(hs, fmt.Sprintf("%s:%s:%s", m["key"], m["kind"], m["value"]))
	}
	want := "src:string:cli tags:string:a,b ok:bool:true n:uint32:42 neg:int128:-170141183460469231731687303715884105728 " +
		"big:uint64:18446744073709551615 f:float64:2.5 r:raw:eHl6"
	if strings.Join(hs, " ") != want {
		t.Errorf("headers\n got %s\nwant %s", strings.Join(hs, " "), want)
	}
	table := r.ok("message", "poll", "s", "t", "--partition", "2", "--show-headers")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2 || lines[0] != "OFFSET\tTIMESTAMP\tID\tHEADERS\tPAYLOAD" || !strings.Contains(lines[1], "\tsrc:string:cli,tags:string:a,b,ok:bool:true,n:uint32:42,") {
		t.Errorf("poll table with headers: %q", table)
	}
	if table := r.ok("message", "poll", "s", "t", "--partition", "0"); table != "OFFSET\tTIMESTAMP\tID\tPAYLOAD\n" {
		t.Errorf("poll table of an empty partition: %q", table)
	}
	for _, bad := range []string{"k:int9:1", "k:uint8:-1", "k:bool:maybe", ":string:v", "k:string:", "novalue"} {
		if _, errOut, code := r.run("", "message", "send", "s", "t", "-H", bad, "x"); code != 2 || !strings.Contains(errOut, "--header") {
			t.Errorf("-H %s: exit %d %q, want a usage error", bad, code, errOut)
		}
	}

	// A keyed send says which partition and offsets; a balanced one lists
	// each partition.
	out := r.ok("message", "send", "s", "t", "--key", "customer-42", "a", "b", "c")
	m := regexp.MustCompile(`^sent 3 messages \(3 B\) in 1 batch to partition (\d) \(offsets (\d+)\.\.(\d+)\)\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("keyed send: %q", out)
	}
	polled := decodeLines(t, "poll", r.ok("-o", "json", "message", "poll", "s", "t", "--partition", m[1], "--offset", m[2], "--count", "3"))
	if len(polled) != 3 || polled[0]["payload"] != "a" || polled[2]["offset"] != json.Number(m[3]) {
		t.Errorf("the keyed messages are not at partition %s offsets %s..%s: %v", m[1], m[2], m[3], polled)
	}
	sum := decodeLines(t, "send", r.ok("-o", "json", "message", "send", "s", "t", "--batch-size", "1", "x", "y", "z"))[0]
	if parts := sum["partitions"].([]any); len(parts) != 3 {
		t.Errorf("round-robin send of 3 batches over 3 partitions: %v", sum)
	}
	if out := r.ok("message", "send", "s", "t", "--batch-size", "1", "x", "y", "z"); !strings.Contains(out, "to partitions 0 (1 message, offset ") {
		t.Errorf("balanced send: %q", out)
	}
	// Binary stdin is still one message per line, with a warning.
	if _, errOut, code := r.run(string(blob), "message", "send", "s", "t", "--partition", "0"); code != 0 || !strings.Contains(errOut, "--input-file") {
		t.Errorf("binary stdin: exit %d, stderr %q", code, errOut)
	}
}

// TestSavedContexts: contexts are saved with mode 0600, selected by use,
// --context or STRATA_CONTEXT, and the environment overrides them.
func TestSavedContexts(t *testing.T) {
	addr := realServer(t)
	cfg := t.TempDir()
	dead := closedPort(t)
	// No address, credentials or config from the test harness: only what
	// each case gives.
	bare := map[string]string{"STRATA_ADDRESS": "", "STRATA_USERNAME": "", "STRATA_PASSWORD": "", "STRATA_CONFIG_DIR": cfg}
	with := func(extra map[string]string) runner {
		env := map[string]string{}
		for k, v := range bare {
			env[k] = v
		}
		for k, v := range extra {
			env[k] = v
		}
		return runner{t: t, addr: addr, env: env}
	}
	r := with(nil)
	if out := r.ok("context", "add", "local", "--address", addr, "-u", "iggy", "-p", "iggy", "--description", "the test broker", "--use"); !strings.Contains(out, "it is now current") {
		t.Fatalf("context add: %q", out)
	}
	r.ok("context", "add", "dead", "--address", dead, "--token", "not-a-token")
	st, err := os.Stat(filepath.Join(cfg, "contexts.toml"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("contexts.toml: %v, mode %v; want 0600", err, st.Mode())
	}
	// The current context supplies address and credentials.
	r.ok("stream", "create", "orders")
	list := decodeLines(t, "context list", r.ok("-o", "json", "context", "list"))
	if len(list) != 2 || list[1]["name"] != "local" || list[1]["current"] != true || list[1]["auth"] != "password" || list[0]["auth"] != "token" {
		t.Fatalf("context list: %v", list)
	}
	if out := r.ok("context", "list"); strings.Contains(out, "iggy\t") || strings.Contains(out, "not-a-token") || !strings.Contains(out, "* ") {
		t.Errorf("context list shows a secret or no current marker: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, "contexts.toml")); !bytes.Contains(b, []byte(`current = "local"`)) {
		t.Errorf("contexts.toml: %s", b)
	}
	// --context and STRATA_CONTEXT select another one.
	if _, errOut, code := r.run("", "--context", "dead", "ping"); code != 3 || !strings.Contains(errOut, "cannot connect to "+dead) {
		t.Errorf("--context dead: exit %d %q", code, errOut)
	}
	if _, errOut, code := with(map[string]string{"STRATA_CONTEXT": "dead"}).run("", "ping"); code != 3 || !strings.Contains(errOut, dead) {
		t.Errorf("STRATA_CONTEXT=dead: exit %d %q", code, errOut)
	}
	// The environment and flags override the context's settings.
	r.ok("context", "use", "dead")
	envWins := with(map[string]string{"STRATA_ADDRESS": addr, "STRATA_USERNAME": "iggy", "STRATA_PASSWORD": "iggy"})
	if out := envWins.ok("stream", "list"); !strings.Contains(out, "orders") {
		t.Errorf("environment over the context: %q", out)
	}
	if out := r.ok("--address", addr, "-u", "iggy", "-p", "iggy", "stream", "list"); !strings.Contains(out, "orders") {
		t.Errorf("flags over the context: %q", out)
	}
	// Credentials go together: an environment username drops the
	// context's token (this login fails for the password, not the token).
	if _, errOut, code := with(map[string]string{"STRATA_ADDRESS": addr, "STRATA_USERNAME": "iggy", "STRATA_PASSWORD": "wrong"}).run("", "stream", "list"); code != 1 || !strings.Contains(errOut, "(42 InvalidCredentials)") {
		t.Errorf("environment credentials over the context's token: exit %d %q", code, errOut)
	}
	// Mistakes are errors.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"context", "use", "nope"}, `context "nope" not found (saved: dead, local)`},
		{[]string{"--context", "nope", "ping"}, `context "nope" not found`},
		{[]string{"context", "add", "local", "--address", addr}, `context "local" exists; give --force`},
		{[]string{"context", "add", "empty"}, "nothing to save"},
		{[]string{"context", "add", "bad/name", "--address", addr}, `context name "bad/name"`},
	} {
		if _, errOut, code := r.run("", tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("strata %s: exit %d %q, want exit 2 and %q", strings.Join(tc.args, " "), code, errOut, tc.want)
		}
	}
	r.ok("context", "use", "default")
	if _, errOut, code := r.run("", "stream", "list"); code != 3 || !strings.Contains(errOut, "127.0.0.1:8090") && !strings.Contains(errOut, "(40 Unauthenticated)") {
		t.Logf("no context: exit %d %q", code, errOut) // the default address; whatever runs there is not ours
	}
	r.ok("context", "remove", "dead")
	r.ok("context", "rm", "local")
	if list := decodeLines(t, "context list", r.ok("-o", "json", "context", "list")); len(list) != 0 {
		t.Errorf("contexts after remove: %v", list)
	}
	// A broken file is an error that names it.
	if err := os.WriteFile(filepath.Join(cfg, "contexts.toml"), []byte("current = \"x\"\nadress = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := r.run("", "ping"); code != 1 || !strings.Contains(errOut, "contexts.toml: unknown key adress") || !strings.Contains(errOut, "(2 InvalidConfiguration)") {
		t.Errorf("broken contexts file: exit %d %q", code, errOut)
	}
}
