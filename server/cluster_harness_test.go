package server_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// An in-process cluster: N real servers (their own data directories, TCP
// listeners, shards and partition storage) in the test process, whose
// partition groups span all of them over an in-memory replica plane
// (memBus, a server.ReplicaTransport). Each server keeps its own metadata
// until metadata is replicated: the harness creates the same streams and
// topics on every server through its client API, so ids, and with them
// group ids, agree. The harness's client routes each request to the
// partition's primary, found through Server.PartitionReplicaStatus (client
// redirection is the next issue's).

// memBus is the replica plane in memory: every message is encoded as on a
// wire (header and body checksums verified on receipt) and queued for the
// destination's delivery goroutine. A full queue or a stopped destination
// loses the message, as a network may; vsr resends.
type memBus struct {
	nodes []*busNode
	wg    sync.WaitGroup
	// cut, when set, drops every frame from one replica to another for
	// which it reports true (a cut link).
	cut atomic.Pointer[func(from, to uint8) bool]
	// tap, when set, sees every frame a replica sends, before it is
	// queued (or lost); it must not keep or change frame.b.
	tap atomic.Pointer[func(from, to uint8, frame busFrame)]
}

// tapped hands a frame to the tap, if one is set.
func (b *memBus) tapped(from, to uint8, frame busFrame) {
	if tap := b.tap.Load(); tap != nil {
		(*tap)(from, to, frame)
	}
}

// isCut reports whether the link from a replica to another is cut.
func (b *memBus) isCut(from, to uint8) bool {
	cut := b.cut.Load()
	return cut != nil && (*cut)(from, to)
}

type busNode struct {
	srv   atomic.Pointer[server.Server]
	inbox chan busFrame
	// sent counts the messages and announcement frames this replica sent.
	sent atomic.Uint64
}

// busFrame is an encoded vsr message, or an announcement frame.
type busFrame struct {
	announcements bool
	b             []byte
}

// busQueue bounds each destination's queue of undelivered messages.
const busQueue = 4096

func newMemBus(t testing.TB, n int) *memBus {
	b := &memBus{}
	for i := 0; i < n; i++ {
		node := &busNode{inbox: make(chan busFrame, busQueue)}
		b.nodes = append(b.nodes, node)
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			for frame := range node.inbox {
				srv := node.srv.Load()
				if srv == nil {
					continue
				}
				if frame.announcements {
					srv.ReceiveAnnouncements(frame.b)
					continue
				}
				var m vsr.Message
				if err := m.Decode(frame.b); err != nil {
					continue
				}
				srv.ReceiveReplica(&m)
			}
		}()
	}
	t.Cleanup(func() {
		for _, node := range b.nodes {
			close(node.inbox)
		}
		b.wg.Wait()
	})
	return b
}

// port is replica from's transport: it carries announcement frames too
// (server.AnnouncementTransport).
func (b *memBus) port(from uint8) server.ReplicaTransport { return busPort{b, from} }

type busPort struct {
	b    *memBus
	from uint8
}

func (p busPort) Send(to uint8, m *vsr.Message) {
	if int(to) >= len(p.b.nodes) || to == p.from || p.b.nodes[p.from].srv.Load() == nil || p.b.isCut(p.from, to) {
		return
	}
	p.b.nodes[p.from].sent.Add(1)
	frame := busFrame{b: m.Encode(make([]byte, 0, m.EncodedSize()))}
	p.b.tapped(p.from, to, frame)
	select {
	case p.b.nodes[to].inbox <- frame:
	default: // lost
	}
}

func (p busPort) SendAnnouncements(to uint8, frame []byte) {
	if int(to) >= len(p.b.nodes) || to == p.from || p.b.nodes[p.from].srv.Load() == nil || p.b.isCut(p.from, to) {
		return
	}
	p.b.nodes[p.from].sent.Add(1)
	p.b.tapped(p.from, to, busFrame{announcements: true, b: frame})
	select {
	case p.b.nodes[to].inbox <- busFrame{announcements: true, b: frame}:
	default: // lost
	}
}

