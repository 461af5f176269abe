package config

import (
	"errors"
	"os"
	"path/filepath"
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

func TestUnits(t *testing.T) {
	for text, want := range map[string]uint64{"1 MiB": 1 << 20, "512KB": 512000, "7": 7, "1 GiB": 1 << 30, "4gib": 4 << 30} {
		got, err := ParseByteSize(text)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", text, got, err, want)
		}
	}
	for text, want := range map[string]time.Duration{"30 s": 30 * time.Second, "5 min": 5 * time.Minute, "250ms": 250 * time.Millisecond, "1h": time.Hour} {
		got, err := ParseDuration(text)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", text, got, err, want)
		}
	}
	if _, err := ParseByteSize("99999999999999999999 GiB"); err == nil {
		t.Error("overflow accepted")
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
