package sim

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrScenario reports a malformed scenario file.
var ErrScenario = errors.New("sim: bad scenario")

// Limits on scenario files.
const (
	scenarioLinesMax     = 10_000
	scenarioLineBytesMax = 1024
	scenarioTicksMax     = 10_000_000
)

// Scenario is a parsed scenario file: a cluster and a script.
//
// The format is line based; '#' starts a comment. A header of settings
// comes first:
//
//	replicas 3              cluster size, 1..6
//	clients 2               client count, 1..8
//	durability persisted    or replicated
//	seed 42                 seeds every random choice not scripted
//	swarm 12345             draw every parameter from this seed instead
//	bug NAME                plant a vsr bug (see vsr.BugNames)
//	set NAME VALUE          set one parameter (see paramFields)
//	faulty 1,2              replicas whose disks may rot
//	slow-disks 0            replicas whose disks are slow in the safety phase
//	open-bug TEXT           the scenario reproduces a known, unfixed bug
//	workload broker         the broker workload (broker.go) instead of kv;
//	                        without it, `swarm` draws the kv workload
//
// then the script, run in order while the clients keep sending requests:
//
//	tick 5000               advance the simulation
//	run                     the standard run: safety phase with random faults
//	partition 0|1,2         cut replicas {0} from {1,2} both ways
//	partition-oneway 0|1,2  cut only the paths from {0} to {1,2}
//	isolate 1               cut replica 1 from everyone
//	heal                    remove every partition
//	clog 0>1 200            hold packets from 0 to 1 for 200 ticks
//	crash 1                 crash replica 1 (memory lost, page cache kept)
//	crash 1 torn            ... tearing every in-flight multi-sector write
//	power-loss 1|all        crash and drop unsynced writes
//	restart 1|all           restart crashed replicas
//	corrupt 1 wal-prepares 3  latent error in zone at sector
//	corrupt 1 segment-truncate 0  (broker, node down) truncate group 0's
//	                        segment files of node 1 mid-record;
//	                        segment-bitflip flips a bit in one record
//	faults on|off           random faults from the parameters
//	liveness                faults stop on a quorum core; requests must finish
//	expect committed>=100   a condition (committed, commit[i], view, outcome=...)
type Scenario struct {
	ReplicaCount int
	ClientCount  int
	Durability   Durability
	Seed         uint64
	Swarm        bool
	Bugs         []string
	Sets         []ScenarioSet
	Faulty       []int // replicas whose disks may rot (latent errors, misdirected writes, stale reads)
	SlowDisks    []int // replicas whose disks are slow (SlowDiskTicksMax)
	OpenBug      string
	// Workload is set by a `workload` line (nil: kv, or what `set
	// workload` says).
	Workload *Workload
	Steps    []ScenarioStep
}

// ScenarioSet is one `set NAME VALUE` line.
type ScenarioSet struct {
	Name  string
	Value int64
}

// ScenarioStep is one script line.
type ScenarioStep struct {
	Line    int
	Command string   // tick, run, partition, partition-oneway, isolate, heal, clog, crash, power-loss, restart, corrupt, faults, liveness, expect
	Args    []string // raw arguments, validated by Parse
	Number  int64    // tick count, clog ticks, sector...
	Replica int      // -1 for all
	SideA   []int
	SideB   []int
	From    int
	To      int
	Torn    bool
	Zone    string
	Expect  Expectation
}

// Expectation is a parsed `expect` condition: Subject Op Value.
type Expectation struct {
	Subject string // committed, commit, view, outcome, completed, violation
	Index   int    // for commit[i]
	Op      string // >=, <=, ==, =, >, <
	Value   int64
	Word    string // for outcome=/violation=
}

