package sim

import (
	"fmt"
	"io"

	"github.com/stratabroker/strata/vsr"
)

// Durability is the durability mode of the simulated cluster (DESIGN.md
// decision 5).
type Durability uint8

const (
	// DurabilityReplicated keeps prepares in memory; an acknowledged op
	// survives whenever a quorum kept its memory.
	DurabilityReplicated Durability = iota
	// DurabilityPersisted writes and syncs every prepare before PrepareOk;
	// an acknowledged op survives any crash pattern, including power loss of
	// every replica at once.
	DurabilityPersisted
)

// String returns the scenario-file spelling of d.
func (d Durability) String() string {
	if d == DurabilityPersisted {
		return "persisted"
	}
	return "replicated"
}

// PartitionMode says how the simulated network splits replicas when a
// partition starts.
type PartitionMode uint8

const (
	// PartitionNone never partitions.
	PartitionNone PartitionMode = iota
	// PartitionIsolateOne cuts one replica off from all others, both ways.
	PartitionIsolateOne
	// PartitionUniform puts every replica on a random side; traffic between
	// the sides is cut both ways.
	PartitionUniform
	// PartitionAsymmetric is PartitionUniform with only one direction cut.
	PartitionAsymmetric
)

var partitionModeNames = [...]string{"none", "isolate-one", "uniform", "asymmetric"}

// String names m.
func (m PartitionMode) String() string {
	if int(m) < len(partitionModeNames) {
		return partitionModeNames[m]
	}
	return fmt.Sprintf("PartitionMode(%d)", m)
}

// Limits of the swarm parameters, by name.
const (
	replicaCountMax       = 6
	clientCountMax        = 8
	networkDelayTicksMax  = 40
	clogTicksMax          = 400
	ioLatencyTicksMax     = 20
	requestTimeoutTicksLo = 150
	requestTimeoutTicksHi = 600
	// safetyTicksDefault is the length of the faulty phase of a swarm run.
	safetyTicksDefault = 4000
	// livenessTicksMax is how long the quorum core has, once faults stop,
	// to complete every outstanding request.
	livenessTicksMax = 8000
	// requestsPerClientMax bounds the workload of one client in a run.
	requestsPerClientMax = 200
)

// Params are the knobs of one simulated run. Swarm testing draws them from
// the seed (DrawParams) so that different seeds explore different mixes of
// faults; scenarios set them explicitly. Rates are parts per million: per
// packet for network faults, per tick for partition, clog and crash events,
// per sector or per write for storage faults.
type Params struct {
	Seed         uint64
	ReplicaCount int
	ClientCount  int
	Durability   Durability

	// Network.
	DelayTicksMin   int
	DelayTicksMax   int
	LossPPM         uint32
	DuplicatePPM    uint32
	ReorderPPM      uint32 // chance a packet is held back an extra delay
	PartitionMode   PartitionMode
	PartitionPPM    uint32 // per tick, chance a partition starts when none is on
	UnpartitionPPM  uint32 // per tick, chance the current partition heals
	ClogPPM         uint32 // per tick, chance one path is clogged
	ClogTicksMax    int
	PathCapacityMax int // packets queued on one path before new ones drop

	// Processes.
	CrashPPM   uint32 // per tick, chance one replica crashes
	RestartPPM uint32 // per tick, chance one crashed replica restarts

	// Storage.
	IOLatencyTicksMax    int
	PowerLossPPM         uint32 // chance a crash is a power loss
	PowerLossAllPPM      uint32 // per tick, chance every replica loses power (persisted only)
	UnsyncedKeepPPM      uint32 // on power loss, chance an unsynced write survives anyway
	TornWritePPM         uint32 // on crash, chance an in-flight write lands torn
	LatentErrorPPM       uint32 // per written sector on a faulty replica
	MisdirectPPM         uint32 // per write on a faulty replica
	StorageFaultyMax     int    // replicas whose durable data may rot (<= f)
	StorageFaultyReplica []int  // which replicas those are (chosen from the seed)

	// Replica configuration.
	JournalSlots uint64

	// Workload and phases.
	RequestTimeoutTicks int
	RequestsPerClient   int
	ReadPPM             uint32 // chance a request is a read rather than an append
	PaddingBytesMax     int    // request bodies carry 0..this many padding bytes
	SafetyTicks         int
	LivenessTicks       int
}

// ReplicationQuorum returns the replication quorum for n replicas, as the
// replica computes it (DESIGN.md decision 4).
func ReplicationQuorum(n int) int { return vsr.ReplicationQuorum(n) }

