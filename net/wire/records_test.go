package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestRegisterReplyGolden(t *testing.T) {
	r := RegisterReply{UserID: 3, Session: 0x0102, ServerProtocolVersion: ProtocolVersion, ServerVersion: ServerVersion}
	body, err := r.AppendTo(AppendResultOK(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 0, 0, 0, // result count 0
		3, 0, 0, 0, // user_id
		2, 1, 0, 0, 0, 0, 0, 0, // session
		0, 0x2C, 0, 0, // protocol 11264
		12, // version length
	}
	want = append(want, "0.9.0-edge.5"...)
	if !bytes.Equal(body, want) {
		t.Fatalf("register reply\n got % x\nwant % x", body, want)
	}
	payload, err := ReplyPayload(OpRegister, 0, body)
	if err != nil {
		t.Fatal(err)
	}
	var back RegisterReply
	if err := back.Decode(payload); err != nil || back != r {
		t.Fatalf("decode %v %+v", err, back)
	}
	r.Session = 0
	zero, _ := r.AppendTo(nil)
	if err := back.Decode(zero); !errors.Is(err, ErrBadValue) {
		t.Fatal("session 0 accepted")
	}
}

func sampleTopic(id uint32, partitions int) TopicDetails {
	parsed, err := ParseTopicOptions(nil, uint32(partitions))
	if err != nil {
		panic(err)
	}
	td := TopicDetails{TopicHeader: TopicHeader{ID: id, CreatedAt: 1700, PartitionsCount: uint32(partitions),
		MessageExpiry: MessageExpiryNever, CompressionAlgorithm: CompressionNone, MaxTopicSize: 1 << 40,
		SizeBytes: 10, MessagesCount: 2, Name: "orders", Options: Options{Uint64Option("max_topic_size", 1<<40)}, Derived: parsed.Derived}}
	for i := 0; i < partitions; i++ {
		td.Partitions = append(td.Partitions, Partition{ID: uint32(i), CreatedAt: 5, SegmentsCount: 1, CurrentOffset: 9, SizeBytes: 100, MessagesCount: 10})
	}
	return td
}

func TestStreamAndTopicRecords(t *testing.T) {
	s := Stream{ID: 1, CreatedAt: 2, TopicsCount: 0, SizeBytes: 3, MessagesCount: 4, Name: "s"}
	b, err := s.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 's', 0, 0, 0, 0}
	if !bytes.Equal(b, want) || len(b) != 33+1+4 {
		t.Fatalf("stream\n got % x\nwant % x", b, want)
	}
	list, err := DecodeStreams(append(append([]byte{}, b...), b...))
	if err != nil || len(list) != 2 || list[1].Name != "s" {
		t.Fatalf("list %v %v", err, list)
	}
	td := sampleTopic(7, 3)
	sd := StreamDetails{Stream: s, Topics: []TopicHeader{td.TopicHeader}}
	sd.TopicsCount = 1
	b, err = sd.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var sdBack StreamDetails
	if err := sdBack.Decode(b); err != nil || !reflect.DeepEqual(sdBack.Topics[0].Derived, td.Derived) || sdBack.Topics[0].Name != "orders" {
		t.Fatalf("stream details %v", err)
	}
	if err := sdBack.Decode(b[:len(b)-1]); err == nil {
		t.Fatal("truncated details accepted")
	}
	b, err = td.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var tdBack TopicDetails
	if err := tdBack.Decode(b); err != nil || !reflect.DeepEqual(tdBack.Partitions, td.Partitions) || tdBack.MaxTopicSize != 1<<40 {
		t.Fatalf("topic details %v", err)
	}
	// Layout spot checks: compression at 24, name length at 49.
	if b[24] != CompressionNone || b[49] != 6 || string(b[50:56]) != "orders" {
		t.Fatalf("topic layout % x", b[:60])
	}
	if tail := b[len(b)-3*PartitionSize:]; tail[0] != 0 || tail[PartitionSize] != 1 {
		t.Fatal("partitions do not end the record")
	}
	list2, err := AppendTopicList(nil, []TopicHeader{td.TopicHeader, td.TopicHeader})
	if err != nil {
		t.Fatal(err)
	}
	headers, err := DecodeTopicList(list2)
	if err != nil || len(headers) != 2 {
		t.Fatalf("topic list %v", err)
	}
	if _, err := (&StreamDetails{Stream: Stream{Name: "x", TopicsCount: 2}}).AppendTo(nil); !errors.Is(err, ErrBadValue) {
		t.Fatal("count mismatch encoded")
	}
}

