package connectors_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stratabroker/strata/connectors"
)

// buildExample builds connectors/examples/jsonlsink into dir.
func buildExample(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "jsonlsink")
	cmd := exec.Command(goBin, "build", "-o", bin, "./examples/jsonlsink")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build example: %v\n%s", err, out)
	}
	return bin
}

// replaceBinary swaps a new copy of the binary in by rename, as a deploy
// would, while the runtime keeps running.
func replaceBinary(t *testing.T, bin string) {
	t.Helper()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+".new", b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		t.Fatal(err)
	}
}

// TestExternalPluginCrashAndRestart kills an external sink's process in
// the middle of delivery: only that connector goes to status error (the
// source and another sink keep running), and a restart through the API
// (with the binary replaced meanwhile) resumes delivery with nothing lost.
func TestExternalPluginCrashAndRestart(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 2)
	bin := buildExample(t, t.TempDir())
	configDir, stateDir := t.TempDir(), t.TempDir()
	extOut := filepath.Join(t.TempDir(), "ext.jsonl")
	archiveOut := filepath.Join(t.TempDir(), "archive.jsonl")
	const total = 400
	writeFile(t, configDir, "gen_source.toml", fmt.Sprintf(`plugin = "random"
[[streams]]
stream = "events"
topic = "clicks"
[plugin_config]
messages_per_batch = 5
max_count = %d
interval = "5ms"
`, total))
	writeFile(t, configDir, "archive_sink.toml", fileSinkConfig(archiveOut))
	writeFile(t, configDir, "ext_sink.toml", fmt.Sprintf(`path = %q
verbose = true
[[streams]]
stream = "events"
topics = ["clicks"]
batch_length = 10
[plugin_config]
path = %q
`, bin, extOut))
	env := startRuntime(t, addr, configDir, stateDir)

	var ext connectors.ConnectorInfo
	env.getJSON(t, "/sinks/ext", &ext)
	if ext.Status != connectors.StatusRunning || ext.ProcessID == 0 {
		t.Fatalf("external sink: %+v", ext)
	}
	waitFor(t, "external sink delivering", func() bool { return len(readLines(t, extOut)) >= 20 })
	if err := syscall.Kill(ext.ProcessID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "external sink in status error", func() bool {
		var in connectors.ConnectorInfo
		env.getJSON(t, "/sinks/ext", &in)
		return in.Status == connectors.StatusError
	})
	var failed connectors.ConnectorInfo
	env.getJSON(t, "/sinks/ext", &failed)
	if failed.Counters.Errors == 0 || !strings.Contains(failed.LastError, "plugin process failed") {
		t.Fatalf("failed sink: %+v", failed)
	}
	for _, path := range []string{"/sources/gen", "/sinks/archive"} {
		var in connectors.ConnectorInfo
		env.getJSON(t, path, &in)
		if in.Status != connectors.StatusRunning {
			t.Fatalf("%s: status %s after another connector's crash", path, in.Status)
		}
	}

	replaceBinary(t, bin)
	resp, err := http.Post(env.base+"/sinks/ext/restart", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("restart: %d %s", resp.StatusCode, body)
	}
	var restarted connectors.ConnectorInfo
	env.getJSON(t, "/sinks/ext", &restarted)
	if restarted.Status != connectors.StatusRunning || restarted.PluginID == ext.PluginID || restarted.ProcessID == ext.ProcessID {
		t.Fatalf("after restart: %+v (before: id %d pid %d)", restarted, ext.PluginID, ext.ProcessID)
	}
	waitFor(t, "every message in the external sink", func() bool { return countIDs(readLines(t, extOut)) == total })
	checkAtLeastOnce(t, readLines(t, extOut), total)
	waitFor(t, "every message in the archive sink", func() bool { return len(readLines(t, archiveOut)) >= total })
	checkOncePerID(t, readLines(t, archiveOut), total)

	var stats connectors.Stats
	env.getJSON(t, "/stats", &stats)
	if stats.SinksTotal != 2 || stats.SinksRunning != 2 || stats.SourcesTotal != 1 {
		t.Fatalf("stats: %+v", stats)
	}
	resp, err = http.Get(env.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`strata_connectors_errors_total{connector_key="ext",connector_type="sink"}`,
		`strata_connectors_messages_sent_total{connector_key="gen",connector_type="source"} 400`,
		`strata_connectors_messages_processed_total{connector_key="archive",connector_type="sink"} 400`,
		`strata_connectors_stage_duration_seconds_count{connector_key="archive",connector_type="sink",stage="plugin"}`,
		`strata_connectors_sinks_running 2`,
		`strata_connectors_sources 1`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Fatalf("/metrics lacks %s:\n%s", want, metrics)
		}
	}
}
