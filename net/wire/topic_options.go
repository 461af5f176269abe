package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/stratabroker/strata/net/units"
)

// Topic option keys (§4.8). The last two are a Strata extension.
const (
	TopicOptionCompressionAlgorithm         = "compression_algorithm"
	TopicOptionMessageExpiry                = "message_expiry"
	TopicOptionMaxTopicSize                 = "max_topic_size"
	TopicOptionSegmentSize                  = "segment_size"
	TopicOptionEnforceFsync                 = "enforce_fsync"
	TopicOptionMessagesRequiredToSave       = "messages_required_to_save"
	TopicOptionSizeOfMessagesRequiredToSave = "size_of_messages_required_to_save"
	TopicOptionPreallocateSegments          = "preallocate_segments"
	// TopicOptionDurability is a Strata extension (DESIGN.md decision 5):
	// string "replicated" (default) or "persisted", for the partition's
	// messages. Accepted at create only.
	TopicOptionDurability = "durability"
	// TopicOptionConsumerOffsetDurability is the Strata extension for the
	// durability of the topic's consumer offsets; same values.
	TopicOptionConsumerOffsetDurability = "consumer_offset_durability"
)

// Topic option defaults and bounds (§4.8, §9).
const (
	// MessageExpiryNever is the message_expiry meaning "never expire".
	MessageExpiryNever uint64 = math.MaxUint64
	// MaxTopicSizeUnlimited is the max_topic_size meaning "no cap".
	MaxTopicSizeUnlimited uint64 = math.MaxUint64
	// DefaultSegmentSize is 1 GiB.
	DefaultSegmentSize uint64 = 1 << 30
	// SegmentSizeMin and SegmentSizeMax bound segment_size.
	SegmentSizeMin uint64 = 1 << 20
	SegmentSizeMax uint64 = 1 << 30
	// SegmentSizeAlignment: segment_size must be a multiple of it.
	SegmentSizeAlignment uint64 = 512
	// DefaultMessagesRequiredToSave is the flush threshold in messages.
	DefaultMessagesRequiredToSave uint32 = 1024
	// MessagesRequiredToSaveMax bounds messages_required_to_save.
	MessagesRequiredToSaveMax uint32 = 16_777_216
	// DefaultSizeOfMessagesRequiredToSave is the flush threshold in bytes.
	DefaultSizeOfMessagesRequiredToSave uint64 = 1 << 20
	// SizeOfMessagesRequiredToSaveMax bounds it.
	SizeOfMessagesRequiredToSaveMax uint64 = 1 << 30
	// PreallocatedBytesMax bounds segment_size × partitions_count when
	// preallocate_segments is on.
	PreallocatedBytesMax uint64 = 64 << 30
)

// Durability is a topic's durability policy (Strata extension, DESIGN.md
// decision 5).
type Durability uint8

// Durability policies.
const (
	// DurabilityReplicated keeps prepares in memory on a quorum (default).
	DurabilityReplicated Durability = 1
	// DurabilityPersisted acknowledges only after an fsynced prepare WAL.
	DurabilityPersisted Durability = 2
)

// String returns "replicated" or "persisted".
func (d Durability) String() string {
	switch d {
	case DurabilityReplicated:
		return "replicated"
	case DurabilityPersisted:
		return "persisted"
	}
	return "Durability(" + strconv.Itoa(int(d)) + ")"
}

// TopicSettings are a topic's resolved option values.
type TopicSettings struct {
	CompressionAlgorithm uint8
	// MessageExpiry in micros; MessageExpiryNever = never.
	MessageExpiry uint64
	// MaxTopicSize in bytes; MaxTopicSizeUnlimited = no cap.
	MaxTopicSize                 uint64
	SegmentSize                  uint64
	EnforceFsync                 bool
	MessagesRequiredToSave       uint32
	SizeOfMessagesRequiredToSave uint64
	PreallocateSegments          bool
	Durability                   Durability
	ConsumerOffsetDurability     Durability
}

// DefaultTopicSettings returns the values a topic gets for keys not sent.
func DefaultTopicSettings() TopicSettings {
	return TopicSettings{
		CompressionAlgorithm:         CompressionNone,
		MessageExpiry:                MessageExpiryNever,
		MaxTopicSize:                 MaxTopicSizeUnlimited,
		SegmentSize:                  DefaultSegmentSize,
		MessagesRequiredToSave:       DefaultMessagesRequiredToSave,
		SizeOfMessagesRequiredToSave: DefaultSizeOfMessagesRequiredToSave,
		Durability:                   DurabilityReplicated,
		ConsumerOffsetDurability:     DurabilityReplicated,
	}
}

