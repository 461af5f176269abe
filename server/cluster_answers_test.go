package server_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// TestClusterCutOffPrimaryAnswers57: the primary of a partition is cut off
// from its backups. It stays the primary of its view (it hears of no
// other) and can never commit; a client's send to it waited forever. The
// group host answers it 57 TransientNotCommitted once it waited the
// request timeout with nothing committed (group.Host, waiters.go); the
// client replays the same request, each replay answered 57 again, and
// gives up with ErrTransientRetriesExhausted. Healed, the partition
// serves sends again.
func TestClusterCutOffPrimaryAnswers57(t *testing.T) {
	// Short ticks: the request timeout is 200 ticks (twice the normal
	// heartbeat timeout), and the client replays a 57 up to ten times.
	c := startCluster(t, 3, server.ClusterOptions{TickInterval: time.Millisecond})
	c.createTopic(1, client.Options{})
	acked := c.send(0, "a", 3)
	p := uint8(c.primary(0))
	cut := func(from, to uint8) bool { return from != to && (from == p || to == p) }
	c.bus.cut.Store(&cut)

	msgs := []client.Message{{Payload: []byte("cut-off")}}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := c.nodes[p].client.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), msgs)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(clusterWait):
		t.Fatalf("the cut-off primary's send was not answered in %v; %s", clusterWait, c.describe())
	}
	t.Logf("the cut-off primary answered after %v: %v", time.Since(start), err)
	if err == nil {
		t.Fatalf("a send to a primary cut off from its backups committed")
	}
	if code := client.CodeOf(err); code != wire.ErrTransientNotCommitted || !errors.Is(err, client.ErrTransientRetriesExhausted) {
		t.Fatalf("the cut-off primary's send: %v (code %d), want 57 until the retries ran out", err, code)
	}
	c.bus.cut.Store(nil)
	for b := 0; b < 3; b++ {
		acked = append(acked, c.send(0, fmt.Sprintf("b%d", b), 3)...)
	}
	c.checkPoll(c.primary(0), 0, acked)
}
