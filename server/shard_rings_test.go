package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/stratabroker/strata/runtime/iofs"
	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/server/config"
)

// TestShardRingsFallBack checks what happens when io_uring works for the
// probe but a shard's own ring cannot be set up: with engine "auto" the
// shards share the FS and the boot log says so; with engine "uring" the
// server refuses to start.
func TestShardRingsFallBack(t *testing.T) {
	if err := uring.Probe(); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	refused := errors.New("no ring for you")
	newShardRing = func(uring.Config) (*iofs.FS, error) { return nil, refused }
	t.Cleanup(func() { newShardRing = iofs.NewDirect })

	core, logs := observer.New(zapcore.InfoLevel)
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + t.TempDir(), "STRATA_TCP_ENABLED=false", "STRATA_SYSTEM_IO_ENGINE=auto"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Config: cfg, Logger: zap.New(core), Root: RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatalf("auto refused to start without per-shard rings: %v", err)
	}
	defer s.Shutdown(context.Background())
	if s.shardRings || s.shardFS[0] != s.fs {
		t.Fatal("the shards did not fall back to the shared FS")
	}
	warned, described := false, false
	for _, e := range logs.All() {
		if strings.Contains(e.Message, "a ring per shard failed") {
			warned = true
		}
		if e.Message == "shards" && e.ContextMap()["io"] == "one shared io_uring" {
			described = true
		}
	}
	if !warned || !described {
		t.Fatalf("boot log: warned %v, described %v", warned, described)
	}

	cfg, err = config.Load("", []string{"STRATA_SYSTEM_PATH=" + t.TempDir(), "STRATA_TCP_ENABLED=false", "STRATA_SYSTEM_IO_ENGINE=uring"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Config: cfg, Root: RootCredentials{Username: "iggy", Password: "iggy"}}); !errors.Is(err, refused) {
		t.Fatalf("engine uring without per-shard rings: %v", err)
	}
}