// ParsedTopicOptions is the outcome of a create-topic options block.
type ParsedTopicOptions struct {
	// Settings are the resolved values (defaults for keys not sent, and
	// 0 = "server default" resolved).
	Settings TopicSettings
	// Explicit re-encodes each key the client sent in its canonical kind
	// (string compression and durability, uint64 sizes and expiry, bool,
	// uint32), with the value as sent, keys ascending. A key sent as "server
	// default" (0, or the string "server_default", for segment_size,
	// size_of_messages_required_to_save, message_expiry and max_topic_size)
	// is not explicit: as Iggy's TopicCreateOptions::absorb_strict does, it
	// counts as not sent.
	Explicit Options
	// Derived holds the resolved value of every key not in Explicit,
	// canonical kinds, keys ascending. The Strata durability keys appear
	// here when absent.
	Derived Options
}

// topicKeyOrder lists every create-time key in byte-wise ascending order.
var topicKeyOrder = [...]string{
	TopicOptionCompressionAlgorithm,
	TopicOptionConsumerOffsetDurability,
	TopicOptionDurability,
	TopicOptionEnforceFsync,
	TopicOptionMaxTopicSize,
	TopicOptionMessageExpiry,
	TopicOptionMessagesRequiredToSave,
	TopicOptionPreallocateSegments,
	TopicOptionSegmentSize,
	TopicOptionSizeOfMessagesRequiredToSave,
}

func isTopicKey(key string) bool {
	for _, k := range topicKeyOrder {
		if k == key {
			return true
		}
	}
	return false
}

func isTopicUpdateKey(key string) bool {
	return key == TopicOptionCompressionAlgorithm || key == TopicOptionMessageExpiry || key == TopicOptionMaxTopicSize
}

// ParseTopicOptions validates a create-topic options block (the trailing
// block of a CreateTopic body) and resolves it. Errors carry the status
// the server denies with (CodeOf): ErrOptionsBlockTooLarge 4043, a
// malformed block InvalidCommand 3, any unknown key
// ErrUnsupportedOptionKey 4041 (checked before values), a wrong kind or
// unparsable or out-of-range value ErrInvalidOptionValue 4042, and
// max_topic_size below the segment size ErrInvalidTopicSize 1019.
// partitionsCount is needed for the preallocate_segments bound.
func ParseTopicOptions(block []byte, partitionsCount uint32) (ParsedTopicOptions, error) {
	opts, err := ParseOptions(block)
	if err != nil {
		return ParsedTopicOptions{}, err
	}
	for _, o := range opts {
		if !isTopicKey(o.Key) {
			return ParsedTopicOptions{}, fmt.Errorf("%w: topic key %q", ErrUnsupportedOptionKey, o.Key)
		}
	}
	s := DefaultTopicSettings()
	var explicit Options
	for _, key := range topicKeyOrder {
		v, ok := opts.Get(key)
		if !ok {
			continue
		}
		canonical, err := applyTopicOption(&s, key, v)
		if err != nil {
			return ParsedTopicOptions{}, err
		}
		if !isServerDefault(canonical) {
			explicit = append(explicit, canonical)
		}
	}
	if s.MaxTopicSize < s.SegmentSize {
		return ParsedTopicOptions{}, fmt.Errorf("%w: max_topic_size %d below segment size %d", ErrInvalidTopicSize, s.MaxTopicSize, s.SegmentSize)
	}
	if s.PreallocateSegments {
		if hi, lo := mul64(s.SegmentSize, uint64(partitionsCount)); hi != 0 || lo > PreallocatedBytesMax {
			return ParsedTopicOptions{}, fmt.Errorf("%w: preallocating %d partitions of %d bytes exceeds %d", ErrInvalidOptionValue, partitionsCount, s.SegmentSize, PreallocatedBytesMax)
		}
	}
	var derived Options
	for _, key := range topicKeyOrder {
		if _, ok := explicit.Get(key); !ok {
			derived = append(derived, canonicalTopicOption(&s, key))
		}
	}
	return ParsedTopicOptions{Settings: s, Explicit: explicit, Derived: derived}, nil
}

