package cli

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// topicFlags are the option flags of topic create and update.
type topicFlags struct {
	partitions               uint32
	durability               string
	consumerOffsetDurability string
	messageExpiry            string
	maxTopicSize             string
	compression              string
	segmentSize              string
	name                     string
}

func (f *topicFlags) addShared(fs *pflag.FlagSet) {
	fs.StringVar(&f.messageExpiry, "message-expiry", "", `message expiry: micros, a duration such as "7 days" or "1h", or "never"`)
	fs.StringVar(&f.maxTopicSize, "max-topic-size", "", `size cap: bytes, a size such as "10 GiB", or "unlimited" (at least the segment size)`)
	fs.StringVar(&f.compression, "compression", "", "compression algorithm: none or gzip")
}

// options turns the flags into an options block; create selects the
// keys only topic create accepts.
func (f *topicFlags) options(create bool) (client.Options, error) {
	var o client.Options
	if f.compression != "" {
		c := strings.ToLower(f.compression)
		if c != "none" && c != "gzip" {
			return nil, usagef("--compression must be none or gzip, got %q", f.compression)
		}
		o = o.With(client.OptionCompression, client.StringValue(c))
	}
	if f.messageExpiry != "" {
		if err := checkOption("--message-expiry", f.messageExpiry, parseDurationText, expiryWords...); err != nil {
			return nil, err
		}
		o = o.With(client.OptionMessageExpiry, sizeOrText(f.messageExpiry, "never"))
	}
	if f.maxTopicSize != "" {
		if err := checkOption("--max-topic-size", f.maxTopicSize, parseBytesText, sizeWords...); err != nil {
			return nil, err
		}
		o = o.With(client.OptionMaxTopicSize, sizeOrText(f.maxTopicSize, "unlimited"))
	}
	if !create {
		return o, nil
	}
	if f.segmentSize != "" {
		if err := checkOption("--segment-size", f.segmentSize, parseBytesText); err != nil {
			return nil, err
		}
		o = o.With(client.OptionSegmentSize, sizeOrText(f.segmentSize, ""))
	}
	for _, d := range []struct{ flag, key, value string }{
		{"--durability", client.OptionDurability, f.durability},
		{"--consumer-offset-durability", client.OptionConsumerOffsetDurability, f.consumerOffsetDurability},
	} {
		if d.value == "" {
			continue
		}
		if d.value != client.DurabilityReplicated && d.value != client.DurabilityPersisted {
			return nil, usagef("%s must be replicated or persisted, got %q", d.flag, d.value)
		}
		o = o.With(d.key, client.StringValue(d.value))
	}
	return o, nil
}

// sizeOrText sends a plain number as uint64 and anything else as a string
// the server parses (humantime, byte sizes); the word (never/unlimited)
// becomes u64::MAX.
func sizeOrText(s, word string) client.Value {
	if word != "" && strings.EqualFold(s, word) {
		return client.Uint64Value(^uint64(0))
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return client.Uint64Value(n)
	}
	return client.StringValue(s)
}

func newTopicCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "topic",
		Aliases: []string{"t", "topics"},
		Short:   "Create, list, inspect, update, delete and purge topics",
		Long: `Topics live in a stream and hold partitions. STREAM and TOPIC are numeric ids
or names.

  strata topic create orders eu --partitions 3 --durability persisted
  strata topic create orders us --message-expiry "7 days" --max-topic-size "10 GiB"
  strata topic list orders
  strata topic get orders eu
  strata topic update orders eu --name europe --compression gzip
  strata topic purge orders europe
  strata topic delete orders europe

Durability (per topic, default replicated): --durability selects the
guarantee for produced messages, --consumer-offset-durability the one for
explicit offset stores and deletes; "persisted" acknowledges only after the
data is on stable storage.`,
	}
	var create topicFlags
	createCmd := &cobra.Command{
		Use:         "create STREAM NAME",
		Aliases:     aliasesCreate,
		Short:       "Create a topic",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream -"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := create.options(true)
			if err != nil {
				return err
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			t, err := c.CreateTopic(cmd.Context(), client.ParseIdentifier(args[0]), args[1], create.partitions, opts)
			if err != nil {
				return err
			}
			return a.printer().message(toTopicRecord(&t.Topic), "created topic "+t.Name+" with id "+u32(t.ID)+" and "+u32(t.PartitionsCount)+" partitions")
		},
	}
	fs := createCmd.Flags()
	fs.Uint32Var(&create.partitions, "partitions", 1, "number of partitions (0..1000)")
	fs.StringVar(&create.durability, "durability", "", "message durability: replicated or persisted (server default replicated)")
	fs.StringVar(&create.consumerOffsetDurability, "consumer-offset-durability", "", "consumer offset durability: replicated or persisted")
	fs.StringVar(&create.segmentSize, "segment-size", "", `segment size: bytes or a size such as "512 MiB" (1 MiB..1 GiB)`)
	create.addShared(fs)

	var update topicFlags
	updateCmd := &cobra.Command{
		Use:         "update STREAM TOPIC",
		Aliases:     aliasesUpdate,
		Short:       "Rename a topic or change its expiry, size cap or compression",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := update.options(false)
			if err != nil {
				return err
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			stream, topic := client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1])
			name := update.name
			if name == "" {
				t, err := c.GetTopic(cmd.Context(), stream, topic)
				if err != nil {
					return notFoundAs(err, byID(args[1], wire.ErrTopicIdNotFound, wire.ErrTopicNameNotFound), "topic %s of stream %s", args[1], args[0])
				}
				name = t.Name
			}
			if err := c.UpdateTopic(cmd.Context(), stream, topic, name, opts); err != nil {
				return err
			}
			text := "updated topic " + args[1]
			return a.printer().message(done{OK: true, Message: text}, text)
		},
	}
	updateCmd.Flags().StringVar(&update.name, "name", "", "new topic name (default: keep)")
	update.addShared(updateCmd.Flags())

	cmd.AddCommand(createCmd, updateCmd, &cobra.Command{
		Use:         "list STREAM",
		Aliases:     aliasesList,
		Short:       "List the topics of a stream",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("stream"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.GetTopics(cmd.Context(), client.ParseIdentifier(args[0]))
			if err != nil {
				return err
			}
			return a.printTopics(list)
		},
	}, &cobra.Command{
		Use:         "get STREAM TOPIC",
		Aliases:     aliasesGet,
		Short:       "Show a topic and its partitions",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			t, err := c.GetTopic(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]))
			if err != nil {
				return notFoundAs(err, byID(args[1], wire.ErrTopicIdNotFound, wire.ErrTopicNameNotFound), "topic %s of stream %s", args[1], args[0])
			}
			rec := toTopicDetails(t, fencedOf(cmd, c, client.ParseIdentifier(args[0]), t.ID))
			if a.output == "json" {
				return a.printer().jsonLine(rec)
			}
			if err := a.printer().object(t, topicFields(&t.Topic)); err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write([]byte("\n")); err != nil {
				return err
			}
			return printList(a.printer(), rec.Partitions, []string{"PARTITION", "CURRENT OFFSET", "MESSAGES", "SEGMENTS", "SIZE", "STATE"}, func(p partitionRecord) []string {
				state := p.State
				if p.Fenced != nil {
					state = "fenced: serves offsets below " + u64(p.Fenced.ServedBelow)
				}
				return []string{u32(p.ID), u64(p.CurrentOffset), u64(p.MessagesCount), u32(p.SegmentsCount), bytesText(p.SizeBytes), state}
			})
		},
	}, &cobra.Command{
		Use:         "delete STREAM TOPIC",
		Aliases:     aliasesDelete,
		Short:       "Delete a topic and its messages",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteTopic(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]))
			}, "deleted topic "+args[1])
		},
	}, &cobra.Command{
		Use:         "purge STREAM TOPIC",
		Aliases:     aliasesPurge,
		Short:       "Delete every message of a topic (partitions restart at offset 0)",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.PurgeTopic(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]))
			}, "purged topic "+args[1])
		},
	})
	return cmd
}

