package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestIdentifierGolden(t *testing.T) {
	b, err := NumericID(0x01020304).AppendTo(nil)
	if err != nil || !bytes.Equal(b, []byte{1, 4, 4, 3, 2, 1}) {
		t.Fatalf("numeric % x %v", b, err)
	}
	b, err = NamedID("ab").AppendTo(nil)
	if err != nil || !bytes.Equal(b, []byte{2, 2, 'a', 'b'}) {
		t.Fatalf("string % x %v", b, err)
	}
	id, n, err := DecodeIdentifier([]byte{2, 2, 'a', 'b', 9})
	if err != nil || n != 4 || id != NamedID("ab") {
		t.Fatalf("decode %v %d %v", id, n, err)
	}
	for _, bad := range [][]byte{{1, 3, 0, 0, 0}, {2, 0}, {3, 4, 0, 0, 0, 0}, {2, 1, 0xff}, {1, 4, 0}, {1}} {
		if _, _, err := DecodeIdentifier(bad); !errors.Is(err, ErrBadIdentifier) && !errors.Is(err, ErrTruncated) {
			t.Errorf("% x accepted: %v", bad, err)
		}
	}
	if _, err := NamedID(strings.Repeat("x", 256)).AppendTo(nil); !errors.Is(err, ErrBadIdentifier) {
		t.Fatal("long name accepted")
	}
}

func TestNames(t *testing.T) {
	b, err := AppendName(nil, "go-sdk")
	if err != nil || !bytes.Equal(b, append([]byte{6}, "go-sdk"...)) {
		t.Fatal("AppendName")
	}
	if _, err := AppendName(nil, ""); !errors.Is(err, ErrInvalidName) {
		t.Fatal("empty name accepted")
	}
	if _, _, err := DecodeName([]byte{0}); !errors.Is(err, ErrInvalidName) {
		t.Fatal("zero-length name decoded")
	}
	if _, _, err := DecodeName([]byte{2, 0xc3, 0x28}); !errors.Is(err, ErrInvalidName) {
		t.Fatal("invalid UTF-8 decoded")
	}
}

