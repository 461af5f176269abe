package connectors_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/connectors"
)

// TestRandomSourceToFileSink runs random source → stream (3 partitions) →
// file sink against a real server and checks every message arrives once,
// in order per partition, and the state file is saved 0600.
func TestRandomSourceToFileSink(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 3)
	configDir, stateDir := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	const total = 500
	writeFile(t, configDir, "gen_source.toml", sourceConfig(total, ""))
	writeFile(t, configDir, "archive_sink.toml", fileSinkConfig(out))
	writeFile(t, configDir, ".hidden_sink.toml", "not toml at all [")
	writeFile(t, configDir, "notes.txt", "ignored")
	env := startRuntime(t, addr, configDir, stateDir)

	waitFor(t, "all messages in the sink file", func() bool { return len(readLines(t, out)) >= total })
	env.shutdown(t)
	lines := readLines(t, out)
	checkOncePerID(t, lines, total)
	partitions := map[uint32]bool{}
	for _, l := range lines {
		partitions[l.Partition] = true
	}
	if len(partitions) < 2 {
		t.Fatalf("messages landed in %d partitions, want batches balanced over several", len(partitions))
	}

	st, err := os.Stat(filepath.Join(stateDir, "source_gen.state"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode %v, want 0600", st.Mode().Perm())
	}
	b, err := os.ReadFile(filepath.Join(stateDir, "source_gen.state"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct{ Count int }
	if err := json.Unmarshal(b, &state); err != nil || state.Count != total {
		t.Fatalf("state %q (%v), want count %d", b, err, total)
	}
	logs := env.logs.String()
	if !strings.Contains(logs, "joined consumer group") && !strings.Contains(logs, "falling back to an individual consumer") {
		t.Fatalf("log names neither group nor fallback consumer:\n%s", logs)
	}
	t.Logf("consumer: group=%v", strings.Contains(logs, "joined consumer group"))
}

// TestSourceStateSurvivesRestart stops the runtime after a first run and
// starts a new one over the same state directory with a higher limit: the
// source resumes where it stopped and the sink resumes after its
// committed offsets, so the file holds every id exactly once.
func TestSourceStateSurvivesRestart(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 2)
	configDir, stateDir := t.TempDir(), t.TempDir()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	writeFile(t, configDir, "gen_source.toml", sourceConfig(200, ""))
	writeFile(t, configDir, "archive_sink.toml", fileSinkConfig(out))
	first := startRuntime(t, addr, configDir, stateDir)
	waitFor(t, "first run delivered", func() bool { return len(readLines(t, out)) >= 200 })
	var info connectors.ConnectorInfo
	first.getJSON(t, "/sources/gen", &info)
	firstID := info.PluginID
	first.shutdown(t)
	checkOncePerID(t, readLines(t, out), 200)

	// A new version of the source config raises the limit.
	writeFile(t, configDir, "gen_source_v2.toml", sourceConfig(450, ""))
	second := startRuntime(t, addr, configDir, stateDir)
	second.getJSON(t, "/sources/gen", &info)
	if info.Version != 2 || info.PluginID == firstID {
		t.Fatalf("second run: version %d plugin id %d (first id %d)", info.Version, info.PluginID, firstID)
	}
	waitFor(t, "second run delivered", func() bool { return len(readLines(t, out)) >= 450 })
	second.shutdown(t)
	checkOncePerID(t, readLines(t, out), 450)
}

// TestAtMostOnceDelivery runs the file sink with offsets committed by the
// poll (delivery = "at_most_once"): with no failures every message still
// arrives exactly once, in order per partition.
func TestAtMostOnceDelivery(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 2)
	configDir := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	writeFile(t, configDir, "gen_source.toml", sourceConfig(150, ""))
	writeFile(t, configDir, "archive_sink.toml", strings.Replace(fileSinkConfig(out), "batch_length = 40", "batch_length = 40\ndelivery = \"at_most_once\"", 1))
	env := startRuntime(t, addr, configDir, t.TempDir())
	waitFor(t, "all messages", func() bool { return len(readLines(t, out)) >= 150 })
	env.shutdown(t)
	checkOncePerID(t, readLines(t, out), 150)
}