// ParseScenario parses a scenario file. It never panics on any input.
func ParseScenario(text string) (*Scenario, error) {
	sc := &Scenario{ReplicaCount: 3, ClientCount: 2, Durability: DurabilityReplicated, Seed: 1}
	scanner := bufio.NewScanner(strings.NewReader(text))
	scanner.Buffer(make([]byte, 0, 4096), scenarioLineBytesMax)
	line := 0
	inScript := false
	for scanner.Scan() {
		line++
		if line > scenarioLinesMax {
			return nil, fmt.Errorf("%w: more than %d lines", ErrScenario, scenarioLinesMax)
		}
		raw := scanner.Text()
		if i := strings.IndexByte(raw, '#'); i >= 0 {
			raw = raw[:i]
		}
		fields := strings.Fields(raw)
		if len(fields) == 0 {
			continue
		}
		isHeader, err := sc.parseHeader(fields, line, inScript)
		if err != nil {
			return nil, err
		}
		if isHeader {
			continue
		}
		inScript = true
		step, err := parseStep(fields, line, sc.ReplicaCount)
		if err != nil {
			return nil, err
		}
		sc.Steps = append(sc.Steps, step)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrScenario, err)
	}
	if len(sc.Steps) == 0 {
		return nil, fmt.Errorf("%w: no script", ErrScenario)
	}
	return sc, nil
}

func (sc *Scenario) parseHeader(f []string, line int, inScript bool) (bool, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrScenario, line, fmt.Sprintf(format, a...))
	}
	switch f[0] {
	case "replicas", "clients", "durability", "seed", "swarm", "bug", "set", "open-bug", "faulty", "slow-disks", "workload":
	default:
		return false, nil
	}
	if inScript {
		return false, bad("%q must come before the script", f[0])
	}
	if f[0] == "open-bug" {
		sc.OpenBug = strings.Join(f[1:], " ")
		return true, nil
	}
	if f[0] == "set" {
		if len(f) != 3 {
			return false, bad("set NAME VALUE")
		}
		if _, ok := paramSetters[f[1]]; !ok {
			return false, bad("unknown parameter %q", f[1])
		}
		v, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil || v < 0 {
			return false, bad("bad value %q", f[2])
		}
		sc.Sets = append(sc.Sets, ScenarioSet{Name: f[1], Value: v})
		return true, nil
	}
	if len(f) != 2 {
		return false, bad("%s takes one argument", f[0])
	}
	switch f[0] {
	case "workload":
		wl, err := ParseWorkload(f[1])
		if err != nil {
			return false, bad("workload is kv or broker")
		}
		sc.Workload = &wl
	case "faulty", "slow-disks":
		list, ok := parseReplicaList(f[1], replicaCountMax)
		if !ok {
			return false, bad("%s takes a replica list like 0,2", f[0])
		}
		if f[0] == "faulty" {
			sc.Faulty = list
		} else {
			sc.SlowDisks = list
		}
	case "replicas", "clients":
		n, err := strconv.Atoi(f[1])
		limit := replicaCountMax
		if f[0] == "clients" {
			limit = clientCountMax
		}
		if err != nil || n < 1 || n > limit {
			return false, bad("%s must be 1..%d", f[0], limit)
		}
		if f[0] == "replicas" {
			sc.ReplicaCount = n
		} else {
			sc.ClientCount = n
		}
	case "durability":
		switch f[1] {
		case "persisted":
			sc.Durability = DurabilityPersisted
		case "replicated":
			sc.Durability = DurabilityReplicated
		default:
			return false, bad("durability is persisted or replicated")
		}
	case "seed", "swarm":
		s, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return false, bad("bad seed %q", f[1])
		}
		sc.Seed = s
		sc.Swarm = f[0] == "swarm"
	case "bug":
		sc.Bugs = append(sc.Bugs, f[1])
	}
	return true, nil
}

// scenarioZones names the zones a `corrupt` line may target.
// The segment zones are the broker workload's (broker_segment_faults.go):
// there SECTOR names the partition group whose segment files are damaged.
var scenarioZones = []string{"wal-headers", "wal-prepares", "checkpoint", segmentTruncate, segmentBitFlip}