func TestConsumerPartitioningStrategy(t *testing.T) {
	b, _ := Consumer{Kind: ConsumerKindGroup, ID: NumericID(7)}.AppendTo(nil)
	if !bytes.Equal(b, []byte{2, 1, 4, 7, 0, 0, 0}) {
		t.Fatalf("consumer % x", b)
	}
	b, _ = PartitionIDPartitioning(3).AppendTo(nil)
	if !bytes.Equal(b, []byte{2, 4, 3, 0, 0, 0}) {
		t.Fatalf("partitioning % x", b)
	}
	b, _ = Balanced().AppendTo(nil)
	if !bytes.Equal(b, []byte{1, 0}) {
		t.Fatalf("balanced % x", b)
	}
	b, _ = MessagesKey([]byte("k1")).AppendTo(nil)
	if !bytes.Equal(b, []byte{3, 2, 'k', '1'}) {
		t.Fatalf("key % x", b)
	}
	b, _ = PollingStrategy{Kind: PollTimestamp, Value: 0x0102}.AppendTo(nil)
	if !bytes.Equal(b, []byte{2, 2, 1, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("strategy % x", b)
	}
	for _, bad := range [][]byte{{1, 1, 0}, {2, 3, 0, 0, 0}, {3, 0}, {4, 0}} {
		d := newDecoder(bad)
		d.partitioning("p")
		if !errors.Is(d.err, ErrBadPartitioning) {
			t.Errorf("partitioning % x: %v", bad, d.err)
		}
	}
	d := newDecoder([]byte{6, 0, 0, 0, 0, 0, 0, 0, 0})
	d.pollingStrategy("s")
	if !errors.Is(d.err, ErrBadPollingStrategy) {
		t.Fatal("strategy kind 6 accepted")
	}
	d = newDecoder([]byte{3, 1, 4, 0, 0, 0, 0})
	d.consumer("c")
	if !errors.Is(d.err, ErrBadConsumer) {
		t.Fatal("consumer kind 3 accepted")
	}
	d = newDecoder([]byte{2})
	if d.ackLevel("a"); !errors.Is(d.err, ErrBadAckLevel) {
		t.Fatal("ack 2 accepted")
	}
	d = newDecoder([]byte{7, 9, 0, 0, 0, 1, 5, 0, 0, 0})
	if p := d.optionalPartition("p"); p.Present || p.ID != 0 {
		t.Fatalf("flag 7 means absent: %+v", p)
	}
	if p := d.optionalPartition("p"); !p.Present || p.ID != 5 {
		t.Fatalf("flag 1: %+v", p)
	}
}

func tlvBlock(t *testing.T, items ...TLVItem) []byte {
	t.Helper()
	var b []byte
	var err error
	for _, it := range items {
		if b, err = AppendTLVItem(b, it.Kind, it.Data); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestTLV(t *testing.T) {
	block := tlvBlock(t, TLVItem{TLVString, []byte("k")}, TLVItem{TLVUint8, []byte{7}})
	if !bytes.Equal(block, []byte{2, 1, 0, 0, 0, 'k', 9, 1, 0, 0, 0, 7}) {
		t.Fatalf("block % x", block)
	}
	if n, err := ValidateTLV(block); n != 1 || err != nil {
		t.Fatalf("validate %d %v", n, err)
	}
	bad := map[string][]byte{
		"odd":       block[:6],
		"kind0":     {0, 1, 0, 0, 0, 'k', 9, 1, 0, 0, 0, 7},
		"kind16":    {16, 1, 0, 0, 0, 'k', 9, 1, 0, 0, 0, 7},
		"len0":      {2, 0, 0, 0, 0, 9, 1, 0, 0, 0, 7},
		"len256":    append([]byte{2, 0, 1, 0, 0}, make([]byte, 256)...),
		"overrun":   {2, 5, 0, 0, 0, 'k'},
		"shorthead": {2, 1, 0},
	}
	for name, b := range bad {
		if _, err := ValidateTLV(b); !errors.Is(err, ErrBadTLV) {
			t.Errorf("%s accepted: %v", name, err)
		}
	}
	wrongSize := tlvBlock(t, TLVItem{TLVString, []byte("k")}, TLVItem{TLVUint64, []byte{1, 2}})
	if _, err := ValidateTLV(wrongSize); err != nil {
		t.Fatal("lenient validation rejected a size mismatch")
	}
	if _, err := ValidateTLVStrict(wrongSize); !errors.Is(err, ErrBadTLV) {
		t.Fatal("strict validation accepted a uint64 of 2 bytes")
	}
}

func TestOptionsBlock(t *testing.T) {
	opts := Options{StringOption("zeta", "v"), Uint64Option("alpha", 5), BoolOption("b", true)}
	block, err := opts.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseOptions(block)
	if err != nil || !back.Equal(opts) {
		t.Fatalf("round trip %v %+v", err, back)
	}
	sorted := opts.Sorted()
	if sorted[0].Key != "alpha" || sorted[1].Key != "b" || sorted[2].Key != "zeta" || opts[0].Key != "zeta" {
		t.Fatal("Sorted")
	}
	framed, _ := opts.AppendBlock(nil)
	if len(framed) != 4+len(block) || framed[0] != byte(len(block)) {
		t.Fatal("AppendBlock prefix")
	}
	if empty, _ := (Options{}).AppendBlock(nil); !bytes.Equal(empty, []byte{0, 0, 0, 0}) {
		t.Fatal("empty block")
	}
	// Non-string key.
	raw := tlvBlock(t, TLVItem{TLVRaw, []byte("k")}, TLVItem{TLVUint8, []byte{1}})
	if _, err := ParseOptions(raw); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("raw key: %v", err)
	}
	dup := tlvBlock(t, TLVItem{TLVString, []byte("k")}, TLVItem{TLVUint8, []byte{1}}, TLVItem{TLVString, []byte("k")}, TLVItem{TLVUint8, []byte{2}})
	if _, err := ParseOptions(dup); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("duplicate: %v", err)
	}
	if _, err := (Options{StringOption("k", "a"), StringOption("k", "b")}).AppendTo(nil); !errors.Is(err, ErrBadOptions) {
		t.Fatal("duplicate encoded")
	}
	// 1025 pairs.
	var many Options
	var big []byte
	for i := 0; i <= OptionsPairsMax; i++ {
		key := string(rune('a'+i%26)) + strings.Repeat("k", i/26+1)
		big, _ = AppendTLVItem(big, TLVString, []byte(key))
		big, _ = AppendTLVItem(big, TLVUint8, []byte{1})
		many = append(many, Uint8Option(key, 1))
	}
	if _, err := ParseOptions(big); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("1025 pairs: %v", err)
	}
	if _, err := many.AppendTo(nil); !errors.Is(err, ErrBadOptions) {
		t.Fatal("1025 pairs encoded")
	}
	if _, err := ParseOptions(make([]byte, OptionsBlockBytesMax+1)); !errors.Is(err, ErrOptionsBlockTooLarge) || CodeOf(err) != 4043 {
		t.Fatalf("too large: %v", err)
	}
}

