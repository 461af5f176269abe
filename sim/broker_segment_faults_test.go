package sim

import (
	"strings"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// TestBrokerSegmentLoaderTruncatesAtDamage damages a down node's segment
// files (cut mid-record, one bit flipped) and restarts it: its segment
// loader keeps exactly the records before the damaged one, every kept
// record verifies, and the run still passes every checker (the other
// nodes serve what the damaged one lost).
func TestBrokerSegmentLoaderTruncatesAtDamage(t *testing.T) {
	for _, zone := range []string{segmentTruncate, segmentBitFlip} {
		t.Run(zone, func(t *testing.T) {
			p := QuietParams(7, 3, 3, DurabilityPersisted)
			p.UseBroker()
			p.Groups, p.PersistedGroupsMask, p.FlushMessages = 1, 1, 2
			var before, after, damaged int
			res := runBroker(Options{Params: p}, func(w *brokerWorld) error {
				for range 1000 {
					w.Tick()
				}
				w.Crash(1, false)
				before = len(w.nodes[1].segments[0].batches)
				if err := w.corrupt(&ScenarioStep{Command: "corrupt", Replica: 1, Zone: zone, Number: 0}); err != nil {
					return err
				}
				damaged = before / 2
				w.Restart(1)
				s := w.nodes[1].segments[0]
				after = len(s.batches)
				for k, b := range s.batches {
					if err := wire.ValidateBatch(b, batchView(b).MessageCount()); err != nil {
						t.Errorf("kept record %d does not verify: %v", k, err)
					}
				}
				w.Liveness()
				return nil
			})
			if before < 4 {
				t.Fatalf("node 1 flushed only %d records before the damage", before)
			}
			if after != damaged {
				t.Errorf("the loader kept %d of %d records, want the %d before the damaged one", after, before, damaged)
			}
			if res.Outcome.Kind != OutcomeOK {
				t.Errorf("outcome %s", res.Outcome)
			}
			t.Logf("%s: record %d of %d damaged, %d kept; outcome %s", zone, damaged, before, after, res.Outcome.Kind)
		})
	}
}

// TestSegmentZonesAreTheBrokers: the kv workload refuses a segment zone.
func TestSegmentZonesAreTheBrokers(t *testing.T) {
	sc, err := ParseScenario("replicas 3\nclients 1\ndurability persisted\nseed 1\ncrash 1\ncorrupt 1 segment-bitflip 0\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunScenario(sc, nil); err == nil || !strings.Contains(err.Error(), "broker") {
		t.Fatalf("the kv workload ran a segment zone: %v", err)
	}
}