// testCluster is N servers of one cluster.
type testCluster struct {
	t     testing.TB
	bus   *memBus
	opts  server.ClusterOptions
	dirs  []string
	nodes []*clusterNode
	// fss, when set, are the replicas' file systems (a power-loss FS:
	// cluster_wal_test.go), and env more configuration for every replica.
	fss []storage.FS
	env []string
}

type clusterNode struct {
	srv    *server.Server
	client *client.Client
	logs   *logBuffer
}

// startCluster starts n servers over fresh data directories.
func startCluster(t testing.TB, n int, opts server.ClusterOptions) *testCluster {
	t.Helper()
	return startClusterOn(t, n, opts, nil, nil)
}

// startClusterOn starts n servers, replica i on fss[i] when fss is set,
// each with the configuration env adds.
func startClusterOn(t testing.TB, n int, opts server.ClusterOptions, fss []storage.FS, env []string) *testCluster {
	t.Helper()
	c := &testCluster{t: t, bus: newMemBus(t, n), opts: opts, nodes: make([]*clusterNode, n), fss: fss, env: env}
	c.opts.ReplicaCount = uint8(n)
	if c.opts.TickInterval == 0 {
		c.opts.TickInterval = 10 * time.Millisecond
	}
	for i := 0; i < n; i++ {
		c.dirs = append(c.dirs, t.TempDir())
	}
	t.Cleanup(func() {
		for i := range c.nodes {
			c.stop(i)
		}
	})
	for i := 0; i < n; i++ {
		c.start(i)
	}
	return c
}

// start boots replica i over its data directory (again, after stop).
func (c *testCluster) start(i int) {
	t := c.t
	t.Helper()
	cfg, err := config.Load("", append(append([]string{"STRATA_SYSTEM_PATH=" + c.dirs[i], "STRATA_TCP_ADDRESS=127.0.0.1:0"}, engineEnv()...), c.env...))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), logs, zapcore.InfoLevel)
	opts := c.opts
	opts.ReplicaIndex, opts.Transport = uint8(i), c.bus.port(uint8(i))
	var fsys storage.FS
	if c.fss != nil {
		fsys = c.fss[i]
	}
	srv, err := server.New(server.Options{Config: cfg, FS: fsys, Logger: zap.New(core), Root: server.RootCredentials{Username: "iggy", Password: "iggy"}, Cluster: opts})
	if err != nil {
		t.Fatalf("replica %d: server.New: %v", i, err)
	}
	c.bus.nodes[i].srv.Store(srv)
	if err := srv.Start(); err != nil {
		t.Fatalf("replica %d: Start: %v", i, err)
	}
	dialCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl, err := client.Dial(dialCtx, srv.TCPAddr().String(), client.WithTransientBackoff(time.Millisecond))
	if err != nil {
		t.Fatalf("replica %d: dial: %v", i, err)
	}
	if _, err := cl.LoginUser(dialCtx, "iggy", "iggy"); err != nil {
		t.Fatalf("replica %d: login: %v", i, err)
	}
	c.nodes[i] = &clusterNode{srv: srv, client: cl, logs: logs}
}

// stop shuts replica i down (its data directory stays); idempotent.
func (c *testCluster) stop(i int) {
	node := c.nodes[i]
	if node == nil {
		return
	}
	c.nodes[i] = nil
	c.bus.nodes[i].srv.Store(nil)
	_ = node.client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := node.srv.Shutdown(ctx); err != nil {
		c.t.Errorf("replica %d: shutdown: %v", i, err)
	}
}

// createTopic creates stream 0 and its topic 0 with partitions partitions
// and options on every running replica.
func (c *testCluster) createTopic(partitions uint32, options client.Options) {
	c.t.Helper()
	for i, node := range c.nodes {
		if node == nil {
			continue
		}
		if _, err := node.client.CreateStream(ctx(c.t), "s"); err != nil {
			c.t.Fatalf("replica %d: create stream: %v", i, err)
		}
		if _, err := node.client.CreateTopic(ctx(c.t), client.ID(0), "t", partitions, options); err != nil {
			c.t.Fatalf("replica %d: create topic: %v", i, err)
		}
	}
}

