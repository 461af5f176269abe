package connectors_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/connectors"
)

// TestHTTPSinkBadMessagesAndIsolation feeds a topic with good, filtered
// and undecodable messages into an http sink whose endpoint fails twice
// with 503 first. Bad messages are counted and skipped, filtered ones
// counted, the rest reach the endpoint; a connector with a bad config and
// a disabled one do not disturb the others.
func TestHTTPSinkBadMessagesAndIsolation(t *testing.T) {
	var mu sync.Mutex
	received := map[string]int{}
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var batch []struct {
			Payload struct {
				Name string `json:"name"`
				Kind string `json:"kind"`
			} `json:"payload"`
		}
		if err := json.Unmarshal(body, &batch); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, m := range batch {
			received[m.Payload.Name]++
		}
	}))
	defer srv.Close()

	addr := startBroker(t)
	createTopic(t, addr, "events", "mixed", 1)
	ctx := context.Background()
	cl, err := client.Dial(ctx, addr, client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var msgs []client.Message
	good, filtered, bad := 0, 0, 0
	for i := 0; i < 60; i++ {
		var p string
		switch i % 4 {
		case 0, 1:
			p, good = fmt.Sprintf(`{"name":"m%d","kind":"keep"}`, i), good+1
		case 2:
			p, filtered = fmt.Sprintf(`{"name":"m%d","kind":"drop"}`, i), filtered+1
		default:
			p, bad = fmt.Sprintf(`not json %d`, i), bad+1
		}
		msgs = append(msgs, client.Message{Payload: []byte(p)})
	}
	if _, err := cl.SendMessages(ctx, client.Named("events"), client.Named("mixed"), client.PartitionID(0), msgs); err != nil {
		t.Fatal(err)
	}

	configDir := t.TempDir()
	writeFile(t, configDir, "hook_sink.toml", fmt.Sprintf(`plugin = "http"
[[streams]]
stream = "events"
topics = ["mixed"]
schema = "json"
batch_length = 7
[transforms.filter]
field = "kind"
equals = "keep"
[plugin_config]
url = %q
retry_backoff = "1ms"
`, srv.URL))
	writeFile(t, configDir, "ghost_sink.toml", `plugin = "no_such_plugin"
[[streams]]
stream = "events"
topics = ["mixed"]
`)
	writeFile(t, configDir, "typo_source.toml", `plugin = "random"
streams = "not a table"
`)
	writeFile(t, configDir, "off_sink.toml", `enabled = false
plugin = "stdout"
[[streams]]
stream = "events"
topics = ["mixed"]
`)
	env := startRuntime(t, addr, configDir, t.TempDir())
	waitFor(t, "every good message at the endpoint", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(received) >= good
	})
	var hook connectors.ConnectorInfo
	waitFor(t, "counters settled", func() bool {
		env.getJSON(t, "/sinks/hook", &hook)
		return hook.Counters.Processed >= uint64(good)
	})
	if hook.Status != connectors.StatusRunning || hook.Counters.Errors != uint64(bad) || hook.Counters.Filtered != uint64(filtered) ||
		hook.Counters.Consumed != 60 || hook.Counters.Processed != uint64(good) {
		t.Fatalf("hook sink: %+v", hook)
	}
	mu.Lock()
	if len(received) != good {
		t.Fatalf("endpoint got %d names, want %d", len(received), good)
	}
	mu.Unlock()
	statuses := map[string]connectors.Status{}
	for _, in := range env.rt.Connectors("") {
		statuses[in.Type+"/"+in.Key] = in.Status
	}
	want := map[string]connectors.Status{"sink/hook": connectors.StatusRunning, "sink/ghost": connectors.StatusError,
		"source/typo": connectors.StatusError, "sink/off": connectors.StatusDisabled}
	for k, s := range want {
		if statuses[k] != s {
			t.Fatalf("%s: status %s, want %s (all: %v)", k, statuses[k], s, statuses)
		}
	}
	var ghost connectors.ConnectorInfo
	env.getJSON(t, "/sinks/ghost", &ghost)
	if ghost.LastError == "" {
		t.Fatal("ghost sink has no error message")
	}
	resp, err := http.Get(env.base + "/sinks/none")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown connector: %d", resp.StatusCode)
	}
}

