package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
)

// serverBinary builds strata-server once per test binary run.
var serverBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "strata-server-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary = filepath.Join(dir, "strata-server")
	build := exec.Command("go", "build", "-o", serverBinary, ".")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build strata-server:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// process is a strata-server child process.
type process struct {
	cmd    *exec.Cmd
	addr   string
	stderr *lockedBuffer
	exited chan error
}

// lockedBuffer is the child's stderr, written by the reader goroutine and
// read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the child's stderr matches re and returns the match.
func (p *process) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child output never matched %s:\n%s", re, p.stderr)
	return nil
}

// listeningLine is the boot banner line that names the TCP address.
var listeningLine = regexp.MustCompile(`listening: tcp (\S+),`)

// startProcess runs strata-server over dir and waits for its banner.
func startProcess(t *testing.T, dir string, env ...string) *process {
	t.Helper()
	cmd := exec.Command(serverBinary, "--with-default-root-credentials")
	cmd.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+dir, "STRATA_TCP_ADDRESS=127.0.0.1:0")
	cmd.Env = append(cmd.Env, env...)
	return startCmd(t, cmd)
}

// startCmd starts a prepared strata-server command and waits for its
// banner.
func startCmd(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(pipe)
		for scanner.Scan() {
			line := scanner.Text()
			p.stderr.WriteString(line + "\n")
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		p.exited <- cmd.Wait()
	}()
	select {
	case p.addr = <-found:
	case err := <-p.exited:
		t.Fatalf("strata-server exited at boot: %v\n%s", err, p.stderr)
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("strata-server did not print its address:\n%s", p.stderr)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
	})
	return p
}

// kill9 kills the process with SIGKILL and waits for it.
func (p *process) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

// terminate stops the process with SIGTERM and checks a clean exit.
func (p *process) terminate(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("strata-server exit: %v\n%s", err, p.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("strata-server did not stop on SIGTERM")
	}
}

func dialRoot(t *testing.T, addr string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoginUser(ctx, "iggy", "iggy"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestKill9DuringPersistedSendsLosesNothingAcknowledged sends to a
// persisted topic from several connections, kills the server with SIGKILL
// in the middle, restarts it, and checks that every acknowledged message is
// there, in order, byte-identical.
func TestKill9DuringPersistedSendsLosesNothingAcknowledged(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir)
	c := dialRoot(t, p.addr)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 2, opts); err != nil {
		t.Fatal(err)
	}
	type ack struct {
		base    uint64
		payload []string
	}
	const producers = 4
	acked := make([][]ack, 2)
	results := make(chan struct {
		partition uint32
		a         ack
	}, 1<<16)
	stop := make(chan struct{})
	done := make(chan struct{}, producers)
	for w := 0; w < producers; w++ {
		go func(w int) {
			defer func() { done <- struct{}{} }()
			pc, err := client.Dial(ctx, p.addr)
			if err != nil {
				return
			}
			defer pc.Close()
			if _, err := pc.LoginUser(ctx, "iggy", "iggy"); err != nil {
				return
			}
			partition := uint32(w % 2)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				batch := []client.Message{
					{Payload: []byte(fmt.Sprintf("w%d-%d-a", w, i))},
					{Payload: []byte(fmt.Sprintf("w%d-%d-b", w, i))},
				}
				conf, err := pc.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(partition), batch)
				if err != nil {
					return // the server died: this send was not acknowledged
				}
				results <- struct {
					partition uint32
					a         ack
				}{partition, ack{conf[0].BaseOffset, []string{string(batch[0].Payload), string(batch[1].Payload)}}}
			}
		}(w)
	}
	// Let the producers run, then pull the plug.
	deadline := time.After(20 * time.Second)
	count := 0
	for count < 2000 {
		select {
		case r := <-results:
			acked[r.partition] = append(acked[r.partition], r.a)
			count++
			continue
		case <-deadline:
		}
		break
	}
	p.kill9(t)
	close(stop)
	for i := 0; i < producers; i++ {
		<-done
	}
	close(results)
	for r := range results {
		acked[r.partition] = append(acked[r.partition], r.a)
	}
	if count == 0 {
		t.Fatalf("no send was acknowledged before the kill:\n%s", p.stderr)
	}

	p2 := startProcess(t, dir)
	c2 := dialRoot(t, p2.addr)
	total := 0
	for partition := uint32(0); partition < 2; partition++ {
		stored := map[uint64]string{}
		next := uint64(0)
		for {
			res, err := c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(0)),
				Stream: client.ID(0), Topic: client.ID(0), Partition: partition, Strategy: client.PollOffset(next), Count: 5000})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Messages) == 0 {
				break
			}
			for _, m := range res.Messages {
				stored[m.Offset] = string(m.Payload)
				next = m.Offset + 1
			}
		}
		for _, a := range acked[partition] {
			for i, payload := range a.payload {
				if got, ok := stored[a.base+uint64(i)]; !ok || got != payload {
					t.Fatalf("partition %d offset %d: acknowledged %q, stored %q (present %v)", partition, a.base+uint64(i), payload, got, ok)
				}
				total++
			}
		}
	}
	t.Logf("%d acknowledged messages all present after kill -9", total)
	p2.terminate(t)
}