// microsDuration renders a micros count as a Go duration.
func microsDuration(v uint64) string {
	if v > uint64(math.MaxInt64/int64(time.Microsecond)) {
		return u64(v) + "µs"
	}
	return (time.Duration(v) * time.Microsecond).String()
}

func compressionName(c uint8) string {
	switch c {
	case wire.CompressionNone:
		return "none"
	case wire.CompressionGzip:
		return "gzip"
	}
	return strconv.Itoa(int(c))
}

func optionsText(o client.Options) string {
	parts := make([]string, len(o))
	for i, e := range o {
		parts[i] = e.Key + "=" + optionValue(e.Key, e.Value)
	}
	return strings.Join(parts, " ")
}

func topicFields(t *client.Topic) []field {
	f := []field{{"id", t.ID}, {"name", t.Name}, {"created", micros(t.CreatedAt)},
		{"partitions", t.PartitionsCount}, {"messages", t.MessagesCount}, {"size", bytesText(t.SizeBytes)},
		{"message expiry", maxText(t.MessageExpiry, "never", microsDuration)},
		{"max topic size", maxText(t.MaxTopicSize, "unlimited", bytesText)},
		{"compression", compressionName(t.CompressionAlgorithm)}}
	if len(t.Options) > 0 {
		f = append(f, field{"options", optionsText(t.Options)})
	}
	if len(t.DerivedOptions) > 0 {
		f = append(f, field{"derived options", optionsText(t.DerivedOptions)})
	}
	return f
}

func (a *app) printTopics(topics []client.Topic) error {
	list := make([]topicRecord, len(topics))
	for i := range topics {
		list[i] = toTopicRecord(&topics[i])
	}
	return printList(a.printer(), list, []string{"ID", "NAME", "PARTITIONS", "MESSAGES", "SIZE", "EXPIRY", "OPTIONS"}, func(t topicRecord) []string {
		return []string{u32(t.ID), t.Name, u32(t.PartitionsCount), u64(t.MessagesCount), bytesText(t.SizeBytes),
			quantityText(t.MessageExpiry, microsDuration), mapText(t.Options)}
	})
}

// quantityText renders a record quantity for a table: a sentinel name in
// words, a number with render.
func quantityText(v any, render func(uint64) string) string {
	switch q := v.(type) {
	case uint64:
		return render(q)
	case string:
		return strings.ReplaceAll(q, "_", " ")
	}
	return fmt.Sprint(v)
}

// mapText renders options as sorted key=value pairs.
func mapText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, " ")
}

// fencedOf returns the fenced partitions of topic topicID of stream.
// GetTopic does not carry fences (Iggy's record has no room for them), so
// they come from GetStats; without the permission to read stats the list
// is empty.
func fencedOf(cmd *cobra.Command, c *client.Client, stream client.Identifier, topicID uint32) []client.FencedPartition {
	stats, err := c.GetStats(cmd.Context())
	if err != nil || len(stats.FencedPartitions) == 0 {
		return nil
	}
	streamID := stream.Numeric()
	if !stream.IsNumeric() {
		details, err := c.GetStream(cmd.Context(), stream)
		if err != nil {
			return nil
		}
		streamID = details.ID
	}
	var out []client.FencedPartition
	for _, f := range stats.FencedPartitions {
		if f.StreamID == streamID && f.TopicID == topicID {
			out = append(out, f)
		}
	}
	return out
}