func TestUserRecords(t *testing.T) {
	u := UserDetails{User: User{ID: 0, CreatedAt: 9, Status: UserActive, Username: "iggy"},
		Permissions: &Permissions{Global: GlobalPermissions{ReadUsers: true}}}
	b, err := u.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back UserDetails
	if err := back.Decode(b); err != nil || back.Username != "iggy" || back.Permissions == nil || !back.Permissions.Global.ReadUsers {
		t.Fatalf("user details %v %+v", err, back)
	}
	u.Permissions = nil
	b, _ = u.AppendTo(nil)
	if !bytes.Equal(b[len(b)-8:], []byte{0, 0, 0, 0, 0, 0, 0, 0}) { // empty options, no permissions
		t.Fatalf("no-permission tail % x", b[len(b)-8:])
	}
	if err := back.Decode(b); err != nil || back.Permissions != nil {
		t.Fatal("no permissions")
	}
	users, _ := AppendUsers(nil, []User{u.User, u.User})
	if got, err := DecodeUsers(users); err != nil || len(got) != 2 {
		t.Fatal("users list")
	}
	tokens, _ := AppendPersonalAccessTokens(nil, []PersonalAccessTokenInfo{{Name: "ci", ExpiryAt: 0}, {Name: "x", ExpiryAt: 5}})
	if !bytes.Equal(tokens[:11], []byte{2, 'c', 'i', 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("pat % x", tokens)
	}
	if got, err := DecodePersonalAccessTokens(tokens); err != nil || len(got) != 2 || got[1].ExpiryAt != 5 {
		t.Fatal("pat list")
	}
	created := CreatedPersonalAccessToken{Token: "abc"}
	b, _ = created.AppendTo(nil)
	var cb CreatedPersonalAccessToken
	if err := cb.Decode(b); err != nil || cb.Token != "abc" {
		t.Fatal("created token")
	}
}

func TestGroupAndOffsetRecords(t *testing.T) {
	g := ConsumerGroupDetails{ConsumerGroup: ConsumerGroup{ID: 1, PartitionsCount: 4, MembersCount: 2, Name: "g"},
		Members: []ConsumerGroupMember{{ID: 0, Partitions: []uint32{0, 1}}, {ID: 1, Partitions: []uint32{3, 2}}}}
	b, err := g.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 13+1+2*(8+8) {
		t.Fatalf("group details length %d", len(b))
	}
	var back ConsumerGroupDetails
	if err := back.Decode(b); err != nil || !reflect.DeepEqual(back, g) {
		t.Fatalf("group details %v %+v", err, back)
	}
	groups, _ := AppendConsumerGroups(nil, []ConsumerGroup{g.ConsumerGroup})
	if got, err := DecodeConsumerGroups(groups); err != nil || got[0] != g.ConsumerGroup {
		t.Fatal("groups list")
	}
	sync := SyncConsumerGroupReply{Generation: 3, Partitions: []uint32{2}}
	b = sync.AppendTo(nil)
	if !bytes.Equal(b, []byte{3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}) {
		t.Fatalf("sync % x", b)
	}
	var sb SyncConsumerGroupReply
	if err := sb.Decode(b); err != nil || !reflect.DeepEqual(sb, sync) {
		t.Fatal("sync decode")
	}
	if err := sb.Decode([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}); !errors.Is(err, ErrTruncated) {
		t.Fatal("huge count accepted")
	}
	off := ConsumerOffset{PartitionID: 1, CurrentOffset: 10, StoredOffset: 7}
	b = off.AppendTo(nil)
	var ob ConsumerOffset
	if len(b) != ConsumerOffsetSize || ob.Decode(b) != nil || ob != off {
		t.Fatal("consumer offset")
	}
}

func TestMessageRecords(t *testing.T) {
	r := SendMessagesReply{Confirmations: []SendConfirmation{{StreamID: 1, TopicID: 2, PartitionID: 3, BaseOffset: 4}}}
	b := r.AppendTo(nil)
	if len(b) != 24 || b[0] != 1 || b[16] != 4 {
		t.Fatalf("send reply % x", b)
	}
	var rb SendMessagesReply
	if err := rb.Decode(b); err != nil || !reflect.DeepEqual(rb, r) {
		t.Fatal("send reply decode")
	}
	if err := rb.Decode(nil); err == nil {
		t.Fatal("empty send reply accepted")
	}
	h := PolledMessagesHeader{PartitionID: PartitionIDResync, CurrentOffset: 5, Count: 0}
	b = h.AppendTo(nil)
	var fixed [16]byte
	if err := h.Encode(fixed[:]); err != nil || !bytes.Equal(fixed[:], b) {
		t.Fatal("poll head Encode")
	}
	got, batches, err := DecodePolledMessages(append(b, 1, 2, 3))
	if err != nil || got != h || !bytes.Equal(batches, []byte{1, 2, 3}) {
		t.Fatal("poll head decode")
	}
	if _, _, err := DecodePolledMessages(b[:15]); !errors.Is(err, ErrTruncated) {
		t.Fatal("short poll reply")
	}
}

func TestSystemRecords(t *testing.T) {
	c := ClientDetails{ClientInfo: ClientInfo{ClientID: 4, UserID: UserIDNone, Transport: TransportTCP, Address: "127.0.0.1:5000"},
		ConsumerGroups: []ClientGroup{{1, 2, 3}}}
	b := c.AppendTo(nil)
	if len(b) != 17+14+12 || b[8] != 1 || b[9] != 14 {
		t.Fatalf("client details % x", b)
	}
	var cb ClientDetails
	if err := cb.Decode(b); err != nil || cb.ConsumerGroupsCount != 1 || cb.ConsumerGroups[0] != c.ConsumerGroups[0] {
		t.Fatalf("client decode %v", err)
	}
	if list, err := DecodeClients(AppendClients(nil, []ClientInfo{c.ClientInfo})); err != nil || len(list) != 1 {
		t.Fatal("clients list")
	}
	s := Stats{ProcessID: 1, CPUUsage: 12.5, MemoryUsage: 3, StreamsCount: 2, Hostname: "h", ServerVersion: ServerVersion,
		ServerSemver: ServerSemver, CacheMetrics: []CacheMetrics{{1, 2, 3, 4, 5, 0.5}}, ThreadsCount: 8, TotalDiskSpace: 9}
	b = s.AppendTo(nil)
	var sb Stats
	if err := sb.Decode(b); err != nil || !reflect.DeepEqual(sb, s) {
		t.Fatalf("stats %v %+v", err, sb)
	}
	if b[4] != 0 || b[7] != 0x41 { // 12.5f = 0x41480000
		t.Fatalf("cpu float % x", b[4:8])
	}
	cm := ClusterMetadata{Name: SingleNodeClusterName, Nodes: []ClusterNode{{Name: SingleNodeName, IP: "127.0.0.1", TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WebSocketPort: 8092}}}
	b = cm.AppendTo(nil)
	var cmb ClusterMetadata
	if err := cmb.Decode(b); err != nil || !reflect.DeepEqual(cmb, cm) {
		t.Fatal("cluster metadata")
	}
	if b[0] != 11 || string(b[4:15]) != "single-node" {
		t.Fatalf("cluster layout % x", b[:16])
	}
	d := DescribeOptionsReply{Descriptors: TopicOptionDescriptors()}
	if len(d.Descriptors) != 8 || d.Descriptors[0].Key != "compression_algorithm" || d.Descriptors[7].Key != "preallocate_segments" {
		t.Fatal("reference descriptors")
	}
	b, err := d.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	var db DescribeOptionsReply
	if err := db.Decode(b); err != nil || !reflect.DeepEqual(db, d) {
		t.Fatal("describe options")
	}
	if ext := TopicOptionDescriptorsWithExtensions(); len(ext) != 10 || ext[8].Key != TopicOptionDurability {
		t.Fatal("extension descriptors")
	}
	// message_expiry default bytes are u64::MAX.
	if !bytes.Equal(d.Descriptors[1].Default, u64Bytes(math.MaxUint64)) || d.Descriptors[1].Kind != TLVUint64 {
		t.Fatal("expiry descriptor")
	}
}

func TestHotRecordsDoNotAllocate(t *testing.T) {
	dst := make([]byte, 0, 256)
	confirm := SendMessagesReply{Confirmations: []SendConfirmation{{StreamID: 1, TopicID: 2, PartitionID: 3, BaseOffset: 4}}}
	head := PolledMessagesHeader{PartitionID: 1, CurrentOffset: 2, Count: 3}
	poll := append(head.AppendTo(nil), make([]byte, 100)...)
	if n := testing.AllocsPerRun(100, func() {
		dst = confirm.AppendTo(dst[:0])
		dst = AppendResultOK(dst[:0])
		if err := head.Encode(poll); err != nil {
			t.Fatal(err)
		}
		if _, _, err := DecodePolledMessages(poll); err != nil {
			t.Fatal(err)
		}
		if _, _, err := SplitResult(dst); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("send/poll replies allocate %v", n)
	}
}

// TestStatsFencedPartitionsExtension checks Strata's Stats extension: absent
// (Iggy's record byte for byte) when no partition is fenced, appended after
// total_disk_space when one is, so that a decoder that stops there (Iggy's
// SDKs) reads the same record; it round-trips and a cut one is refused.
func TestStatsFencedPartitionsExtension(t *testing.T) {
	s := Stats{ProcessID: 1, Hostname: "h", ServerVersion: ServerVersion, ThreadsCount: 2, FreeDiskSpace: 3, TotalDiskSpace: 4}
	plain := s.AppendTo(nil)
	if got := binary.LittleEndian.Uint64(plain[len(plain)-8:]); got != 4 {
		t.Fatalf("the record does not end with total_disk_space: %d", got)
	}
	s.FencedPartitions = []FencedPartition{
		{StreamID: 1, TopicID: 2, PartitionID: 3, ServedBelow: 1500, File: "/d/00000000000000001000.log", Position: 525280, Reason: "batch checksum"},
		{StreamID: 4, TopicID: 5, PartitionID: 6, ServedBelow: 0, File: "/d", Reason: "missing history"},
	}
	extended := s.AppendTo(nil)
	if !bytes.HasPrefix(extended, plain) {
		t.Fatal("the extension changes bytes before total_disk_space")
	}
	var back Stats
	if err := back.Decode(extended); err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	for cut := len(plain) + 1; cut < len(extended); cut += 7 {
		if err := back.Decode(extended[:cut]); err == nil {
			t.Fatalf("a stats record cut at %d of %d bytes decoded", cut, len(extended))
		}
	}
	huge := binary.LittleEndian.AppendUint32(append([]byte(nil), plain...), 1<<30)
	if err := back.Decode(huge); !errors.Is(err, ErrTruncated) {
		t.Fatalf("an impossible fenced count: %v", err)
	}
}
