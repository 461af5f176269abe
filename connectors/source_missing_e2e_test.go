package connectors_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/connectors"
)

// TestSourceWithoutItsTopicFails: a source whose stream or topic does not
// exist fails at start with status error naming them (as a sink does),
// instead of running and retrying its sends for ever, which also held the
// runtime's shutdown for the whole shutdown timeout. A topic deleted under
// a running source fails it the same way.
func TestSourceWithoutItsTopicFails(t *testing.T) {
	addr := startBroker(t)
	configDir, stateDir := t.TempDir(), t.TempDir()
	writeFile(t, configDir, "gen_source.toml", sourceConfig(1_000_000, `interval = "5ms"`))
	env := startRuntime(t, addr, configDir, stateDir)
	var info connectors.ConnectorInfo
	env.getJSON(t, "/sources/gen", &info)
	if info.Status != connectors.StatusError || !strings.Contains(info.LastError, "producer for events/clicks: stream events does not exist") || info.Counters.Produced != 0 {
		t.Fatalf("source without its stream: %+v", info)
	}
	started := time.Now()
	env.shutdown(t)
	t.Logf("shutdown took %v", time.Since(started))
	if strings.Contains(env.logs.String(), "did not drain") {
		t.Fatalf("the shutdown waited for the source:\n%s", env.logs)
	}

	ctx := context.Background()
	cl, err := client.Dial(ctx, addr, client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.CreateStream(ctx, "events"); err != nil {
		t.Fatal(err)
	}
	env = startRuntime(t, addr, configDir, stateDir)
	env.getJSON(t, "/sources/gen", &info)
	if info.Status != connectors.StatusError || !strings.Contains(info.LastError, "producer for events/clicks: topic clicks does not exist in stream events") {
		t.Fatalf("source without its topic: %+v", info)
	}
	env.shutdown(t)

	if _, err := cl.CreateTopic(ctx, client.Named("events"), "clicks", 1, nil); err != nil {
		t.Fatal(err)
	}
	env = startRuntime(t, addr, configDir, stateDir)
	waitFor(t, "messages sent", func() bool {
		env.getJSON(t, "/sources/gen", &info)
		return info.Counters.Sent > 0
	})
	if err := cl.DeleteTopic(ctx, client.Named("events"), client.Named("clicks")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the source fails", func() bool {
		env.getJSON(t, "/sources/gen", &info)
		return info.Status == connectors.StatusError
	})
	if !strings.Contains(info.LastError, "send to events/clicks") {
		t.Fatalf("last error %q", info.LastError)
	}
	started = time.Now()
	env.shutdown(t)
	t.Logf("shutdown after the failure took %v", time.Since(started))
	if strings.Contains(env.logs.String(), "did not drain") {
		t.Fatalf("the shutdown waited for the source:\n%s", env.logs)
	}
}