// TestBootBannerAndCurrentConfig checks what `make run` shows a user and
// the files a first boot creates.
func TestBootBannerAndCurrentConfig(t *testing.T) {
	dir := t.TempDir()
	p := startProcess(t, dir)
	for _, want := range []string{"root user created", "io engine", "shards"} {
		if !strings.Contains(p.stderr.String(), want) {
			t.Fatalf("boot output lacks %q:\n%s", want, p.stderr)
		}
	}
	if _, _, err := net.SplitHostPort(p.addr); err != nil {
		t.Fatalf("address %q: %v", p.addr, err)
	}
	for _, name := range []string{"runtime/current_config.toml", "state/log", "metadata/journal.wal", "logs/strata-server.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	current, err := os.ReadFile(filepath.Join(dir, "runtime", "current_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(current), p.addr) {
		t.Fatalf("current_config.toml lacks the bound address %s:\n%s", p.addr, current)
	}
	p.terminate(t)
}

// TestBadConfigStopsWithTheKey checks that a bad value names its key.
func TestBadConfigStopsWithTheKey(t *testing.T) {
	cmd := exec.Command(serverBinary)
	cmd.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+t.TempDir(), "STRATA_SYSTEM_IO_ENGINE=warp")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("server accepted a bad engine:\n%s", out)
	}
	if !strings.Contains(string(out), "system.io.engine") {
		t.Fatalf("error does not name the key:\n%s", out)
	}
}

// httpLine is the boot line that names the HTTP address.
var httpLine = regexp.MustCompile(`http api on http://(\S+)`)

// TestHTTPAPIThroughTheBinary follows the README's curl walkthrough with
// net/http against the built server: login, stream, topic, send, poll,
// metrics.
func TestHTTPAPIThroughTheBinary(t *testing.T) {
	p := startProcess(t, t.TempDir(), "STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0")
	base := "http://" + p.waitFor(t, httpLine)[1]
	call := func(method, path, token, body string, want int) map[string]any {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, data)
		}
		out := map[string]any{}
		if len(data) > 0 && data[0] == '{' {
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatalf("%s %s: %v: %s", method, path, err, data)
			}
		}
		out["_raw"] = string(data)
		return out
	}
	login := call("POST", "/users/login", "", `{"username":"iggy","password":"iggy"}`, 200)
	token, _ := login["access_token"].(map[string]any)["token"].(string)
	if token == "" {
		t.Fatalf("no token: %v", login)
	}
	call("POST", "/streams", token, `{"name":"orders"}`, 200)
	call("POST", "/streams/orders/topics", token, `{"name":"events","partitions_count":2,"compression_algorithm":"none","message_expiry":0,"max_topic_size":0,"options":{"durability":"persisted"}}`, 200)
	call("POST", "/streams/orders/topics/events/messages", token, `{"partitioning":{"kind":"partition_id","value":0},"messages":[{"id":1,"payload":"aGVsbG8="},{"id":2,"payload":"d29ybGQ="}]}`, 201)
	polled := call("GET", "/streams/orders/topics/events/messages?consumer_id=1&partition_id=0&kind=offset&value=0&count=10", token, "", 200)
	if !strings.Contains(polled["_raw"].(string), "aGVsbG8=") || fmt.Sprint(polled["count"]) != "2" {
		t.Fatalf("poll: %v", polled["_raw"])
	}
	call("GET", "/streams/nope", token, "", 404)
	call("GET", "/streams", "", "", 401)
	metrics := call("GET", "/metrics", "", "", 200)["_raw"].(string)
	if !strings.Contains(metrics, "strata_messages_appended_total 2") {
		t.Fatalf("metrics do not show the two messages:\n%s", metrics)
	}
	call("DELETE", "/users/logout", token, "", 204)
	call("GET", "/streams", token, "", 401)
	p.terminate(t)
}

// generatedPassword is the boot line of a root user created without a
// password.
var generatedPassword = regexp.MustCompile(`root user created: username "([^"]+)", password "([^"]+)"`)

// TestRandomRootPasswordPrintedOnce: without credentials the first boot
// prints a generated root password that works; the next boot does not
// print it again.
func TestRandomRootPasswordPrintedOnce(t *testing.T) {
	dir := t.TempDir()
	cmd := func() *process {
		t.Helper()
		c := exec.Command(serverBinary)
		c.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+dir, "STRATA_TCP_ADDRESS=127.0.0.1:0")
		return startCmd(t, c)
	}
	p := cmd()
	m := p.waitFor(t, generatedPassword)
	c, err := client.Dial(context.Background(), p.addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.LoginUser(context.Background(), m[1], m[2]); err != nil {
		t.Fatalf("login with the printed password: %v", err)
	}
	_ = c.Close()
	p.terminate(t)
	p2 := cmd()
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(p2.stderr.String(), m[2]) {
		t.Fatal("the generated password was printed again")
	}
	p2.terminate(t)
}
