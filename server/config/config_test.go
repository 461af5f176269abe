package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

func TestDefaultLoads(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TCP.Address != "127.0.0.1:8090" || cfg.System.Path != "local_data" {
		t.Fatalf("defaults: tcp %q path %q", cfg.TCP.Address, cfg.System.Path)
	}
	if cfg.System.MemoryPool.Size != 4<<30 {
		t.Fatalf("memory pool size: %d", cfg.System.MemoryPool.Size)
	}
	if time.Duration(cfg.Heartbeat.Interval) != 30*time.Second {
		t.Fatalf("heartbeat %v", time.Duration(cfg.Heartbeat.Interval))
	}
	if cfg.Metadata.JournalSlots != 1024 {
		t.Fatalf("journal slots %d", cfg.Metadata.JournalSlots)
	}
}

func TestEnvOverrides(t *testing.T) {
	cfg, err := Load("", []string{
		"STRATA_TCP_ADDRESS=127.0.0.1:9999",
		"STRATA_SYSTEM_PATH=/tmp/x",
		"STRATA_SYSTEM_IO_ENGINE=sync",
		"STRATA_SYSTEM_MEMORY_POOL_SIZE=2 GiB",
		"STRATA_SYSTEM_SHARDING_CPU_ALLOCATION=2",
		"STRATA_SYSTEM_PARTITION_ENFORCE_FSYNC=true",
		"UNRELATED=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TCP.Address != "127.0.0.1:9999" || cfg.System.Path != "/tmp/x" || cfg.System.IO.Engine != "sync" {
		t.Fatalf("overrides not applied: %+v", cfg)
	}
	if cfg.System.MemoryPool.Size != 2<<30 || cfg.System.Sharding.CPUAllocation != "2" || !cfg.System.Partition.EnforceFsync {
		t.Fatalf("overrides not applied: %+v", cfg.System)
	}
}

func TestBadValuesNameTheKey(t *testing.T) {
	cases := []struct {
		env []string
		key string
	}{
		{[]string{"STRATA_SYSTEM_IO_ENGINE=fast"}, "system.io.engine"},
		{[]string{"STRATA_SYSTEM_MEMORY_POOL_SIZE=12"}, "system.memory_pool.size"},
		{[]string{"STRATA_SYSTEM_MEMORY_POOL_SIZE=lots"}, "system.memory_pool.size"},
		{[]string{"STRATA_METADATA_JOURNAL_SLOTS=-1"}, "metadata.journal_slots"},
		{[]string{"STRATA_METADATA_CLIENTS_TABLE_BYTES_MAX=64 MiB"}, "metadata.clients_table_bytes_max"},
		{[]string{"STRATA_METADATA_CLIENTS_TABLE_BYTES_MAX=4 KiB"}, "metadata.clients_table_bytes_max"},
		{[]string{"STRATA_TCP_ENABLED=maybe"}, "tcp.enabled"},
		{[]string{"STRATA_MESSAGE_BUS_MAX_MESSAGE_SIZE=10"}, "message_bus.max_message_size"},
		{[]string{"STRATA_SYSTEM_LOGGING_FORMAT=xml"}, "system.logging.format"},
	}
	for _, c := range cases {
		_, err := Load("", c.env)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%v: got %v, want an ErrInvalid naming %s", c.env, err, c.key)
		}
	}
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(path, []byte("[tcp]\naddress = \"127.0.0.1:7000\"\n[system.partition]\nenforce_fsync = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, []string{"STRATA_TCP_ADDRESS=127.0.0.1:7001"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TCP.Address != "127.0.0.1:7001" || !cfg.System.Partition.EnforceFsync {
		t.Fatalf("file then env: %+v", cfg.TCP)
	}
	if err := os.WriteFile(path, []byte("[tcp]\nadress = \"x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "tcp.adress") {
		t.Fatalf("unknown key: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml"), nil); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestEncodeCurrentRoundTrips(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := EncodeCurrent(cfg, Bound{TCP: "127.0.0.1:8090"})
	if err != nil {
		t.Fatal(err)
	}
	var back currentDocument
	if _, err := toml.Decode(string(data), &back); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	if back.Config != *cfg || back.Bound.TCP != "127.0.0.1:8090" {
		t.Fatalf("round trip differs:\n%s", data)
	}
}

// TestUnits: sizes and durations are read by net/units, as on the
// command line and in the HTTP API ("1.5 GiB" was refused here while the
// CLI took "1.5 MiB"; "4K" was 4096 bytes here and 4000 there).
func TestUnits(t *testing.T) {
	for text, want := range map[string]ByteSize{"1.5 GiB": 3 << 29, "1 GiB": 1 << 30, "600MB": 600e6, "629145600": 600 << 20, "2048 MiB": 2 << 30} {
		cfg, err := Load("", []string{"STRATA_SYSTEM_MEMORY_POOL_SIZE=" + text})
		if err != nil || cfg.System.MemoryPool.Size != want {
			t.Errorf("memory_pool.size %q: %v, %v; want %d", text, cfg, err, want)
		}
	}
	for text, want := range map[string]time.Duration{"30 s": 30 * time.Second, "5 min": 5 * time.Minute, "250ms": 250 * time.Millisecond,
		"1h": time.Hour, "1.5s": 1500 * time.Millisecond, "1h 30m": 90 * time.Minute, "2 days": 48 * time.Hour} {
		cfg, err := Load("", []string{"STRATA_HEARTBEAT_INTERVAL=" + text})
		if err != nil || time.Duration(cfg.Heartbeat.Interval) != want {
			t.Errorf("heartbeat.interval %q: %v; want %v", text, err, want)
		}
	}
	for env, part := range map[string]string{
		"STRATA_PARTITION_WAL_BYTES_MAX=99999999999999999999 GiB": "too large",
		"STRATA_PARTITION_WAL_BYTES_MAX=4 kb":                     "bits",
		"STRATA_PARTITION_WAL_BYTES_MAX=100 KiB":                  "below the minimum",
		"STRATA_HEARTBEAT_INTERVAL=30":                            "unit",
		"STRATA_HEARTBEAT_INTERVAL=5 MIN":                         "case-sensitive",
	} {
		if _, err := Load("", []string{env}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), part) {
			t.Errorf("%s: %v; want an error saying %q", env, err, part)
		}
	}
	// A duration read back from runtime/current_config.toml is the same.
	dir := t.TempDir()
	path := filepath.Join(dir, "c.toml")
	if err := os.WriteFile(path, []byte("[heartbeat]\ninterval = \"1.5s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := cfg.Heartbeat.Interval.MarshalText()
	if err != nil || string(text) != "1s 500ms" {
		t.Fatalf("interval written as %q, %v", text, err)
	}
	if err := os.WriteFile(path, []byte("[heartbeat]\ninterval = 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "no unit") {
		t.Fatalf("a bare 30 as a duration: %v", err)
	}
}

// TestUnknownVariablesAreErrors: a STRATA_ variable that names no key
// stops the load with the nearest key (they used to be ignored, so a typo
// ran the server on the default), except the other programs' variables.
func TestUnknownVariablesAreErrors(t *testing.T) {
	for env, want := range map[string]string{
		"STRATA_TCP_ADRESS=x":                 "STRATA_TCP_ADRESS names no config key; did you mean STRATA_TCP_ADDRESS (tcp.address)?",
		"STRATA_HTTP_ENABLE=true":             "did you mean STRATA_HTTP_ENABLED (http.enabled)?",
		"STRATA_SYSTEM_MEMORYPOOL_SIZE=1 GiB": "did you mean STRATA_SYSTEM_MEMORY_POOL_SIZE (system.memory_pool.size)?",
		"STRATA_HTTP_JWT_SECRET=s":            "STRATA_HTTP_JWT_SECRET is now the config key http.jwt.encoding_secret: set STRATA_HTTP_JWT_ENCODING_SECRET instead",
		"STRATA_SHARD_RUNTIME_CAPACITY=64":    "set STRATA_SYSTEM_IO_RING_ENTRIES instead",
		"STRATA_SHARD_EVENT_INTERVAL=8":       "set STRATA_SYSTEM_IO_RING_EVENT_INTERVAL instead",
		"STRATA_HTTP_TLS_CERT=x":              "did you mean STRATA_HTTP_TLS_CERT_FILE (http.tls.cert_file)?",
		"STRATA_QUIC_CERTIFICATE_KEY_FILES=x": "did you mean STRATA_QUIC_CERTIFICATE_KEY_FILE (quic.certificate.key_file)?",
		"STRATA_SYSTEM_IO_RING_ENTRYS=1":      "did you mean STRATA_SYSTEM_IO_RING_ENTRIES",
		"STRATA_=1":                           "names no config key",
	} {
		_, err := Load("", []string{env})
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v\nwant %q", env, err, want)
		}
	}
	others := []string{"STRATA_ROOT_USERNAME=admin", "STRATA_ROOT_PASSWORD=pw", "STRATA_ADDRESS=127.0.0.1:1", "STRATA_USERNAME=u",
		"STRATA_PASSWORD=p", "STRATA_TOKEN=t", "STRATA_TRANSPORT=quic", "STRATA_CONNECTORS_STRATA_ADDRESS=x",
		"STRATA_CONNECTORS_ANYTHING=x", "STRATA_TEST_POSTGRES_DSN=x", "STRATAX=1", "PATH=/bin"}
	if _, err := Load("", others); err != nil {
		t.Fatalf("other programs' variables refused: %v", err)
	}
	for _, name := range EnvNames() {
		if IsOtherVariable(name) {
			t.Errorf("%s is both a key and another program's variable", name)
		}
	}
	for name, path := range RenamedVariables {
		if _, ok := OtherVariables[name]; ok {
			t.Errorf("%s is renamed and another program's", name)
		}
		if !slices.Contains(EnvNames(), EnvName(path)) {
			t.Errorf("%s was renamed to %s, which is no key", name, path)
		}
	}
}

// TestSettingsOutsideTheConfigMovedIn: the ring sizes and the JWT secret
// are keys, so --print-default-config shows them and they load from a
// file or the environment.
func TestSettingsOutsideTheConfigMovedIn(t *testing.T) {
	for _, key := range []string{"ring_entries = 4096", "ring_event_interval = 128", "[http.jwt]", "encoding_secret = \"\"", "decoding_secret = \"\""} {
		if !strings.Contains(DefaultTOML(), key) {
			t.Errorf("default config lacks %q", key)
		}
	}
	cfg, err := Load("", []string{"STRATA_SYSTEM_IO_RING_ENTRIES=64", "STRATA_SYSTEM_IO_RING_EVENT_INTERVAL=8", "STRATA_HTTP_JWT_ENCODING_SECRET=k1"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.System.IO.RingEntries != 64 || cfg.System.IO.RingEventInterval != 8 || string(cfg.HTTP.JWT.Key()) != "k1" {
		t.Fatalf("%+v %+v", cfg.System.IO, cfg.HTTP.JWT)
	}
	cfg, err = Load("", []string{"STRATA_HTTP_JWT_DECODING_SECRET=k2"})
	if err != nil || string(cfg.HTTP.JWT.Key()) != "k2" {
		t.Fatalf("decoding secret alone: %v", err)
	}
	if _, err := Load("", []string{"STRATA_HTTP_JWT_ENCODING_SECRET=first-key", "STRATA_HTTP_JWT_DECODING_SECRET=other-key"}); !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "http.jwt.decoding_secret") || strings.Contains(err.Error(), "-key") {
		t.Fatalf("two different secrets: %v", err)
	}
	for _, env := range []string{"STRATA_SYSTEM_IO_RING_ENTRIES=0", "STRATA_SYSTEM_IO_RING_ENTRIES=40000", "STRATA_SYSTEM_IO_RING_EVENT_INTERVAL=0"} {
		if _, err := Load("", []string{env}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "system.io.ring_") {
			t.Errorf("%s: %v", env, err)
		}
	}
}

// TestSecretsNeverEncoded: runtime/current_config.toml, JSON and %v show
// that a secret is set, never its value.
func TestSecretsNeverEncoded(t *testing.T) {
	const secret = "s3cr3t-jwt-key"
	cfg, err := Load("", []string{"STRATA_HTTP_JWT_ENCODING_SECRET=" + secret})
	if err != nil {
		t.Fatal(err)
	}
	current, err := EncodeCurrent(cfg, Bound{})
	if err != nil {
		t.Fatal(err)
	}
	asJSON, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"current_config.toml": string(current), "json": string(asJSON),
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", *cfg), "%#v": fmt.Sprintf("%#v", *cfg), "%s": fmt.Sprintf("%s", cfg.HTTP.JWT.EncodingSecret)} {
		if strings.Contains(text, secret) {
			t.Errorf("%s holds the secret:\n%s", what, text)
		}
	}
	if !strings.Contains(string(current), `encoding_secret = "(set)"`) || !strings.Contains(string(current), `decoding_secret = ""`) {
		t.Errorf("current config does not say which secret is set:\n%s", current)
	}
}

// TestFileUnknownKeyNamesNearest: a misspelt key in a --config file names
// the key meant.
func TestFileUnknownKeyNamesNearest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte("[system.memory_pool]\nsise = \"1 GiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `did you mean "system.memory_pool.size"?`) {
		t.Fatalf("%v", err)
	}
}

func TestClientLimits(t *testing.T) {
	cfg, err := Load("", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]ClientLimits{"tcp": cfg.TCP.ClientLimits, "websocket": cfg.WebSocket.ClientLimits, "quic": cfg.QUIC.ClientLimits} {
		if l.UnauthenticatedMaxMessageSize != 16<<10 || time.Duration(l.UnauthenticatedIdleTimeout) != 10*time.Second ||
			time.Duration(l.RequestReadTimeout) != time.Minute {
			t.Errorf("[%s] defaults: %+v", name, l)
		}
	}
	if cfg.MessageBus.ConnectionsMax != 10000 || cfg.MessageBus.InFlightBytesMax != 256<<20 ||
		time.Duration(cfg.System.MemoryPool.IdleReleaseInterval) != 10*time.Second {
		t.Errorf("defaults: %+v, idle release %v", cfg.MessageBus, time.Duration(cfg.System.MemoryPool.IdleReleaseInterval))
	}
	cfg, err = Load("", []string{"STRATA_TCP_UNAUTHENTICATED_IDLE_TIMEOUT=250 ms", "STRATA_WEBSOCKET_UNAUTHENTICATED_MAX_MESSAGE_SIZE=4 KiB",
		"STRATA_QUIC_REQUEST_READ_TIMEOUT=2 s", "STRATA_MESSAGE_BUS_CONNECTIONS_MAX=7", "STRATA_MESSAGE_BUS_IN_FLIGHT_BYTES_MAX=1 GiB"})
	if err != nil {
		t.Fatal(err)
	}
	if time.Duration(cfg.TCP.UnauthenticatedIdleTimeout) != 250*time.Millisecond || cfg.WebSocket.UnauthenticatedMaxMessageSize != 4<<10 ||
		time.Duration(cfg.QUIC.RequestReadTimeout) != 2*time.Second || cfg.MessageBus.ConnectionsMax != 7 || cfg.MessageBus.InFlightBytesMax != 1<<30 {
		t.Fatalf("overrides not applied: tcp %+v websocket %+v quic %+v bus %+v", cfg.TCP.ClientLimits, cfg.WebSocket.ClientLimits, cfg.QUIC.ClientLimits, cfg.MessageBus)
	}
	for env, key := range map[string]string{
		"STRATA_TCP_UNAUTHENTICATED_MAX_MESSAGE_SIZE=100":      "tcp.unauthenticated_max_message_size",
		"STRATA_QUIC_UNAUTHENTICATED_MAX_MESSAGE_SIZE=128 MiB": "quic.unauthenticated_max_message_size",
		"STRATA_WEBSOCKET_UNAUTHENTICATED_IDLE_TIMEOUT=0 s":    "websocket.unauthenticated_idle_timeout",
		"STRATA_TCP_REQUEST_READ_TIMEOUT=0 s":                  "tcp.request_read_timeout",
		"STRATA_MESSAGE_BUS_IN_FLIGHT_BYTES_MAX=1 MiB":         "message_bus.in_flight_bytes_max",
		"STRATA_MESSAGE_BUS_IN_FLIGHT_BYTES_MAX=8 GiB":         "message_bus.in_flight_bytes_max",
		"STRATA_SYSTEM_MEMORY_POOL_IDLE_RELEASE_INTERVAL=-1 s": "system.memory_pool.idle_release_interval",
	} {
		if _, err := Load("", []string{env}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: got %v, want an ErrInvalid naming %s", env, err, key)
		}
	}
	path := filepath.Join(t.TempDir(), "c.toml")
	if err := os.WriteFile(path, []byte("[tcp]\nrequest_read_timeout = \"5 s\"\n[quic]\nunauthenticated_idle_timeout = \"3 s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = Load(path, nil); err != nil || time.Duration(cfg.TCP.RequestReadTimeout) != 5*time.Second ||
		time.Duration(cfg.QUIC.UnauthenticatedIdleTimeout) != 3*time.Second {
		t.Fatalf("file: %v %+v", err, cfg)
	}
}
