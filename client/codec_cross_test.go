package client

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stratabroker/strata/client/clienttest"
	"github.com/stratabroker/strata/net/wire"
)

// net/wire encodes the client's request bodies and decodes its records;
// these tests check the client's conversions to and from net/wire's types
// and that every request body the client sends re-encodes identically.

// fieldAliases maps net/wire field names to the client's where they differ.
var fieldAliases = map[string]string{"TopicHeader": "Topic", "Derived": "DerivedOptions"}

// sameValue compares a net/wire value with the client's by field name,
// recursively; numbers compare by value whatever their named type.
func sameValue(t *testing.T, path string, w, c reflect.Value) {
	t.Helper()
	if w.Kind() == reflect.Pointer {
		if w.IsNil() != c.IsNil() {
			t.Fatalf("%s: nil %v vs %v", path, w.IsNil(), c.IsNil())
		}
		if w.IsNil() {
			return
		}
		w, c = w.Elem(), c.Elem()
	}
	switch w.Kind() {
	case reflect.Struct:
		for i := 0; i < w.NumField(); i++ {
			name := w.Type().Field(i).Name
			cname := name
			if a, ok := fieldAliases[name]; ok {
				cname = a
			}
			cf := c.FieldByName(cname)
			if !cf.IsValid() {
				t.Fatalf("%s: client type %s has no field %s", path, c.Type(), cname)
			}
			sameValue(t, path+"."+name, w.Field(i), cf)
		}
	case reflect.Slice:
		if w.Len() != c.Len() {
			t.Fatalf("%s: length %d vs %d", path, w.Len(), c.Len())
		}
		for i := 0; i < w.Len(); i++ {
			sameValue(t, path+"[]", w.Index(i), c.Index(i))
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if w.Uint() != c.Uint() {
			t.Fatalf("%s: %d vs %d", path, w.Uint(), c.Uint())
		}
	case reflect.Float32:
		if w.Float() != c.Float() {
			t.Fatalf("%s: %v vs %v", path, w.Float(), c.Float())
		}
	case reflect.String:
		if w.String() != c.String() {
			t.Fatalf("%s: %q vs %q", path, w.String(), c.String())
		}
	case reflect.Bool:
		if w.Bool() != c.Bool() {
			t.Fatalf("%s: %v vs %v", path, w.Bool(), c.Bool())
		}
	default:
		t.Fatalf("%s: unhandled kind %s", path, w.Kind())
	}
}

// decodePermissions, appendPermissions and parseOptions are the client's
// codec for permissions and options blocks: net/wire's, through the
// client's conversions.
func decodePermissions(b []byte) (*Permissions, error) {
	w, err := wire.DecodePermissions(b)
	if err != nil {
		return nil, err
	}
	return permissionsFromWire(&w), nil
}

func appendPermissions(dst []byte, p *Permissions) []byte { return permissionsToWire(p).AppendTo(dst) }

func parseOptions(block []byte) (Options, error) {
	o, err := wire.ParseOptions(block)
	return optionsFromWire(o), err
}

func samplePermissions() *wire.Permissions {
	return &wire.Permissions{
		Global: wire.GlobalPermissions{ManageServers: true, ReadUsers: true, SendMessages: true},
		Streams: []wire.StreamPermissions{
			{StreamID: 7, ReadStream: true, PollMessages: true, Topics: []wire.TopicPermissions{
				{TopicID: 1, ManageTopic: true}, {TopicID: 9, SendMessages: true, ReadTopic: true}}},
			{StreamID: 8, ManageTopics: true},
		},
	}
}

func TestRecordsDecodeWireEncoding(t *testing.T) {
	opts := wire.Options{wire.StringOption("compression_algorithm", "gzip"), wire.Uint64Option("segment_size", 1<<20)}
	topic := wire.TopicHeader{ID: 3, CreatedAt: 11, PartitionsCount: 2, MessageExpiry: ^uint64(0),
		CompressionAlgorithm: 2, MaxTopicSize: 1 << 30, SizeBytes: 99, MessagesCount: 5, Name: "eu",
		Options: opts, Derived: wire.Options{wire.BoolOption("enforce_fsync", false)}}
	td := wire.TopicDetails{TopicHeader: topic, Partitions: []wire.Partition{
		{ID: 0, CreatedAt: 1, SegmentsCount: 1, CurrentOffset: 4, SizeBytes: 50, MessagesCount: 5},
		{ID: 1, CreatedAt: 2}}}
	b, err := td.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	gotTD, err := decodeTopicDetails(b)
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "TopicDetails", reflect.ValueOf(td), reflect.ValueOf(*gotTD))

	sd := wire.StreamDetails{Stream: wire.Stream{ID: 1, CreatedAt: 2, TopicsCount: 1, SizeBytes: 3,
		MessagesCount: 4, Name: "orders"}, Topics: []wire.TopicHeader{topic}}
	if b, err = sd.AppendTo(nil); err != nil {
		t.Fatal(err)
	}
	gotSD, err := decodeStreamDetails(b)
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "StreamDetails", reflect.ValueOf(sd), reflect.ValueOf(*gotSD))

	for _, perms := range []*wire.Permissions{samplePermissions(), nil} {
		ud := wire.UserDetails{User: wire.User{ID: 5, CreatedAt: 6, Status: 2, Username: "alice"}, Permissions: perms}
		if b, err = ud.AppendTo(nil); err != nil {
			t.Fatal(err)
		}
		gotUD, err := decodeUserDetails(b)
		if err != nil {
			t.Fatal(err)
		}
		sameValue(t, "UserDetails", reflect.ValueOf(ud), reflect.ValueOf(*gotUD))
	}

	cd := wire.ClientDetails{ClientInfo: wire.ClientInfo{ClientID: 4, UserID: 0xFFFFFFFF, Transport: 1,
		Address: "127.0.0.1:5000", ConsumerGroupsCount: 2},
		ConsumerGroups: []wire.ClientGroup{{StreamID: 1, TopicID: 2, GroupID: 3}, {StreamID: 4, TopicID: 5, GroupID: 6}}}
	gotCD, err := decodeClientDetails(cd.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "ClientDetails", reflect.ValueOf(cd), reflect.ValueOf(*gotCD))

	st := wire.Stats{ProcessID: 1, CPUUsage: 1.5, TotalCPUUsage: 2.5, MemoryUsage: 3, TotalMemory: 4,
		AvailableMemory: 5, RunTime: 6, StartTime: 7, ReadBytes: 8, WrittenBytes: 9, MessagesSizeBytes: 10,
		StreamsCount: 11, TopicsCount: 12, PartitionsCount: 13, SegmentsCount: 14, MessagesCount: 15,
		ClientsCount: 16, ConsumerGroupsCount: 17, Hostname: "h", OSName: "linux", OSVersion: "6",
		KernelVersion: "6.1", ServerVersion: wire.ServerVersion, ServerSemver: wire.ServerSemver,
		CacheMetrics: []wire.CacheMetrics{{StreamID: 1, TopicID: 2, PartitionID: 3, Hits: 4, Misses: 5, HitRatio: 0.5}},
		ThreadsCount: 18, FreeDiskSpace: 19, TotalDiskSpace: 20,
		FencedPartitions: []wire.FencedPartition{{StreamID: 1, TopicID: 2, PartitionID: 3, ServedBelow: 4, File: "f", Position: 5, Reason: "r"}}}
	gotSt, err := decodeStats(st.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "Stats", reflect.ValueOf(st), reflect.ValueOf(*gotSt))

	cm := wire.ClusterMetadata{Name: "single-node", Nodes: []wire.ClusterNode{{Name: "iggy-node", IP: "127.0.0.1",
		TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WebSocketPort: 8092, Role: 0, Status: 1}}}
	gotCM, err := decodeClusterMetadata(cm.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "ClusterMetadata", reflect.ValueOf(cm), reflect.ValueOf(*gotCM))

	gd := wire.ConsumerGroupDetails{ConsumerGroup: wire.ConsumerGroup{ID: 1, PartitionsCount: 4, MembersCount: 2, Name: "g"},
		Members: []wire.ConsumerGroupMember{{ID: 0, Partitions: []uint32{0, 1}}, {ID: 1, Partitions: []uint32{3, 2}}}}
	if b, err = gd.AppendTo(nil); err != nil {
		t.Fatal(err)
	}
	gotGD, err := decodeConsumerGroupDetails(b)
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "ConsumerGroupDetails", reflect.ValueOf(gd), reflect.ValueOf(*gotGD))

	perms := samplePermissions()
	mine, err := decodePermissions(perms.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	sameValue(t, "Permissions", reflect.ValueOf(*perms), reflect.ValueOf(*mine))
	if got := string(appendPermissions(nil, mine)); got != string(perms.AppendTo(nil)) {
		t.Fatal("permissions encoding differs from net/wire's")
	}
}

