package server_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// groupFixture is a server with stream "s", topic "t" of n partitions and
// group "g", plus an admin client.
type groupFixture struct {
	ts    *testServer
	admin *client.Client
	s, t  client.Identifier
	g     client.Identifier
}

func newGroupFixture(t *testing.T, partitions uint32, env ...string) *groupFixture {
	t.Helper()
	ts := startServer(t, t.TempDir(), env...)
	admin := ts.connect()
	f := &groupFixture{ts: ts, admin: admin, s: client.Named("s"), t: client.Named("t"), g: client.Named("g")}
	if _, err := admin.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CreateTopic(ctx(t), f.s, "t", partitions, client.Options{}); err != nil {
		t.Fatal(err)
	}
	details, err := admin.CreateConsumerGroup(ctx(t), f.s, f.t, "g")
	if err != nil {
		t.Fatal(err)
	}
	if details.ID != 0 || details.Name != "g" || details.PartitionsCount != partitions || details.MembersCount != 0 {
		t.Fatalf("created %+v", details)
	}
	return f
}

// send appends n messages to each of partitions, tagged with round.
func (f *groupFixture) send(t *testing.T, partitions uint32, n int, round int) {
	t.Helper()
	for p := uint32(0); p < partitions; p++ {
		msgs := make([]client.Message, n)
		for i := range msgs {
			msgs[i] = client.Message{Payload: []byte(fmt.Sprintf("r%d-p%d-m%d", round, p, i))}
		}
		if _, err := f.admin.SendMessages(ctx(t), f.s, f.t, client.PartitionID(p), msgs); err != nil {
			t.Fatal(err)
		}
	}
}

// delivery is one message a member received.
type delivery struct {
	partition uint32
	offset    uint64
}

