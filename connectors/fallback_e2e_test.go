package connectors_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client/clienttest"
	"github.com/stratabroker/strata/net/wire"
)

// TestSinkFallsBackWithoutGroups runs the pipeline against a server that
// answers every consumer-group command with FeatureUnavailable (the
// client package's fake): the sink logs the fallback and consumes as an
// individual consumer, still delivering every message once, in order.
func TestSinkFallsBackWithoutGroups(t *testing.T) {
	fake, err := clienttest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fake.Close() })
	fake.Inject(func(r clienttest.Request) *clienttest.Injection {
		if r.Code >= wire.CodeGetConsumerGroup && r.Code <= wire.CodeSyncConsumerGroup {
			return &clienttest.Injection{Status: wire.ErrFeatureUnavailable}
		}
		return nil
	})
	createTopic(t, fake.Addr(), "events", "clicks", 2)
	configDir := t.TempDir()
	out := filepath.Join(t.TempDir(), "out.jsonl")
	const total = 120
	writeFile(t, configDir, "gen_source.toml", sourceConfig(total, ""))
	writeFile(t, configDir, "archive_sink.toml", fileSinkConfig(out))
	env := startRuntime(t, fake.Addr(), configDir, t.TempDir())
	waitFor(t, "all messages through the fallback consumer", func() bool { return len(readLines(t, out)) >= total })
	env.shutdown(t)
	checkOncePerID(t, readLines(t, out), total)
	if !strings.Contains(env.logs.String(), "falling back to an individual consumer") {
		t.Fatalf("no fallback warning in the log:\n%s", env.logs.String())
	}
}
