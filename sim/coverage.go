package sim

import (
	"fmt"
	"io"
	"strings"

	"github.com/stratabroker/strata/server/group"
)

// CoverageEvent is one protocol event or injected fault whose occurrence a
// swarm counts, so that a fault class the model no longer reaches, or a
// protocol path no run takes, shows as a zero row.
type CoverageEvent uint8

// The coverage events, in the order the table prints them.
const (
	CoverViewChanges CoverageEvent = iota
	CoverRecoveries
	CoverRepairs
	CoverCheckpoints
	CoverCheckpointChunks
	CoverStateTransfers
	CoverCrashes
	CoverPowerLosses
	CoverPowerLossAll
	CoverPowerLossAllAfterView
	CoverCrashAfterPrepareOk
	CoverCrashAfterDoViewChange
	CoverCrashAfterStartView
	CoverCrashBeforeSuperblock
	CoverCrashAfterSuperblock
	CoverCrashMidCheckpoint
	CoverCrashMidTransfer
	CoverTornWrites
	CoverUnsyncedLost
	CoverLatentErrors
	CoverLatentSuperblock
	CoverLatentCheckpoint
	CoverReadErrors
	CoverMisdirected
	CoverMisdirectedSuperblock
	CoverMisdirectedCheckpoint
	CoverStaleReads
	CoverStaleCheckpointReads
	CoverCorruptedPackets
	CoverLostPackets
	CoverDuplicatedPackets
	CoverPartitions
	CoverPrimaryFlaps
	CoverClogs
	CoverSlowDisks
	CoverCheckedPrepareOks
	CoverCheckedDoViewChanges
	CoverCheckedViewLogs
	CoverMetaCommits
	CoverMetaRetries
	CoverTopicGated
	CoverTopicDeletes
	CoverAnsweredTimeout
	coverageEventCount
)

var coverageNames = [coverageEventCount]string{
	"view changes (StartView sent)",
	"recoveries (recovering -> rejoined)",
	"repairs (RequestPrepare sent)",
	"checkpoints written",
	"checkpoint chunks sent",
	"state transfers (checkpoint installed)",
	"crashes",
	"power losses",
	"power loss of every replica",
	"power loss of every replica after a view change",
	"crash after PrepareOk",
	"crash after DoViewChange",
	"crash after StartView",
	"crash before a superblock write",
	"crash after a superblock write",
	"crash mid-checkpoint",
	"crash mid-state-transfer",
	"torn writes",
	"unsynced sectors lost",
	"latent sector errors",
	"latent errors in the superblock",
	"latent errors in the checkpoint",
	"read errors",
	"misdirected writes",
	"misdirected superblock writes",
	"misdirected checkpoint writes",
	"stale reads",
	"stale checkpoint reads",
	"corrupted packets (rejected)",
	"lost packets",
	"duplicated packets",
	"partitions",
	"partitions cutting off a new primary",
	"clogs",
	"slow-disk runs",
	"PrepareOks checked against the disk",
	"DoViewChanges checked (acks, commits, disk)",
	"view logs checked against the commits",
	"metadata ops committed (broker)",
	"metadata requests retried (same request number)",
	"partition requests refused: no topic yet",
	"topics deleted while others send",
	"requests a host answered 57 at the request timeout",
}

// String names e as the table prints it.
func (e CoverageEvent) String() string {
	if e < coverageEventCount {
		return coverageNames[e]
	}
	return fmt.Sprintf("CoverageEvent(%d)", e)
}

// Coverage counts each coverage event in one run.
type Coverage [coverageEventCount]uint64