// pollRound makes every member sync and poll each of its partitions once
// (next, auto-commit), concurrently. It returns what each member got and
// fails the test if a member got a partition it was not assigned.
func (f *groupFixture) pollRound(t *testing.T, members []*client.Client, count uint32) [][]delivery {
	t.Helper()
	got := make([][]delivery, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := m.SyncConsumerGroup(ctx(t), f.s, f.t, f.g)
			if err != nil {
				errs[i] = fmt.Errorf("sync: %w", err)
				return
			}
			for _, p := range a.Partitions {
				polled, err := m.PollMessages(ctx(t), client.PollRequest{Consumer: client.GroupConsumer(f.g), Stream: f.s, Topic: f.t,
					Partition: p, Strategy: client.PollNext(), Count: count, AutoCommit: true})
				if err != nil {
					errs[i] = fmt.Errorf("poll %d: %w", p, err)
					return
				}
				if polled.PartitionID != p {
					errs[i] = fmt.Errorf("poll of assigned partition %d answered partition %d", p, polled.PartitionID)
					return
				}
				for _, msg := range polled.Messages {
					got[i] = append(got[i], delivery{partition: p, offset: msg.Offset})
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// drain polls in rounds until a round delivers nothing and checks that
// every delivery is unique and at least from, per partition; it returns
// the number of deliveries per partition.
func (f *groupFixture) drain(t *testing.T, members []*client.Client, from uint64, seen map[delivery]int) map[uint32]int {
	t.Helper()
	perPartition := map[uint32]int{}
	for round := 0; ; round++ {
		if round > 100 {
			t.Fatal("deliveries never stopped")
		}
		got := f.pollRound(t, members, 7)
		total := 0
		for member, ds := range got {
			for _, d := range ds {
				if d.offset < from {
					t.Fatalf("member %d got committed message %+v again", member, d)
				}
				if previous, dup := seen[d]; dup {
					t.Fatalf("message %+v delivered to member %d and member %d", d, previous, member)
				}
				seen[d] = member
				perPartition[d.partition]++
				total++
			}
		}
		if total == 0 {
			return perPartition
		}
	}
}

func (f *groupFixture) members(t *testing.T) int {
	t.Helper()
	details, err := f.admin.GetConsumerGroup(ctx(t), f.s, f.t, f.g)
	if err != nil {
		t.Fatal(err)
	}
	return int(details.MembersCount)
}

// TestConsumerGroupExactlyOnceAcrossMembers: three members through real
// sockets split six partitions; every message is delivered to exactly one
// member while membership is stable; after a leave and after a connection
// close the partitions move and no committed message comes back.
func TestConsumerGroupExactlyOnceAcrossMembers(t *testing.T) {
	const partitions = 6
	f := newGroupFixture(t, partitions)
	members := []*client.Client{f.ts.connect(), f.ts.connect(), f.ts.connect()}
	for _, m := range members {
		if err := m.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
			t.Fatal(err)
		}
	}
	// The §7 cooperative joins: A=[0,1,2,3,4,5]; B → A=[0,1,2], B=[5,4,3];
	// C → A=[0,1], B=[5,4], C=[2,3].
	details, err := f.admin.GetConsumerGroup(ctx(t), f.s, f.t, f.g)
	if err != nil {
		t.Fatal(err)
	}
	want := []client.ConsumerGroupMember{{ID: 0, Partitions: []uint32{0, 1}}, {ID: 1, Partitions: []uint32{5, 4}}, {ID: 2, Partitions: []uint32{2, 3}}}
	if !reflect.DeepEqual(details.Members, want) {
		t.Fatalf("members %+v, want %+v", details.Members, want)
	}

	seen := map[delivery]int{}
	f.send(t, partitions, 20, 0)
	if per := f.drain(t, members, 0, seen); len(per) != partitions {
		t.Fatalf("deliveries per partition %v", per)
	} else {
		for p, n := range per {
			if n != 20 {
				t.Fatalf("partition %d: %d deliveries, want 20", p, n)
			}
		}
	}

	// B leaves: eager rebalance over A and C.
	if err := members[1].LeaveConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
		t.Fatal(err)
	}
	if err := members[1].LeaveConsumerGroup(ctx(t), f.s, f.t, f.g); client.CodeOf(err) != wire.ErrConsumerGroupMemberNotFound {
		t.Fatalf("second leave: %v, want 5006", err)
	}
	if _, err := members[1].SyncConsumerGroup(ctx(t), f.s, f.t, f.g); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("sync after leave: %v", err)
	}
	f.send(t, partitions, 10, 1)
	remaining := []*client.Client{members[0], members[2]}
	if per := f.drain(t, remaining, 20, seen); len(per) != partitions {
		t.Fatalf("after leave: deliveries per partition %v", per)
	}

	// C's connection closes: its membership ends (close hook, or the
	// verifier's sweep of members without a connection) and A takes all.
	if err := members[2].Close(); err != nil {
		t.Fatal(err)
	}
	for f.members(t) != 1 {
		server.ReleaseOrphanGroupMembersForTest(f.ts.srv)
		if ctx(t).Err() != nil {
			t.Fatal("member not released")
		}
	}
	f.send(t, partitions, 5, 2)
	if per := f.drain(t, members[:1], 30, seen); len(per) != partitions {
		t.Fatalf("after close: deliveries per partition %v", per)
	}
	if len(seen) != partitions*35 {
		t.Fatalf("%d deliveries, want %d", len(seen), partitions*35)
	}
}

// TestConsumerGroupCommands covers 600-606 and their results over TCP.
func TestConsumerGroupCommands(t *testing.T) {
	f := newGroupFixture(t, 2)
	if _, err := f.admin.CreateConsumerGroup(ctx(t), f.s, f.t, "g"); client.CodeOf(err) != wire.ErrConsumerGroupNameAlreadyExists {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := f.admin.CreateConsumerGroup(ctx(t), client.Named("nope"), f.t, "x"); client.CodeOf(err) != wire.ErrStreamIdNotFound {
		t.Fatalf("unknown stream: %v", err)
	}
	if _, err := f.admin.GetConsumerGroups(ctx(t), f.s, client.Named("nope")); client.CodeOf(err) != wire.ErrTopicIdNotFound {
		t.Fatalf("list of unknown topic: %v", err)
	}
	second, err := f.admin.CreateConsumerGroup(ctx(t), f.s, f.t, "h")
	if err != nil || second.ID != 1 {
		t.Fatalf("second group %+v %v", second, err)
	}
	list, err := f.admin.GetConsumerGroups(ctx(t), f.s, f.t)
	if err != nil || len(list) != 2 || list[0].Name != "g" || list[1].Name != "h" {
		t.Fatalf("list %+v %v", list, err)
	}
	if n := server.ConsumerGroupsCountForTest(f.ts.srv); n != 2 {
		t.Fatalf("groups count %d", n)
	}
	if err := f.admin.JoinConsumerGroup(ctx(t), f.s, f.t, client.ID(1)); err != nil {
		t.Fatal(err)
	}
	if err := f.admin.JoinConsumerGroup(ctx(t), f.s, f.t, client.ID(1)); err != nil {
		t.Fatalf("second join: %v", err)
	}
	a, err := f.admin.SyncConsumerGroup(ctx(t), f.s, f.t, client.Named("h"))
	if err != nil || a.Generation != 1 || !reflect.DeepEqual(a.Partitions, []uint32{0, 1}) {
		t.Fatalf("sync %+v %v", a, err)
	}
	if err := f.admin.JoinConsumerGroup(ctx(t), f.s, f.t, client.ID(9)); client.CodeOf(err) != wire.ErrConsumerGroupIdNotFound {
		t.Fatalf("join unknown: %v", err)
	}
	if err := f.admin.DeleteConsumerGroup(ctx(t), f.s, f.t, client.Named("h")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admin.GetConsumerGroup(ctx(t), f.s, f.t, client.ID(1)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if _, err := f.admin.SyncConsumerGroup(ctx(t), f.s, f.t, client.ID(1)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("sync deleted: %v", err)
	}
	third, err := f.admin.CreateConsumerGroup(ctx(t), f.s, f.t, "h")
	if err != nil || third.ID != 2 {
		t.Fatalf("ids must not be reused: %+v %v", third, err)
	}
}

// TestConsumerGroupFencesAndOffsets: a non-member's group poll answers the
// re-sync partition id; group offsets are written only by the owner
// (pending hand-off included), read by anyone, stored under
// offsets/groups/{id}, and dropped with the group.
func TestConsumerGroupFencesAndOffsets(t *testing.T) {
	f := newGroupFixture(t, 2)
	owner, other := f.ts.connect(), f.ts.connect()
	if err := owner.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
		t.Fatal(err)
	}
	f.send(t, 2, 4, 0)
	poll := func(c *client.Client, p uint32, autoCommit bool) *client.PolledMessages {
		t.Helper()
		polled, err := c.PollMessages(ctx(t), client.PollRequest{Consumer: client.GroupConsumer(f.g), Stream: f.s, Topic: f.t,
			Partition: p, Strategy: client.PollNext(), Count: 2, AutoCommit: autoCommit})
		if err != nil {
			t.Fatal(err)
		}
		return polled
	}
	if got := poll(other, 0, true); got.PartitionID != wire.PartitionIDResync || len(got.Messages) != 0 {
		t.Fatalf("non-member poll %+v", got)
	}
	if got, err := other.PollMessages(ctx(t), client.PollRequest{Consumer: client.GroupConsumer(client.Named("none")), Stream: f.s, Topic: f.t,
		Partition: 0, Strategy: client.PollNext(), Count: 2}); err != nil || got.PartitionID != wire.PartitionIDResync {
		t.Fatalf("unknown group poll %+v %v", got, err)
	}
	if got := poll(owner, 0, true); len(got.Messages) != 2 || got.Messages[0].Offset != 0 {
		t.Fatalf("owner poll %+v", got)
	}
	if got := poll(owner, 0, true); len(got.Messages) != 2 || got.Messages[0].Offset != 2 {
		t.Fatalf("next after auto-commit %+v", got)
	}
	group := client.GroupConsumer(f.g)
	if err := other.StoreConsumerOffset(ctx(t), group, f.s, f.t, 0, 0); client.CodeOf(err) != wire.ErrResourceNotFound {
		t.Fatalf("non-owner store: %v", err)
	}
	if err := owner.StoreConsumerOffset(ctx(t), group, f.s, f.t, 0, 1); err != nil {
		t.Fatal(err)
	}
	read, err := other.GetConsumerOffset(ctx(t), group, f.s, f.t, 0)
	if err != nil || read.StoredOffset != 1 || read.CurrentOffset != 3 {
		t.Fatalf("offset read by a non-member: %+v %v", read, err)
	}
	offsetFile := filepath.Join(f.ts.dir, "streams", "0", "topics", "0", "partitions", "0", "offsets", "groups", "0")
	if _, err := os.Stat(offsetFile); err != nil {
		t.Fatalf("group offset file: %v", err)
	}

	// Cooperative hand-off: the owner polled partition 1 without
	// committing, so when other joins, partition 1 stays with the owner
	// pending hand-off until the owner commits.
	if got := poll(owner, 1, false); len(got.Messages) != 2 {
		t.Fatalf("poll without commit %+v", got)
	}
	if err := other.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
		t.Fatal(err)
	}
	a, err := owner.SyncConsumerGroup(ctx(t), f.s, f.t, f.g)
	if err != nil || !reflect.DeepEqual(a.Partitions, []uint32{0}) {
		t.Fatalf("owner during hand-off %+v %v", a, err)
	}
	b, err := other.SyncConsumerGroup(ctx(t), f.s, f.t, f.g)
	if err != nil || len(b.Partitions) != 0 {
		t.Fatalf("target during hand-off %+v %v", b, err)
	}
	if got := poll(owner, 1, true); got.PartitionID != wire.PartitionIDResync {
		t.Fatalf("source polled a partition pending hand-off: %+v", got)
	}
	if err := other.StoreConsumerOffset(ctx(t), group, f.s, f.t, 1, 1); client.CodeOf(err) != wire.ErrResourceNotFound {
		t.Fatalf("target stored before the hand-off: %v", err)
	}
	if err := owner.StoreConsumerOffset(ctx(t), group, f.s, f.t, 1, 1); err != nil {
		t.Fatalf("source commit during hand-off: %v", err)
	}
	b, err = other.SyncConsumerGroup(ctx(t), f.s, f.t, f.g)
	if err != nil || !reflect.DeepEqual(b.Partitions, []uint32{1}) {
		t.Fatalf("target after the source committed %+v %v", b, err)
	}
	if got := poll(other, 1, true); len(got.Messages) != 2 || got.Messages[0].Offset != 2 {
		t.Fatalf("target resumes after the committed offset: %+v", got)
	}

	if err := f.admin.DeleteConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(offsetFile); !os.IsNotExist(err) {
		t.Fatalf("offset file after group delete: %v", err)
	}
}

// TestHeartbeatEvictsStaleGroupMember: with a short heartbeat interval
// the running verifier logs an idle member out with Eviction 13 and its
// group forgets it; an idle connection that is no member is left alone.
func TestHeartbeatEvictsStaleGroupMember(t *testing.T) {
	f := newGroupFixture(t, 2, "STRATA_HEARTBEAT_INTERVAL=200ms")
	bystander := f.ts.connect()
	idle := f.ts.connect()
	if err := idle.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
		t.Fatal(err)
	}
	verifier, stop := context.WithCancel(context.Background())
	defer stop()
	server.RunHeartbeatVerifierForTest(f.ts.srv, verifier)
	for f.members(t) != 0 {
		if ctx(t).Err() != nil {
			t.Fatal("stale member never evicted")
		}
	}
	var cerr *client.Error
	if _, err := idle.SyncConsumerGroup(ctx(t), f.s, f.t, f.g); !errors.As(err, &cerr) || cerr.Eviction != uint8(wire.EvictStaleClient) {
		t.Fatalf("idle member's next call: %v, want eviction 13", err)
	}
	if _, err := bystander.GetConsumerGroups(ctx(t), f.s, f.t); err != nil {
		t.Fatalf("a non-member was disturbed: %v", err)
	}
	f.ts.mustLog("evicted a stale consumer-group member")
}

// TestHeartbeatVerifierKeepsActiveMembers runs one verifier round at a
// chosen instant: the member whose last request is older than 1.2 ×
// interval is evicted and its partitions move to the member that sent a
// request since, which receives no committed message again.
func TestHeartbeatVerifierKeepsActiveMembers(t *testing.T) {
	f := newGroupFixture(t, 2)
	stale, active := f.ts.connect(), f.ts.connect()
	for _, m := range []*client.Client{stale, active} {
		if err := m.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[delivery]int{}
	f.send(t, 2, 10, 0)
	f.drain(t, []*client.Client{stale, active}, 0, seen)
	f.send(t, 2, 5, 1)
	before := time.Now()
	if err := active.Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
	// At before+D with stale threshold D: active's last request (after
	// before) is within D, stale's (before before) is older.
	const d = time.Hour
	server.VerifyHeartbeatsForTest(f.ts.srv, before.Add(d), d*10/12)
	a, err := active.SyncConsumerGroup(ctx(t), f.s, f.t, f.g)
	if err != nil || !reflect.DeepEqual(a.Partitions, []uint32{0, 1}) {
		t.Fatalf("active member %+v %v", a, err)
	}
	if f.members(t) != 1 {
		t.Fatalf("%d members, want 1", f.members(t))
	}
	// The evicted member's partition moved; nothing committed comes back.
	if per := f.drain(t, []*client.Client{active}, 10, seen); per[0] != 5 || per[1] != 5 || len(seen) != 30 {
		t.Fatalf("after eviction: %v, %d deliveries", per, len(seen))
	}
	var cerr *client.Error
	if _, err := stale.SyncConsumerGroup(ctx(t), f.s, f.t, f.g); !errors.As(err, &cerr) || cerr.Eviction != uint8(wire.EvictStaleClient) {
		t.Fatalf("stale member's next call: %v, want eviction 13", err)
	}
}

// TestConsumerGroupPermissions: group commands follow the GetTopic rule
// and group polls and offset writes the poll rule (41), checked after the
// ownership fence.
func TestConsumerGroupPermissions(t *testing.T) {
	f := newGroupFixture(t, 1)
	login := func(name string, perms *client.Permissions) *client.Client {
		t.Helper()
		if _, err := f.admin.CreateUser(ctx(t), name, "secret1", client.UserActive, perms); err != nil {
			t.Fatal(err)
		}
		c, err := client.Dial(ctx(t), f.ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if _, err := c.LoginUser(ctx(t), name, "secret1"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	sender := login("sender", &client.Permissions{Global: client.GlobalPermissions{SendMessages: true}})
	if _, err := sender.CreateConsumerGroup(ctx(t), f.s, f.t, "x"); client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("create: %v", err)
	}
	if _, err := sender.GetConsumerGroups(ctx(t), f.s, f.t); client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("list: %v", err)
	}
	if err := sender.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("join: %v", err)
	}
	reader := login("reader", &client.Permissions{Global: client.GlobalPermissions{ReadTopics: true}})
	if err := reader.JoinConsumerGroup(ctx(t), f.s, f.t, f.g); err != nil {
		t.Fatal(err)
	}
	if err := f.admin.UpdatePermissions(ctx(t), client.Named("reader"), &client.Permissions{Global: client.GlobalPermissions{SendMessages: true}}); err != nil {
		t.Fatal(err)
	}
	_, err := reader.PollMessages(ctx(t), client.PollRequest{Consumer: client.GroupConsumer(f.g), Stream: f.s, Topic: f.t,
		Partition: 0, Strategy: client.PollNext(), Count: 1})
	if client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("poll without permission: %v", err)
	}
	if err := reader.StoreConsumerOffset(ctx(t), client.GroupConsumer(f.g), f.s, f.t, 0, 0); client.CodeOf(err) != wire.ErrUnauthorized {
		t.Fatalf("store without permission: %v", err)
	}
}