// TestSourceRetriesSameBatch starts a source whose user may not send yet:
// sends are refused and retried with the same batch pending; once the
// permission is granted every message arrives exactly once, in order. (A
// missing topic is no longer retried: TestSourceWithoutItsTopicFails.)
func TestSourceRetriesSameBatch(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "late", "t", 1)
	ctx := context.Background()
	cl, err := client.Dial(ctx, addr, client.WithCredentials("iggy", "iggy"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// The source's user may read the topic but not send to it yet: its
	// sends are refused until the permission comes.
	readOnly := &client.Permissions{Global: client.GlobalPermissions{ReadStreams: true, ReadTopics: true}}
	if _, err := cl.CreateUser(ctx, "producer", "producer-pw", 1, readOnly); err != nil {
		t.Fatal(err)
	}
	configDir := t.TempDir()
	writeFile(t, configDir, "gen_source.toml", `plugin = "random"
[[streams]]
stream = "late"
topic = "t"
[plugin_config]
messages_per_batch = 9
max_count = 90
`)
	env := startRuntime(t, addr, configDir, t.TempDir(), "STRATA_CONNECTORS_STRATA_USERNAME=producer", "STRATA_CONNECTORS_STRATA_PASSWORD=producer-pw")
	waitFor(t, "failed sends", func() bool {
		var in connectors.ConnectorInfo
		env.getJSON(t, "/sources/gen", &in)
		return in.Counters.Errors >= 2
	})
	canSend := *readOnly
	canSend.Global.SendMessages = true
	if err := cl.UpdatePermissions(ctx, client.Named("producer"), &canSend); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "all sent", func() bool {
		var in connectors.ConnectorInfo
		env.getJSON(t, "/sources/gen", &in)
		return in.Counters.Sent >= 90
	})
	polled, err := cl.PollMessages(ctx, client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
		Stream: client.Named("late"), Topic: client.Named("t"), Partition: 0, Strategy: client.PollFirst(), Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(polled.Messages) != 90 {
		t.Fatalf("%d messages in the topic, want 90", len(polled.Messages))
	}
	for i, m := range polled.Messages {
		var v struct{ ID int }
		if err := json.Unmarshal(m.Payload, &v); err != nil || v.ID != i {
			t.Fatalf("message %d: %s %v", i, m.Payload, err)
		}
	}
}

// TestReloadRestartsChangedVersion checks a new config version restarts
// the connector with a fresh plugin id, and .active_versions.toml pins an
// older one.
func TestReloadRestartsChangedVersion(t *testing.T) {
	addr := startBroker(t)
	createTopic(t, addr, "events", "clicks", 1)
	configDir := t.TempDir()
	writeFile(t, configDir, "gen_source_v1.toml", sourceConfig(10, ""))
	env := startRuntime(t, addr, configDir, t.TempDir())
	var before, after connectors.ConnectorInfo
	env.getJSON(t, "/sources/gen", &before)
	if err := env.rt.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	env.getJSON(t, "/sources/gen", &after)
	if after.PluginID != before.PluginID {
		t.Fatalf("reload without a change restarted the connector: %d -> %d", before.PluginID, after.PluginID)
	}
	writeFile(t, configDir, "gen_source_v2.toml", sourceConfig(20, ""))
	if err := env.rt.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	env.getJSON(t, "/sources/gen", &after)
	if after.Version != 2 || after.PluginID == before.PluginID || after.Status != connectors.StatusRunning {
		t.Fatalf("after v2: %+v", after)
	}
	writeFile(t, configDir, ".active_versions.toml", "[sources]\ngen = 1\n")
	if err := env.rt.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	env.getJSON(t, "/sources/gen", &after)
	if after.Version != 1 || after.Status != connectors.StatusRunning {
		t.Fatalf("after pin to v1: %+v", after)
	}
	for _, name := range []string{".active_versions.toml", "gen_source_v1.toml", "gen_source_v2.toml"} {
		if err := os.Remove(filepath.Join(configDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := env.rt.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	env.getJSON(t, "/sources/gen", &after)
	if after.Status != connectors.StatusStopped {
		t.Fatalf("after its config was removed: %+v", after)
	}
}
