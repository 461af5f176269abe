package server_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// TestSnapshotIsBounded fills the log directory with 40 MiB of log lines
// (an old rotated file and a large current one) and asks for the server
// logs: the archive keeps only the newest 16 MiB, cut at a line, and the
// reply stays far below the 64 MiB frame.
func TestSnapshotIsBounded(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 99) + "\n"
	write := func(name, first, last string, bytes int) {
		t.Helper()
		var b strings.Builder
		b.WriteString(first + "\n")
		for b.Len() < bytes {
			b.WriteString(line)
		}
		b.WriteString(last + "\n")
		if err := os.WriteFile(filepath.Join(logs, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("strata-server.log.1", "rotated-first-line", "rotated-last-line", 8<<20)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(logs, "strata-server.log.1"), old, old); err != nil {
		t.Fatal(err)
	}
	write("strata-server.log", "current-first-line", "current-last-line", 32<<20)

	c := ts.connect()
	started := time.Now()
	archive, err := c.GetSnapshot(ctx(t), client.SnapshotStored, client.SnapshotServerLogs, client.SnapshotResourceUsage)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(started)
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 2 || zr.File[0].Name != "server_logs.txt" || zr.File[1].Name != "resource_usage.txt" {
		t.Fatalf("entries %v", zr.File)
	}
	rc, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	const logCap = 16 << 20
	if len(text) > logCap+1024 {
		t.Fatalf("server_logs.txt is %d bytes, over the %d cap", len(text), logCap)
	}
	for _, want := range []string{"current-last-line", "=== strata-server.log: the last ", "=== strata-server.log.1: "} {
		if !bytes.Contains(text, []byte(want)) {
			t.Fatalf("server_logs.txt lacks %q", want)
		}
	}
	for _, never := range []string{"current-first-line", "rotated-first-line", "rotated-last-line"} {
		if bytes.Contains(text, []byte(never)) {
			t.Fatalf("server_logs.txt holds %q, beyond the newest %d bytes", never, logCap)
		}
	}
	// The kept part starts at a whole line.
	body := text[bytes.Index(text, []byte("=== strata-server.log: the last ")):]
	body = body[bytes.IndexByte(body, '\n')+1:]
	if !bytes.HasPrefix(body, []byte(line)) {
		t.Fatalf("the kept log starts inside a line: %.120q", body)
	}
	if len(archive) > wire.MaxFrameSize/2 {
		t.Fatalf("archive of %d bytes", len(archive))
	}
	t.Logf("40 MiB of logs: archive %d bytes (server_logs.txt %d bytes), built in %s", len(archive), len(text), took)

	// "all" with another type is refused like Iggy does.
	if _, err := c.GetSnapshot(ctx(t), client.SnapshotDeflated, client.SnapshotTest, client.SnapshotAll); !errors.Is(err, wire.ErrInvalidCommand) {
		t.Fatalf("all with test: %v", err)
	}
}