func parseStep(f []string, line, replicaCount int) (ScenarioStep, error) {
	st := ScenarioStep{Line: line, Command: f[0], Args: f[1:], Replica: -1}
	bad := func(format string, a ...any) (ScenarioStep, error) {
		return st, fmt.Errorf("%w: line %d: %s", ErrScenario, line, fmt.Sprintf(format, a...))
	}
	args := f[1:]
	nargs := func(min, max int) bool { return len(args) >= min && len(args) <= max }
	replica := func(s string, allowAll bool) (int, bool) {
		if allowAll && s == "all" {
			return -1, true
		}
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0 && n < replicaCount
	}
	switch st.Command {
	case "tick":
		if !nargs(1, 1) {
			return bad("tick N")
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil || n < 1 || n > scenarioTicksMax {
			return bad("tick count must be 1..%d", scenarioTicksMax)
		}
		st.Number = n
	case "run", "heal", "liveness":
		if !nargs(0, 0) {
			return bad("%s takes no arguments", st.Command)
		}
	case "partition", "partition-oneway":
		if !nargs(1, 1) {
			return bad("%s A|B", st.Command)
		}
		a, b, ok := strings.Cut(args[0], "|")
		if !ok {
			return bad("partition sides are separated by |")
		}
		var okA, okB bool
		st.SideA, okA = parseReplicaList(a, replicaCount)
		st.SideB, okB = parseReplicaList(b, replicaCount)
		if !okA || !okB {
			return bad("bad replica list %q", args[0])
		}
		for _, x := range st.SideA {
			for _, y := range st.SideB {
				if x == y {
					return bad("replica %d on both sides", x)
				}
			}
		}
	case "isolate":
		r, ok := 0, nargs(1, 1)
		if ok {
			r, ok = replica(args[0], false)
		}
		if !ok {
			return bad("isolate REPLICA")
		}
		st.Replica = r
	case "clog":
		if !nargs(2, 2) {
			return bad("clog FROM>TO TICKS")
		}
		from, to, ok := strings.Cut(args[0], ">")
		if !ok {
			return bad("clog FROM>TO TICKS")
		}
		var okF, okT bool
		st.From, okF = replica(from, false)
		st.To, okT = replica(to, false)
		n, err := strconv.ParseInt(args[1], 10, 64)
		if !okF || !okT || st.From == st.To || err != nil || n < 1 || n > scenarioTicksMax {
			return bad("clog FROM>TO TICKS")
		}
		st.Number = n
	case "crash", "power-loss", "restart":
		if !nargs(1, 2) {
			return bad("%s REPLICA|all", st.Command)
		}
		r, ok := replica(args[0], true)
		if !ok {
			return bad("bad replica %q", args[0])
		}
		st.Replica = r
		if len(args) == 2 {
			if args[1] != "torn" || st.Command == "restart" {
				return bad("unknown argument %q", args[1])
			}
			st.Torn = true
		}
	case "corrupt":
		if !nargs(3, 3) {
			return bad("corrupt REPLICA ZONE SECTOR")
		}
		r, ok := replica(args[0], false)
		if !ok {
			return bad("bad replica %q", args[0])
		}
		st.Replica = r
		known := false
		for _, z := range scenarioZones {
			known = known || z == args[1]
		}
		if !known {
			return bad("zone is one of %v", scenarioZones)
		}
		st.Zone = args[1]
		n, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil || n < 0 {
			return bad("bad sector %q", args[2])
		}
		st.Number = n
	case "faults":
		if !nargs(1, 1) || (args[0] != "on" && args[0] != "off") {
			return bad("faults on|off")
		}
		if args[0] == "on" {
			st.Number = 1
		}
	case "expect":
		if !nargs(1, 1) {
			return bad("expect CONDITION")
		}
		e, err := parseExpectation(args[0])
		if err != nil {
			return bad("%v", err)
		}
		st.Expect = e
	default:
		return bad("unknown command %q", st.Command)
	}
	return st, nil
}

func parseReplicaList(s string, replicaCount int) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || n >= replicaCount || len(out) >= replicaCountMax {
			return nil, false
		}
		for _, o := range out {
			if o == n {
				return nil, false
			}
		}
		out = append(out, n)
	}
	return out, true
}