// Coverage returns how often the run hit each coverage event.
func (r *Result) Coverage() Coverage {
	var c Coverage
	p, s, n := &r.Process, &r.Storage, &r.Network
	c[CoverViewChanges] = p.ViewChanges
	c[CoverRecoveries] = p.Recoveries
	c[CoverRepairs] = p.RepairRequests
	c[CoverCheckpoints] = s.CheckpointWrites
	c[CoverCheckpointChunks] = p.CheckpointChunks
	c[CoverStateTransfers] = p.StateTransfers
	c[CoverCrashes] = p.Crashes
	c[CoverPowerLosses] = p.PowerLosses
	c[CoverPowerLossAll] = p.PowerLossesAll
	c[CoverPowerLossAllAfterView] = p.Timed[timedPowerLossAllAfterView]
	c[CoverCrashAfterPrepareOk] = p.Timed[timedAfterPrepareOk]
	c[CoverCrashAfterDoViewChange] = p.Timed[timedAfterDoViewChange]
	c[CoverCrashAfterStartView] = p.Timed[timedAfterStartView]
	c[CoverCrashBeforeSuperblock] = p.Timed[timedBeforeSuperblock]
	c[CoverCrashAfterSuperblock] = p.Timed[timedAfterSuperblock]
	c[CoverCrashMidCheckpoint] = p.Timed[timedMidCheckpoint]
	c[CoverCrashMidTransfer] = p.Timed[timedMidTransfer]
	c[CoverTornWrites] = s.TornWrites
	c[CoverUnsyncedLost] = s.UnsyncedLost
	c[CoverLatentErrors] = s.LatentSectors
	c[CoverLatentSuperblock] = s.LatentSuperblock
	c[CoverLatentCheckpoint] = s.LatentCheckpoint
	c[CoverReadErrors] = s.ReadErrors
	c[CoverMisdirected] = s.MisdirectedWrite
	c[CoverMisdirectedSuperblock] = s.MisdirectedSuperblock
	c[CoverMisdirectedCheckpoint] = s.MisdirectedCheckpoint
	c[CoverStaleReads] = s.StaleReads
	c[CoverStaleCheckpointReads] = s.StaleCheckpointReads
	c[CoverCorruptedPackets] = p.CorruptedRejected
	c[CoverLostPackets] = n.DroppedLoss
	c[CoverDuplicatedPackets] = n.Duplicated
	c[CoverPartitions] = n.Partitions
	c[CoverPrimaryFlaps] = p.PrimaryFlaps
	c[CoverClogs] = n.Clogs
	if len(r.Params.SlowDiskReplica) > 0 && r.Params.SlowDiskTicksMax > 0 {
		c[CoverSlowDisks] = 1
	}
	c[CoverCheckedPrepareOks] = p.CheckedPrepareOks
	c[CoverCheckedDoViewChanges] = p.CheckedDoViewChanges
	c[CoverCheckedViewLogs] = p.CheckedViewLogs
	if b := r.broker; b != nil {
		c[CoverMetaCommits] = b.meta.commits
		c[CoverMetaRetries] = b.meta.retried
		c[CoverTopicGated] = b.meta.gated
		c[CoverTopicDeletes] = b.meta.deleted
		c[CoverAnsweredTimeout] = b.abandoned[group.AbandonTimeout]
	}
	return c
}

// CoverageTable aggregates the coverage of many runs: how many seeds hit
// each event, and how often in all.
type CoverageTable struct {
	Seeds uint64
	Hit   Coverage // seeds with the event at least once
	Total Coverage
}

// Add counts one run.
func (t *CoverageTable) Add(c Coverage) {
	t.Seeds++
	for e, n := range c {
		if n > 0 {
			t.Hit[e]++
		}
		t.Total[e] += n
	}
}

// Missing names the events no run hit.
func (t *CoverageTable) Missing() []string {
	var out []string
	for e := CoverageEvent(0); e < coverageEventCount; e++ {
		if t.Hit[e] == 0 {
			out = append(out, e.String())
		}
	}
	return out
}

// Print writes the table: one row per event with the seeds that hit it
// (and their share) and the total count.
func (t *CoverageTable) Print(w io.Writer) {
	width := 0
	for _, n := range coverageNames {
		width = max(width, len(n))
	}
	fmt.Fprintf(w, "coverage over %d seeds:\n", t.Seeds)
	fmt.Fprintf(w, "  %-*s %8s %7s %12s\n", width, "event", "seeds", "share", "total")
	for e := CoverageEvent(0); e < coverageEventCount; e++ {
		share := 0.0
		if t.Seeds > 0 {
			share = 100 * float64(t.Hit[e]) / float64(t.Seeds)
		}
		mark := ""
		if t.Hit[e] == 0 {
			mark = "  <- never hit"
		}
		fmt.Fprintf(w, "  %-*s %8d %6.1f%% %12d%s\n", width, e.String(), t.Hit[e], share, t.Total[e], mark)
	}
	if missing := t.Missing(); len(missing) > 0 {
		fmt.Fprintf(w, "coverage: %d events never hit: %s\n", len(missing), strings.Join(missing, ", "))
	}
}
