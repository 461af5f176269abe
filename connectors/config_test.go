package connectors

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const minimalSink = `plugin = "stdout"
[[streams]]
stream = "s"
topics = ["t"]
`

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestRuntimeConfigEnvOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "connect.toml")
	write(t, filepath.Dir(path), "connect.toml", "[strata]\naddress = \"10.0.0.1:8090\"\n[logging]\nformat = \"json\"\n")
	cfg, err := LoadRuntimeConfig(path, []string{"STRATA_CONNECTORS_STRATA_ADDRESS=127.0.0.1:9", "STRATA_CONNECTORS_HTTP_ENABLED=false",
		"STRATA_CONNECTORS_SHUTDOWN_TIMEOUT=3s", "OTHER=1"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Strata.Address != "127.0.0.1:9" || cfg.HTTP.Enabled || cfg.Shutdown.Timeout.Duration != 3*time.Second || cfg.Logging.Format != "json" {
		t.Fatalf("config %+v", cfg)
	}
}

// TestRuntimeConfigUnits: durations are read by net/units, as in the
// server's config ("10 s" was refused here while the server's default
// config writes "30 s").
func TestRuntimeConfigUnits(t *testing.T) {
	for text, want := range map[string]time.Duration{"10 s": 10 * time.Second, "10s": 10 * time.Second, "1.5s": 1500 * time.Millisecond,
		"2 min": 2 * time.Minute, "1m 30s": 90 * time.Second, "500 ms": 500 * time.Millisecond} {
		cfg, err := LoadRuntimeConfig("", []string{"STRATA_CONNECTORS_SHUTDOWN_TIMEOUT=" + text, "STRATA_CONNECTORS_PLUGINS_CALL_TIMEOUT=" + text})
		if err != nil || cfg.Shutdown.Timeout.Duration != want || cfg.Plugins.CallTimeout.Duration != want {
			t.Errorf("%q: %+v %v; want %v", text, cfg.Shutdown, err, want)
		}
	}
	path := filepath.Join(t.TempDir(), "connect.toml")
	write(t, filepath.Dir(path), "connect.toml", "[connectors]\npoll_interval = \"2 s\"\n[shutdown]\ntimeout = \"1 min\"\n")
	cfg, err := LoadRuntimeConfig(path, nil)
	if err != nil || cfg.Connectors.PollInterval.Duration != 2*time.Second || cfg.Shutdown.Timeout.Duration != time.Minute {
		t.Fatalf("file: %+v %v", cfg, err)
	}
	if _, err := LoadRuntimeConfig("", []string{"STRATA_CONNECTORS_SHUTDOWN_TIMEOUT=10 S"}); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "case-sensitive") {
		t.Fatalf("10 S: %v", err)
	}
}

// TestUnknownVariablesAreErrors: a STRATA_CONNECTORS_ variable
// strata-connect does not read stops it, naming the nearest setting
// (such typos used to run the runtime on its defaults).
func TestUnknownVariablesAreErrors(t *testing.T) {
	for env, want := range map[string]string{
		"STRATA_CONNECTORS_STRATA_ADRESS=x":         "STRATA_CONNECTORS_STRATA_ADRESS names no setting; did you mean STRATA_CONNECTORS_STRATA_ADDRESS?",
		"STRATA_CONNECTORS_HTTP_ENABLE=false":       "did you mean STRATA_CONNECTORS_HTTP_ENABLED?",
		"STRATA_CONNECTORS_SHUTDOWN_TIMOUT=1s":      "did you mean STRATA_CONNECTORS_SHUTDOWN_TIMEOUT?",
		"STRATA_CONNECTORS_CONFIG_PAHT=x":           "did you mean STRATA_CONNECTORS_CONFIG_PATH?",
		"STRATA_CONNECTORS_SINK_PG_ENABLE=false":    "a connector's variables are",
		"STRATA_CONNECTORS_SOURCE_PG_PLUGIN_CONF=x": "a connector's variables are",
		"STRATA_CONNECTORS_SINK__ENABLED=false":     "a connector's variables are",
	} {
		_, err := LoadRuntimeConfig("", []string{env})
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %q", env, err, want)
		}
	}
	ok := []string{"STRATA_CONNECTORS_CONFIG_PATH=x", "STRATA_CONNECTORS_SINK_PG_ENABLED=false", "STRATA_CONNECTORS_SINK_MY_PG_ENABLED=true",
		"STRATA_CONNECTORS_SOURCE_PG_PLUGIN_CONFIG_CONNECTION_STRING=postgres://x", "STRATA_TCP_ADDRESS=x", "STRATA_CONNECTORSX=1"}
	if _, err := LoadRuntimeConfig("", ok); err != nil {
		t.Fatalf("valid variables refused: %v", err)
	}
	for _, name := range RuntimeEnvNames() {
		if !IsEnvName(name) || !strings.HasPrefix(name, envPrefix) {
			t.Errorf("%s", name)
		}
	}
	entries := []ConfigEntry{{Kind: KindSink, Key: "my_pg"}, {Kind: KindSource, Key: "random"}}
	unmatched := unmatchedConnectorVariables([]string{"STRATA_CONNECTORS_SINK_MY_PG_ENABLED=false", "STRATA_CONNECTORS_SOURCE_RANDOM_PLUGIN_CONFIG_X=1",
		"STRATA_CONNECTORS_SINK_RANDOM_ENABLED=false", "STRATA_CONNECTORS_SINK_PG_ENABLED=false"}, entries)
	if strings.Join(unmatched, ",") != "STRATA_CONNECTORS_SINK_RANDOM_ENABLED,STRATA_CONNECTORS_SINK_PG_ENABLED" {
		t.Fatalf("unmatched: %v", unmatched)
	}
}