// isServerDefault reports whether a canonical option says "use the server
// default": 0 for the four keys where 0 means that (segment_size,
// size_of_messages_required_to_save, message_expiry, max_topic_size).
// The strings "server_default" and "default" parse to the same 0.
func isServerDefault(o Option) bool {
	switch o.Key {
	case TopicOptionSegmentSize, TopicOptionSizeOfMessagesRequiredToSave, TopicOptionMessageExpiry, TopicOptionMaxTopicSize:
		return o.Value.Kind == TLVUint64 && len(o.Value.Data) == 8 && binary.LittleEndian.Uint64(o.Value.Data) == 0
	}
	return false
}

// applyTopicOption parses one value into s and returns the canonical
// option for the explicit block.
func applyTopicOption(s *TopicSettings, key string, v TLVItem) (Option, error) {
	bad := func(format string, args ...any) (Option, error) {
		return Option{}, fmt.Errorf("%w: %s: "+format, append([]any{ErrInvalidOptionValue, key}, args...)...)
	}
	switch key {
	case TopicOptionCompressionAlgorithm:
		c, err := parseCompression(v)
		if err != nil {
			return bad("%v", err)
		}
		s.CompressionAlgorithm = c
		return canonicalTopicOption(s, key), nil
	case TopicOptionMessageExpiry:
		n, err := optionU64(v, parseExpiryString)
		if err != nil {
			return bad("%v", err)
		}
		s.MessageExpiry = n
		if n == 0 {
			s.MessageExpiry = MessageExpiryNever
		}
		return Uint64Option(key, n), nil
	case TopicOptionMaxTopicSize:
		n, err := optionU64(v, parseSizeString)
		if err != nil {
			return bad("%v", err)
		}
		s.MaxTopicSize = n
		if n == 0 {
			s.MaxTopicSize = MaxTopicSizeUnlimited
		}
		return Uint64Option(key, n), nil
	case TopicOptionSegmentSize:
		n, err := optionU64(v, parseByteSize)
		if err != nil {
			return bad("%v", err)
		}
		s.SegmentSize = n
		if n == 0 {
			s.SegmentSize = DefaultSegmentSize
		} else if n%SegmentSizeAlignment != 0 || n < SegmentSizeMin || n > SegmentSizeMax {
			return bad("%d is not a multiple of %d in %d..%d", n, SegmentSizeAlignment, SegmentSizeMin, SegmentSizeMax)
		}
		return Uint64Option(key, n), nil
	case TopicOptionEnforceFsync, TopicOptionPreallocateSegments:
		b, err := optionBool(v)
		if err != nil {
			return bad("%v", err)
		}
		if key == TopicOptionEnforceFsync {
			s.EnforceFsync = b
		} else {
			s.PreallocateSegments = b
		}
		return BoolOption(key, b), nil
	case TopicOptionMessagesRequiredToSave:
		var n uint64
		switch {
		case v.Kind == TLVUint32 && len(v.Data) == 4:
			n = uint64(binary.LittleEndian.Uint32(v.Data))
		case v.Kind == TLVString:
			digits := strings.TrimSpace(string(v.Data))
			parsed, err := parseUintDigits(digits)
			if err != nil || !isDigits(digits) {
				return bad("%q is not a decimal number", v.Data)
			}
			n = parsed
		default:
			return bad("kind %d", v.Kind)
		}
		if n < 1 || n > uint64(MessagesRequiredToSaveMax) {
			return bad("%d outside 1..%d", n, MessagesRequiredToSaveMax)
		}
		s.MessagesRequiredToSave = uint32(n)
		return Uint32Option(key, uint32(n)), nil
	case TopicOptionSizeOfMessagesRequiredToSave:
		n, err := optionU64(v, parseByteSize)
		if err != nil {
			return bad("%v", err)
		}
		if n > SizeOfMessagesRequiredToSaveMax {
			return bad("%d above %d", n, SizeOfMessagesRequiredToSaveMax)
		}
		s.SizeOfMessagesRequiredToSave = n
		if n == 0 {
			s.SizeOfMessagesRequiredToSave = DefaultSizeOfMessagesRequiredToSave
		}
		return Uint64Option(key, n), nil
	case TopicOptionDurability, TopicOptionConsumerOffsetDurability:
		d, err := parseDurability(v)
		if err != nil {
			return bad("%v", err)
		}
		if key == TopicOptionDurability {
			s.Durability = d
		} else {
			s.ConsumerOffsetDurability = d
		}
		return StringOption(key, d.String()), nil
	}
	return Option{}, fmt.Errorf("%w: topic key %q", ErrUnsupportedOptionKey, key)
}

