package sim

import (
	"slices"
	"strings"
	"testing"
)

// narrowedSetting is issue 12's narrowed setting as --set overrides.
var narrowedSetting = []string{
	"durability=persisted", "replicas=3", "crash_ppm=4000", "restart_ppm=10000", "power_loss_ppm=500000",
	"io_latency_ticks_max=20", "partition_mode=1", "partition_ppm=3000", "unpartition_ppm=5000",
}

func setAll(t *testing.T, p *Params, sets []string) {
	t.Helper()
	for _, kv := range sets {
		name, value, _ := strings.Cut(kv, "=")
		if err := SetParam(p, name, value); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSetParamRecomputesDerivedParameters: an override of an input of a
// derived parameter recomputes it from the final values, in any order,
// unless the derived parameter is overridden itself. The liveness window
// stayed the drawn one when --set raised the disk latency (the narrowed
// setting's io_latency_ticks_max=20 on a seed drawn with 1 tick and 796
// journal slots, seed 177: 8,800 ticks for a restart that reads 796 slots
// at up to 20 ticks each).
func TestSetParamRecomputesDerivedParameters(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		p := DrawParams(seed)
		setAll(t, &p, narrowedSetting)
		if want := livenessTicksFor(&p); p.LivenessTicks != want {
			t.Fatalf("seed %d, narrowed: liveness window %d, want %d for %d slots at %d ticks", seed, p.LivenessTicks, want, p.JournalSlots, p.IOLatencyTicksMax)
		}
		if p.LivenessTicks < int(p.JournalSlots+4)*p.IOLatencyTicksMax {
			t.Fatalf("seed %d: a liveness window of %d ticks cannot read %d slots back at %d ticks", seed, p.LivenessTicks, p.JournalSlots, p.IOLatencyTicksMax)
		}
		reversed := DrawParams(seed)
		backward := slices.Clone(narrowedSetting)
		slices.Reverse(backward)
		setAll(t, &reversed, backward)
		if !sameParams(&p, &reversed) {
			t.Fatalf("seed %d: the order of overrides matters:\n%+v\n%+v", seed, p, reversed)
		}

		q := DrawParams(seed)
		setAll(t, &q, []string{"journal_slots=1024"})
		if q.LivenessTicks != livenessTicksFor(&q) {
			t.Fatalf("seed %d, journal_slots=1024: liveness window %d, want %d", seed, q.LivenessTicks, livenessTicksFor(&q))
		}
		if q.MessageSizeMax > messageSizeDrawnMax(q.JournalSlots) {
			t.Fatalf("seed %d, journal_slots=1024: message size %d, a journal of %d bytes", seed, q.MessageSizeMax, uint64(q.MessageSizeMax)*q.JournalSlots)
		}

		// A derived parameter set by name keeps its value, before or
		// after its inputs change.
		for _, sets := range [][]string{
			{"liveness_ticks=1234", "io_latency_ticks_max=20", "journal_slots=1024", "message_size_max=1048576"},
			{"io_latency_ticks_max=20", "message_size_max=1048576", "journal_slots=1024", "liveness_ticks=1234"},
		} {
			r := DrawParams(seed)
			setAll(t, &r, sets)
			if r.LivenessTicks != 1234 || r.MessageSizeMax != 1<<20 {
				t.Fatalf("seed %d, %v: liveness window %d, message size %d, want both as set", seed, sets, r.LivenessTicks, r.MessageSizeMax)
			}
		}

		// A single replica is never partitioned, whichever override
		// comes last.
		s := DrawParams(seed)
		setAll(t, &s, []string{"replicas=1", "partition_mode=1", "partition_ppm=3000"})
		s.normalize()
		if s.PartitionMode != PartitionNone || len(s.StorageFaultyReplica) != 0 {
			t.Fatalf("seed %d: one replica with partitions %s, faulty %v", seed, s.PartitionMode, s.StorageFaultyReplica)
		}
	}
}

// TestScenarioSetRecomputesDerivedParameters: a scenario's set lines on a
// swarm seed are overrides like --set.
func TestScenarioSetRecomputesDerivedParameters(t *testing.T) {
	sc, err := ParseScenario("swarm 177\nset io_latency_ticks_max 20\nrun\nliveness\n")
	if err != nil {
		t.Fatal(err)
	}
	p := sc.ScenarioParams()
	want := DrawParams(177)
	want.IOLatencyTicksMax = 20
	if p.LivenessTicks != livenessTicksFor(&want) || p.LivenessTicks == DrawParams(177).LivenessTicks {
		t.Fatalf("liveness window %d with 20-tick IO, want %d (drawn: %d)", p.LivenessTicks, livenessTicksFor(&want), DrawParams(177).LivenessTicks)
	}
}
