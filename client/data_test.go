package client_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

func TestStreamsAndTopics(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	s, err := c.CreateStream(ctx, "orders")
	if err != nil || s.ID != 0 || s.Name != "orders" || s.TopicsCount != 0 {
		t.Fatalf("create stream: %+v, %v", s, err)
	}
	opts := client.Options{}.
		With(client.OptionDurability, client.StringValue(client.DurabilityPersisted)).
		With(client.OptionMessageExpiry, client.StringValue("7 days")).
		With(client.OptionMaxTopicSize, client.Uint64Value(1<<40))
	td, err := c.CreateTopic(ctx, client.Named("orders"), "eu", 3, opts)
	if err != nil {
		t.Fatal(err)
	}
	if td.Name != "eu" || td.PartitionsCount != 3 || len(td.Partitions) != 3 || td.Partitions[2].ID != 2 {
		t.Fatalf("create topic: %+v", td)
	}
	if v, ok := td.Options.Get(client.OptionDurability); !ok || v.String() != "persisted" {
		t.Fatalf("durability option not echoed: %+v", td.Options)
	}
	if v, ok := td.Options.Get(client.OptionMaxTopicSize); !ok || v.String() != fmt.Sprint(uint64(1<<40)) {
		t.Fatalf("max_topic_size option: %+v", td.Options)
	}
	bad := client.Options{}.With(client.OptionDurability, client.StringValue("sometimes"))
	if _, err := c.CreateTopic(ctx, client.ID(0), "x", 1, bad); !errors.Is(err, wire.ErrInvalidOptionValue) {
		t.Fatalf("bad durability: %v", err)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "x", 1001, nil); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("too many partitions: %v", err)
	}
	if err := c.CreatePartitions(ctx, client.ID(0), client.Named("eu"), 2); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePartitions(ctx, client.ID(0), client.ID(0), 1); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTopic(ctx, client.ID(0), client.ID(0))
	if err != nil || len(got.Partitions) != 4 {
		t.Fatalf("get topic: %+v, %v", got, err)
	}
	if err := c.UpdateTopic(ctx, client.ID(0), client.ID(0), "europe",
		client.Options{}.With(client.OptionCompression, client.StringValue("gzip"))); err != nil {
		t.Fatal(err)
	}
	topics, err := c.GetTopics(ctx, client.ID(0))
	if err != nil || len(topics) != 1 || topics[0].Name != "europe" {
		t.Fatalf("topics %+v, %v", topics, err)
	}
	if _, err := c.GetTopic(ctx, client.ID(0), client.Named("eu")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("renamed topic still found: %v", err)
	}
	sd, err := c.GetStream(ctx, client.Named("orders"))
	if err != nil || len(sd.Topics) != 1 || sd.TopicsCount != 1 {
		t.Fatalf("stream details %+v, %v", sd, err)
	}
	if err := c.UpdateStream(ctx, client.ID(0), "sales"); err != nil {
		t.Fatal(err)
	}
	if err := c.PurgeStream(ctx, client.Named("sales")); err != nil {
		t.Fatal(err)
	}
	if err := c.PurgeTopic(ctx, client.ID(0), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopic(ctx, client.ID(0), client.ID(0)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTopic(ctx, client.ID(0), client.ID(0)); !errors.Is(err, wire.ErrTopicIdNotFound) {
		t.Fatalf("delete missing topic: %v", err)
	}
	if err := c.DeleteStream(ctx, client.ID(0)); err != nil {
		t.Fatal(err)
	}
	streams, err := c.GetStreams(ctx)
	if err != nil || len(streams) != 0 {
		t.Fatalf("streams after delete: %+v, %v", streams, err)
	}
}

func TestSendAndPoll(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	if _, err := c.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, client.ID(0), "t", 2, nil); err != nil {
		t.Fatal(err)
	}
	const batches, perBatch = 3, 4
	var sent []client.Message
	for b := range batches {
		var msgs []client.Message
		for i := range perBatch {
			n := b*perBatch + i
			m := client.Message{ID: client.MessageID{Low: uint64(n + 1), High: 7},
				Payload: []byte(fmt.Sprintf("message-%02d", n)), OriginTimestamp: uint64(1_000_000 + n)}
			if n%2 == 0 {
				m.Headers = []client.Header{client.StringHeader("k", fmt.Sprint(n)),
					{Key: client.StringValue("n"), Value: client.Uint64Value(uint64(n))}}
			}
			msgs = append(msgs, m)
		}
		conf, err := c.SendMessages(ctx, client.ID(0), client.Named("t"), client.PartitionID(1), msgs)
		if err != nil {
			t.Fatal(err)
		}
		if len(conf) != 1 || conf[0].PartitionID != 1 || conf[0].BaseOffset != uint64(b*perBatch) {
			t.Fatalf("confirmation %+v", conf)
		}
		sent = append(sent, msgs...)
	}
	check := func(name string, got []client.Message, from int) {
		t.Helper()
		for i, m := range got {
			w := sent[from+i]
			if m.Offset != uint64(from+i) || m.ID != w.ID || !bytes.Equal(m.Payload, w.Payload) ||
				m.OriginTimestamp != w.OriginTimestamp || m.Timestamp == 0 {
				t.Fatalf("%s: message %d = %+v, want offset %d %+v", name, i, m, from+i, w)
			}
			if len(m.Headers) != len(w.Headers) {
				t.Fatalf("%s: message %d headers %v, want %v", name, i, m.Headers, w.Headers)
			}
			for j := range w.Headers {
				if m.Headers[j].Key.String() != w.Headers[j].Key.String() || m.Headers[j].Value.String() != w.Headers[j].Value.String() ||
					m.Headers[j].Value.Kind != w.Headers[j].Value.Kind {
					t.Fatalf("%s: header %d = %v, want %v", name, j, m.Headers[j], w.Headers[j])
				}
			}
		}
	}
	consumer := client.IndividualConsumer(client.Named("reader"))
	req := client.PollRequest{Consumer: consumer, Stream: client.ID(0), Topic: client.ID(0), Partition: 1}

	// From the middle of the second batch: the first frame's offset_delta
	// is not 0.
	req.Strategy, req.Count = client.PollOffset(6), 5
	p, err := c.PollMessages(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if p.PartitionID != 1 || p.CurrentOffset != batches*perBatch-1 || len(p.Messages) != 5 {
		t.Fatalf("poll from 6: partition %d current %d, %d messages", p.PartitionID, p.CurrentOffset, len(p.Messages))
	}
	check("offset 6", p.Messages, 6)

	req.Strategy, req.Count = client.PollFirst(), 100
	if err := c.PollMessagesInto(ctx, req, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != len(sent) {
		t.Fatalf("first: %d messages", len(p.Messages))
	}
	check("first", p.Messages, 0)

	req.Strategy, req.Count = client.PollLast(), 3
	if err := c.PollMessagesInto(ctx, req, p); err != nil {
		t.Fatal(err)
	}
	check("last", p.Messages, len(sent)-3)

	// next + auto-commit walks the partition.
	req.Strategy, req.Count, req.AutoCommit = client.PollNext(), 5, true
	var walked int
	for walked < len(sent) {
		if err := c.PollMessagesInto(ctx, req, p); err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) == 0 {
			t.Fatalf("next stalled at %d", walked)
		}
		check("next", p.Messages, walked)
		walked += len(p.Messages)
	}
	off, err := c.GetConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 1)
	if err != nil || off.StoredOffset != uint64(len(sent)-1) || off.CurrentOffset != uint64(len(sent)-1) {
		t.Fatalf("offset after auto-commit: %+v, %v", off, err)
	}
	if err := c.StoreConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 1, 2); err != nil {
		t.Fatal(err)
	}
	req.AutoCommit = false
	if err := c.PollMessagesInto(ctx, req, p); err != nil {
		t.Fatal(err)
	}
	check("next after store", p.Messages, 3)
	if err := c.StoreConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 1, 1000); !errors.Is(err, wire.ErrInvalidOffset) {
		t.Fatalf("store beyond end: %v", err)
	}
	if err := c.DeleteConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 1); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("offset after delete: %v", err)
	}
	if err := c.DeleteConsumerOffset(ctx, consumer, client.ID(0), client.ID(0), 1); !errors.Is(err, wire.ErrConsumerOffsetNotFound) {
		t.Fatalf("delete missing offset: %v", err)
	}

	// Timestamp strategy: batches carry increasing append times.
	req.Strategy, req.Count = client.PollFirst(), 100
	if err := c.PollMessagesInto(ctx, req, p); err != nil {
		t.Fatal(err)
	}
	second := p.Messages[perBatch].Timestamp
	req.Strategy = client.PollTimestamp(second)
	if err := c.PollMessagesInto(ctx, req, p); err != nil {
		t.Fatal(err)
	}
	check("timestamp", p.Messages, perBatch)

	// Balanced and keyed sends land somewhere valid; empty partition polls.
	if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.MessagesKey([]byte("user-1")),
		[]client.Message{{Payload: []byte("k")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.Balanced(),
		[]client.Message{{Payload: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(9),
		[]client.Message{{Payload: []byte("b")}}); !errors.Is(err, wire.ErrResourceNotFound) {
		t.Fatalf("send to missing partition: %v", err)
	}
	if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.Balanced(),
		[]client.Message{{}}); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("empty payload: %v", err)
	}
}