// expectationOps are tried longest first.
var expectationOps = []string{">=", "<=", "==", "!=", "=", ">", "<"}

func parseExpectation(s string) (Expectation, error) {
	var e Expectation
	for _, op := range expectationOps {
		i := strings.Index(s, op)
		if i <= 0 {
			continue
		}
		e.Op = op
		subject, value := s[:i], s[i+len(op):]
		if value == "" {
			return e, errors.New("missing value")
		}
		if name, index, ok := strings.Cut(subject, "["); ok {
			idx, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
			if err != nil || !strings.HasSuffix(index, "]") || idx < 0 || idx >= replicaCountMax {
				return e, fmt.Errorf("bad index in %q", subject)
			}
			subject, e.Index = name, idx
		}
		e.Subject = subject
		switch subject {
		case "outcome", "violation":
			if op != "=" && op != "==" {
				return e, fmt.Errorf("%s takes =", subject)
			}
			e.Word = value
			return e, nil
		case "committed", "commit", "view", "completed", "crashes", "power-losses", "torn-writes", "read-errors", "restores":
			v, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return e, fmt.Errorf("bad number %q", value)
			}
			e.Value = v
			return e, nil
		}
		return e, fmt.Errorf("unknown subject %q", subject)
	}
	return e, fmt.Errorf("no comparison in %q", s)
}

// Holds reports whether actual satisfies the numeric expectation.
func (e *Expectation) Holds(actual int64) bool {
	switch e.Op {
	case ">=":
		return actual >= e.Value
	case "<=":
		return actual <= e.Value
	case ">":
		return actual > e.Value
	case "<":
		return actual < e.Value
	case "!=":
		return actual != e.Value
	}
	return actual == e.Value
}

// paramField is one parameter a scenario can `set`: its name, how to set
// it, and how to read it (so that a failed swarm run can be written out
// with every parameter explicit).
type paramField struct {
	name string
	set  func(p *Params, v int64)
	get  func(p *Params) int64
}

