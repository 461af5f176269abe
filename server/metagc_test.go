package server_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/storage/memfs"
)

// Metadata group commit: concurrent metadata operations share the
// journal's syncs (the journal syncs asynchronously on shard 0's ring, or
// a goroutine, while shard 0 goes on preparing; the submitters wait for
// their commits holding no lock). Both tests run 16 clients over TCP, 50
// metadata operations each (10 for the topics: a topic's creation makes
// its partition's files on shard 0), and assert the ratio of journal syncs to
// committed ops (at most one sync per two ops, three per four for the
// topics), not a time: with the
// metadata lock held across a commit and the journal synced inline, every
// op cost at least one sync of its own. The wall time and the syncs per op
// are in the log.

const (
	metaGCClients   = 16
	metaGCOps       = 50 // per client
	metaGCTopicsOps = 10 // per client, creations and deletions of topics
)

// runMetaGC runs each of the clients' work concurrently and reports the
// journal syncs and committed ops it took, and the wall time.
func runMetaGC(t *testing.T, ts *testServer, work func(i int) error) (syncs, ops uint64, elapsed time.Duration) {
	t.Helper()
	syncs0, ops0 := server.MetaSyncsForTest(ts.srv)
	started := time.Now()
	errs := make(chan error, metaGCClients)
	var wg sync.WaitGroup
	for i := range metaGCClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := work(i); err != nil {
				errs <- fmt.Errorf("client %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	elapsed = time.Since(started)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	syncs1, ops1 := server.MetaSyncsForTest(ts.srv)
	return syncs1 - syncs0, ops1 - ops0, elapsed
}

// checkShared asserts that the ops shared their syncs, at most syncsPer4
// syncs per 4 ops, and logs the figure. An op that does not share costs
// at least one sync of its own (4 per 4 ops).
func checkShared(t *testing.T, what string, perClient int, syncsPer4 uint64, syncs, ops uint64, elapsed time.Duration) {
	t.Helper()
	if want := uint64(metaGCClients * perClient); ops != want {
		t.Fatalf("%d metadata ops committed, want %d", ops, want)
	}
	t.Logf("%d clients x %d %s over TCP: %d ops in %v (%v per op), %d journal syncs, %.3f per op",
		metaGCClients, perClient, what, ops, elapsed, elapsed/time.Duration(ops), syncs, float64(syncs)/float64(ops))
	if syncs*4 > ops*syncsPer4 {
		t.Fatalf("%d journal syncs for %d concurrent metadata ops: the ops do not share syncs (want at most %d)", syncs, ops, ops*syncsPer4/4)
	}
}

// TestMetadataGroupCommitTopics: 16 clients each create and delete a
// topic 5 times (10 ops each, 160 in all) concurrently; every op commits,
// and the journal's syncs are shared.
func TestMetadataGroupCommitTopics(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := ts.connect()
	if _, err := root.CreateStream(ctx(t), "gc"); err != nil {
		t.Fatal(err)
	}
	clients := make([]*client.Client, metaGCClients)
	for i := range clients {
		clients[i] = ts.connect()
	}
	syncs, ops, elapsed := runMetaGC(t, ts, func(i int) error {
		c := clients[i]
		for round := range metaGCTopicsOps / 2 {
			cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			name := fmt.Sprintf("c%d-r%d", i, round)
			_, err := c.CreateTopic(cctx, client.Named("gc"), name, 1, client.Options{})
			if err == nil {
				err = c.DeleteTopic(cctx, client.Named("gc"), client.Named(name))
			}
			cancel()
			if err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		}
		return nil
	})
	// At most 3 syncs per 4 ops: alone the test measures about 1 per 4,
	// but each op's effects (the partition's files, made on shard 0)
	// hold the next prepare back, and on a loaded machine 0.556 per op
	// was seen.
	checkShared(t, "topic creations and deletions", metaGCTopicsOps, 3, syncs, ops, elapsed)
	// Every deletion committed and is what a reader sees.
	topics, err := root.GetTopics(ctx(t), client.Named("gc"))
	if err != nil {
		t.Fatal(err)
	}
	if len(topics) != 0 {
		t.Fatalf("%d topics left after every one was deleted", len(topics))
	}
}

// TestMetadataGroupCommitLogins: 16 clients each log in with a personal
// access token and out 25 times (a register and a logout each: 50 ops per
// client) concurrently; the journal's syncs are shared.
func TestMetadataGroupCommitLogins(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := ts.connect()
	token, err := root.CreatePersonalAccessToken(ctx(t), "gc", 0)
	if err != nil {
		t.Fatal(err)
	}
	clients := make([]*client.Client, metaGCClients)
	for i := range clients {
		c, err := client.Dial(ctx(t), ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		clients[i] = c
	}
	syncs, ops, elapsed := runMetaGC(t, ts, func(i int) error {
		c := clients[i]
		for round := range metaGCOps / 2 {
			cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			_, err := c.LoginWithToken(cctx, token)
			if err == nil {
				err = c.Logout(cctx)
			}
			cancel()
			if err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		}
		return nil
	})
	checkShared(t, "PAT logins and logouts", metaGCOps, 2, syncs, ops, elapsed)
}

// TestMetadataGroupCommitSurvivesPowerLoss: 16 clients create streams
// concurrently (their prepares share syncs, and a 64-slot journal
// checkpoints under them) until 150 are acknowledged; then the power goes
// (every unsynced write is lost) while others are in flight. After a
// restart every stream acknowledged before the power loss is there: a
// shared sync never answers an op it did not cover.
func TestMetadataGroupCommitSurvivesPowerLoss(t *testing.T) {
	const target = 150
	fsys := &lockedFS{fs: memfs.New()}
	const dir = "/data"
	slots := "STRATA_METADATA_JOURNAL_SLOTS=64"
	srv, addr := startOnFSWith(t, fsys, dir, slots)
	clients := make([]*client.Client, metaGCClients)
	for i := range clients {
		clients[i] = connectTo(t, addr)
	}
	var (
		mu      sync.Mutex
		acked   []string
		crashed atomic.Bool
		wg      sync.WaitGroup
	)
	reached := make(chan struct{})
	stop := make(chan struct{})
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				name := fmt.Sprintf("pl-%d-%d", i, j)
				cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := c.CreateStream(cctx, name)
				cancel()
				if err != nil {
					return // the power is gone (or the test is over)
				}
				if crashed.Load() {
					continue // acknowledged after the power loss began: not judged
				}
				mu.Lock()
				acked = append(acked, name)
				if len(acked) == target {
					close(reached)
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-reached:
	case <-time.After(2 * time.Minute):
		t.Fatal("150 stream creations were not acknowledged within two minutes")
	}
	crashed.Store(true)
	fsys.crash()
	close(stop)
	wg.Wait()
	_ = srv.Shutdown(context.Background())
	mu.Lock()
	judged := append([]string(nil), acked...)
	mu.Unlock()

	srv, addr = startOnFSWith(t, fsys, dir, slots)
	defer srv.Shutdown(context.Background())
	streams, err := connectTo(t, addr).GetStreams(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, st := range streams {
		present[st.Name] = true
	}
	for _, name := range judged {
		if !present[name] {
			t.Errorf("stream %s was acknowledged before the power loss and is gone after it", name)
		}
	}
	t.Logf("%d stream creations acknowledged before a power loss amid concurrent ones, all %d present after it (%d streams in all)",
		len(judged), len(judged), len(streams))
}