func TestPermissions(t *testing.T) {
	p := Permissions{
		Global: GlobalPermissions{ManageServers: true, SendMessages: true},
		Streams: []StreamPermissions{
			{StreamID: 1, ReadStream: true, Topics: []TopicPermissions{{TopicID: 2, PollMessages: true}, {TopicID: 3, ManageTopic: true}}},
			{StreamID: 4, SendMessages: true},
		},
	}
	b := p.AppendTo(nil)
	want := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 1, // global
		1,                            // has_streams
		1, 0, 0, 0, 0, 1, 0, 0, 0, 0, // stream 1
		1,                         // has_topics
		2, 0, 0, 0, 0, 0, 1, 0, 1, // topic 2, has_next
		3, 0, 0, 0, 1, 0, 0, 0, 0, // topic 3, last
		1,                            // has_next_stream
		4, 0, 0, 0, 0, 0, 0, 0, 0, 1, // stream 4
		0, // no topics
		0, // last stream
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("permissions\n got % x\nwant % x", b, want)
	}
	back, err := DecodePermissions(b)
	if err != nil || back.String() != p.String() || len(back.Streams[0].Topics) != 2 || back.Streams[0].Topics[1] != p.Streams[0].Topics[1] {
		t.Fatalf("round trip %v %+v", err, back)
	}
	if _, err := DecodePermissions(b[:len(b)-1]); !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
	if _, err := DecodePermissions(append(b, 0)); !errors.Is(err, ErrTrailingBytes) {
		t.Fatalf("trailing: %v", err)
	}
	emb := AppendOptionalPermissions(nil, &p)
	if emb[0] != 1 || int(emb[1]) != len(b) || !bytes.Equal(emb[5:], b) {
		t.Fatal("embedded form")
	}
	d := newDecoder(emb)
	if got := d.optionalPermissions("p"); got == nil || d.err != nil {
		t.Fatalf("embedded decode %v", d.err)
	}
	emb[1]-- // perm_len disagrees with content
	d = newDecoder(emb)
	if d.optionalPermissions("p"); !errors.Is(d.err, ErrBadPermissions) {
		t.Fatalf("bad perm_len: %v", d.err)
	}
	d = newDecoder([]byte{0})
	if d.optionalPermissions("p") != nil || d.err != nil {
		t.Fatal("flag 0")
	}
	d = newDecoder([]byte{0, 0, 0, 0})
	if d.detailsPermissions("p") != nil || d.err != nil || d.off != 4 {
		t.Fatal("details none")
	}
}

func TestResultSection(t *testing.T) {
	b := AppendResultError(nil, ErrStreamNameAlreadyExists)
	if !bytes.Equal(b, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xF4, 0x03, 0, 0}) {
		t.Fatalf("rejection % x", b)
	}
	if _, err := ReplyPayload(OpCreateStream, 0, b); !errors.Is(err, ErrStreamNameAlreadyExists) {
		t.Fatalf("ReplyPayload rejection: %v", err)
	}
	ok := append(AppendResultOK(nil), 'x')
	if p, err := ReplyPayload(OpCreateStream, 0, ok); err != nil || string(p) != "x" {
		t.Fatal("ReplyPayload ok")
	}
	if p, err := ReplyPayload(OpDeleteSegments, 0, b); err != nil || len(p) != 12 {
		t.Fatal("138 is not result-framed")
	}
	if _, err := ReplyPayload(OpSendMessages, ErrUnauthorized, nil); !errors.Is(err, ErrUnauthorized) {
		t.Fatal("status")
	}
	if p, err := ReplyPayload(OpRegister, 0, nil); err != nil || len(p) != 0 {
		t.Fatal("empty register")
	}
	if _, _, err := SplitResult([]byte{2, 0, 0, 0, 1}); !errors.Is(err, ErrBadResult) {
		t.Fatal("short entries")
	}
}

func TestRejectOptions(t *testing.T) {
	if RejectOptions(nil) != nil {
		t.Fatal("empty options rejected")
	}
	if err := RejectOptions(Options{StringOption("x", "1")}); CodeOf(err) != ErrUnsupportedOptionKey {
		t.Fatalf("any key must be 4041: %v", err)
	}
}
