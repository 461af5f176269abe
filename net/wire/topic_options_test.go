package wire

import (
	"encoding/binary"
	"errors"
	"testing"
)

func block(t *testing.T, opts ...Option) []byte {
	t.Helper()
	b, err := Options(opts).AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOptionStrings: string option values are read by net/units (the
// one parser of sizes and durations) plus the option words, and a bad
// one wraps ErrBadValue.
func TestOptionStrings(t *testing.T) {
	expiry := map[string]uint64{
		"7 days": 7 * 86400e6, "30 days": 30 * 86400e6, "1h 30m": 5400e6, "1h30m": 5400e6, "500ms": 500e3,
		"1500ns": 1, "1 M": 2_630_016e6, "never": MessageExpiryNever, "unlimited": MessageExpiryNever,
		"server_default": 0, "0": 0,
	}
	for s, want := range expiry {
		if got, err := parseExpiryString(s); err != nil || got != want {
			t.Errorf("expiry %q = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "7", "days", "7 parsecs", "1h x", "99999999999999999999s"} {
		if _, err := parseExpiryString(s); !errors.Is(err, ErrBadValue) {
			t.Errorf("expiry %q accepted: %v", s, err)
		}
	}
	sizes := map[string]uint64{
		"1 GiB": 1 << 30, "512 MB": 512e6, "1GB": 1e9, "4096": 4096, "1.5 KiB": 1536, "1.5 GiB": 3 << 29,
		"4K": 4000, "1 KB": 1000, "1 EiB": 1 << 60, "unlimited": MaxTopicSizeUnlimited, "server_default": 0,
	}
	for s, want := range sizes {
		if got, err := parseSizeString(s); err != nil || got != want {
			t.Errorf("size %q = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "1 XB", "1.", "20 EiB", "1 GiBs", "1 kb"} {
		if _, err := parseSizeString(s); !errors.Is(err, ErrBadValue) {
			t.Errorf("size %q accepted: %v", s, err)
		}
	}
}

func TestTopicOptionsDefaults(t *testing.T) {
	p, err := ParseTopicOptions(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.Settings != DefaultTopicSettings() || len(p.Explicit) != 0 || len(p.Derived) != len(topicKeyOrder) {
		t.Fatalf("defaults %+v", p)
	}
	for i := 1; i < len(p.Derived); i++ {
		if p.Derived[i-1].Key >= p.Derived[i].Key {
			t.Fatalf("derived not ascending: %q %q", p.Derived[i-1].Key, p.Derived[i].Key)
		}
	}
	if v, _ := p.Derived.Get(TopicOptionDurability); string(v.Data) != "replicated" || v.Kind != TLVString {
		t.Fatal("durability default missing from derived")
	}
	if v, _ := p.Derived.Get(TopicOptionCompressionAlgorithm); string(v.Data) != "none" {
		t.Fatal("compression default")
	}
}

func TestTopicOptionsExplicit(t *testing.T) {
	b := block(t,
		StringOption("segment_size", "512 MiB"),
		StringOption("message_expiry", "7 days"),
		StringOption("compression_algorithm", "GZIP"),
		StringOption("enforce_fsync", "true"),
		StringOption("messages_required_to_save", "10"),
		StringOption("durability", "persisted"),
		Uint64Option("max_topic_size", 0),
	)
	p, err := ParseTopicOptions(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Settings
	if s.SegmentSize != 512<<20 || s.MessageExpiry != 7*86400e6 || s.CompressionAlgorithm != CompressionGzip ||
		!s.EnforceFsync || s.MessagesRequiredToSave != 10 || s.Durability != DurabilityPersisted ||
		s.MaxTopicSize != MaxTopicSizeUnlimited || s.ConsumerOffsetDurability != DurabilityReplicated {
		t.Fatalf("settings %+v", s)
	}
	// max_topic_size sent as 0 is "server default": as in Iggy's
	// TopicCreateOptions::absorb_strict it counts as not sent, so it is
	// absent from the explicit options and derived with its resolved value.
	want := Options{
		StringOption("compression_algorithm", "gzip"),
		StringOption("durability", "persisted"),
		BoolOption("enforce_fsync", true),
		Uint64Option("message_expiry", 7*86400e6),
		Uint32Option("messages_required_to_save", 10),
		Uint64Option("segment_size", 512<<20),
	}
	if !p.Explicit.Equal(want) {
		t.Fatalf("explicit %+v", p.Explicit)
	}
	wantDerived := Options{
		StringOption("consumer_offset_durability", "replicated"),
		Uint64Option("max_topic_size", MaxTopicSizeUnlimited),
		BoolOption("preallocate_segments", false),
		Uint64Option("size_of_messages_required_to_save", DefaultSizeOfMessagesRequiredToSave),
	}
	if !p.Derived.Equal(wantDerived) {
		t.Fatalf("derived %+v", p.Derived)
	}
	// The explicit block is a valid options block that parses to itself.
	again, err := ParseTopicOptions(block(t, p.Explicit...), 3)
	if err != nil || again.Settings != s {
		t.Fatalf("canonical block re-parse %v", err)
	}
}

// TestTopicOptionsServerDefault: each of the four keys where 0 means
// "server default", sent as 0 (uint64 or string) or as "server_default",
// is absent from the explicit options and present among the derived ones
// with the resolved default; a non-zero value stays explicit.
func TestTopicOptionsServerDefault(t *testing.T) {
	defaults := DefaultTopicSettings()
	resolved := map[string]uint64{
		TopicOptionSegmentSize:                  defaults.SegmentSize,
		TopicOptionSizeOfMessagesRequiredToSave: defaults.SizeOfMessagesRequiredToSave,
		TopicOptionMessageExpiry:                MessageExpiryNever,
		TopicOptionMaxTopicSize:                 MaxTopicSizeUnlimited,
	}
	for key, want := range resolved {
		for _, sent := range []Option{Uint64Option(key, 0), StringOption(key, "0"), StringOption(key, "server_default")} {
			if key == TopicOptionSegmentSize || key == TopicOptionSizeOfMessagesRequiredToSave {
				if sent.Value.Kind == TLVString && string(sent.Value.Data) == "server_default" {
					continue // byte sizes take numbers only
				}
			}
			p, err := ParseTopicOptions(block(t, sent), 1)
			if err != nil {
				t.Fatalf("%s = %x: %v", key, sent.Value.Data, err)
			}
			if _, ok := p.Explicit.Get(key); ok || len(p.Explicit) != 0 {
				t.Errorf("%s = %q: explicit %+v", key, sent.Value.Data, p.Explicit)
			}
			if v, ok := p.Derived.Get(key); !ok || v.Kind != TLVUint64 || binary.LittleEndian.Uint64(v.Data) != want {
				t.Errorf("%s = %q: derived %+v", key, sent.Value.Data, p.Derived)
			}
			if p.Settings != defaults {
				t.Errorf("%s = %q: settings %+v", key, sent.Value.Data, p.Settings)
			}
		}
	}
	p, err := ParseTopicOptions(block(t, Uint64Option(TopicOptionSizeOfMessagesRequiredToSave, 4096)), 1)
	if v, ok := p.Explicit.Get(TopicOptionSizeOfMessagesRequiredToSave); err != nil || !ok || binary.LittleEndian.Uint64(v.Data) != 4096 {
		t.Fatalf("non-zero value: %v %+v", err, p.Explicit)
	}
	if _, ok := p.Derived.Get(TopicOptionSizeOfMessagesRequiredToSave); ok {
		t.Fatal("an explicit key is also derived")
	}
	// Keys where 0 is not a server default keep their rules.
	if _, err := ParseTopicOptions(block(t, Uint32Option(TopicOptionMessagesRequiredToSave, 0)), 1); CodeOf(err) != ErrInvalidOptionValue {
		t.Fatalf("messages_required_to_save 0: %v", err)
	}
}

func TestTopicOptionsErrors(t *testing.T) {
	cases := []struct {
		name string
		opts []Option
		code ErrorCode
	}{
		{"unknown key", []Option{StringOption("replication_factor", "3")}, ErrUnsupportedOptionKey},
		{"unknown before bad value", []Option{StringOption("segment_size", "x"), StringOption("zzz", "1")}, ErrUnsupportedOptionKey},
		{"bad compression", []Option{StringOption("compression_algorithm", "lz4")}, ErrInvalidOptionValue},
		{"compression code 3", []Option{Uint8Option("compression_algorithm", 3)}, ErrInvalidOptionValue},
		{"expiry as bool", []Option{BoolOption("message_expiry", true)}, ErrInvalidOptionValue},
		{"segment not aligned", []Option{Uint64Option("segment_size", 1<<20+1)}, ErrInvalidOptionValue},
		{"segment too small", []Option{Uint64Option("segment_size", 512)}, ErrInvalidOptionValue},
		{"segment too big", []Option{StringOption("segment_size", "2 GiB")}, ErrInvalidOptionValue},
		{"messages 0", []Option{Uint32Option("messages_required_to_save", 0)}, ErrInvalidOptionValue},
		{"messages too many", []Option{StringOption("messages_required_to_save", "16777217")}, ErrInvalidOptionValue},
		{"messages not decimal", []Option{StringOption("messages_required_to_save", "1e3")}, ErrInvalidOptionValue},
		{"size above 1 GiB", []Option{StringOption("size_of_messages_required_to_save", "2 GiB")}, ErrInvalidOptionValue},
		{"fsync yes", []Option{StringOption("enforce_fsync", "yes")}, ErrInvalidOptionValue},
		{"fsync byte 2", []Option{{Key: "enforce_fsync", Value: TLVItem{Kind: TLVBool, Data: []byte{2}}}}, ErrInvalidOptionValue},
		{"durability", []Option{StringOption("durability", "eventually")}, ErrInvalidOptionValue},
		{"cap below segment", []Option{StringOption("max_topic_size", "1 MiB")}, ErrInvalidTopicSize},
		{"cap below explicit segment", []Option{StringOption("max_topic_size", "3 MiB"), StringOption("segment_size", "4 MiB")}, ErrInvalidTopicSize},
		{"preallocate too much", []Option{BoolOption("preallocate_segments", true)}, ErrInvalidOptionValue},
	}
	for _, c := range cases {
		_, err := ParseTopicOptions(block(t, c.opts...), 65)
		if CodeOf(err) != c.code {
			t.Errorf("%s: %v (code %v), want %v", c.name, err, CodeOf(err), c.code)
		}
	}
	if _, err := ParseTopicOptions([]byte{2, 1, 0, 0, 0}, 1); CodeOf(err) != ErrInvalidCommand {
		t.Fatalf("malformed block: %v", err)
	}
	if _, err := ParseTopicOptions(make([]byte, OptionsBlockBytesMax+1), 1); CodeOf(err) != ErrOptionsBlockTooLarge {
		t.Fatalf("too large: %v", err)
	}
	if _, err := ParseTopicOptions(block(t, BoolOption("preallocate_segments", true)), 64); err != nil {
		t.Fatalf("64 partitions of 1 GiB is exactly the limit: %v", err)
	}
}

func TestTopicUpdateOptions(t *testing.T) {
	u, err := ParseTopicUpdateOptions(block(t, StringOption("max_topic_size", "2 GiB"), Uint8Option("compression_algorithm", 2)))
	if err != nil {
		t.Fatal(err)
	}
	if u.MaxTopicSize == nil || *u.MaxTopicSize != 2<<30 || u.CompressionAlgorithm == nil || *u.CompressionAlgorithm != 2 || u.MessageExpiry != nil {
		t.Fatalf("update %+v", u)
	}
	if err := u.CheckSegmentSize(1 << 30); err != nil {
		t.Fatal(err)
	}
	if err := u.CheckSegmentSize(4 << 30); CodeOf(err) != ErrInvalidTopicSize {
		t.Fatalf("cap below segment: %v", err)
	}
	if _, err := ParseTopicUpdateOptions(block(t, Uint64Option("segment_size", 1<<20))); CodeOf(err) != ErrUnsupportedOptionKey {
		t.Fatalf("segment_size on update: %v", err)
	}
	if _, err := ParseTopicUpdateOptions(block(t, StringOption("durability", "persisted"))); CodeOf(err) != ErrUnsupportedOptionKey {
		t.Fatalf("durability on update: %v", err)
	}
	if _, err := ParseTopicUpdateOptions(block(t, StringOption("message_expiry", "soon"))); CodeOf(err) != ErrInvalidOptionValue {
		t.Fatalf("bad expiry: %v", err)
	}
	// A sent 0 resets the key to the server default: resolved value, and
	// the key moves from the explicit options to the derived ones.
	zero, err := ParseTopicUpdateOptions(block(t, Uint64Option("message_expiry", 0), StringOption("max_topic_size", "0"),
		StringOption("compression_algorithm", "gzip")))
	if err != nil || *zero.MessageExpiry != MessageExpiryNever || *zero.MaxTopicSize != MaxTopicSizeUnlimited {
		t.Fatalf("update with 0: %v %+v", err, zero)
	}
	if !zero.Explicit.Equal(Options{StringOption("compression_algorithm", "gzip")}) ||
		!zero.Derived.Sorted().Equal(Options{Uint64Option("max_topic_size", MaxTopicSizeUnlimited), Uint64Option("message_expiry", MessageExpiryNever)}) {
		t.Fatalf("update with 0: explicit %+v derived %+v", zero.Explicit, zero.Derived)
	}
	if err := zero.CheckSegmentSize(1 << 30); err != nil {
		t.Fatalf("server-default cap below segment: %v", err)
	}
	stored := Options{Uint64Option("segment_size", 1<<20), StringOption("compression_algorithm", "none")}
	patched := PatchOptions(stored, u.Options)
	if len(patched) != 3 || patched[0].Key != "compression_algorithm" || patched[0].Value.Kind != TLVUint8 || patched[1].Key != "max_topic_size" {
		t.Fatalf("patched %+v", patched)
	}
}
