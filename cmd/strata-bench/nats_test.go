package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestNATSTargetTiny runs tiny workloads on NATS JetStream through the
// same runner and verifier. It needs .tools/nats-server (make
// bench-compare installs it) and skips without it.
func TestNATSTargetTiny(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, ".tools", "nats-server")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("no .tools/nats-server (make bench-compare installs it)")
	}
	ctx := context.Background()
	for _, durability := range []string{"replicated", "persisted"} {
		t.Run(durability, func(t *testing.T) {
			srv, err := startNATS(ctx, bin, t.TempDir(), durability == "persisted")
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := srv.Stop(); err != nil {
					t.Error(err)
				}
			}()
			target := newNATSTarget(srv.URL)
			defer target.Close()
			w := tiny(ModePinnedProducerAndConsumer)
			w.Producers, w.Consumers, w.Partitions, w.Durability = 2, 2, 2, durability
			w.MessagesPerBatch, w.Batches = 20, 3
			res, err := Run(ctx, target, w, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.Target != "nats" || res.Producers.Messages != 120 || res.Consumers.Messages != 120 || res.Verified != 120 {
				t.Fatalf("nats run: produced %d, consumed %d, verified %d; want 120", res.Producers.Messages, res.Consumers.Messages, res.Verified)
			}
		})
	}
}