// canonicalTopicOption encodes the resolved value of key from s.
func canonicalTopicOption(s *TopicSettings, key string) Option {
	switch key {
	case TopicOptionCompressionAlgorithm:
		return StringOption(key, compressionName(s.CompressionAlgorithm))
	case TopicOptionMessageExpiry:
		return Uint64Option(key, s.MessageExpiry)
	case TopicOptionMaxTopicSize:
		return Uint64Option(key, s.MaxTopicSize)
	case TopicOptionSegmentSize:
		return Uint64Option(key, s.SegmentSize)
	case TopicOptionEnforceFsync:
		return BoolOption(key, s.EnforceFsync)
	case TopicOptionMessagesRequiredToSave:
		return Uint32Option(key, s.MessagesRequiredToSave)
	case TopicOptionSizeOfMessagesRequiredToSave:
		return Uint64Option(key, s.SizeOfMessagesRequiredToSave)
	case TopicOptionPreallocateSegments:
		return BoolOption(key, s.PreallocateSegments)
	case TopicOptionDurability:
		return StringOption(key, s.Durability.String())
	default: // TopicOptionConsumerOffsetDurability
		return StringOption(key, s.ConsumerOffsetDurability.String())
	}
}

func compressionName(c uint8) string {
	if c == CompressionGzip {
		return "gzip"
	}
	return "none"
}

func parseCompression(v TLVItem) (uint8, error) {
	switch {
	case v.Kind == TLVString:
		switch strings.ToLower(string(v.Data)) {
		case "none":
			return CompressionNone, nil
		case "gzip":
			return CompressionGzip, nil
		}
		return 0, fmt.Errorf("unknown algorithm %q", v.Data)
	case v.Kind == TLVUint8 && len(v.Data) == 1:
		if v.Data[0] == CompressionNone || v.Data[0] == CompressionGzip {
			return v.Data[0], nil
		}
		return 0, fmt.Errorf("unknown algorithm code %d", v.Data[0])
	}
	return 0, fmt.Errorf("kind %d", v.Kind)
}

func parseDurability(v TLVItem) (Durability, error) {
	if v.Kind != TLVString {
		return 0, fmt.Errorf("kind %d", v.Kind)
	}
	switch strings.ToLower(string(v.Data)) {
	case "replicated":
		return DurabilityReplicated, nil
	case "persisted":
		return DurabilityPersisted, nil
	}
	return 0, fmt.Errorf("unknown durability %q", v.Data)
}

// optionU64 accepts a uint64 item or a string parsed by parse.
func optionU64(v TLVItem, parse func(string) (uint64, error)) (uint64, error) {
	switch {
	case v.Kind == TLVUint64 && len(v.Data) == 8:
		return binary.LittleEndian.Uint64(v.Data), nil
	case v.Kind == TLVString:
		return parse(string(v.Data))
	}
	return 0, fmt.Errorf("kind %d with %d bytes", v.Kind, len(v.Data))
}

func optionBool(v TLVItem) (bool, error) {
	switch {
	case v.Kind == TLVBool && len(v.Data) == 1 && v.Data[0] <= 1:
		return v.Data[0] == 1, nil
	case v.Kind == TLVString:
		switch strings.ToLower(string(v.Data)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("%q is not true or false", v.Data)
	}
	return false, fmt.Errorf("kind %d", v.Kind)
}

// parseExpiryString accepts a humantime duration or one of "never",
// "unlimited", "none" (→ MessageExpiryNever) or "server_default" or "0"
// (→ 0, humantime's zero duration).
func parseExpiryString(s string) (uint64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "never", "never_expire", "unlimited", "none":
		return MessageExpiryNever, nil
	case "server_default", "default", "0":
		return 0, nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadValue, err)
	}
	return d.Micros(), nil
}

// parseSizeString accepts a byte size or "unlimited"/"none" (→
// MaxTopicSizeUnlimited) or "server_default" (→ 0).
func parseSizeString(s string) (uint64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "unlimited", "none":
		return MaxTopicSizeUnlimited, nil
	case "server_default", "default":
		return 0, nil
	}
	return parseByteSize(s)
}

