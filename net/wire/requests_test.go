package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// sampleRequests holds one filled request per command code.
func sampleRequests() []Request {
	name := "renamed"
	status := UserInactive
	perms := &Permissions{Global: GlobalPermissions{PollMessages: true}, Streams: []StreamPermissions{{StreamID: 1, SendMessages: true}}}
	version := ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "go-sdk", SDKVersion: "0.9.0-edge.4"}
	offsetTarget := OffsetTarget{Consumer: Consumer{Kind: ConsumerKindSingle, ID: NamedID("c1")}, StreamID: NumericID(1), TopicID: NamedID("t"), Partition: SomePartition(2)}
	group := GroupTarget{StreamID: NumericID(1), TopicID: NumericID(2), GroupID: NamedID("g")}
	return []Request{
		&PingRequest{}, &GetStatsRequest{}, &GetSnapshotRequest{Compression: 2, Types: []uint8{1, 100}},
		&GetClusterMetadataRequest{}, &DescribeOptionsRequest{Scope: OptionScopeTopic}, &GetMeRequest{},
		&GetClientRequest{ClientID: 7}, &GetClientsRequest{}, &GetUserRequest{UserID: NamedID("bob")}, &GetUsersRequest{},
		&CreateUserRequest{Username: "bob", Password: "secret", Status: UserActive, Permissions: perms},
		&DeleteUserRequest{UserID: NumericID(3)},
		&UpdateUserRequest{UserID: NumericID(3), Username: &name, Status: &status},
		&UpdatePermissionsRequest{UserID: NumericID(3), Permissions: perms},
		&ChangePasswordRequest{UserID: NumericID(3), CurrentPassword: "old", NewPassword: "new"},
		&LogoutRequest{},
		&LoginRegisterRequest{Version: version, Username: "iggy", Password: "iggy"},
		&GetPersonalAccessTokensRequest{},
		&CreatePersonalAccessTokenRequest{Name: "ci", Expiry: 60_000_000},
		&DeletePersonalAccessTokenRequest{Name: "ci"},
		&LoginRegisterWithPatRequest{Version: version, Token: "dG9rZW4=", ClientContext: "ctx"},
		&PollMessagesRequest{Consumer: Consumer{Kind: ConsumerKindGroup, ID: NumericID(1)}, StreamID: NumericID(1), TopicID: NumericID(2),
			Partition: SomePartition(3), Strategy: PollingStrategy{Kind: PollNext}, Count: 10, AutoCommit: true},
		&SendMessagesRequest{StreamID: NumericID(1), TopicID: NamedID("t"), Partitioning: MessagesKey([]byte("k")), MessagesCount: 1, Batch: []byte("batch-bytes")},
		&FlushUnsavedBufferRequest{StreamID: NumericID(1), TopicID: NumericID(2), PartitionID: 3, Fsync: true},
		&GetConsumerOffsetRequest{OffsetTarget: offsetTarget},
		&StoreConsumerOffsetRequest{OffsetTarget: offsetTarget, Offset: 99, Ack: AckQuorum},
		&DeleteConsumerOffsetRequest{OffsetTarget: offsetTarget, Ack: AckNone},
		&GetStreamRequest{StreamID: NamedID("s")}, &GetStreamsRequest{}, &CreateStreamRequest{Name: "s"},
		&DeleteStreamRequest{StreamID: NumericID(1)}, &UpdateStreamRequest{StreamID: NumericID(1), Name: "s2"},
		&PurgeStreamRequest{StreamID: NumericID(1)},
		&GetTopicRequest{StreamID: NumericID(1), TopicID: NumericID(2)}, &GetTopicsRequest{StreamID: NumericID(1)},
		&CreateTopicRequest{StreamID: NumericID(1), PartitionsCount: 3, Name: "t", Options: Options{StringOption("segment_size", "1 GiB")}},
		&DeleteTopicRequest{StreamID: NumericID(1), TopicID: NumericID(2)},
		&UpdateTopicRequest{StreamID: NumericID(1), TopicID: NumericID(2), Name: "t2", Options: Options{Uint64Option("message_expiry", 5)}},
		&PurgeTopicRequest{StreamID: NumericID(1), TopicID: NumericID(2)},
		&CreatePartitionsRequest{StreamID: NumericID(1), TopicID: NumericID(2), PartitionsCount: 4},
		&DeletePartitionsRequest{StreamID: NumericID(1), TopicID: NumericID(2), PartitionsCount: 1},
		&DeleteSegmentsRequest{StreamID: NumericID(1), TopicID: NumericID(2), PartitionID: 0, SegmentsCount: 2},
		&GetConsumerGroupRequest{GroupTarget: group},
		&GetConsumerGroupsRequest{StreamID: NumericID(1), TopicID: NumericID(2)},
		&CreateConsumerGroupRequest{StreamID: NumericID(1), TopicID: NumericID(2), Name: "g"},
		&DeleteConsumerGroupRequest{GroupTarget: group}, &JoinConsumerGroupRequest{GroupTarget: group},
		&LeaveConsumerGroupRequest{GroupTarget: group}, &SyncConsumerGroupRequest{GroupTarget: group},
	}
}

