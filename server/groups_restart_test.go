package server_test

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// fakeClock is a wall clock a test moves forward.
type fakeClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

// startServerWithClock starts a broker over dir whose wall clock is clock.
func startServerWithClock(t *testing.T, dir string, clock *fakeClock) *server.Server {
	t.Helper()
	cfg, err := config.Load("", []string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{Config: cfg, Now: clock.now, Root: server.RootCredentials{Username: "iggy", Password: "iggy"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return srv
}

// TestGroupHandOffTimeoutAndRestart: a hand-off whose source never
// commits completes after the rebalancing timeout (30 s of server clock);
// after a restart the group, its next id and its committed offsets are
// back, and members whose sessions died with the old process are released.
func TestGroupHandOffTimeoutAndRestart(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{}
	srv := startServerWithClock(t, dir, clock)
	addr := srv.TCPAddr().String()
	admin := connectTo(t, addr)
	s, tp, g := client.Named("s"), client.Named("t"), client.Named("g")
	if _, err := admin.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic(ctx(t), s, "t", 2, client.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateConsumerGroup(ctx(t), s, tp, "g"); err != nil {
		t.Fatal(err)
	}
	for p := uint32(0); p < 2; p++ {
		if _, err := admin.SendMessages(ctx(t), s, tp, client.PartitionID(p), []client.Message{{Payload: []byte("a")}, {Payload: []byte("b")}}); err != nil {
			t.Fatal(err)
		}
	}
	source, target := connectTo(t, addr), connectTo(t, addr)
	if err := source.JoinConsumerGroup(ctx(t), s, tp, g); err != nil {
		t.Fatal(err)
	}
	poll := func(c *client.Client, p uint32, autoCommit bool) *client.PolledMessages {
		t.Helper()
		polled, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.GroupConsumer(g), Stream: s, Topic: tp,
			Partition: p, Strategy: client.PollNext(), Count: 1, AutoCommit: autoCommit})
		if err != nil {
			t.Fatal(err)
		}
		return polled
	}
	if got := poll(source, 0, true); len(got.Messages) != 1 {
		t.Fatalf("poll 0: %+v", got)
	}
	if got := poll(source, 1, false); len(got.Messages) != 1 {
		t.Fatalf("poll 1: %+v", got)
	}
	if err := target.JoinConsumerGroup(ctx(t), s, tp, g); err != nil {
		t.Fatal(err)
	}
	if a, err := target.SyncConsumerGroup(ctx(t), s, tp, g); err != nil || len(a.Partitions) != 0 {
		t.Fatalf("target before the timeout: %+v %v", a, err)
	}
	clock.advance(31 * time.Second)
	a, err := target.SyncConsumerGroup(ctx(t), s, tp, g)
	if err != nil || !reflect.DeepEqual(a.Partitions, []uint32{1}) {
		t.Fatalf("target after the timeout: %+v %v", a, err)
	}
	// Nothing was committed on partition 1: the target starts at 0.
	if got := poll(target, 1, true); len(got.Messages) != 1 || got.Messages[0].Offset != 0 {
		t.Fatalf("target's first poll: %+v", got)
	}

	ctxStop, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctxStop); err != nil {
		t.Fatal(err)
	}
	srv = startServerWithClock(t, dir, clock)
	admin = connectTo(t, srv.TCPAddr().String())
	// A graceful shutdown closes every connection, and a closed
	// connection's memberships are released (§7), so the group comes back
	// without members.
	details, err := admin.GetConsumerGroup(ctx(t), s, tp, g)
	if err != nil || details.ID != 0 || details.MembersCount != 0 {
		t.Fatalf("group after restart: %+v %v", details, err)
	}
	offset, err := admin.GetConsumerOffset(ctx(t), client.GroupConsumer(g), s, tp, 1)
	if err != nil || offset.StoredOffset != 0 {
		t.Fatalf("group offset after restart: %+v %v", offset, err)
	}
	server.ReleaseOrphanGroupMembersForTest(srv)
	if details, err = admin.GetConsumerGroup(ctx(t), s, tp, g); err != nil || details.MembersCount != 0 {
		t.Fatalf("members of dead sessions kept: %+v %v", details, err)
	}
	next, err := admin.CreateConsumerGroup(ctx(t), s, tp, "h")
	if err != nil || next.ID != 1 {
		t.Fatalf("group id after restart: %+v %v", next, err)
	}
}
