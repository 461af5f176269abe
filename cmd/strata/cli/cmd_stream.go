package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
)

func newStreamCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stream",
		Short: "Create, list, inspect, rename, delete and purge streams",
		Long: `Streams hold topics. STREAM is a numeric id or a name.

  strata stream create orders
  strata stream list
  strata stream get orders
  strata stream update orders sales
  strata stream purge sales
  strata stream delete sales`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "create NAME",
		Short: "Create a stream",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.CreateStream(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printer().message(s.Stream, "created stream "+s.Name+" with id "+strconv.FormatUint(uint64(s.ID), 10))
		},
	}, &cobra.Command{
		Use:   "list",
		Short: "List streams",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.GetStreams(cmd.Context())
			if err != nil {
				return err
			}
			return a.printStreams(list)
		},
	}, &cobra.Command{
		Use:   "get STREAM",
		Short: "Show a stream and its topics",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.GetStream(cmd.Context(), client.ParseIdentifier(args[0]))
			if err != nil {
				return notFoundAs(err, "stream %s", args[0])
			}
			if a.output == "json" {
				return a.printer().jsonLine(s)
			}
			if err := a.printer().object(s, streamFields(&s.Stream)); err != nil {
				return err
			}
			if len(s.Topics) == 0 {
				return nil
			}
			if _, err := cmd.OutOrStdout().Write([]byte("\n")); err != nil {
				return err
			}
			return a.printTopics(s.Topics)
		},
	}, &cobra.Command{
		Use:   "update STREAM NEW_NAME",
		Short: "Rename a stream",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.UpdateStream(cmd.Context(), client.ParseIdentifier(args[0]), args[1])
			}, "renamed stream "+args[0]+" to "+args[1])
		},
	}, &cobra.Command{
		Use:   "delete STREAM",
		Short: "Delete a stream with all its topics and messages",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteStream(cmd.Context(), client.ParseIdentifier(args[0]))
			}, "deleted stream "+args[0])
		},
	}, &cobra.Command{
		Use:   "purge STREAM",
		Short: "Delete every message of every topic of a stream (topics are kept)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.PurgeStream(cmd.Context(), client.ParseIdentifier(args[0]))
			}, "purged stream "+args[0])
		},
	})
	return cmd
}

// done is the JSON form of a command without a result record.
type done struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// simple connects, runs f and prints text on success.
func (a *app) simple(cmd *cobra.Command, f func(*client.Client) error, text string) error {
	c, err := a.connect(cmd.Context())
	if err != nil {
		return err
	}
	if err := f(c); err != nil {
		return err
	}
	return a.printer().message(done{OK: true, Message: text}, text)
}

func streamFields(s *client.Stream) []field {
	return []field{{"id", s.ID}, {"name", s.Name}, {"created", micros(s.CreatedAt)},
		{"topics", s.TopicsCount}, {"messages", s.MessagesCount}, {"size", bytesText(s.SizeBytes)}}
}

func (a *app) printStreams(list []client.Stream) error {
	return printList(a.printer(), list, []string{"ID", "NAME", "TOPICS", "MESSAGES", "SIZE", "CREATED"}, func(s client.Stream) []string {
		return []string{u32(s.ID), s.Name, u32(s.TopicsCount), u64(s.MessagesCount), bytesText(s.SizeBytes), micros(s.CreatedAt)}
	})
}

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
func u64(v uint64) string { return strconv.FormatUint(v, 10) }
