package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

func newGroupCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "group",
		Aliases: []string{"g", "groups", "consumer-group", "cg"},
		Short:   "Create, list, inspect and delete consumer groups",
		Long: `Consumer groups share a topic's partitions among their members. GROUP is a
numeric id or a name. (Joining is done by consuming clients, not here.)

  strata group create orders eu workers
  strata group list orders eu
  strata group get orders eu workers
  strata group delete orders eu workers`,
	}
	cmd.AddCommand(&cobra.Command{
		Use:         "create STREAM TOPIC NAME",
		Aliases:     aliasesCreate,
		Short:       "Create a consumer group",
		Args:        cobra.ExactArgs(3),
		Annotations: argsAre("stream topic -"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			g, err := c.CreateConsumerGroup(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]), args[2])
			if err != nil {
				return err
			}
			return a.printer().message(toGroupRecord(&g.ConsumerGroup), "created consumer group "+g.Name+" with id "+u32(g.ID))
		},
	}, &cobra.Command{
		Use:         "list STREAM TOPIC",
		Aliases:     aliasesList,
		Short:       "List the consumer groups of a topic",
		Args:        cobra.ExactArgs(2),
		Annotations: argsAre("stream topic"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.GetConsumerGroups(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]))
			if err != nil {
				return err
			}
			records := make([]groupRecord, len(list))
			for i := range list {
				records[i] = toGroupRecord(&list[i])
			}
			return printList(a.printer(), records, []string{"ID", "NAME", "MEMBERS", "PARTITIONS"}, func(g groupRecord) []string {
				return []string{u32(g.ID), g.Name, u32(g.MembersCount), u32(g.PartitionsCount)}
			})
		},
	}, &cobra.Command{
		Use:         "get STREAM TOPIC GROUP",
		Aliases:     aliasesGet,
		Short:       "Show a consumer group and its members' partitions",
		Args:        cobra.ExactArgs(3),
		Annotations: argsAre("stream topic group"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			g, err := c.GetConsumerGroup(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]),
				client.ParseIdentifier(args[2]))
			if err != nil {
				return notFoundAs(err, byID(args[2], wire.ErrConsumerGroupIdNotFound, wire.ErrConsumerGroupNameNotFound),
					"consumer group %s of topic %s/%s", args[2], args[0], args[1])
			}
			fields := []field{{"id", g.ID}, {"name", g.Name}, {"members", g.MembersCount}, {"partitions", g.PartitionsCount}}
			for _, m := range g.Members {
				parts := make([]string, len(m.Partitions))
				for i, p := range m.Partitions {
					parts[i] = u32(p)
				}
				fields = append(fields, field{"member " + u32(m.ID), strings.Join(parts, ",")})
			}
			return a.printer().object(toGroupDetails(g), fields)
		},
	}, &cobra.Command{
		Use:         "delete STREAM TOPIC GROUP",
		Aliases:     aliasesDelete,
		Short:       "Delete a consumer group and its offsets",
		Args:        cobra.ExactArgs(3),
		Annotations: argsAre("stream topic group"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.simple(cmd, func(c *client.Client) error {
				return c.DeleteConsumerGroup(cmd.Context(), client.ParseIdentifier(args[0]), client.ParseIdentifier(args[1]),
					client.ParseIdentifier(args[2]))
			}, "deleted consumer group "+args[2])
		},
	})
	return cmd
}