// status is replica i's view of partition p's group.
func (c *testCluster) status(i int, p uint32) (server.ReplicaStatus, bool) {
	node := c.nodes[i]
	if node == nil {
		return server.ReplicaStatus{}, false
	}
	return node.srv.PartitionReplicaStatus(0, 0, p)
}

// clusterWait bounds every wait for the cluster to converge.
const clusterWait = 30 * time.Second

// waitFor polls cond until it holds, failing the test at the deadline.
func (c *testCluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(clusterWait)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("waited %v for %s; %s", clusterWait, what, c.describe())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// describe sums up every replica's groups, for failure messages.
func (c *testCluster) describe() string {
	out := ""
	for i := range c.nodes {
		for p := uint32(0); p < 8; p++ {
			if st, ok := c.status(i, p); ok {
				out += fmt.Sprintf("\n replica %d p%d: %+v", i, p, st)
			}
		}
	}
	return out
}

// primary waits for a serving primary of partition p and returns it.
func (c *testCluster) primary(p uint32) int {
	c.t.Helper()
	found := -1
	c.waitFor(fmt.Sprintf("a primary of partition %d", p), func() bool {
		for i := range c.nodes {
			if st, ok := c.status(i, p); ok && st.Serving {
				found = i
				return true
			}
		}
		return false
	})
	return found
}

// ackedMessage is a message whose send was acknowledged at offset.
type ackedMessage struct {
	offset  uint64
	payload string
}

// send sends one batch of count messages to partition p through its
// primary, re-routing after a transient or connection failure, and
// returns the acknowledged messages. A failed attempt may have committed
// (at-least-once): its messages are not recorded as acknowledged.
func (c *testCluster) send(p uint32, tag string, count int) []ackedMessage {
	c.t.Helper()
	msgs := make([]client.Message, count)
	for j := range msgs {
		msgs[j] = client.Message{Payload: []byte(fmt.Sprintf("%s-p%d-%d", tag, p, j))}
	}
	deadline := time.Now().Add(clusterWait)
	for {
		i := c.primary(p)
		conf, err := c.nodes[i].client.SendMessages(ctx(c.t), client.ID(0), client.ID(0), client.PartitionID(p), msgs)
		if err == nil {
			if len(conf) != 1 {
				c.t.Fatalf("send to p%d: %d confirmations", p, len(conf))
			}
			acked := make([]ackedMessage, count)
			for j := range acked {
				acked[j] = ackedMessage{conf[0].BaseOffset + uint64(j), string(msgs[j].Payload)}
			}
			return acked
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("send to p%d via replica %d: %v; %s", p, i, err, c.describe())
		}
		if code := client.CodeOf(err); code == 0 && !errors.Is(err, client.ErrTransientRetriesExhausted) {
			c.t.Logf("send to p%d via replica %d: %v (re-routing)", p, i, err)
		}
	}
}

// checkPoll polls partition p from replica i from offset 0 to its end and
// fails unless every acknowledged message is at its offset.
func (c *testCluster) checkPoll(i int, p uint32, acked []ackedMessage) {
	c.t.Helper()
	got := map[uint64]string{}
	var polled client.PolledMessages
	next := uint64(0)
	for {
		err := c.nodes[i].client.PollMessagesInto(ctx(c.t), client.PollRequest{Consumer: client.IndividualConsumer(client.ID(1)),
			Stream: client.ID(0), Topic: client.ID(0), Partition: p, Strategy: client.PollOffset(next), Count: 1000}, &polled)
		if err != nil {
			c.t.Fatalf("poll p%d from replica %d at %d: %v", p, i, next, err)
		}
		if len(polled.Messages) == 0 {
			break
		}
		for _, m := range polled.Messages {
			if m.Offset != next {
				c.t.Fatalf("poll p%d from replica %d: offset %d, want %d", p, i, m.Offset, next)
			}
			got[m.Offset] = string(m.Payload)
			next++
		}
	}
	for _, a := range acked {
		if got[a.offset] != a.payload {
			c.t.Fatalf("replica %d p%d offset %d: %q, acknowledged %q (polled %d messages)", i, p, a.offset, got[a.offset], a.payload, next)
		}
	}
	c.t.Logf("replica %d p%d: %d messages polled, %d acknowledged present", i, p, next, len(acked))
}