func TestRuntimeConfigErrorsAreClear(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		file string
		env  []string
		want string
	}{
		"bad toml":     {file: "[strata\n", want: "connect.toml"},
		"unknown key":  {file: "[strata]\nadress = \"x\"\n", want: "unknown key strata.adress"},
		"bad format":   {env: []string{"STRATA_CONNECTORS_LOGGING_FORMAT=xml"}, want: "logging.format"},
		"bad bool env": {env: []string{"STRATA_CONNECTORS_HTTP_ENABLED=maybe"}, want: "STRATA_CONNECTORS_HTTP_ENABLED"},
		"bad provider": {env: []string{"STRATA_CONNECTORS_CONNECTORS_CONFIG_TYPE=ftp"}, want: "config_type"},
	}
	for name, c := range cases {
		path := ""
		if c.file != "" {
			path = filepath.Join(dir, "connect.toml")
			write(t, dir, "connect.toml", c.file)
		}
		_, err := LoadRuntimeConfig(path, c.env)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v (want mention of %q)", name, err, c.want)
		}
	}
}

func TestLocalProviderVersions(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "out_sink.toml", minimalSink)
	write(t, dir, "out_sink_v2.toml", "verbose = true\n"+minimalSink)
	write(t, dir, "out_sink_v10.toml", "name = \"ten\"\n"+minimalSink)
	write(t, dir, "pinned_sink_v1.toml", "name = \"one\"\n"+minimalSink)
	write(t, dir, "pinned_sink_v3.toml", "name = \"three\"\n"+minimalSink)
	write(t, dir, ".active_versions.toml", "[sinks]\npinned = 1\n")
	write(t, dir, ".hidden_sink.toml", "garbage [")
	write(t, dir, "readme.md", "x")
	write(t, dir, "broken_sink.toml", "plugin = \"stdout\"\n")
	write(t, dir, "nameless.toml", minimalSink)
	entries, err := (&LocalProvider{Dir: dir}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]ConfigEntry{}
	for _, e := range entries {
		got[e.Key] = e
	}
	if len(got) != 3 {
		t.Fatalf("entries %v", entries)
	}
	if e := got["out"]; e.Err != nil || e.Version != 10 || e.Config.Name != "ten" || e.Config.Streams[0].ConsumerGroup != "strata-connect-sink-out" || e.Config.Streams[0].BatchLength != 1000 {
		t.Fatalf("out: %+v %+v", e, e.Config)
	}
	if e := got["pinned"]; e.Err != nil || e.Version != 1 || e.Config.Name != "one" {
		t.Fatalf("pinned: %+v", e)
	}
	if e := got["broken"]; !errors.Is(e.Err, ErrConfig) || !strings.Contains(e.Err.Error(), "broken_sink.toml") {
		t.Fatalf("broken: %+v", e)
	}
	if _, err := (&LocalProvider{Dir: filepath.Join(dir, "none")}).Load(context.Background()); !errors.Is(err, ErrProvider) {
		t.Fatalf("missing dir: %v", err)
	}
}

