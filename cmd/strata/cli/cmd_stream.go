package cli

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

func newStreamCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "stream",
		Aliases: []string{"s", "streams"},
		Short:   "Create, list, inspect, rename, delete and purge streams",
		Long: `Streams hold topics. STREAM is a numeric id or a name.

  strata stream create orders
  strata stream list
  strata stream get orders
  strata stream update orders sales
  strata stream purge sales
  strata stream delete sales`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "create NAME",
		Aliases: aliasesCreate,
		Short:   "Create a stream",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.CreateStream(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.printer().message(toStreamRecord(&s.Stream), "created stream "+s.Name+" with id "+strconv.FormatUint(uint64(s.ID), 10))
		},
	}, &cobra.Command{
		Use:     "list",
		Aliases: aliasesList,
		Short:   "List streams",
		Args:    cobra.NoArgs,
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
		Use:         "get STREAM",
		Aliases:     aliasesGet,
		Short:       "Show a stream and its topics",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("stream"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.GetStream(cmd.Context(), client.ParseIdentifier(args[0]))
			if err != nil {
				return notFoundAs(err, byID(args[0], wire.ErrStreamIdNotFound, wire.ErrStreamNameNotFound), "stream %s", args[0])
			}
			if a.output == "json" {
				return a.printer().jsonLine(toStreamDetails(s))
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
		Use:         "update STREAM NEW_NAME",
		Aliases:     aliasesUpdate,
		Short:       "Rename a stream",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream -"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.UpdateStream(cmd.Context(), client.ParseIdentifier(args[0]), args[1])
			}, "renamed stream "+args[0]+" to "+args[1])
		},
	}, &cobra.Command{
		Use:         "delete STREAM",
		Aliases:     aliasesDelete,
		Short:       "Delete a stream with all its topics and messages",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("stream"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteStream(cmd.Context(), client.ParseIdentifier(args[0]))
			}, "deleted stream "+args[0])
		},
	}, &cobra.Command{
		Use:         "purge STREAM",
		Aliases:     aliasesPurge,
		Short:       "Delete every message of every topic of a stream (topics are kept)",
		Args:        cobra.ExactArgs(1),
		Annotations: argsAre("stream"),
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

func (a *app) printStreams(streams []client.Stream) error {
	list := make([]streamRecord, len(streams))
	for i := range streams {
		list[i] = toStreamRecord(&streams[i])
	}
	return printList(a.printer(), list, []string{"ID", "NAME", "TOPICS", "MESSAGES", "SIZE", "CREATED"}, func(s streamRecord) []string {
		return []string{u32(s.ID), s.Name, u32(s.TopicsCount), u64(s.MessagesCount), bytesText(s.SizeBytes), micros(s.CreatedAt)}
	})
}

// Aliases of the subcommands, as Iggy's CLI (one letter) and nats
// (ls, info, add, rm) users type them.
var (
	aliasesCreate = []string{"c", "add"}
	aliasesList   = []string{"l", "ls"}
	aliasesGet    = []string{"g", "info", "show"}
	aliasesUpdate = []string{"u", "edit"}
	aliasesDelete = []string{"d", "rm", "remove"}
	aliasesPurge  = []string{"p"}
)

// argsAre annotates a command with what its positional arguments name
// (argsAnnotation).
func argsAre(kinds string) map[string]string { return map[string]string{argsAnnotation: kinds} }

func u32(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
func u64(v uint64) string { return strconv.FormatUint(v, 10) }
