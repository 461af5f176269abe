package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
)

// benchCLI runs strata-bench's command line against the in-process server
// at addr and returns stdout, stderr and the exit code.
func benchCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runMain(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), code
}

// streamNames lists the streams on the server at addr.
func streamNames(t *testing.T, addr string) []string {
	t.Helper()
	c, err := client.Dial(context.Background(), addr, client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	streams, err := c.GetStreams(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range streams {
		names = append(names, s.Name)
	}
	return names
}

// TestBatchesRunPrintsFigures: --batches N with the default warm-up
// measures N batches per producer (the warm-up swallowed them all and the
// table showed "-" and zeros), reads a producer-only run back and
// verifies it, names the latency unit, and deletes the streams it made
// unless --keep.
func TestBatchesRunPrintsFigures(t *testing.T) {
	srv, err := startInProcess(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	addr := srv.TCPAddr().String()
	dir := t.TempDir()
	out, errOut, code := benchCLI(t, "pinned-producer", "--address", addr, "--batches", "4", "--messages-per-batch", "50",
		"--message-size", "200", "--partitions", "2", "--producers", "2", "--rate-mb", "1", "--output", filepath.Join(dir, "r.json"))
	t.Logf("strata-bench pinned-producer --batches 4:\n%s%s", out, errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	res := rep.Results[0]
	const measured = 2 * 4 * 50
	if res.Producers.Messages != measured || res.Producers.MBps <= 0 || res.Producers.Latency.Count != 2*4 {
		t.Fatalf("measured %d messages at %.1f MB/s in %d batches; want %d in 8 batches", res.Producers.Messages,
			res.Producers.MBps, res.Producers.Latency.Count, measured)
	}
	if !res.ReadBack || res.Sent < measured || res.Verified != res.Sent {
		t.Fatalf("read back %v: verified %d of %d sent", res.ReadBack, res.Verified, res.Sent)
	}
	// The time series holds the same measured batches, per producer and
	// in total (the report's charts are drawn from it).
	if res.Series == nil || res.Series.Producers == nil || len(res.Series.Producers.Actors) != 2 || len(res.Series.T) == 0 {
		t.Fatalf("no per-producer time series: %+v", res.Series)
	}
	batches := func(l LatencySeries) (n uint64) {
		for _, c := range l.Count {
			n += c
		}
		return n
	}
	if got := batches(res.Series.Producers.Total.Latency); got != 2*4 {
		t.Fatalf("the series counts %d measured batches, want 8", got)
	}
	for i, a := range res.Series.Producers.Actors {
		if got := batches(a.Latency); got != 4 {
			t.Fatalf("producer #%d: the series counts %d measured batches, want 4", i, got)
		}
	}
	header := strings.SplitN(out, "\n", 2)[0]
	for _, col := range []string{"MB/s", "msgs/s", "p50 ms", "p99 ms", "max ms"} {
		if !strings.Contains(header, col) {
			t.Errorf("table header %q lacks %q", header, col)
		}
	}
	if strings.Contains(strings.SplitN(out, "\n", 3)[1], " - ") {
		t.Errorf("the producer row has no figures: %q", out)
	}
	if !strings.Contains(out, "sent messages read back after the run and verified") || !strings.Contains(out, "deleted the 1 stream(s)") {
		t.Errorf("output does not say how it verified or that it cleaned up: %q", out)
	}
	if names := streamNames(t, addr); len(names) != 0 {
		t.Fatalf("streams left behind: %v", names)
	}

	// --keep keeps them; --no-verify says the run was not read back.
	out, errOut, code = benchCLI(t, "pinned-producer", "--address", addr, "--batches", "1", "--messages-per-batch", "10",
		"--message-size", "100", "--warmup", "0", "--keep", "--no-verify")
	if code != 0 {
		t.Fatalf("--keep: exit %d: %s", code, errOut)
	}
	if names := streamNames(t, addr); len(names) != 1 || !strings.Contains(out, "kept the streams the run created: "+names[0]) {
		t.Fatalf("--keep: streams %v, output %q", names, out)
	}
	if !strings.Contains(out, "10 messages sent, each batch acknowledged by the server; not read back") {
		t.Errorf("--no-verify: %q", out)
	}

	// Bad options are usage errors.
	for _, args := range [][]string{{"pinned-producer", "--durability", "maybe"}, {"pinned-prodcer"}, {"compare", "redis"}, {"report", "--no-such-flag"}} {
		if _, errOut, code := benchCLI(t, append(args, "--address", addr)...); code != 2 {
			t.Errorf("strata-bench %v: exit %d (%s), want 2", args, code, errOut)
		}
	}
}