// ViewChangeQuorum returns the view-change quorum for n replicas.
func ViewChangeQuorum(n int) int { return vsr.ViewChangeQuorum(n) }

// DownMax returns how many replicas the fault model lets be crashed (or
// recovering) at once without risking acknowledged data under replicated
// durability: fewer than a replication quorum, and few enough that a
// view-change quorum stays up.
func DownMax(n int, d Durability) int {
	if d == DurabilityPersisted {
		return n
	}
	a := ReplicationQuorum(n) - 1
	b := n - ViewChangeQuorum(n)
	if b < a {
		a = b
	}
	return a
}

// DrawParams draws a run's parameters from seed (swarm testing). The
// parameter draws use their own sub-stream, so that changing the run's
// later use of randomness never changes the parameters of a seed.
func DrawParams(seed uint64) Params {
	r := NewPRNG(seed).Fork(1)
	p := Params{Seed: seed}
	p.ReplicaCount = r.Range(1, replicaCountMax)
	p.ClientCount = r.Range(1, clientCountMax)
	if r.Chance(PPM / 2) {
		p.Durability = DurabilityPersisted
	}

	p.DelayTicksMin = r.Range(1, 3)
	p.DelayTicksMax = p.DelayTicksMin + r.Range(0, networkDelayTicksMax-p.DelayTicksMin)
	p.LossPPM = drawRate(r, 100_000)
	p.DuplicatePPM = drawRate(r, 50_000)
	p.ReorderPPM = drawRate(r, 100_000)
	p.PartitionMode = PartitionMode(r.IntN(4))
	if p.ReplicaCount == 1 {
		p.PartitionMode = PartitionNone
	}
	if p.PartitionMode != PartitionNone {
		p.PartitionPPM = uint32(r.Range(100, 3_000))
		p.UnpartitionPPM = uint32(r.Range(1_000, 10_000))
	}
	if p.ReplicaCount > 1 && r.Chance(PPM/2) {
		p.ClogPPM = uint32(r.Range(100, 3_000))
		p.ClogTicksMax = r.Range(10, clogTicksMax)
	}
	p.PathCapacityMax = r.Range(16, 256)

	crashable := DownMax(p.ReplicaCount, p.Durability) > 0
	if crashable && r.Chance(PPM*2/3) {
		p.CrashPPM = uint32(r.Range(50, 2_000))
		p.RestartPPM = uint32(r.Range(1_000, 20_000))
	}
	p.IOLatencyTicksMax = r.Range(1, ioLatencyTicksMax)
	if p.Durability == DurabilityPersisted {
		p.PowerLossPPM = drawRate(r, PPM/2)
		if r.Chance(PPM / 4) {
			p.PowerLossAllPPM = uint32(r.Range(20, 300))
		}
		p.UnsyncedKeepPPM = drawRate(r, PPM/2)
	}
	p.TornWritePPM = drawRate(r, PPM/2)
	p.StorageFaultyMax = ReplicationQuorum(p.ReplicaCount) - 1
	if p.ReplicaCount > 1 && p.StorageFaultyMax > 0 && r.Chance(PPM/2) {
		p.LatentErrorPPM = drawRate(r, 2_000)
		p.MisdirectPPM = drawRate(r, 2_000)
		count := r.Range(1, p.StorageFaultyMax)
		order := make([]int, p.ReplicaCount)
		for i := range order {
			order[i] = i
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		p.StorageFaultyReplica = append([]int(nil), order[:count]...)
		sortInts(p.StorageFaultyReplica)
	}

	p.JournalSlots = simJournalSlotChoices[r.IntN(len(simJournalSlotChoices))]
	p.RequestTimeoutTicks = r.Range(requestTimeoutTicksLo, requestTimeoutTicksHi)
	p.RequestsPerClient = r.Range(10, requestsPerClientMax)
	p.ReadPPM = drawRate(r, PPM/2)
	if r.Chance(PPM / 2) {
		p.PaddingBytesMax = r.Range(1, requestPaddingBytesMax)
	}
	p.SafetyTicks = safetyTicksDefault
	p.LivenessTicks = livenessTicksMax
	return p
}

// QuietParams returns parameters with no random faults at all, the
// starting point of scripted scenarios.
func QuietParams(seed uint64, replicaCount, clientCount int, durability Durability) Params {
	return Params{
		Seed:                seed,
		ReplicaCount:        replicaCount,
		ClientCount:         clientCount,
		Durability:          durability,
		DelayTicksMin:       1,
		DelayTicksMax:       5,
		PathCapacityMax:     256,
		ClogTicksMax:        100,
		IOLatencyTicksMax:   5,
		JournalSlots:        64,
		RequestTimeoutTicks: 300,
		RequestsPerClient:   requestsPerClientMax,
		ReadPPM:             PPM / 5,
		SafetyTicks:         safetyTicksDefault,
		LivenessTicks:       livenessTicksMax,
	}
}

// normalize clamps parameters into the ranges the simulator supports (a
// scenario may set them to anything).
func (p *Params) normalize() {
	p.ReplicaCount = clampInt(int64(p.ReplicaCount), 1, replicaCountMax)
	p.ClientCount = clampInt(int64(p.ClientCount), 1, clientCountMax)
	p.DelayTicksMin = clampInt(int64(p.DelayTicksMin), 1, networkDelayTicksMax)
	p.DelayTicksMax = clampInt(int64(p.DelayTicksMax), p.DelayTicksMin, networkDelayTicksMax)
	p.PathCapacityMax = clampInt(int64(p.PathCapacityMax), 1, 1<<20)
	p.ClogTicksMax = clampInt(int64(p.ClogTicksMax), 1, clogTicksMax)
	p.IOLatencyTicksMax = clampInt(int64(p.IOLatencyTicksMax), 1, ioLatencyTicksMax)
	p.RequestTimeoutTicks = clampInt(int64(p.RequestTimeoutTicks), 10, 100_000)
	p.PaddingBytesMax = clampInt(int64(p.PaddingBytesMax), 0, requestPaddingBytesMax)
	if p.JournalSlots == 0 {
		p.JournalSlots = 64
	}
	if p.PartitionMode > PartitionAsymmetric {
		p.PartitionMode = PartitionNone
	}
}

// drawRate returns 0 a quarter of the time (so that each fault is often
// absent altogether), else a rate in (0, max].
func drawRate(r *PRNG, max uint32) uint32 {
	if r.Chance(PPM / 4) {
		return 0
	}
	return uint32(r.Uint64N(uint64(max))) + 1
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// IsStorageFaulty reports whether replica may suffer latent errors and
// misdirected writes in this run.
func (p *Params) IsStorageFaulty(replica int) bool {
	for _, r := range p.StorageFaultyReplica {
		if r == replica {
			return true
		}
	}
	return false
}

// Print writes the parameters, one per line, in a fixed order.
func (p *Params) Print(w io.Writer) {
	fmt.Fprintf(w, "seed=%d\n", p.Seed)
	fmt.Fprintf(w, "  replicas=%d clients=%d durability=%s quorum_replication=%d quorum_view_change=%d\n",
		p.ReplicaCount, p.ClientCount, p.Durability, ReplicationQuorum(p.ReplicaCount), ViewChangeQuorum(p.ReplicaCount))
	fmt.Fprintf(w, "  network: delay=%d..%d ticks loss=%dppm duplicate=%dppm reorder=%dppm path_capacity=%d\n",
		p.DelayTicksMin, p.DelayTicksMax, p.LossPPM, p.DuplicatePPM, p.ReorderPPM, p.PathCapacityMax)
	fmt.Fprintf(w, "  partitions: mode=%s start=%dppm/tick heal=%dppm/tick clog=%dppm/tick clog_ticks_max=%d\n",
		p.PartitionMode, p.PartitionPPM, p.UnpartitionPPM, p.ClogPPM, p.ClogTicksMax)
	fmt.Fprintf(w, "  processes: crash=%dppm/tick restart=%dppm/tick down_max=%d\n",
		p.CrashPPM, p.RestartPPM, DownMax(p.ReplicaCount, p.Durability))
	fmt.Fprintf(w, "  storage: io_latency_max=%d power_loss=%dppm/crash power_loss_all=%dppm/tick unsynced_keep=%dppm torn=%dppm latent=%dppm/sector misdirect=%dppm/write faulty=%v\n",
		p.IOLatencyTicksMax, p.PowerLossPPM, p.PowerLossAllPPM, p.UnsyncedKeepPPM, p.TornWritePPM, p.LatentErrorPPM, p.MisdirectPPM, p.StorageFaultyReplica)
	fmt.Fprintf(w, "  replica: journal_slots=%d message_size_max=%d\n", p.JournalSlots, simMessageSizeMax)
	fmt.Fprintf(w, "  workload: requests_per_client=%d read=%dppm padding_max=%d request_timeout=%d ticks safety_ticks=%d liveness_ticks_max=%d\n",
		p.RequestsPerClient, p.ReadPPM, p.PaddingBytesMax, p.RequestTimeoutTicks, p.SafetyTicks, p.LivenessTicks)
}
