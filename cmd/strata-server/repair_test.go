package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/cmd/strata/cli"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/storage/storagetest"
)

// treeDigest maps every file under dir to the SHA-256 of its content.
func treeDigest(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = sha256.Sum256(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runRepairBinary runs `strata-server repair` over dataDir.
func runRepairBinary(t *testing.T, dataDir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(serverBinary, append([]string{"repair"}, args...)...)
	cmd.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+dataDir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// runCLI runs one strata CLI command against addr as root.
func runCLI(t *testing.T, addr string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := map[string]string{"STRATA_ADDRESS": addr, "STRATA_USERNAME": "iggy", "STRATA_PASSWORD": "iggy"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if code := cli.Run(ctx, cli.Env{Args: args, Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}); code != 0 {
		t.Fatalf("strata %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

// httpGet fetches base+path with an optional bearer token.
func httpGet(t *testing.T, url, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", url, resp.StatusCode, err, data)
	}
	return string(data)
}

// httpToken logs in over the REST API and returns the access token.
func httpToken(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Post(base+"/users/login", "application/json", strings.NewReader(`{"username":"iggy","password":"iggy"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`"token":"([^"]+)"`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("login: %s", data)
	}
	return string(m[1])
}

// pollRange reads offsets [from, to) of partition 0 and checks them
// against sent.
func pollRange(t *testing.T, c *client.Client, from, to uint64, sent [][]byte) {
	t.Helper()
	for next := from; next < to; {
		res, err := c.PollMessages(context.Background(), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(next), Count: uint32(min(to-next, 1000))})
		if err != nil {
			t.Fatalf("poll at %d: %v", next, err)
		}
		if len(res.Messages) == 0 {
			t.Fatalf("poll at %d: no messages (want up to %d)", next, to-1)
		}
		for _, m := range res.Messages {
			if m.Offset != next || !bytes.Equal(m.Payload, sent[next]) {
				t.Fatalf("offset %d: got offset %d payload %.20q, want %.20q", next, m.Offset, m.Payload, sent[next])
			}
			next++
		}
	}
}

// TestFencedPartitionAndRepairThroughTheBinary damages a segment in the
// middle of a partition of the built server, checks the fence through
// TCP, HTTP, /metrics, the CLI and the log, then runs the built
// `strata-server repair`: without --confirm it changes nothing; with it the
// damaged files are moved aside, and after a restart the partition serves
// its prefix and takes sends again.
func TestFencedPartitionAndRepairThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	httpEnv := []string{"STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0"}
	p := startProcess(t, dir)
	c := dialRoot(t, p.addr)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionSegmentSize, client.StringValue("1 MiB"))
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 1, opts); err != nil {
		t.Fatal(err)
	}
	const messages, size, batch = 3000, 1000, 100
	var sent [][]byte
	for i := 0; i < messages; i += batch {
		var msgs []client.Message
		for j := i; j < i+batch; j++ {
			payload := bytes.Repeat([]byte{byte('a' + j%26)}, size)
			copy(payload, fmt.Sprintf("m%d|", j))
			sent = append(sent, payload)
			msgs = append(msgs, client.Message{Payload: payload})
		}
		if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), msgs); err != nil {
			t.Fatal(err)
		}
	}
	behind, ahead := client.IndividualConsumer(client.ID(3)), client.IndividualConsumer(client.ID(9))
	for consumer, offset := range map[client.Consumer]uint64{behind: 100, ahead: 2500} {
		if err := c.StoreConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 0, offset); err != nil {
			t.Fatal(err)
		}
	}
	p.terminate(t)
	partitionDir := filepath.Join(dir, "streams", "0", "topics", "0", "partitions", "0")
	d, err := storagetest.DamageMiddleSegment(partitionDir)
	if err != nil {
		t.Fatal(err)
	}
	damagedImage, err := os.ReadFile(d.File)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged %s at byte %d: offsets from %d on are past the damage", filepath.Base(d.File), d.Position, d.Offset)

	// Fenced: the prefix is served, the rest refused, and every view says so.
	p2 := startProcess(t, dir, httpEnv...)
	base := "http://" + p2.waitFor(t, httpLine)[1]
	c2 := dialRoot(t, p2.addr)
	pollRange(t, c2, 0, d.Offset, sent)
	_, err = c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(d.Offset), Count: 10})
	if !errors.Is(err, wire.ErrCannotReadMessage) {
		t.Fatalf("poll at the damage: %v, want 4011 CannotReadMessage", err)
	}
	if _, err := c2.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); !errors.Is(err, wire.ErrCannotAppendMessage) {
		t.Fatalf("send to the fenced partition: %v, want 4010 CannotAppendMessage", err)
	}
	stats, err := c2.GetStats(ctx)
	if err != nil || len(stats.FencedPartitions) != 1 || stats.FencedPartitions[0].ServedBelow != d.Offset {
		t.Fatalf("stats fenced partitions %+v (%v), want one served below %d", stats.FencedPartitions, err, d.Offset)
	}
	metrics := httpGet(t, base+"/metrics", "")
	if !strings.Contains(metrics, `strata_partition_fenced{partition_id="0",stream_id="0",topic_id="0"} 1`) {
		t.Fatalf("/metrics lacks the fenced partition:\n%s", metrics)
	}
	token := httpToken(t, base)
	if topic := httpGet(t, base+"/streams/s/topics/t", token); !strings.Contains(topic, fmt.Sprintf(`"fenced":{"served_below":%d`, d.Offset)) {
		t.Fatalf("GET topic does not show the fence: %s", topic)
	}
	if s := httpGet(t, base+"/stats", token); !strings.Contains(s, `"fenced_partitions":[{"stream_id":0,"topic_id":0,"partition_id":0`) {
		t.Fatalf("GET /stats does not show the fence: %s", s)
	}
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/streams/s/topics/t/messages?consumer_id=1&partition_id=0&kind=offset&value=%d&count=10", base, d.Offset), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "cannot_read_message") {
		t.Fatalf("HTTP poll at the damage: %d %s, want 400 cannot_read_message", resp.StatusCode, body)
	}
	if out := runCLI(t, p2.addr, "topic", "get", "s", "t"); !strings.Contains(out, fmt.Sprintf("fenced: serves offsets below %d", d.Offset)) {
		t.Fatalf("strata topic get does not show the fence:\n%s", out)
	}
	if out := runCLI(t, p2.addr, "stats"); !strings.Contains(out, "fenced partitions:") || !strings.Contains(out, d.File) {
		t.Fatalf("strata stats does not show the fence:\n%s", out)
	}
	// The JSON records carry the fence too (cmd/strata/README.md).
	if out := runCLI(t, p2.addr, "-o", "json", "topic", "get", "s", "t"); !strings.Contains(out, fmt.Sprintf(`"state":"fenced","fenced":{"stream_id":0,"topic_id":0,"partition_id":0,"served_below":%d`, d.Offset)) {
		t.Fatalf("strata -o json topic get does not show the fence:\n%s", out)
	}
	if out := runCLI(t, p2.addr, "-o", "json", "stats"); !strings.Contains(out, fmt.Sprintf(`"fenced_partitions":[{"stream_id":0,"topic_id":0,"partition_id":0,"served_below":%d`, d.Offset)) {
		t.Fatalf("strata -o json stats does not show the fence:\n%s", out)
	}
	logFile, err := os.ReadFile(filepath.Join(dir, "logs", "strata-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	fenceLine := regexp.MustCompile(`partition fenced.*"file": "` + regexp.QuoteMeta(d.File) + fmt.Sprintf(`", "byte": %d, .*"reason": "`, d.Position))
	if !fenceLine.Match(logFile) {
		t.Fatalf("the log lacks the fence with file, byte and reason:\n%s", logFile)
	}
	p2.terminate(t)

	// Dry run: says what it would do, changes nothing.
	before := treeDigest(t, partitionDir)
	out, code := runRepairBinary(t, dir)
	t.Logf("repair (dry run):\n%s", out)
	if code != 0 || !strings.Contains(out, "would move") || !strings.Contains(out, filepath.Base(d.File)) || !strings.Contains(out, "--confirm") {
		t.Fatalf("dry run: exit %d:\n%s", code, out)
	}
	if after := treeDigest(t, partitionDir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the dry run changed files:\nbefore %v\nafter  %v", before, after)
	}

	// The repair keeps the prefix and moves the damage aside.
	out, code = runRepairBinary(t, dir, "--confirm")
	t.Logf("repair --confirm:\n%s", out)
	if code != 0 || !strings.Contains(out, "moved "+filepath.Base(d.File)) || !strings.Contains(out, "verified") {
		t.Fatalf("repair --confirm: exit %d:\n%s", code, out)
	}
	asides, err := filepath.Glob(filepath.Join(partitionDir, "damaged-*"))
	if err != nil || len(asides) != 1 {
		t.Fatalf("aside directories %v (%v)", asides, err)
	}
	if moved, err := os.ReadFile(filepath.Join(asides[0], filepath.Base(d.File))); err != nil || !bytes.Equal(moved, damagedImage) {
		t.Fatalf("the damaged segment was not moved aside intact (%v)", err)
	}
	for _, later := range d.Segments[len(d.Segments)/2+1:] {
		if _, err := os.Stat(filepath.Join(asides[0], filepath.Base(later))); err != nil {
			t.Fatalf("segment %s after the damage was not moved aside: %v", filepath.Base(later), err)
		}
	}
	if info, err := os.Stat(d.File); err != nil || info.Size() != d.Position {
		t.Fatalf("the kept segment: %v %v, want %d bytes", info, err, d.Position)
	}

	// Restarted, the partition serves the prefix and takes sends again.
	p3 := startProcess(t, dir)
	c3 := dialRoot(t, p3.addr)
	pollRange(t, c3, 0, d.Offset, sent)
	conf, err := c3.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("after repair")}})
	if err != nil {
		t.Fatalf("send after the repair: %v", err)
	}
	if conf[0].BaseOffset < d.Offset {
		t.Fatalf("the message sent after the repair got offset %d, inside the kept prefix (< %d)", conf[0].BaseOffset, d.Offset)
	}
	res, err := c3.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(conf[0].BaseOffset), Count: 10})
	if err != nil || len(res.Messages) != 1 || string(res.Messages[0].Payload) != "after repair" {
		t.Fatalf("poll of the new message: %+v %v", res, err)
	}
	if stats, err := c3.GetStats(ctx); err != nil || len(stats.FencedPartitions) != 0 {
		t.Fatalf("after the repair stats still list fenced partitions: %+v %v", stats.FencedPartitions, err)
	}
	for consumer, want := range map[client.Consumer]uint64{behind: 100, ahead: d.Offset - 1} {
		o, err := c3.GetConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 0)
		if err != nil || o.StoredOffset != want {
			t.Fatalf("consumer %v offset after the repair: %+v %v, want %d", consumer, o, err, want)
		}
	}
	p3.terminate(t)
}

// TestRepairCommandLine: `strata-server repair` is a subcommand of the
// family's shape: its help exits 0 and names its flags, mistakes exit 2.
func TestRepairCommandLine(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"repair", "--help"}, {"help", "repair"}} {
		cmd := exec.Command(serverBinary, args...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "strata-server repair") || !strings.Contains(string(out), "--confirm") ||
			!strings.Contains(string(out), "--partition") {
			t.Fatalf("strata-server %v: %v\n%s", args, err, out)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"extra"}, `takes no arguments, got "extra"`},
		{[]string{"--partition", "x"}, `--partition "x": want STREAM/TOPIC/PARTITION ids`},
	} {
		out, code := runRepairBinary(t, dir, tc.args...)
		if code != 2 || !strings.Contains(out, tc.msg) {
			t.Fatalf("strata-server repair %v: exit %d, output %q; want 2 and %q", tc.args, code, out, tc.msg)
		}
	}
}