func TestConnectorConfigValidation(t *testing.T) {
	for text, want := range map[string]string{
		"[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\n":                                   "exactly one of plugin",
		"plugin=\"x\"\npath=\"/bin/x\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\n":    "exactly one of plugin",
		"plugin=\"x\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\nschema=\"xml\"\n":     "schema",
		"plugin=\"x\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\ndelivery=\"twice\"\n": "delivery",
		"plugin=\"x\"\n[[streams]]\nstream=\"s\"\n":                                     "topics is empty",
		"plugin=\"x\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\nbogus=1\n":            "unknown key",
	} {
		if _, err := ParseConnectorConfig(text, "k", KindSink); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v (want %q)", text, err, want)
		}
	}
	c, err := ParseConnectorConfig("plugin=\"x\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\ndelivery=\"at_most_once\"\n[plugin_config]\nurl=\"u\"\n[plugin_config.nested]\na=1\n", "k", KindSink)
	if err != nil || c.Streams[0].Delivery != DeliveryAtMostOnce {
		t.Fatalf("valid: %v", err)
	}
	if b, err := c.pluginConfigJSON(); err != nil || string(b) != `{"nested":{"a":1},"url":"u"}` {
		t.Fatalf("plugin config json %s %v", b, err)
	}
}

func TestHTTPProviderRetries(t *testing.T) {
	var calls atomic.Int32
	ok := `[{"key":"out","type":"sink","version":4,"config":` + quote(minimalSink) + `},{"key":"bad","type":"sink","version":1,"config":"x"}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case r.URL.Path == "/gone":
			w.WriteHeader(http.StatusNotFound)
		case n <= 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte(ok))
		}
	}))
	defer srv.Close()
	p := &HTTPProvider{URL: srv.URL + "/configs", Client: srv.Client()}
	entries, err := p.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 3 || len(entries) != 2 || entries[0].Err != nil || entries[0].Version != 4 || entries[1].Err == nil {
		t.Fatalf("calls %d entries %+v", calls.Load(), entries)
	}
	calls.Store(100)
	p.URL = srv.URL + "/gone"
	if _, err := p.Load(context.Background()); !errors.Is(err, ErrProvider) || calls.Load() != 101 {
		t.Fatalf("4xx: %v after %d calls (want exactly one)", err, calls.Load()-100)
	}
	srv.Close()
	start := calls.Load()
	if _, err := p.Load(context.Background()); !errors.Is(err, ErrProvider) || calls.Load() != start {
		t.Fatalf("connection refused: %v", err)
	}
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func TestRedactedConfig(t *testing.T) {
	c, err := ParseConnectorConfig("plugin=\"postgres\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\n[plugin_config]\nconnection_string=\"postgres://u:pw@h/db\"\ntable=\"t\"\napi_token=\"x\"\n", "pg", KindSink)
	if err != nil {
		t.Fatal(err)
	}
	r := c.redacted()
	if r.PluginConfig["connection_string"] != redactedValue || r.PluginConfig["api_token"] != redactedValue || r.PluginConfig["table"] != "t" {
		t.Fatalf("redacted %v", r.PluginConfig)
	}
	if c.PluginConfig["connection_string"] != "postgres://u:pw@h/db" {
		t.Fatal("redaction changed the running config")
	}
}

func TestConnectorEnvOverrides(t *testing.T) {
	c, err := ParseConnectorConfig("plugin=\"postgres\"\n[[streams]]\nstream=\"s\"\ntopics=[\"t\"]\n[plugin_config]\nbatch_size=10\nTable=\"a\"\n", "pg", KindSink)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"STRATA_CONNECTORS_SINK_PG_PLUGIN_CONFIG_CONNECTION_STRING=postgres://x", "STRATA_CONNECTORS_SINK_PG_PLUGIN_CONFIG_BATCH_SIZE=50",
		"STRATA_CONNECTORS_SINK_PG_PLUGIN_CONFIG_TABLE=b", "STRATA_CONNECTORS_SINK_PG_ENABLED=false", "STRATA_CONNECTORS_SOURCE_PG_ENABLED=maybe"}
	if err := c.applyEnv(env); err != nil {
		t.Fatal(err)
	}
	if c.enabled() || c.PluginConfig["connection_string"] != "postgres://x" || c.PluginConfig["batch_size"] != int64(50) || c.PluginConfig["Table"] != "b" {
		t.Fatalf("overrides: enabled=%v %v", c.enabled(), c.PluginConfig)
	}
	if err := c.applyEnv([]string{"STRATA_CONNECTORS_SINK_PG_PLUGIN_CONFIG_BATCH_SIZE=many"}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad number: %v", err)
	}
}