// parseByteSize is units.ParseBytes with the package's sentinel.
func parseByteSize(s string) (uint64, error) {
	n, err := units.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadValue, err)
	}
	return n, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func mul64(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

// TopicUpdate is a parsed update-topic options block: only
// compression_algorithm, message_expiry and max_topic_size are accepted.
// A nil field was not sent (keeps its value). A key sent as "server
// default" (0 for message_expiry and max_topic_size) resets it to the
// server default, as at create: the field holds the resolved value (never,
// unlimited) and the key leaves the explicit options for the derived ones.
type TopicUpdate struct {
	CompressionAlgorithm *uint8
	MessageExpiry        *uint64
	MaxTopicSize         *uint64
	// Options are the block as sent.
	Options Options
	// Explicit are the sent options to store as they are in the topic's
	// explicit options (every sent key but the server-default ones).
	Explicit Options
	// Derived are the resolved values, canonical kinds, of the keys sent
	// as server default, for the topic's derived options.
	Derived Options
}

// ParseTopicUpdateOptions validates an update-topic block: 4043 too large,
// 3 malformed, 4041 any key outside the three, 4042 bad value. The
// max_topic_size versus segment size check needs the topic: see
// TopicUpdate.CheckSegmentSize.
func ParseTopicUpdateOptions(block []byte) (TopicUpdate, error) {
	opts, err := ParseOptions(block)
	if err != nil {
		return TopicUpdate{}, err
	}
	for _, o := range opts {
		if !isTopicUpdateKey(o.Key) {
			return TopicUpdate{}, fmt.Errorf("%w: key %q cannot be updated", ErrUnsupportedOptionKey, o.Key)
		}
	}
	u := TopicUpdate{Options: opts}
	for _, o := range opts {
		resolved := DefaultTopicSettings()
		if _, err := applyTopicOption(&resolved, o.Key, o.Value); err != nil {
			return TopicUpdate{}, err
		}
		switch o.Key {
		case TopicOptionCompressionAlgorithm:
			u.CompressionAlgorithm = &resolved.CompressionAlgorithm
		case TopicOptionMessageExpiry:
			u.MessageExpiry = &resolved.MessageExpiry
		case TopicOptionMaxTopicSize:
			u.MaxTopicSize = &resolved.MaxTopicSize
		}
	}
	u.Explicit, u.Derived = SplitTopicUpdate(opts)
	return u, nil
}

// SplitTopicUpdate sorts the pairs of an update-topic block: a pair that
// sets one of the four server-default keys to the server default goes to
// derived, as that key's resolved value in its canonical kind; every other
// pair goes to explicit as sent. It never fails: the metadata machine
// applies it to committed blocks, where a key this build does not know
// must be kept, not refused.
func SplitTopicUpdate(sent Options) (explicit, derived Options) {
	for _, o := range sent {
		if d, ok := serverDefaultOption(o); ok {
			derived = append(derived, d)
		} else {
			explicit = append(explicit, o)
		}
	}
	return explicit, derived
}

// serverDefaultOption returns the resolved default of o's key when o says
// "server default" for it.
func serverDefaultOption(o Option) (Option, bool) {
	switch o.Key {
	case TopicOptionSegmentSize, TopicOptionSizeOfMessagesRequiredToSave, TopicOptionMessageExpiry, TopicOptionMaxTopicSize:
		s := DefaultTopicSettings()
		if canonical, err := applyTopicOption(&s, o.Key, o.Value); err == nil && isServerDefault(canonical) {
			return canonicalTopicOption(&s, o.Key), true
		}
	}
	return Option{}, false
}

// CheckSegmentSize denies (1019 InvalidTopicSize) a max_topic_size below
// the topic's segment size; the server default (unlimited) passes.
func (u *TopicUpdate) CheckSegmentSize(segmentSize uint64) error {
	if u.MaxTopicSize != nil && *u.MaxTopicSize < segmentSize {
		return fmt.Errorf("%w: max_topic_size %d below segment size %d", ErrInvalidTopicSize, *u.MaxTopicSize, segmentSize)
	}
	return nil
}

// PatchOptions returns stored with every key of update replaced or added,
// keys ascending (the form a topic response shows).
func PatchOptions(stored, update Options) Options {
	out := stored.Sorted()
	for _, o := range update {
		replaced := false
		for i := range out {
			if out[i].Key == o.Key {
				out[i] = Option{Key: o.Key, Value: TLVItem{Kind: o.Value.Kind, Data: bytes.Clone(o.Value.Data)}}
				replaced = true
			}
		}
		if !replaced {
			out = append(out, Option{Key: o.Key, Value: TLVItem{Kind: o.Value.Kind, Data: bytes.Clone(o.Value.Data)}})
		}
	}
	return out.Sorted()
}
