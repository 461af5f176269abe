package cli

import (
	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

func newPartitionCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "partition",
		Aliases: []string{"p", "partitions"},
		Short:   "Add or remove partitions of a topic",
		Long: `  strata partition create orders eu --count 2   # adds 2 partitions
  strata partition delete orders eu --count 1   # removes the highest-numbered one`,
	}
	for _, create := range []bool{true, false} {
		var count uint32
		c := &cobra.Command{
			Args:        cobra.ExactArgs(2),
			Annotations: argsAre("stream topic"),
			RunE: func(cmd *cobra.Command, args []string) error {
				stream, topic := client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1])
				if create {
					return a.simple(cmd, func(c *client.Client) error {
						return c.CreatePartitions(cmd.Context(), stream, topic, count)
					}, "added "+u32(count)+" partitions to topic "+args[1])
				}
				return a.simple(cmd, func(c *client.Client) error {
					return c.DeletePartitions(cmd.Context(), stream, topic, count)
				}, "removed "+u32(count)+" partitions from topic "+args[1])
			},
		}
		if create {
			c.Use, c.Short, c.Aliases = "create STREAM TOPIC", "Add partitions to a topic", aliasesCreate
		} else {
			c.Use, c.Short, c.Aliases = "delete STREAM TOPIC", "Remove the highest-numbered partitions of a topic", aliasesDelete
		}
		c.Flags().Uint32Var(&count, "count", 1, "number of partitions (1..1000)")
		cmd.AddCommand(c)
	}
	return cmd
}

func newSegmentCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "segment", Aliases: []string{"seg", "segments"}, Short: "Manage the segments of a partition"}
	var count uint32
	del := &cobra.Command{
		Use:         "delete STREAM TOPIC PARTITION",
		Aliases:     aliasesDelete,
		Short:       "Delete the oldest sealed segments of a partition",
		Annotations: argsAre("stream topic partition"),
		Long: `Deletes the --count oldest sealed segments of a partition; the active
segment is never deleted.

  strata segment delete orders eu 0 --count 2`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			partition, err := parseU32("PARTITION", args[2])
			if err != nil {
				return err
			}
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteSegments(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]), partition, count)
			}, "deleted up to "+u32(count)+" segments of partition "+args[2])
		},
	}
	del.Flags().Uint32Var(&count, "count", 1, "number of segments to delete")
	cmd.AddCommand(del)
	return cmd
}

// consumerFlag parses --consumer: an id or a name.
func consumerFlag(s string) client.Consumer {
	return client.IndividualConsumer(client.ParseIdentifier(s))
}

func newOffsetCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "offset",
		Aliases: []string{"o", "offsets", "consumer-offset"},
		Short:   "Get, store or delete a consumer's offset",
		Long: `The stored offset is the last message the consumer has processed; polling
with --next resumes after it.

  strata offset get orders eu --consumer reporter --partition 0
  strata offset store orders eu 41 --consumer reporter --partition 0
  strata offset delete orders eu --consumer reporter --partition 0`,
	}
	var consumer string
	var partition uint32
	addFlags := func(c *cobra.Command) *cobra.Command {
		c.Flags().StringVar(&consumer, "consumer", "0", "consumer id or name")
		c.Flags().Uint32Var(&partition, "partition", 0, "partition id")
		c.Annotations = map[string]string{argsAnnotation: "stream topic", "strata.partition": "always"}
		return c
	}
	cmd.AddCommand(addFlags(&cobra.Command{
		Use:     "get STREAM TOPIC",
		Aliases: aliasesGet,
		Short:   "Show a consumer's stored offset",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			o, err := c.GetConsumerOffset(cmd.Context(), consumerFlag(consumer), client.ParseIdentifier(args[0]),
				client.ParseIdentifier(args[1]), partition)
			if err != nil {
				return notFoundAs(err, wire.ErrConsumerOffsetNotFound, "offset of consumer %s in partition %d", consumer, partition)
			}
			return a.printer().object(o, []field{{"partition", o.PartitionID},
				{"stored offset", o.StoredOffset}, {"current offset", o.CurrentOffset}})
		},
	}), addFlags(&cobra.Command{
		Use:     "store STREAM TOPIC OFFSET",
		Aliases: []string{"s", "set", "commit"},
		Short:   "Store a consumer's offset",
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			offset, err := parseU64("OFFSET", args[2])
			if err != nil {
				return err
			}
			return a.simple(cmd, func(c *client.Client) error {
				return c.StoreConsumerOffset(cmd.Context(), consumerFlag(consumer), client.ParseIdentifier(args[0]),
					client.ParseIdentifier(args[1]), partition, offset)
			}, "stored offset "+args[2]+" for consumer "+consumer+" in partition "+u32(partition))
		},
	}), addFlags(&cobra.Command{
		Use:     "delete STREAM TOPIC",
		Aliases: aliasesDelete,
		Short:   "Delete a consumer's stored offset",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteConsumerOffset(cmd.Context(), consumerFlag(consumer), client.ParseIdentifier(args[0]),
					client.ParseIdentifier(args[1]), partition)
			}, "deleted the offset of consumer "+consumer+" in partition "+u32(partition))
		},
	}))
	return cmd
}
