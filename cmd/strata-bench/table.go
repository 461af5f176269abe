package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printResults writes the results table: one row per workload and role,
// with MB/s (10^6 bytes of payload), messages/s and batch latency
// percentiles in milliseconds; per-actor rows follow when several actors
// ran. A line per workload then says how its messages were verified.
func printResults(out io.Writer, results []*Result, limits *Limits) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\ttarget\trole\tMB/s\tmsgs/s\tp50 ms\tp90 ms\tp95 ms\tp99 ms\tp99.9 ms\tp99.99 ms\tmax ms\tof limit\t")
	for _, r := range results {
		for _, side := range []struct {
			name string
			rr   *RoleResult
		}{{"producers", r.Producers}, {"consumers", r.Consumers}} {
			if side.rr == nil {
				continue
			}
			frac := ""
			if limits != nil {
				if l, name := limits.For(r.Workload); l > 0 {
					frac = fmt.Sprintf("%.0f%% %s", 100*side.rr.MBps/l, name)
				}
			}
			row(tw, r.Workload.Name, r.Target, side.name, side.rr.MBps, side.rr.MsgsPerSec, side.rr.Latency, frac)
			if len(side.rr.Actors) > 1 {
				for _, a := range side.rr.Actors {
					part := fmt.Sprint(a.Partition)
					if !r.Workload.pinned() || a.Partition == partitionUnknown {
						part = "*"
					}
					row(tw, "", "", fmt.Sprintf("#%d s%d/p%s", a.Index, a.Stream, part), a.MBps, a.MsgsPerSec, a.Latency, "")
				}
			}
		}
		if r.EndToEnd != nil {
			row(tw, r.Workload.Name, r.Target, "end-to-end", 0, 0, *r.EndToEnd, "")
		}
	}
	_ = tw.Flush()
	for _, r := range results {
		extra := []string{verification(r)}
		if g := r.Group; g != nil {
			extra = append(extra, fmt.Sprintf("group of %d: %d commits (p50 %.3f ms, p99 %.3f ms), %d syncs, %d fenced polls, %d generation changes, generation %d",
				g.Members, g.Commits, g.CommitLatency.P50, g.CommitLatency.P99, g.Syncs, g.FencedPolls, g.GenerationChanges, g.Generation))
		}
		if r.ServerRSSPeakBytes > 0 {
			extra = append(extra, fmt.Sprintf("server peak RSS %.0f MiB", float64(r.ServerRSSPeakBytes)/(1<<20)))
		}
		fmt.Fprintf(out, "  %s (%s): %s\n", r.Workload.Name, r.Target, strings.Join(extra, ", "))
	}
}

func row(tw io.Writer, name, target, role string, mbps, msgs float64, l Latency, frac string) {
	mb, ms := "-", "-"
	if mbps > 0 {
		mb, ms = fmt.Sprintf("%.1f", mbps), fmt.Sprintf("%.0f", msgs)
	}
	fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t\n",
		name, target, role, mb, ms, l.P50, l.P90, l.P95, l.P99, l.P999, l.P9999, l.Max, frac)
}

// verification says how a result's messages were checked.
func verification(r *Result) string {
	switch {
	case r.Workload.needsConsumers():
		return fmt.Sprintf("%d messages read by the consumers and verified (offsets, payloads%s)", r.Verified, frameChecks(r))
	case r.ReadBack:
		return fmt.Sprintf("%d of %d sent messages read back after the run and verified (offsets, payloads%s)", r.Verified, r.Sent, frameChecks(r))
	}
	return fmt.Sprintf("%d messages sent, each batch acknowledged by the server; not read back", r.Sent)
}

// frameChecks names the Iggy-frame checks when the target has frames.
func frameChecks(r *Result) string {
	if r.Target == "strata" {
		return ", ids, frame checksums"
	}
	return ""
}