func TestEveryCodeHasARequest(t *testing.T) {
	covered := map[Code]bool{}
	for _, r := range sampleRequests() {
		covered[r.Code()] = true
	}
	for _, c := range Codes() {
		_, ok := NewRequest(c)
		legacy := c == CodeLoginUser || c == CodeLoginWithPersonalAccessToken
		if ok == legacy {
			t.Errorf("NewRequest(%v) = %v", c, ok)
		}
		if !legacy && !covered[c] {
			t.Errorf("no sample request for %v", c)
		}
		if r, ok := NewRequest(c); ok && r.Code() != c {
			t.Errorf("NewRequest(%v) returned %v", c, r.Code())
		}
	}
}

func TestRequestRoundTrips(t *testing.T) {
	for _, r := range sampleRequests() {
		body, err := r.AppendTo(nil)
		if err != nil {
			t.Fatalf("%v: encode: %v", r.Code(), err)
		}
		back, _ := NewRequest(r.Code())
		if err := back.Decode(body); err != nil {
			t.Fatalf("%v: decode: %v", r.Code(), err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("%v: round trip\n got %+v\nwant %+v", r.Code(), back, r)
		}
		if !isBodyless(r.Code()) && len(body) > 0 {
			// Every fixed-layout body rejects a cut.
			if err := back.Decode(body[:len(body)-1]); err == nil && !tolerantOfCuts(r.Code()) {
				t.Errorf("%v: truncated body accepted", r.Code())
			}
		}
	}
}

func isBodyless(c Code) bool {
	switch c {
	case CodePing, CodeGetStats, CodeGetClusterMetadata, CodeGetMe, CodeGetClients, CodeGetUsers,
		CodeLogoutUser, CodeGetPersonalAccessTokens, CodeGetStreams:
		return true
	}
	return false
}

// tolerantOfCuts lists bodies whose tail is free-form: a shorter batch,
// options block or snapshot type list can still be well formed.
func tolerantOfCuts(c Code) bool {
	return c == CodeSendMessages || c == CodeGetSnapshot
}

func TestRequestGolden(t *testing.T) {
	b, _ := (&CreateStreamRequest{Name: "s1"}).AppendTo(nil)
	if !bytes.Equal(b, []byte{2, 's', '1'}) {
		t.Fatalf("create stream % x", b)
	}
	b, _ = (&CreateTopicRequest{StreamID: NumericID(1), PartitionsCount: 2, Name: "t"}).AppendTo(nil)
	if !bytes.Equal(b, []byte{1, 4, 1, 0, 0, 0, 2, 0, 0, 0, 1, 't'}) {
		t.Fatalf("create topic % x", b)
	}
	send := SendMessagesRequest{StreamID: NumericID(1), TopicID: NumericID(2), Partitioning: PartitionIDPartitioning(3), MessagesCount: 4, Batch: []byte{0xAA}}
	b, _ = send.AppendTo(nil)
	want := []byte{
		22, 0, 0, 0, // metadata_length = 6 + 6 + 6 + 4
		1, 4, 1, 0, 0, 0,
		1, 4, 2, 0, 0, 0,
		2, 4, 3, 0, 0, 0,
		4, 0, 0, 0,
		0xAA,
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("send\n got % x\nwant % x", b, want)
	}
	poll := PollMessagesRequest{Consumer: Consumer{Kind: ConsumerKindSingle, ID: NumericID(9)}, StreamID: NumericID(1), TopicID: NumericID(2),
		Strategy: PollingStrategy{Kind: PollOffset, Value: 5}, Count: 100}
	b, _ = poll.AppendTo(nil)
	want = []byte{1, 1, 4, 9, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0,
		0, 0, 0, 0, 0, // no partition
		1, 5, 0, 0, 0, 0, 0, 0, 0,
		100, 0, 0, 0, 0}
	if !bytes.Equal(b, want) {
		t.Fatalf("poll\n got % x\nwant % x", b, want)
	}
	store := StoreConsumerOffsetRequest{OffsetTarget: OffsetTarget{Consumer: Consumer{Kind: ConsumerKindGroup, ID: NumericID(0)},
		StreamID: NumericID(1), TopicID: NumericID(2), Partition: SomePartition(7)}, Offset: 3, Ack: AckQuorum}
	b, _ = store.AppendTo(nil)
	if !bytes.Equal(b[19:], []byte{1, 7, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1}) {
		t.Fatalf("store offset tail % x", b[19:])
	}
	login := LoginRegisterRequest{Version: ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "go-sdk", SDKVersion: "1"}, Username: "iggy", Password: "pw"}
	b, _ = login.AppendTo(nil)
	want = append([]byte{0, 0x2C, 0, 0, 6}, "go-sdk"...)
	want = append(want, 1, '1', 4, 'i', 'g', 'g', 'y', 2, 'p', 'w', 0, 0, 0, 0)
	if !bytes.Equal(b, want) {
		t.Fatalf("login\n got % x\nwant % x", b, want)
	}
}