// TestRequestBodiesDecodeWithWire drives every client method against the
// fake server and checks that net/wire decodes each request body and
// re-encodes it to the same bytes.
func TestRequestBodiesDecodeWithWire(t *testing.T) {
	srv, err := clienttest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, srv.Addr(), WithCredentials(clienttest.RootUsername, clienttest.RootPassword))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, tp := Named("s"), ID(0)
	opts := Options{}.With(OptionDurability, StringValue(DurabilityPersisted)).With(OptionSegmentSize, Uint64Value(1<<20))
	status := UserInactive
	name := "bob2"
	perms := &Permissions{Global: GlobalPermissions{PollMessages: true},
		Streams: []StreamPermissions{{StreamID: 0, ReadStream: true, Topics: []TopicPermissions{{TopicID: 0, ReadTopic: true}}}}}
	consumer := IndividualConsumer(Named("reader"))
	calls := []func() error{
		func() error { return c.Ping(ctx) },
		func() error { _, err := c.CreateStream(ctx, "s"); return err },
		func() error { _, err := c.GetStream(ctx, s); return err },
		func() error { _, err := c.GetStreams(ctx); return err },
		func() error { _, err := c.CreateTopic(ctx, s, "t", 2, opts); return err },
		func() error { _, err := c.GetTopic(ctx, s, tp); return err },
		func() error { _, err := c.GetTopics(ctx, s); return err },
		func() error {
			return c.UpdateTopic(ctx, s, tp, "t2", Options{}.With(OptionMessageExpiry, StringValue("1 day")))
		},
		func() error { return c.CreatePartitions(ctx, s, tp, 2) },
		func() error { return c.DeletePartitions(ctx, s, tp, 1) },
		func() error { return c.DeleteSegments(ctx, s, tp, 0, 3) },
		func() error {
			_, err := c.SendMessages(ctx, s, tp, MessagesKey([]byte("k")), []Message{
				{ID: MessageID{Low: 1, High: 2}, Payload: []byte("p1"), Headers: []Header{StringHeader("a", "b")}},
				{Payload: []byte("p2")}})
			return err
		},
		func() error {
			_, err := c.SendMessages(ctx, s, tp, PartitionID(1), []Message{{Payload: []byte("x")}})
			return err
		},
		func() error {
			_, err := c.PollMessages(ctx, PollRequest{Consumer: consumer, Stream: s, Topic: tp, Partition: 1,
				Strategy: PollTimestamp(5), Count: 10, AutoCommit: true})
			return err
		},
		func() error { _, err := c.GetConsumerOffset(ctx, consumer, s, tp, 1); return err },
		func() error { return c.StoreConsumerOffset(ctx, consumer, s, tp, 1, 0) },
		func() error { return c.DeleteConsumerOffset(ctx, consumer, s, tp, 1) },
		func() error { _, err := c.CreateUser(ctx, "bob", "pw123", UserActive, perms); return err },
		func() error { _, err := c.GetUser(ctx, Named("bob")); return err },
		func() error { _, err := c.GetUsers(ctx); return err },
		func() error { return c.UpdateUser(ctx, Named("bob"), UserUpdate{Username: &name, Status: &status}) },
		func() error { return c.UpdateUser(ctx, Named("bob2"), UserUpdate{}) },
		func() error { return c.UpdatePermissions(ctx, Named("bob2"), perms) },
		func() error { return c.UpdatePermissions(ctx, Named("bob2"), nil) },
		func() error { return c.ChangePassword(ctx, Named("bob2"), "pw123", "pw456") },
		func() error { return c.DeleteUser(ctx, Named("bob2")) },
		func() error { _, err := c.CreatePersonalAccessToken(ctx, "tok", 3600_000_000); return err },
		func() error { _, err := c.GetPersonalAccessTokens(ctx); return err },
		func() error { return c.DeletePersonalAccessToken(ctx, "tok") },
		func() error { _, err := c.GetStats(ctx); return err },
		func() error { _, err := c.GetMe(ctx); return err },
		func() error { _, err := c.GetClients(ctx); return err },
		func() error { _, err := c.GetClusterMetadata(ctx); return err },
		func() error { return c.UpdateStream(ctx, s, "s2") },
		func() error { return c.PurgeTopic(ctx, Named("s2"), tp) },
		func() error { return c.PurgeStream(ctx, Named("s2")) },
		func() error { return c.DeleteTopic(ctx, Named("s2"), tp) },
		func() error { return c.DeleteStream(ctx, Named("s2")) },
		func() error { return c.Logout(ctx) },
	}
	for i, call := range calls {
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	// Group commands the fake does not implement still produce bodies.
	for _, call := range []func() error{
		func() error { _, err := c.LoginUser(ctx, "iggy", "iggy"); return err },
		func() error { _, err := c.CreateConsumerGroup(ctx, s, tp, "g"); return err },
		func() error { return c.JoinConsumerGroup(ctx, s, tp, Named("g")) },
		func() error { _, err := c.SyncConsumerGroup(ctx, s, tp, ID(0)); return err },
		func() error { _, err := c.GetConsumerGroup(ctx, s, tp, ID(0)); return err },
		func() error { _, err := c.GetConsumerGroups(ctx, s, tp); return err },
		func() error { return c.LeaveConsumerGroup(ctx, s, tp, Named("g")) },
		func() error { return c.DeleteConsumerGroup(ctx, s, tp, Named("g")) },
		func() error { _, err := c.GetClient(ctx, 1); return err },
	} {
		if err := call(); err != nil && CodeOf(err) == wire.ErrorCodeOK && !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
	}

	codeOf := map[wire.Operation]wire.Code{}
	for _, code := range wire.Codes() {
		info, _ := wire.LookupCode(code)
		if info.Operation != wire.OpNonReplicated && info.Operation != wire.OpRegister {
			codeOf[info.Operation] = code
		}
	}
	seen := map[wire.Code]bool{}
	for _, r := range srv.Requests() {
		if r.Operation == wire.OpRegister {
			login, err := wire.ParseLogin(r.Body)
			if err != nil {
				t.Fatalf("register body: %v", err)
			}
			if login.Version.ProtocolVersion != wire.ProtocolVersion || login.Version.SDKName != SDKName ||
				login.Password == nil || login.Password.Username != clienttest.RootUsername {
				t.Fatalf("login body decodes as %+v / %+v", login.Version, login.Password)
			}
			continue
		}
		code := r.Code
		if r.Operation != wire.OpNonReplicated {
			code = codeOf[r.Operation]
		}
		req, ok := wire.NewRequest(code)
		if !ok {
			t.Fatalf("no wire request type for %v", code)
		}
		if err := req.Decode(r.Body); err != nil {
			t.Fatalf("%v body %x: %v", code, r.Body, err)
		}
		again, err := req.AppendTo(nil)
		if err != nil {
			t.Fatalf("%v re-encode: %v", code, err)
		}
		if string(again) != string(r.Body) {
			t.Fatalf("%v: client sent %x, wire re-encodes %x", code, r.Body, again)
		}
		seen[code] = true
	}
	if len(seen) < 42 {
		t.Fatalf("only %d command codes exercised", len(seen))
	}
}
