package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

func newPingCommand(a *app) *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "ping",
		Short: "Check that the server answers (no login needed)",
		Long: `Sends Ping requests and prints the round-trip time of each.

  strata ping
  strata ping --count 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.ping(cmd, count)
		},
	}
	cmd.Flags().IntVarP(&count, "count", "c", 1, "number of pings")
	return cmd
}

// pingResult is the JSON form of one ping.
type pingResult struct {
	Seq          int     `json:"seq"`
	Address      string  `json:"address"`
	RoundTripSec float64 `json:"round_trip_seconds"`
}

func (a *app) ping(cmd *cobra.Command, count int) error {
	if count < 1 {
		return usagef("--count must be at least 1")
	}
	c, err := a.connect(cmd.Context())
	if err != nil {
		return err
	}
	p := a.printer()
	for i := range count {
		start := time.Now()
		if err := c.Ping(cmd.Context()); err != nil {
			return err
		}
		rtt := time.Since(start)
		if err := p.message(pingResult{Seq: i + 1, Address: c.Address(), RoundTripSec: rtt.Seconds()},
			fmt.Sprintf("pong from %s: seq=%d time=%s", c.Address(), i+1, rtt.Round(time.Microsecond))); err != nil {
			return err
		}
	}
	return nil
}

func newMeCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "me",
		Short: "Show this connection's client record",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			me, err := c.GetMe(cmd.Context())
			if err != nil {
				return err
			}
			return a.printClientDetails(me)
		},
	}
}

func transportName(t uint8) string {
	switch t {
	case wire.TransportTCP:
		return "tcp"
	case wire.TransportQUIC:
		return "quic"
	case wire.TransportHTTP:
		return "http"
	case wire.TransportWebSocket:
		return "websocket"
	}
	return strconv.Itoa(int(t))
}

func userIDText(id uint32) string {
	if id == wire.UserIDNone {
		return "-"
	}
	return strconv.FormatUint(uint64(id), 10)
}

func (a *app) printClientDetails(d *client.ClientDetails) error {
	return a.printer().object(toClientDetails(d), []field{
		{"client id", d.ClientID}, {"user id", userIDText(d.UserID)},
		{"transport", transportName(d.Transport)}, {"address", d.Address},
		{"consumer groups", d.ConsumerGroupsCount},
	})
}

func newStatsCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "stats",
		Short: "Show server statistics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			s, err := c.GetStats(cmd.Context())
			if err != nil {
				return err
			}
			if err := a.printer().object(toStatsRecord(s), []field{
				{"server version", s.ServerVersion}, {"process id", s.ProcessID},
				{"hostname", s.Hostname}, {"os", s.OSName + " " + s.OSVersion},
				{"started", micros(s.StartTime)}, {"run time", time.Duration(s.RunTime) * time.Microsecond},
				{"cpu usage", fmt.Sprintf("%.1f%%", s.CPUUsage)},
				{"memory", bytesText(s.MemoryUsage) + " of " + bytesText(s.TotalMemory)},
				{"streams", s.StreamsCount}, {"topics", s.TopicsCount}, {"partitions", s.PartitionsCount},
				{"segments", s.SegmentsCount}, {"messages", s.MessagesCount},
				{"messages size", bytesText(s.MessagesSizeBytes)}, {"clients", s.ClientsCount},
				{"consumer groups", s.ConsumerGroupsCount},
				{"disk free", bytesText(s.FreeDiskSpace) + " of " + bytesText(s.TotalDiskSpace)},
				{"fenced partitions", len(s.FencedPartitions)},
			}); err != nil || a.output == "json" || len(s.FencedPartitions) == 0 {
				return err
			}
			// A fenced partition serves only the offsets below SERVED BELOW
			// until it is repaired (strata-server repair).
			if _, err := cmd.OutOrStdout().Write([]byte("\n")); err != nil {
				return err
			}
			return printFenced(a.printer(), s.FencedPartitions)
		},
	}
}

// printFenced lists fenced partitions: where each is, what it still
// serves and where its damage is.
func printFenced(p *printer, list []client.FencedPartition) error {
	return printList(p, list, []string{"STREAM", "TOPIC", "PARTITION", "SERVED BELOW", "FILE", "BYTE", "REASON"}, func(f client.FencedPartition) []string {
		return []string{u32(f.StreamID), u32(f.TopicID), u32(f.PartitionID), u64(f.ServedBelow), f.File, u64(f.Position), f.Reason}
	})
}

func newClientCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{Use: "client", Aliases: []string{"c", "clients"}, Short: "Inspect connected clients"}
	cmd.AddCommand(&cobra.Command{
		Use:     "list",
		Aliases: aliasesList,
		Short:   "List connected clients",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			list, err := c.GetClients(cmd.Context())
			if err != nil {
				return err
			}
			records := make([]clientRecord, len(list))
			for i := range list {
				records[i] = toClientRecord(&list[i])
			}
			return printList(a.printer(), records, []string{"ID", "USER", "TRANSPORT", "ADDRESS", "GROUPS"}, func(ci clientRecord) []string {
				user := "-"
				if ci.UserID != nil {
					user = fmt.Sprint(ci.UserID)
				}
				return []string{u32(ci.ClientID), user, ci.Transport, ci.Address, u32(ci.ConsumerGroupsCount)}
			})
		},
	}, &cobra.Command{
		Use:     "get CLIENT_ID",
		Aliases: aliasesGet,
		Short:   "Show one connected client",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseU32("CLIENT_ID", args[0])
			if err != nil {
				return err
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			d, err := c.GetClient(cmd.Context(), id)
			if err != nil {
				return notFoundAs(err, wire.ErrClientNotFound, "client %d", id)
			}
			return a.printClientDetails(d)
		},
	})
	return cmd
}

// parseU32 parses a numeric argument.
func parseU32(what, s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, usagef("%s must be a number, got %q", what, s)
	}
	return uint32(n), nil
}

// parseU64 parses a numeric argument.
func parseU64(what, s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, usagef("%s must be a number, got %q", what, s)
	}
	return n, nil
}
