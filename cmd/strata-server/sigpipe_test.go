package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
)

// flushedLine is the shutdown log line that says what the close flushed.
var flushedLine = regexp.MustCompile(`partitions flushed and closed.*"partitions": (\d+).*"messages_flushed": (\d+).*"bytes_flushed": (\d+)`)

// TestClosedOutputPipeDoesNotKillTheServer is `make run 2>&1 | tee run.log`
// and Ctrl-C: the server's stdout and stderr are a pipe whose reader goes
// away (tee exits first) while the server runs. Messages sent to a
// replicated topic are acknowledged from memory, below the flush
// threshold; SIGINT must still run the graceful shutdown (no death by
// SIGPIPE on the next log line), exit 0, log what it flushed, and every
// acknowledged message must be there after a restart.
func TestClosedOutputPipeDoesNotKillTheServer(t *testing.T) {
	dir := t.TempDir()
	reader, writer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(serverBinary, "--with-default-root-credentials")
	cmd.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+dir, "STRATA_TCP_ADDRESS=127.0.0.1:0")
	cmd.Stdout, cmd.Stderr = writer, writer
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = writer.Close()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	exited := make(chan error, 1)
	addr := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(reader)
		for scanner.Scan() {
			if m := listeningLine.FindStringSubmatch(scanner.Text()); m != nil {
				addr <- m[1]
				break
			}
		}
		// The reader goes away: every later write to the pipe is EPIPE.
		_ = reader.Close()
		exited <- cmd.Wait()
	}()
	var address string
	select {
	case address = <-addr:
	case err := <-exited:
		t.Fatalf("strata-server exited at boot: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("strata-server did not print its address")
	}

	c := dialRoot(t, address)
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	opts := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityReplicated))
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 1, opts); err != nil {
		t.Fatal(err)
	}
	const batches, perBatch = 10, 10
	var want []string
	for b := 0; b < batches; b++ {
		batch := make([]client.Message, perBatch)
		for i := range batch {
			payload := fmt.Sprintf("acknowledged-%d-%d", b, i)
			batch[i] = client.Message{Payload: []byte(payload)}
			want = append(want, payload)
		}
		if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(0), batch); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.Close()

	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("strata-server exit after SIGINT with its output pipe closed: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("strata-server did not stop on SIGINT")
	}

	logData, err := os.ReadFile(filepath.Join(dir, "logs", "strata-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	m := flushedLine.FindStringSubmatch(string(logData))
	if m == nil {
		t.Fatalf("the log does not say what the shutdown flushed:\n%s", logData)
	}
	if m[1] != "1" || m[2] != fmt.Sprint(len(want)) {
		t.Fatalf("shutdown flushed %s messages of %s partitions, want %d of 1", m[2], m[1], len(want))
	}
	if !strings.Contains(string(logData), "console output failed") {
		t.Errorf("the log does not say the console went away")
	}
	t.Logf("shutdown log: %s", m[0])

	p2 := startProcess(t, dir)
	c2 := dialRoot(t, p2.addr)
	res, err := c2.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(0)),
		Stream: client.ID(0), Topic: client.ID(0), Partition: 0, Strategy: client.PollOffset(0), Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != len(want) {
		t.Fatalf("%d messages after the restart, %d were acknowledged", len(res.Messages), len(want))
	}
	for i, msg := range res.Messages {
		if string(msg.Payload) != want[i] || msg.Offset != uint64(i) {
			t.Fatalf("offset %d: %q, want %q at %d", msg.Offset, msg.Payload, want[i], i)
		}
	}
	p2.terminate(t)
}