// paramFields lists every settable parameter, in the order failure files
// print them.
var paramFields = []paramField{
	{"delay_ticks_min", func(p *Params, v int64) { p.DelayTicksMin = clampInt(v, 1, networkDelayTicksMax) }, func(p *Params) int64 { return int64(p.DelayTicksMin) }},
	{"delay_ticks_max", func(p *Params, v int64) { p.DelayTicksMax = clampInt(v, 1, networkDelayTicksMax) }, func(p *Params) int64 { return int64(p.DelayTicksMax) }},
	ppmField("loss_ppm", func(p *Params) *uint32 { return &p.LossPPM }),
	ppmField("duplicate_ppm", func(p *Params) *uint32 { return &p.DuplicatePPM }),
	ppmField("reorder_ppm", func(p *Params) *uint32 { return &p.ReorderPPM }),
	ppmField("corrupt_ppm", func(p *Params) *uint32 { return &p.CorruptPPM }),
	{"partition_mode", func(p *Params, v int64) { p.PartitionMode = PartitionMode(v % int64(partitionModeCount)) }, func(p *Params) int64 { return int64(p.PartitionMode) }},
	ppmField("partition_ppm", func(p *Params) *uint32 { return &p.PartitionPPM }),
	ppmField("unpartition_ppm", func(p *Params) *uint32 { return &p.UnpartitionPPM }),
	ppmField("clog_ppm", func(p *Params) *uint32 { return &p.ClogPPM }),
	{"clog_ticks_max", func(p *Params, v int64) { p.ClogTicksMax = clampInt(v, 1, clogTicksMax) }, func(p *Params) int64 { return int64(p.ClogTicksMax) }},
	{"path_capacity_max", func(p *Params, v int64) { p.PathCapacityMax = clampInt(v, 1, 1<<20) }, func(p *Params) int64 { return int64(p.PathCapacityMax) }},
	ppmField("crash_ppm", func(p *Params) *uint32 { return &p.CrashPPM }),
	ppmField("restart_ppm", func(p *Params) *uint32 { return &p.RestartPPM }),
	ppmField("crash_after_prepare_ok_ppm", func(p *Params) *uint32 { return &p.CrashAfterPrepareOkPPM }),
	ppmField("crash_after_do_view_change_ppm", func(p *Params) *uint32 { return &p.CrashAfterDoViewChangePPM }),
	ppmField("crash_after_start_view_ppm", func(p *Params) *uint32 { return &p.CrashAfterStartViewPPM }),
	ppmField("crash_before_superblock_ppm", func(p *Params) *uint32 { return &p.CrashBeforeSuperblockPPM }),
	ppmField("crash_after_superblock_ppm", func(p *Params) *uint32 { return &p.CrashAfterSuperblockPPM }),
	ppmField("crash_mid_checkpoint_ppm", func(p *Params) *uint32 { return &p.CrashMidCheckpointPPM }),
	ppmField("crash_mid_transfer_ppm", func(p *Params) *uint32 { return &p.CrashMidTransferPPM }),
	ppmField("power_loss_all_after_view_ppm", func(p *Params) *uint32 { return &p.PowerLossAllAfterViewPPM }),
	{"io_latency_ticks_max", func(p *Params, v int64) { p.IOLatencyTicksMax = clampInt(v, 1, ioLatencyTicksMax) }, func(p *Params) int64 { return int64(p.IOLatencyTicksMax) }},
	ppmField("slow_disk_ppm", func(p *Params) *uint32 { return &p.SlowDiskPPM }),
	{"slow_disk_ticks_max", func(p *Params, v int64) { p.SlowDiskTicksMax = clampInt(v, 0, slowDiskTicksMax) }, func(p *Params) int64 { return int64(p.SlowDiskTicksMax) }},
	ppmField("power_loss_ppm", func(p *Params) *uint32 { return &p.PowerLossPPM }),
	ppmField("power_loss_all_ppm", func(p *Params) *uint32 { return &p.PowerLossAllPPM }),
	ppmField("unsynced_keep_ppm", func(p *Params) *uint32 { return &p.UnsyncedKeepPPM }),
	ppmField("torn_write_ppm", func(p *Params) *uint32 { return &p.TornWritePPM }),
	ppmField("latent_error_ppm", func(p *Params) *uint32 { return &p.LatentErrorPPM }),
	ppmField("misdirect_ppm", func(p *Params) *uint32 { return &p.MisdirectPPM }),
	ppmField("stale_read_ppm", func(p *Params) *uint32 { return &p.StaleReadPPM }),
	{"journal_slots", func(p *Params, v int64) { p.JournalSlots = uint64(clampInt(v, 16, journalSlotsMax)) }, func(p *Params) int64 { return int64(p.JournalSlots) }},
	{"message_size_max", func(p *Params, v int64) { p.MessageSizeMax = uint32(clampInt(v, 0, messageSizeMaxMax)) }, func(p *Params) int64 { return int64(p.MessageSizeMax) }},
	{"wal_bytes_max", func(p *Params, v int64) { p.WALBytesMax = uint64(v) }, func(p *Params) int64 { return int64(p.WALBytesMax) }},
	{"pipeline_prepare_max", func(p *Params, v int64) { p.PipelinePrepareMax = uint32(clampInt(v, 0, 64)) }, func(p *Params) int64 { return int64(p.PipelinePrepareMax) }},
	{"request_queue_max", func(p *Params, v int64) { p.RequestQueueMax = uint32(clampInt(v, 0, 1024)) }, func(p *Params) int64 { return int64(p.RequestQueueMax) }},
	{"checkpoint_interval_ops", func(p *Params, v int64) { p.CheckpointIntervalOps = uint64(clampInt(v, 0, 1<<20)) }, func(p *Params) int64 { return int64(p.CheckpointIntervalOps) }},
	{"request_timeout_ticks", func(p *Params, v int64) { p.RequestTimeoutTicks = clampInt(v, 10, 100_000) }, func(p *Params) int64 { return int64(p.RequestTimeoutTicks) }},
	{"requests_per_client", func(p *Params, v int64) { p.RequestsPerClient = clampInt(v, 1, 100_000) }, func(p *Params) int64 { return int64(p.RequestsPerClient) }},
	ppmField("read_ppm", func(p *Params) *uint32 { return &p.ReadPPM }),
	{"padding_bytes_max", func(p *Params, v int64) { p.PaddingBytesMax = clampInt(v, 0, requestPaddingBytesMax) }, func(p *Params) int64 { return int64(p.PaddingBytesMax) }},
	{"think_ticks_max", func(p *Params, v int64) { p.ThinkTicksMax = clampInt(v, 1, thinkTicksMax) }, func(p *Params) int64 { return int64(p.ThinkTicksMax) }},
	{"safety_ticks", func(p *Params, v int64) { p.SafetyTicks = clampInt(v, 1, scenarioTicksMax) }, func(p *Params) int64 { return int64(p.SafetyTicks) }},
	{"liveness_ticks", func(p *Params, v int64) { p.LivenessTicks = clampInt(v, 1, scenarioTicksMax) }, func(p *Params) int64 { return int64(p.LivenessTicks) }},
	{"workload", func(p *Params, v int64) { p.Workload = Workload(clampInt(v, 0, int(WorkloadBroker))) }, func(p *Params) int64 { return int64(p.Workload) }},
	{"groups", func(p *Params, v int64) { p.Groups = clampInt(v, 1, brokerGroupsMax) }, func(p *Params) int64 { return int64(p.Groups) }},
	{"persisted_groups_mask", func(p *Params, v int64) { p.PersistedGroupsMask = uint64(v) }, func(p *Params) int64 { return int64(p.PersistedGroupsMask) }},
	{"flush_messages", func(p *Params, v int64) { p.FlushMessages = clampInt(v, 1, 1<<20) }, func(p *Params) int64 { return int64(p.FlushMessages) }},
	{"batch_messages_max", func(p *Params, v int64) { p.BatchMessagesMax = clampInt(v, 1, brokerBatchMessagesMax) }, func(p *Params) int64 { return int64(p.BatchMessagesMax) }},
	{"metadata", func(p *Params, v int64) { p.Metadata = clampInt(v, 0, 1) }, func(p *Params) int64 { return int64(p.Metadata) }},
}

// ppmField is a paramField for a rate in parts per million.
func ppmField(name string, field func(p *Params) *uint32) paramField {
	return paramField{name, func(p *Params, v int64) { *field(p) = ppm(v) }, func(p *Params) int64 { return int64(*field(p)) }}
}

// paramSetters maps `set NAME VALUE` names to the parameter they set.
var paramSetters = func() map[string]func(p *Params, v int64) {
	m := make(map[string]func(p *Params, v int64), len(paramFields))
	for _, f := range paramFields {
		m[f.name] = f.set
	}
	return m
}()

func ppm(v int64) uint32 {
	if v > PPM {
		return PPM
	}
	return uint32(v)
}

func clampInt(v int64, lo, hi int) int {
	if v < int64(lo) {
		return lo
	}
	if v > int64(hi) {
		return hi
	}
	return int(v)
}
