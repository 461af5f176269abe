package sim

import (
	"fmt"
	"io"
	"strings"

	"github.com/stratabroker/strata/vsr"
)

// ScenarioParams returns the parameters a scenario runs with: drawn from
// its seed for `swarm`, else quiet ones, then its `set` lines.
func (sc *Scenario) ScenarioParams() Params {
	var p Params
	if sc.Swarm {
		p = DrawParams(sc.Seed)
		p.Workload = WorkloadKV // `workload broker` asks for the broker draw
	} else {
		p = QuietParams(sc.Seed, sc.ReplicaCount, sc.ClientCount, sc.Durability)
	}
	if sc.Workload != nil && *sc.Workload == WorkloadBroker {
		p.UseBroker()
	}
	// A file without a `set metadata` line was written before the broker
	// workload hosted the metadata group: it replays the run of then.
	p.Metadata = 0
	for _, s := range sc.Sets {
		p.setParam(s.Name, s.Value)
	}
	if sc.Faulty != nil {
		p.StorageFaultyReplica = nil
		for _, r := range sc.Faulty {
			if r < p.ReplicaCount {
				p.StorageFaultyReplica = append(p.StorageFaultyReplica, r)
			}
		}
		sortInts(p.StorageFaultyReplica)
	}
	if sc.SlowDisks != nil {
		p.SlowDiskReplica = keepReplicas(sc.SlowDisks, p.ReplicaCount)
		sortInts(p.SlowDiskReplica)
	}
	return p
}

// ScenarioBugs returns the planted bugs a scenario names.
func (sc *Scenario) ScenarioBugs() (vsr.BugSet, error) {
	var bugs vsr.BugSet
	for _, name := range sc.Bugs {
		b, err := vsr.ParseBug(name)
		if err != nil {
			return 0, fmt.Errorf("%w: %w", ErrScenario, err)
		}
		bugs |= b
	}
	return bugs, nil
}

// RunScenario runs a scenario's script and then its end-of-run checkers.
// It returns the run's result and an error listing every expectation that
// failed (nil if all held).
func RunScenario(sc *Scenario, verbose io.Writer) (*Result, error) {
	bugs, err := sc.ScenarioBugs()
	if err != nil {
		return nil, err
	}
	var failures []string
	if params := sc.ScenarioParams(); params.Workload == WorkloadBroker {
		return runBrokerScenario(sc, params, bugs, verbose)
	}
	for _, st := range sc.Steps {
		if st.Command == "corrupt" && (st.Zone == segmentTruncate || st.Zone == segmentBitFlip) {
			return nil, fmt.Errorf("%w: line %d: %s is a zone of the broker workload", ErrScenario, st.Line, st.Zone)
		}
	}
	res := runScript(Options{Params: sc.ScenarioParams(), Bugs: bugs, Verbose: verbose}, func(c *Cluster, res *Result) error {
		for _, st := range sc.Steps {
			if c.violation != nil {
				return nil
			}
			if st.Command == "expect" {
				if st.Expect.Subject == "outcome" || st.Expect.Subject == "violation" {
					continue // checked after the run
				}
				if msg := c.checkExpectation(&st.Expect); msg != "" {
					failures = append(failures, fmt.Sprintf("line %d: %s", st.Line, msg))
				}
				continue
			}
			c.runStep(&st)
		}
		return nil
	})
	for _, st := range sc.Steps {
		e := &st.Expect
		if st.Command != "expect" {
			continue
		}
		switch e.Subject {
		case "outcome":
			if got := res.Outcome.Kind.String(); (got == e.Word) == (e.Op == "!=") {
				failures = append(failures, fmt.Sprintf("line %d: outcome is %s, expected %s%s", st.Line, res.Outcome, e.Op, e.Word))
			}
		case "violation":
			if res.Outcome.Checker != e.Word {
				failures = append(failures, fmt.Sprintf("line %d: failed checker is %q, expected %q (outcome %s)", st.Line, res.Outcome.Checker, e.Word, res.Outcome))
			}
		}
	}
	if len(failures) > 0 {
		return res, fmt.Errorf("scenario expectations failed:\n  %s", strings.Join(failures, "\n  "))
	}
	return res, nil
}