func TestUsers(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	perms := &client.Permissions{
		Global: client.GlobalPermissions{ReadStreams: true, PollMessages: true},
		Streams: []client.StreamPermissions{
			{StreamID: 1, ReadStream: true, Topics: []client.TopicPermissions{{TopicID: 2, SendMessages: true}, {TopicID: 3, ReadTopic: true}}},
			{StreamID: 4, ManageStream: true},
		},
	}
	u, err := c.CreateUser(ctx, "alice", "secret1", client.UserActive, perms)
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "alice" || u.Status != client.UserActive || u.Permissions == nil {
		t.Fatalf("created %+v", u)
	}
	got, err := c.GetUser(ctx, client.Named("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%+v", *got.Permissions) != fmt.Sprintf("%+v", *perms) {
		t.Fatalf("permissions round trip:\n got %+v\nwant %+v", *got.Permissions, *perms)
	}
	if _, err := c.CreateUser(ctx, "alice", "x", client.UserActive, nil); !errors.Is(err, wire.ErrUserAlreadyExists) {
		t.Fatalf("duplicate user: %v", err)
	}
	name, status := "alicia", client.UserInactive
	if err := c.UpdateUser(ctx, client.ID(u.ID), client.UserUpdate{Username: &name, Status: &status}); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdatePermissions(ctx, client.Named("alicia"), nil); err != nil {
		t.Fatal(err)
	}
	if err := c.ChangePassword(ctx, client.Named("alicia"), "secret1", "secret2"); err != nil {
		t.Fatal(err)
	}
	if err := c.ChangePassword(ctx, client.Named("alicia"), "wrong", "secret3"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("wrong current password: %v", err)
	}
	got, err = c.GetUser(ctx, client.ID(u.ID))
	if err != nil || got.Username != "alicia" || got.Status != client.UserInactive || got.Permissions != nil {
		t.Fatalf("after update: %+v, %v", got, err)
	}
	users, err := c.GetUsers(ctx)
	if err != nil || len(users) != 2 {
		t.Fatalf("users %+v, %v", users, err)
	}
	if err := c.DeleteUser(ctx, client.ID(0)); !errors.Is(err, wire.ErrCannotDeleteUser) {
		t.Fatalf("delete root: %v", err)
	}
	if err := c.DeleteUser(ctx, client.Named("alicia")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetUser(ctx, client.Named("alicia")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("deleted user: %v", err)
	}
}

func TestSystemReads(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	stats, err := c.GetStats(ctx)
	if err != nil || stats.ServerVersion != wire.ServerVersion || stats.ServerSemver != wire.ServerSemver || stats.ProcessID == 0 {
		t.Fatalf("stats %+v, %v", stats, err)
	}
	me, err := c.GetMe(ctx)
	if err != nil || me.UserID != 0 || me.Transport != 1 || me.Address == "" {
		t.Fatalf("me %+v, %v", me, err)
	}
	clients, err := c.GetClients(ctx)
	if err != nil || len(clients) != 1 || clients[0].ClientID != me.ClientID {
		t.Fatalf("clients %+v, %v", clients, err)
	}
	one, err := c.GetClient(ctx, me.ClientID)
	if err != nil || one.Address != me.Address {
		t.Fatalf("client %+v, %v", one, err)
	}
	if _, err := c.GetClient(ctx, 12345); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("missing client: %v", err)
	}
	cm, err := c.GetClusterMetadata(ctx)
	if err != nil || cm.Name != "single-node" || len(cm.Nodes) != 1 || cm.Nodes[0].TCPPort != 8090 {
		t.Fatalf("cluster %+v, %v", cm, err)
	}
	// A committed rejection of DeleteSegments arrives under operation 68.
	if err := c.DeleteSegments(ctx, client.ID(0), client.ID(0), 0, 1); !errors.Is(err, wire.ErrStreamIdNotFound) {
		t.Fatalf("delete segments without a stream: %v", err)
	}
}

func TestConsumerGroups(t *testing.T) {
	srv := startServer(t)
	a := dialRoot(t, srv)
	b := dialRoot(t, srv)
	ctx := testContext(t)
	if _, err := a.CreateStream(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTopic(ctx, client.ID(0), "t", 4, nil); err != nil {
		t.Fatal(err)
	}
	s, tp := client.ID(0), client.ID(0)
	g, err := a.CreateConsumerGroup(ctx, s, tp, "workers")
	if err != nil || g.ID != 0 || g.Name != "workers" || g.PartitionsCount != 4 || len(g.Members) != 0 {
		t.Fatalf("create group %+v, %v", g, err)
	}
	if _, err := a.CreateConsumerGroup(ctx, s, tp, "workers"); !errors.Is(err, wire.ErrConsumerGroupNameAlreadyExists) {
		t.Fatalf("duplicate group: %v", err)
	}
	if _, err := a.SyncConsumerGroup(ctx, s, tp, client.Named("workers")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("sync before join: %v", err)
	}
	for _, c := range []*client.Client{a, b} {
		if err := c.JoinConsumerGroup(ctx, s, tp, client.Named("workers")); err != nil {
			t.Fatal(err)
		}
	}
	asg, err := b.SyncConsumerGroup(ctx, s, tp, client.ID(0))
	if err != nil || asg.Generation != 2 || len(asg.Partitions) != 2 {
		t.Fatalf("sync %+v, %v", asg, err)
	}
	d, err := a.GetConsumerGroup(ctx, s, tp, client.ID(0))
	if err != nil || d.MembersCount != 2 || len(d.Members) != 2 || len(d.Members[0].Partitions) != 2 {
		t.Fatalf("group details %+v, %v", d, err)
	}
	list, err := a.GetConsumerGroups(ctx, s, tp)
	if err != nil || len(list) != 1 || list[0].MembersCount != 2 {
		t.Fatalf("groups %+v, %v", list, err)
	}
	if err := b.LeaveConsumerGroup(ctx, s, tp, client.ID(0)); err != nil {
		t.Fatal(err)
	}
	if err := b.LeaveConsumerGroup(ctx, s, tp, client.ID(0)); !errors.Is(err, wire.ErrConsumerGroupMemberNotFound) {
		t.Fatalf("leave twice: %v", err)
	}
	if err := a.DeleteConsumerGroup(ctx, s, tp, client.Named("workers")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetConsumerGroup(ctx, s, tp, client.ID(0)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("deleted group: %v", err)
	}
	if err := a.DeleteConsumerGroup(ctx, s, tp, client.ID(0)); !errors.Is(err, wire.ErrConsumerGroupIdNotFound) {
		t.Fatalf("delete missing group: %v", err)
	}
	if _, err := a.GetConsumerGroups(ctx, client.ID(9), tp); !errors.Is(err, wire.ErrStreamIdNotFound) {
		t.Fatalf("groups of a missing stream: %v", err)
	}
}
