package connectors_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/connectors"
)

// TestStateDirectoryLoss removes the state directory under a running
// source: saves fail and are counted while sending goes on, and the next
// start fails loudly instead of starting from scratch.
func TestStateDirectoryLoss(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 1)
	configDir := t.TempDir()
	stateDir := filepath.Join(t.TempDir(), "state")
	writeFile(t, configDir, "gen_source.toml", `plugin = "random"
[[streams]]
stream = "events"
topic = "clicks"
[plugin_config]
messages_per_batch = 5
interval = "2ms"
`)
	env := startRuntime(t, addr, configDir, stateDir)
	waitFor(t, "first state save", func() bool {
		_, err := os.Stat(filepath.Join(stateDir, "source_gen.state"))
		return err == nil
	})
	// Rename is atomic: no save can slip a file into a half-deleted
	// directory.
	if err := os.Rename(stateDir, stateDir+".lost"); err != nil {
		t.Fatal(err)
	}
	var in connectors.ConnectorInfo
	waitFor(t, "failed saves counted", func() bool {
		env.getJSON(t, "/sources/gen", &in)
		return in.Counters.Errors >= 2
	})
	sentBefore := in.Counters.Sent
	waitFor(t, "sending goes on", func() bool {
		env.getJSON(t, "/sources/gen", &in)
		return in.Counters.Sent > sentBefore+20
	})
	if in.Status != connectors.StatusRunning {
		t.Fatalf("status %s after failed saves", in.Status)
	}
	if err := env.rt.Restart(connectors.KindSource, "gen"); err == nil {
		t.Fatal("restart without a state directory succeeded")
	}
	env.getJSON(t, "/sources/gen", &in)
	if in.Status != connectors.StatusError || !strings.Contains(in.LastError, "state directory") {
		t.Fatalf("after restart: %+v", in)
	}
}
