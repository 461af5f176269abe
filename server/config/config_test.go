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