func TestParseLogin(t *testing.T) {
	version := ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "rust-sdk", SDKVersion: "0.9"}
	pw, _ := (&LoginRegisterRequest{Version: version, Username: "iggy", Password: "iggy"}).AppendTo(nil)
	l, err := ParseLogin(pw)
	if err != nil || l.Password == nil || l.Password.Username != "iggy" || l.Version != version {
		t.Fatalf("password login %v %+v", err, l)
	}
	pat, _ := (&LoginRegisterWithPatRequest{Version: version, Token: "abcdefgh"}).AppendTo(nil)
	l, err = ParseLogin(pat)
	if err != nil || l.Token == nil || l.Token.Token != "abcdefgh" {
		t.Fatalf("token login %v %+v", err, l)
	}
	if _, err := ParseLogin([]byte{0, 0x2C, 0, 0, 0}); err == nil {
		t.Fatal("empty sdk name accepted")
	}
	if _, err := ParseLogin(pw[:3]); !errors.Is(err, ErrTruncated) {
		t.Fatal("short prefix accepted")
	}
	// Trailing bytes after the context are not checked.
	if l, err := ParseLogin(append(pw, 1, 2, 3)); err != nil || l.Password == nil {
		t.Fatal("trailing bytes rejected")
	}
}

func TestRequestDecodeRejects(t *testing.T) {
	cases := []struct {
		r    Request
		body []byte
		want error
	}{
		// Trailing bytes are ignored, but a length that runs past the end
		// of the body is still refused.
		{&GetStreamRequest{}, []byte{2, 10, 's'}, ErrTruncated},
		{&DeleteTopicRequest{}, []byte{1, 4, 1, 0, 0, 0, 2, 5, 't'}, ErrTruncated},
		{&ChangePasswordRequest{}, []byte{1, 4, 1, 0, 0, 0, 3, 'o', 'l', 'd', 9, 'n'}, ErrTruncated},
		{&CreateConsumerGroupRequest{}, []byte{1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 5, 'g'}, ErrTruncated},
		{&GetSnapshotRequest{}, []byte{1, 3, 1}, ErrTruncated},
		{&DeletePersonalAccessTokenRequest{}, []byte{0, 1, 2, 3}, ErrInvalidName},
		// A permissions length that disagrees with the permissions.
		{&UpdatePermissionsRequest{}, append([]byte{1, 4, 3, 0, 0, 0, 1, 12, 0, 0, 0}, make([]byte, 13)...), ErrBadPermissions},
		{&CreateStreamRequest{}, []byte{0}, ErrInvalidName},
		{&DescribeOptionsRequest{}, []byte{4}, ErrBadValue},
		{&GetSnapshotRequest{}, []byte{7, 0}, ErrBadValue},
		{&GetSnapshotRequest{}, []byte{1, 1, 99}, ErrBadValue},
		{&StoreConsumerOffsetRequest{}, append([]byte{1, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, 0, 0, 0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, 2), ErrBadAckLevel},
		{&SendMessagesRequest{}, []byte{200, 0, 0, 0, 1}, ErrTruncated},
		{&SendMessagesRequest{}, []byte{7, 0, 0, 0, 1, 4, 1, 0, 0, 0, 9}, ErrTruncated},
		{&CreateTopicRequest{}, append([]byte{1, 4, 0, 0, 0, 0, 1, 0, 0, 0, 1, 't'}, 2, 1, 0, 0, 0, 'k'), ErrBadTLV},
		{&CreateUserRequest{}, []byte{3, 'b', 'o', 'b', 1, 'p', 1, 1, 0, 0, 0, 0}, ErrBadPermissions},
	}
	for i, c := range cases {
		if err := c.r.Decode(c.body); !errors.Is(err, c.want) {
			t.Errorf("case %d (%v): %v, want %v", i, c.r.Code(), err, c.want)
		}
	}
	// Any status byte other than 2 decodes as active.
	var cu CreateUserRequest
	if err := cu.Decode([]byte{3, 'b', 'o', 'b', 0, 7, 0}); err != nil || cu.Status != UserActive {
		t.Fatalf("status 7: %v %v", err, cu.Status)
	}
	// A has_partition flag other than 1 means absent.
	var g GetConsumerOffsetRequest
	if err := g.Decode([]byte{1, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 1, 4, 0, 0, 0, 0, 2, 5, 0, 0, 0}); err != nil || g.Partition.Present || g.Partition.ID != 0 {
		t.Fatalf("flag 2: %v %+v", err, g.Partition)
	}
}

// TestRequestsIgnoreTrailingBytes: every request decodes with bytes after
// its last field as it decodes without them, as Iggy's server decodes
// requests (WireDecode::decode_from, "ignoring trailing bytes"); one Iggy
// SDK sends DeleteTopic with a u32 partitions count after the two ids.
// Requests ending in an options block have no trailing bytes: what follows
// the fixed fields is the block, and a malformed block is still refused.
// In SendMessages the bytes after the metadata are the batch; bytes left
// inside metadata_length after the fields are ignored.
func TestRequestsIgnoreTrailingBytes(t *testing.T) {
	trailing := []byte{4, 0, 0, 0}
	optionsBlock := map[Code]bool{CodeCreateStream: true, CodeUpdateStream: true, CodeCreateTopic: true,
		CodeUpdateTopic: true, CodeCreateUser: true, CodeUpdateUser: true}
	for _, r := range sampleRequests() {
		body, err := r.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		plain := reflect.New(reflect.TypeOf(r).Elem()).Interface().(Request)
		extended := reflect.New(reflect.TypeOf(r).Elem()).Interface().(Request)
		if err := plain.Decode(body); err != nil {
			t.Fatalf("%v: %v", r.Code(), err)
		}
		err = extended.Decode(append(body[:len(body):len(body)], trailing...))
		switch {
		case optionsBlock[r.Code()]:
			if !errors.Is(err, ErrBadTLV) {
				t.Errorf("%v: 4 bytes after the fields are a malformed options block, decoded with %v", r.Code(), err)
			}
		case r.Code() == CodeSendMessages:
			if err != nil || !bytes.Equal(extended.(*SendMessagesRequest).Batch, append([]byte("batch-bytes"), trailing...)) {
				t.Errorf("send messages: %v", err)
			}
		case err != nil:
			t.Errorf("%v: trailing bytes refused: %v", r.Code(), err)
		case !reflect.DeepEqual(plain, extended):
			t.Errorf("%v: trailing bytes changed the request: %+v vs %+v", r.Code(), extended, plain)
		}
	}
	// SendMessages: extra bytes inside metadata_length.
	send := SendMessagesRequest{StreamID: NumericID(1), TopicID: NumericID(2), Partitioning: Balanced(), MessagesCount: 1, Batch: []byte("b")}
	meta, err := send.AppendMetadataTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	padded := binary.LittleEndian.AppendUint32(nil, binary.LittleEndian.Uint32(meta)+4)
	padded = append(append(append(padded, meta[4:]...), trailing...), 'b')
	var got SendMessagesRequest
	if err := got.Decode(padded); err != nil || !reflect.DeepEqual(got, send) {
		t.Fatalf("send metadata with trailing bytes: %v %+v", err, got)
	}
}

func TestHotRequestDecodeDoesNotAllocate(t *testing.T) {
	send := SendMessagesRequest{StreamID: NumericID(1), TopicID: NumericID(2), Partitioning: PartitionIDPartitioning(3), MessagesCount: 1, Batch: make([]byte, 300)}
	sendBody, _ := send.AppendTo(nil)
	poll := PollMessagesRequest{Consumer: Consumer{Kind: ConsumerKindSingle, ID: NumericID(1)}, StreamID: NumericID(1), TopicID: NumericID(2),
		Partition: SomePartition(0), Strategy: PollingStrategy{Kind: PollNext}, Count: 100}
	pollBody, _ := poll.AppendTo(nil)
	var s SendMessagesRequest
	var p PollMessagesRequest
	dst := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() {
		if err := s.Decode(sendBody); err != nil {
			t.Fatal(err)
		}
		if err := p.Decode(pollBody); err != nil {
			t.Fatal(err)
		}
		var err error
		if dst, err = s.AppendMetadataTo(dst[:0]); err != nil {
			t.Fatal(err)
		}
		if dst, err = p.AppendTo(dst[:0]); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("send/poll codec allocates %v per run", n)
	}
	if &s.Batch[0] != &sendBody[len(sendBody)-300] {
		t.Fatal("batch was copied")
	}
}

func BenchmarkDecodeSendMessages(b *testing.B) {
	send := SendMessagesRequest{StreamID: NumericID(1), TopicID: NumericID(2), Partitioning: PartitionIDPartitioning(3), MessagesCount: 1, Batch: make([]byte, 1000)}
	body, _ := send.AppendTo(nil)
	var s SendMessagesRequest
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Decode(body); err != nil {
			b.Fatal(err)
		}
	}
}
