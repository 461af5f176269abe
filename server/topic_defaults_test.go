package server_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stratabroker/strata/client"
)

// derivedU64 returns a topic's derived uint64 option, failing when the key
// is explicit or missing.
func derivedU64(t *testing.T, topic *client.TopicDetails, key string) uint64 {
	t.Helper()
	if v, ok := topic.Options.Get(key); ok {
		t.Fatalf("%s is explicit (%s); want it derived", key, v)
	}
	v, ok := topic.DerivedOptions.Get(key)
	if !ok || v.Kind != client.KindUint64 || len(v.Data) != 8 {
		t.Fatalf("%s missing from the derived options %+v", key, topic.DerivedOptions)
	}
	return binary.LittleEndian.Uint64(v.Data)
}

// TestTopicOptionZeroIsServerDefault: over TCP, segment_size,
// size_of_messages_required_to_save, message_expiry and max_topic_size
// sent as 0 mean "server default", as in Iggy's
// TopicCreateOptions::absorb_strict: the key is absent from the topic's
// explicit options and present among its derived ones with the resolved
// value, at create and at update, and after a restart. Before, a sent 0
// stayed an explicit 0 (and an update to 0 reported an expiry of 0).
func TestTopicOptionZeroIsServerDefault(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "defaults"); err != nil {
		t.Fatal(err)
	}
	s := client.Named("defaults")
	options := client.Options{}.
		With(client.OptionSegmentSize, client.Uint64Value(0)).
		With(client.OptionSizeRequiredToSave, client.Uint64Value(0)).
		With(client.OptionMessageExpiry, client.Uint64Value(0)).
		With(client.OptionMaxTopicSize, client.Uint64Value(0)).
		With(client.OptionEnforceFsync, client.BoolValue(true))
	created, err := c.CreateTopic(ctx(t), s, "t", 1, options)
	if err != nil {
		t.Fatal(err)
	}
	check := func(topic *client.TopicDetails, expiryExplicit bool) {
		t.Helper()
		if got := derivedU64(t, topic, client.OptionSegmentSize); got != 1<<30 {
			t.Errorf("segment_size derived as %d", got)
		}
		if got := derivedU64(t, topic, client.OptionSizeRequiredToSave); got != 1<<20 {
			t.Errorf("size_of_messages_required_to_save derived as %d", got)
		}
		if got := derivedU64(t, topic, client.OptionMaxTopicSize); got != math.MaxUint64 || topic.MaxTopicSize != math.MaxUint64 {
			t.Errorf("max_topic_size derived as %d, reported %d", got, topic.MaxTopicSize)
		}
		if !expiryExplicit {
			if got := derivedU64(t, topic, client.OptionMessageExpiry); got != math.MaxUint64 || topic.MessageExpiry != math.MaxUint64 {
				t.Errorf("message_expiry derived as %d, reported %d", got, topic.MessageExpiry)
			}
		}
		if v, ok := topic.Options.Get(client.OptionEnforceFsync); !ok || v.String() != "true" {
			t.Errorf("enforce_fsync not explicit: %+v", topic.Options)
		}
	}
	check(created, false)
	if len(created.Options) != 1 {
		t.Fatalf("explicit options %+v, want only enforce_fsync", created.Options)
	}

	// An update to a real value makes the key explicit; an update to 0
	// resets it to the server default and it is derived again.
	if err := c.UpdateTopic(ctx(t), s, client.Named("t"), "t", client.Options{}.With(client.OptionMessageExpiry, client.Uint64Value(60e6))); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetTopic(ctx(t), s, client.Named("t"))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got.Options.Get(client.OptionMessageExpiry); !ok || v.String() != "60000000" || got.MessageExpiry != 60e6 {
		t.Fatalf("message_expiry after update: %+v (%d)", got.Options, got.MessageExpiry)
	}
	if _, ok := got.DerivedOptions.Get(client.OptionMessageExpiry); ok {
		t.Fatal("explicit message_expiry still derived")
	}
	check(got, true)
	if err := c.UpdateTopic(ctx(t), s, client.Named("t"), "t", client.Options{}.
		With(client.OptionMessageExpiry, client.Uint64Value(0)).With(client.OptionMaxTopicSize, client.Uint64Value(0))); err != nil {
		t.Fatal(err)
	}
	if got, err = c.GetTopic(ctx(t), s, client.Named("t")); err != nil {
		t.Fatal(err)
	}
	check(got, false)

	// The journal replays to the same options.
	ts.stop()
	ts = startServer(t, dir)
	if got, err = ts.connect().GetTopic(ctx(t), s, client.Named("t")); err != nil {
		t.Fatal(err)
	}
	check(got, false)
	if len(got.Options) != 1 {
		t.Fatalf("explicit options after restart %+v", got.Options)
	}
}