func (c *Cluster) runStep(st *ScenarioStep) {
	all := func(f func(i int)) {
		if st.Replica >= 0 {
			f(st.Replica)
			return
		}
		for i := range c.replicas {
			f(i)
		}
	}
	switch st.Command {
	case "tick":
		for t := int64(0); t < st.Number && c.violation == nil; t++ {
			c.Tick()
		}
	case "run":
		c.logf("safety phase: %d ticks", c.params.SafetyTicks)
		for t := 0; t < c.params.SafetyTicks && c.violation == nil; t++ {
			c.Tick()
		}
	case "liveness":
		c.Liveness()
	case "partition", "partition-oneway":
		side := make([]int, c.params.ReplicaCount)
		for i := range side {
			side[i] = -1
		}
		for _, i := range st.SideA {
			side[i] = 0
		}
		for _, i := range st.SideB {
			side[i] = 1
		}
		c.logf("partition %v (one way %v)", side, st.Command == "partition-oneway")
		c.network.Partition(side, st.Command == "partition-oneway")
	case "isolate":
		c.logf("isolate replica %d", st.Replica)
		c.network.Isolate(st.Replica)
	case "heal":
		c.logf("heal")
		c.network.Heal()
	case "clog":
		c.logf("clog %d>%d for %d ticks", st.From, st.To, st.Number)
		c.network.Clog(st.From, st.To, c.now+uint64(st.Number))
	case "crash":
		all(func(i int) { c.Crash(i, false, st.Torn) })
	case "power-loss":
		all(func(i int) { c.Crash(i, true, st.Torn) })
	case "restart":
		all(func(i int) { c.Restart(i) })
	case "corrupt":
		zone := map[string]vsr.Zone{"wal-headers": vsr.ZoneWALHeaders, "wal-prepares": vsr.ZoneWALPrepares, "checkpoint": vsr.ZoneCheckpoint}[st.Zone]
		c.logf("latent error: replica %d zone %s sector %d", st.Replica, st.Zone, st.Number)
		c.storages[st.Replica].CorruptSector(zone, uint64(st.Number))
	case "faults":
		on := st.Number == 1
		c.faultsEnabled = on
		c.network.SetFaults(on)
		for _, s := range c.storages {
			s.SetFaults(on)
		}
	}
}

// checkExpectation evaluates a numeric expectation now; it returns "" if it
// holds, else a description.
func (c *Cluster) checkExpectation(e *Expectation) string {
	var actual int64
	name := e.Subject
	switch e.Subject {
	case "committed":
		actual = int64(c.commits.CommitMax)
	case "commit":
		name = fmt.Sprintf("commit[%d]", e.Index)
		if e.Index >= len(c.replicas) || c.replicas[e.Index] == nil {
			return fmt.Sprintf("%s: replica down or absent", name)
		}
		actual = int64(c.replicas[e.Index].CommitNumber())
	case "view":
		for _, r := range c.replicas {
			if r != nil && int64(r.View()) > actual {
				actual = int64(r.View())
			}
		}
	case "completed":
		actual = int64(c.completedCount())
	case "crashes":
		actual = int64(c.counters.Crashes)
	case "restores":
		actual = int64(c.counters.Restores)
	case "power-losses":
		actual = int64(c.counters.PowerLosses)
	case "torn-writes", "read-errors":
		sc := c.storageCounters()
		actual = int64(sc.TornWrites)
		if e.Subject == "read-errors" {
			actual = int64(sc.ReadErrors)
		}
	}
	if e.Holds(actual) {
		return ""
	}
	return fmt.Sprintf("%s is %d, expected %s%d (replicas:%s)", name, actual, e.Op, e.Value, c.ReplicaSummary())
}

// FailureScenario renders a scenario file that replays a failed swarm run
// exactly. Every parameter is written out, so the file keeps replaying the
// same run even if DrawParams (or the quorums it consults) change later.
func FailureScenario(res *Result, bugNames []string) string {
	var b strings.Builder
	p := res.Params
	fmt.Fprintf(&b, "# Found by strata-sim swarm: seed=%d outcome=%s checker=%s\n", p.Seed, res.Outcome.Kind, res.Outcome.Checker)
	detail := res.Outcome.Detail
	if i := strings.IndexByte(detail, '\n'); i >= 0 {
		detail = detail[:i]
	}
	fmt.Fprintf(&b, "# %s\n", detail)
	fmt.Fprintf(&b, "# trace_hash=%016x (reproduce: strata-sim run --seed %d", res.TraceHash, p.Seed)
	if p.Workload == WorkloadBroker {
		fmt.Fprintf(&b, " --workload broker")
	}
	for _, n := range bugNames {
		fmt.Fprintf(&b, " --bug %s", n)
	}
	fmt.Fprintf(&b, ")\n")
	fmt.Fprintf(&b, "seed %d\nreplicas %d\nclients %d\ndurability %s\n", p.Seed, p.ReplicaCount, p.ClientCount, p.Durability)
	for _, list := range []struct {
		header   string
		replicas []int
	}{{"faulty", p.StorageFaultyReplica}, {"slow-disks", p.SlowDiskReplica}} {
		if len(list.replicas) > 0 {
			parts := make([]string, len(list.replicas))
			for i, r := range list.replicas {
				parts[i] = fmt.Sprint(r)
			}
			fmt.Fprintf(&b, "%s %s\n", list.header, strings.Join(parts, ","))
		}
	}
	for _, f := range paramFields {
		fmt.Fprintf(&b, "set %s %d\n", f.name, f.get(&p))
	}
	for _, n := range bugNames {
		fmt.Fprintf(&b, "bug %s\n", n)
	}
	fmt.Fprintf(&b, "run\nliveness\nexpect outcome=%s\n", res.Outcome.Kind)
	if res.Outcome.Checker != "" {
		fmt.Fprintf(&b, "expect violation=%s\n", res.Outcome.Checker)
	}
	return b.String()
}
