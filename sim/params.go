package sim

import (
	"fmt"
	"io"
	"math/bits"

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
	// PartitionIsolatePrimary cuts off the replica that is primary now (a
	// fault timed to the protocol): it keeps preparing requests it cannot
	// commit while the others elect a new primary.
	PartitionIsolatePrimary
	partitionModeCount
)

var partitionModeNames = [partitionModeCount]string{"none", "isolate-one", "uniform", "asymmetric", "isolate-primary"}

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
	slowDiskTicksMax      = 400
	requestTimeoutTicksLo = 150
	requestTimeoutTicksHi = 600
	// thinkTicksMax bounds the pause of a client between a reply and its
	// next request.
	thinkTicksMax = 500
	// safetyTicksMin and safetyTicksMax bound the faulty phase of a swarm
	// run; most runs are short (safetyTicksShortMax), some long.
	safetyTicksMin      = 2_000
	safetyTicksShortMax = 5_000
	safetyTicksMax      = 50_000
	// safetyTicksDefault is the faulty phase of scripted scenarios.
	safetyTicksDefault = 4000
	// livenessTicksMax is how long the quorum core has, once faults stop,
	// to complete every outstanding request (plus the time a restarted
	// replica needs to read its journal back, see livenessTicksFor).
	livenessTicksMax = 8000
	// requestsPerClientMax bounds the workload of one client in a run.
	requestsPerClientMax = 200
	// Replica configuration bounds: the journal from the smallest vsr
	// allows to vsr's default, messages from the smallest that holds a
	// journal's headers (and a padded request) to vsr's default.
	journalSlotsMax      = 1024
	messageSizeMaxMax    = 1 << 20
	pipelinePrepareMax   = 32
	requestQueueMaxDrawn = 64
	// journalBytesDrawnMax bounds JournalSlots*MessageSizeMax of a drawn
	// run: a persisted replica reads every slot back at each restart.
	journalBytesDrawnMax = 64 << 20
)

// Params are the knobs of one simulated run. Swarm testing draws them from
// the seed (DrawParams) so that different seeds explore different mixes of
// faults; scenarios set them explicitly. Rates are parts per million: per
// packet for network faults, per tick for partition, clog and crash events,
// per sector or per write for storage faults, per event for the faults
// timed to the protocol.
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
	CorruptPPM      uint32 // chance a packet's header or body is corrupted
	PartitionMode   PartitionMode
	PartitionPPM    uint32 // per tick, chance a partition starts when none is on
	UnpartitionPPM  uint32 // per tick, chance the current partition heals
	ClogPPM         uint32 // per tick, chance one path is clogged
	ClogTicksMax    int
	PathCapacityMax int // packets queued on one path before new ones drop

	// Processes.
	CrashPPM   uint32 // per tick, chance one replica crashes
	RestartPPM uint32 // per tick, chance one crashed replica restarts

	// Faults timed to the protocol (BUGGIFY): per event, the chance that
	// the replica crashes (a power loss with PowerLossPPM) right there.
	CrashAfterPrepareOkPPM    uint32 // after it sends a PrepareOk
	CrashAfterDoViewChangePPM uint32 // after it sends a DoViewChange
	CrashAfterStartViewPPM    uint32 // after it sends a StartView
	CrashBeforeSuperblockPPM  uint32 // with a superblock write submitted, not landed
	CrashAfterSuperblockPPM   uint32 // right after a superblock write is durable
	CrashMidCheckpointPPM     uint32 // checkpoint data written, not yet in a superblock
	CrashMidTransferPPM       uint32 // right after receiving a checkpoint chunk
	PowerLossAllAfterViewPPM  uint32 // per StartView, every replica loses power soon after (persisted)

	// Storage.
	IOLatencyTicksMax    int
	SlowDiskReplica      []int  // replicas whose disks are slow in the safety phase
	SlowDiskPPM          uint32 // chance an IO on a slow disk is slow
	SlowDiskTicksMax     int    // a slow IO takes up to this many ticks
	PowerLossPPM         uint32
	PowerLossAllPPM      uint32 // per tick, chance every replica loses power (persisted only)
	UnsyncedKeepPPM      uint32 // on power loss, chance an unsynced write survives anyway
	TornWritePPM         uint32 // on crash, chance an in-flight write lands torn
	LatentErrorPPM       uint32 // per written sector on a faulty replica
	MisdirectPPM         uint32 // per write on a faulty replica
	StaleReadPPM         uint32 // per read on a faulty replica: sectors read back as they were before their last write
	StorageFaultyMax     int    // replicas whose durable data may rot (<= f)
	StorageFaultyReplica []int  // which replicas those are (chosen from the seed)

	// Replica configuration (vsr.Config).
	JournalSlots          uint64
	MessageSizeMax        uint32
	WALBytesMax           uint64
	PipelinePrepareMax    uint32
	RequestQueueMax       uint32
	CheckpointIntervalOps uint64 // 0: vsr's default

	// Workload and phases.
	RequestTimeoutTicks int
	RequestsPerClient   int
	ReadPPM             uint32 // chance a request is a read rather than an append
	PaddingBytesMax     int    // request bodies carry 0..this many padding bytes
	ThinkTicksMax       int    // a client waits 1..this many ticks between requests
	SafetyTicks         int
	LivenessTicks       int

	// overridden marks the derived parameters set by name (SetParam, a
	// scenario's set line), which derive then leaves as set.
	overridden derivedParams
	// Workload selects what the clients run: the toy key-value log
	// (WorkloadKV) or the broker (WorkloadBroker: the real partition
	// machine through the real group host, see broker.go).
	Workload Workload
	// Broker workload: partition groups per node, which of them are
	// persisted topics (bit g), the partition's flush threshold in
	// messages, and the most messages in one send.
	Groups              int
	PersistedGroupsMask uint64
	FlushMessages       int
	BatchMessagesMax    int
	// Metadata, when 1, makes every node of the broker workload host the
	// metadata group too (broker_meta.go): the partition groups' topics are
	// created through it and gate their partition operations. Every drawn
	// seed sets it; a scenario file without its `set metadata` line
	// replays the run from before the metadata plane (0).
	Metadata int
}

// Workload names what the simulated clients run.
type Workload uint8

const (
	// WorkloadKV is the toy replicated log: appends and reads through
	// vsr's client sessions (exactly-once).
	WorkloadKV Workload = iota
	// WorkloadBroker runs partition groups of the real partition machine
	// through the real group host (server/group): sends with unique
	// message ids, polls and consumer offsets, at-least-once.
	WorkloadBroker
)

// String returns the spelling of w in scenario files and flags.
func (w Workload) String() string {
	if w == WorkloadBroker {
		return "broker"
	}
	return "kv"
}

// ParseWorkload parses a --workload flag or a scenario's workload line.
func ParseWorkload(s string) (Workload, error) {
	switch s {
	case "kv":
		return WorkloadKV, nil
	case "broker":
		return WorkloadBroker, nil
	}
	return 0, fmt.Errorf("%w: workload is kv or broker, not %q", ErrScenario, s)
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

// replicaCountWeights weights the cluster sizes the swarm draws: every
// size is reached, but most runs have the three or more replicas that
// view changes, recovery and repair need.
var replicaCountWeights = [replicaCountMax + 1]int{0, 8, 10, 30, 17, 20, 15}

// partitionModeWeights weights the partition modes: cutting off the
// primary, the fault VSR's view change exists for, is the most common.
var partitionModeWeights = [partitionModeCount]int{2, 2, 2, 1, 5}

// DrawParams draws a run's parameters from seed (swarm testing): the
// cluster, the replica configuration, the workload, the run's length and
// every fault rate, each fault class switched off entirely in some seeds
// and extreme in others, so that no corner the simulator supports needs a
// flag to be reached. The parameter draws use their own sub-stream, so
// that changing the run's later use of randomness never changes the
// parameters of a seed.
func DrawParams(seed uint64) Params {
	r := NewPRNG(seed).Fork(1)
	p := Params{Seed: seed}
	p.ReplicaCount = weighted(r, replicaCountWeights[:])
	p.ClientCount = r.Range(1, clientCountMax)
	if r.Chance(PPM / 2) {
		p.Durability = DurabilityPersisted
	}
	drawConfig(r, &p)

	// Workload and run length.
	p.RequestTimeoutTicks = r.Range(requestTimeoutTicksLo, requestTimeoutTicksHi)
	p.RequestsPerClient = r.Range(10, requestsPerClientMax)
	p.ReadPPM = drawRate(r, PPM/2)
	if r.Chance(PPM / 2) {
		p.PaddingBytesMax = r.Range(1, paddingBytesLimit(p.MessageSizeMax))
	}
	p.ThinkTicksMax = logRange(r, 1, thinkTicksMax)
	if r.Chance(PPM * 85 / 100) {
		p.SafetyTicks = r.Range(safetyTicksMin, safetyTicksShortMax)
	} else {
		p.SafetyTicks = logRange(r, safetyTicksShortMax, safetyTicksMax)
	}

	// Network.
	p.DelayTicksMin = r.Range(1, 3)
	p.DelayTicksMax = p.DelayTicksMin + r.Range(0, networkDelayTicksMax-p.DelayTicksMin)
	p.LossPPM = drawFault(r, PPM*3/10, 1, 400_000)
	p.DuplicatePPM = drawFault(r, PPM*4/10, 1, 200_000)
	p.ReorderPPM = drawFault(r, PPM*3/10, 1, 300_000)
	p.CorruptPPM = drawFault(r, PPM*4/10, 1, 100_000)
	p.PartitionMode = PartitionMode(weighted(r, partitionModeWeights[:]))
	if p.ReplicaCount == 1 {
		p.PartitionMode = PartitionNone
	}
	if p.PartitionMode != PartitionNone {
		p.PartitionPPM = uint32(logRange(r, 100, 20_000))
		p.UnpartitionPPM = uint32(logRange(r, 500, 20_000))
	}
	if p.ReplicaCount > 1 && r.Chance(PPM/2) {
		p.ClogPPM = uint32(logRange(r, 100, 10_000))
		p.ClogTicksMax = r.Range(10, clogTicksMax)
	}
	p.PathCapacityMax = r.Range(16, 256)
	if r.Chance(PPM / 10) {
		p.PathCapacityMax = r.Range(1, 8)
	}

	// Processes, and the faults timed to the protocol.
	// A third of the runs have no process faults at all: long partitions
	// against a primary that never loses its memory are their own corner.
	crashable := DownMax(p.ReplicaCount, p.Durability) > 0 && !r.Chance(PPM/3)
	if crashable {
		p.CrashPPM = drawFault(r, PPM*3/10, 20, 10_000)
		p.CrashAfterPrepareOkPPM = drawFault(r, PPM*4/10, 100, 20_000)
		p.CrashAfterDoViewChangePPM = drawFault(r, PPM*4/10, 1_000, 300_000)
		p.CrashAfterStartViewPPM = drawFault(r, PPM*4/10, 1_000, 300_000)
		p.CrashBeforeSuperblockPPM = drawFault(r, PPM*4/10, 1_000, 100_000)
		p.CrashAfterSuperblockPPM = drawFault(r, PPM*4/10, 1_000, 100_000)
		p.CrashMidCheckpointPPM = drawFault(r, PPM*4/10, 10_000, 500_000)
		p.CrashMidTransferPPM = drawFault(r, PPM/4, 50_000, PPM)
		p.RestartPPM = uint32(logRange(r, 500, 50_000))
	}

	// Storage.
	p.IOLatencyTicksMax = logRange(r, 1, ioLatencyTicksMax)
	if r.Chance(PPM / 4) {
		p.SlowDiskPPM = uint32(logRange(r, PPM/100, PPM))
		p.SlowDiskTicksMax = logRange(r, 2*ioLatencyTicksMax, slowDiskTicksMax)
		p.SlowDiskReplica = drawSubset(r, p.ReplicaCount, r.Range(1, p.ReplicaCount))
	}
	if p.Durability == DurabilityPersisted {
		p.PowerLossPPM = drawRate(r, PPM)
		p.PowerLossAllPPM = drawFault(r, PPM*6/10, 5, 500)
		if crashable {
			p.PowerLossAllAfterViewPPM = drawFault(r, PPM/2, 1_000, 300_000)
		}
		p.UnsyncedKeepPPM = drawRate(r, PPM/2)
	}
	p.TornWritePPM = drawFault(r, PPM/4, 50_000, PPM)
	p.StorageFaultyMax = ReplicationQuorum(p.ReplicaCount) - 1
	if p.ReplicaCount > 1 && p.StorageFaultyMax > 0 && r.Chance(PPM*6/10) {
		p.LatentErrorPPM = drawFault(r, PPM/4, 100, 100_000)
		p.MisdirectPPM = drawFault(r, PPM/4, 100, 100_000)
		p.StaleReadPPM = drawFault(r, PPM/4, 1_000, 300_000)
		p.StorageFaultyReplica = drawSubset(r, p.ReplicaCount, r.Range(1, p.StorageFaultyMax))
	}
	p.derive()
	drawBroker(NewPRNG(seed).Fork(8), &p)
	return p
}

// derivedParams is a set of the parameters DrawParams computes from others
// instead of drawing them.
type derivedParams uint8

const (
	// derivedLivenessTicks: LivenessTicks, from JournalSlots and
	// IOLatencyTicksMax (livenessTicksFor).
	derivedLivenessTicks derivedParams = 1 << iota
	// derivedMessageSizeMax: MessageSizeMax is drawn no larger than
	// messageSizeDrawnMax(JournalSlots).
	derivedMessageSizeMax
)

// derivedParamNames maps the settable names of the derived parameters to
// their bit.
var derivedParamNames = map[string]derivedParams{
	"liveness_ticks":   derivedLivenessTicks,
	"message_size_max": derivedMessageSizeMax,
}

// derive recomputes what DrawParams computes from other parameters, from
// the values in force: DrawParams calls it once it has drawn everything,
// and every override by name again, so that an override of an input (the
// journal's length, the disk's latency, the replica count) never leaves a
// value computed from the drawn input behind. A derived parameter that was
// itself overridden keeps its value.
func (p *Params) derive() {
	if p.overridden&derivedLivenessTicks == 0 {
		p.LivenessTicks = livenessTicksFor(p)
	}
	if p.overridden&derivedMessageSizeMax == 0 && p.JournalSlots > 0 {
		p.MessageSizeMax = min(p.MessageSizeMax, messageSizeDrawnMax(p.JournalSlots))
	}
	p.StorageFaultyMax = ReplicationQuorum(max(p.ReplicaCount, 1)) - 1
}

// messageSizeDrawnMax is the largest MessageSizeMax DrawParams draws for a
// journal of slots: its journal stays within journalBytesDrawnMax (a
// persisted replica reads every slot back at each restart), unless that is
// below the smallest message the journal accepts.
func messageSizeDrawnMax(slots uint64) uint32 {
	return max(messageSizeMin(slots), min(messageSizeMaxMax, uint32(journalBytesDrawnMax/slots)/vsr.SectorSize*vsr.SectorSize))
}

// drawConfig draws the replica configuration: pipeline, journal, message
// and WAL sizes, request queue and checkpoint interval, each from the
// smallest vsr accepts to its default (or beyond).
func drawConfig(r *PRNG, p *Params) {
	p.PipelinePrepareMax = uint32(logRange(r, 1, pipelinePrepareMax))
	slotsMin := max(uint64(vsr.JournalSlotsMin), 4*uint64(p.PipelinePrepareMax))
	switch x := r.IntN(100); {
	case x < 45:
		p.JournalSlots = uint64(r.Range(int(slotsMin), int(max(slotsMin, 64))))
	case x < 85:
		p.JournalSlots = uint64(r.Range(int(max(slotsMin, 64)), 256))
	case x < 95:
		p.JournalSlots = uint64(r.Range(256, 512))
	default:
		p.JournalSlots = uint64(r.Range(512, journalSlotsMax))
	}
	lo := messageSizeMin(p.JournalSlots)
	hi := messageSizeDrawnMax(p.JournalSlots)
	switch x := r.IntN(100); {
	case x < 40:
		p.MessageSizeMax = lo
	case x < 80:
		p.MessageSizeMax = uint32(r.Range(int(lo/vsr.SectorSize), int(max(lo, min(hi, 64<<10))/vsr.SectorSize))) * vsr.SectorSize
	default:
		p.MessageSizeMax = uint32(logRange(r, int(lo/vsr.SectorSize), int(hi/vsr.SectorSize))) * vsr.SectorSize
	}
	walMin := 4 * uint64(p.PipelinePrepareMax) * uint64(p.MessageSizeMax)
	if r.Chance(PPM * 4 / 10) {
		p.WALBytesMax = walMin + r.Uint64N(walMin+1)
	} else {
		p.WALBytesMax = max(walMin, 4<<20)
	}
	switch x := r.IntN(10); {
	case x < 2:
		p.RequestQueueMax = 0
	case x < 5:
		p.RequestQueueMax = uint32(r.Range(1, 4))
	default:
		p.RequestQueueMax = uint32(r.Range(5, requestQueueMaxDrawn))
	}
	if r.Chance(PPM / 2) {
		p.CheckpointIntervalOps = uint64(logRange(r, 1, int(p.JournalSlots-2*uint64(p.PipelinePrepareMax))))
	}
}

// messageSizeMin is the smallest MessageSizeMax a replica with slots
// journal slots accepts (a message carries a journal's worth of headers)
// that also holds the largest request of the simulator's workload
// without padding.
func messageSizeMin(slots uint64) uint32 {
	need := max(2*vsr.SectorSize, vsr.HeadersMessageSize(slots), vsr.HeaderSize+requestBodySize+journalFrameBytes)
	return uint32((need + vsr.SectorSize - 1) / vsr.SectorSize * vsr.SectorSize)
}

// journalFrameBytes is what the journal adds around a prepare in its slot.
const journalFrameBytes = 48

// paddingBytesLimit is the most padding a request may carry so that its
// prepare still fits a message (and a journal slot) of messageSizeMax.
func paddingBytesLimit(messageSizeMax uint32) int {
	return max(0, min(requestPaddingBytesMax, int(messageSizeMax)-vsr.HeaderSize-requestBodySize-journalFrameBytes))
}

// livenessTicksFor gives the liveness phase room for a restarted replica
// to read its whole journal back (persisted replicas read every slot, one
// after the other) on top of livenessTicksMax.
func livenessTicksFor(p *Params) int {
	return livenessTicksMax + int(p.JournalSlots+4)*p.IOLatencyTicksMax
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
		MessageSizeMax:      64 << 10,
		WALBytesMax:         4 << 20,
		PipelinePrepareMax:  8,
		RequestQueueMax:     64,
		RequestTimeoutTicks: 300,
		RequestsPerClient:   requestsPerClientMax,
		ReadPPM:             PPM / 5,
		ThinkTicksMax:       20,
		SafetyTicks:         safetyTicksDefault,
		LivenessTicks:       livenessTicksMax,
	}
}

// normalize clamps parameters into the ranges the simulator supports and
// makes the replica configuration one vsr accepts (a scenario may set them
// to anything).
func (p *Params) normalize() {
	p.ReplicaCount = clampInt(int64(p.ReplicaCount), 1, replicaCountMax)
	p.ClientCount = clampInt(int64(p.ClientCount), 1, clientCountMax)
	p.DelayTicksMin = clampInt(int64(p.DelayTicksMin), 1, networkDelayTicksMax)
	p.DelayTicksMax = clampInt(int64(p.DelayTicksMax), p.DelayTicksMin, networkDelayTicksMax)
	p.PathCapacityMax = clampInt(int64(p.PathCapacityMax), 1, 1<<20)
	p.ClogTicksMax = clampInt(int64(p.ClogTicksMax), 1, clogTicksMax)
	p.IOLatencyTicksMax = clampInt(int64(p.IOLatencyTicksMax), 1, ioLatencyTicksMax)
	p.SlowDiskTicksMax = clampInt(int64(p.SlowDiskTicksMax), 0, slowDiskTicksMax)
	p.RequestTimeoutTicks = clampInt(int64(p.RequestTimeoutTicks), 10, 100_000)
	p.ThinkTicksMax = clampInt(int64(p.ThinkTicksMax), 1, thinkTicksMax)
	if p.JournalSlots == 0 {
		p.JournalSlots = 64
	}
	if p.MessageSizeMax == 0 {
		p.MessageSizeMax = 64 << 10
	}
	if p.PipelinePrepareMax == 0 {
		p.PipelinePrepareMax = 8
	}
	p.JournalSlots = uint64(clampInt(int64(p.JournalSlots), vsr.JournalSlotsMin, journalSlotsMax))
	p.PipelinePrepareMax = uint32(clampInt(int64(p.PipelinePrepareMax), 1, int(min(vsr.PipelinePrepareMaxLimit, p.JournalSlots/4))))
	p.MessageSizeMax = uint32(clampInt(int64(p.MessageSizeMax), int(messageSizeMin(p.JournalSlots)), messageSizeMaxMax)) / vsr.SectorSize * vsr.SectorSize
	p.WALBytesMax = max(p.WALBytesMax, 4*uint64(p.PipelinePrepareMax)*uint64(p.MessageSizeMax))
	p.RequestQueueMax = min(p.RequestQueueMax, vsr.RequestQueueMaxLimit)
	p.CheckpointIntervalOps = min(p.CheckpointIntervalOps, p.JournalSlots-2*uint64(p.PipelinePrepareMax))
	p.PaddingBytesMax = clampInt(int64(p.PaddingBytesMax), 0, paddingBytesLimit(p.MessageSizeMax))
	if p.PartitionMode >= partitionModeCount || p.ReplicaCount == 1 {
		// A single replica has no peer to be cut off from.
		p.PartitionMode = PartitionNone
	}
	p.SlowDiskReplica = keepReplicas(p.SlowDiskReplica, p.ReplicaCount)
	p.StorageFaultyReplica = keepReplicas(p.StorageFaultyReplica, p.ReplicaCount)
	if p.Workload > WorkloadBroker {
		p.Workload = WorkloadKV
	}
	p.Groups = clampInt(int64(p.Groups), 1, brokerGroupsMax)
	p.PersistedGroupsMask &= 1<<uint(p.Groups) - 1
	p.FlushMessages = clampInt(int64(p.FlushMessages), 1, 1<<20)
	p.BatchMessagesMax = clampInt(int64(p.BatchMessagesMax), 1, brokerBatchMessagesMax)
	p.Metadata = clampInt(int64(p.Metadata), 0, 1)
}

// keepReplicas drops indexes of replicas that do not exist.
func keepReplicas(list []int, n int) []int {
	var out []int
	for _, r := range list {
		if r >= 0 && r < n {
			out = append(out, r)
		}
	}
	return out
}

// drawRate returns 0 a quarter of the time (so that each fault is often
// absent altogether), else a rate in (0, max].
func drawRate(r *PRNG, max uint32) uint32 {
	if r.Chance(PPM / 4) {
		return 0
	}
	return uint32(r.Uint64N(uint64(max))) + 1
}

// drawFault returns 0 with chance offPPM (the fault class is off for the
// whole run), else a rate drawn log-uniformly from lo to hi parts per
// million, so that rare and extreme rates are both reached.
func drawFault(r *PRNG, offPPM uint32, lo, hi int) uint32 {
	if r.Chance(offPPM) {
		return 0
	}
	return uint32(min(logRange(r, lo, hi), PPM))
}

// logRange returns an integer in [lo, hi] (lo >= 1) drawn log-uniformly
// with integer arithmetic only (so that it is the same on every machine):
// a power-of-two octave of the range uniformly, then a value uniformly
// within that octave.
func logRange(r *PRNG, lo, hi int) int {
	lo = max(lo, 1)
	if hi <= lo {
		return lo
	}
	octaves := bits.Len(uint(hi / lo)) // lo<<(octaves-1) <= hi
	k := r.IntN(octaves)
	a := lo << k
	b := min(hi, a<<1-1)
	return r.Range(a, b)
}

// weighted draws an index with the given weights.
func weighted(r *PRNG, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// drawSubset returns count distinct replicas of n, sorted.
func drawSubset(r *PRNG, n, count int) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	out := append([]int(nil), order[:min(count, n)]...)
	sortInts(out)
	return out
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// IsStorageFaulty reports whether replica may suffer latent errors,
// misdirected writes and stale reads in this run.
func (p *Params) IsStorageFaulty(replica int) bool {
	return containsInt(p.StorageFaultyReplica, replica)
}

// IsSlowDisk reports whether replica's disk is slow in the safety phase.
func (p *Params) IsSlowDisk(replica int) bool { return containsInt(p.SlowDiskReplica, replica) }

func containsInt(list []int, x int) bool {
	for _, v := range list {
		if v == x {
			return true
		}
	}
	return false
}

// timedCrashes reports whether any fault timed to the protocol is on.
func (p *Params) timedCrashes() bool {
	return p.CrashAfterPrepareOkPPM|p.CrashAfterDoViewChangePPM|p.CrashAfterStartViewPPM|
		p.CrashBeforeSuperblockPPM|p.CrashAfterSuperblockPPM|p.CrashMidCheckpointPPM|p.CrashMidTransferPPM|
		p.PowerLossAllAfterViewPPM != 0
}

// Print writes the parameters, one group per line, in a fixed order.
func (p *Params) Print(w io.Writer) {
	fmt.Fprintf(w, "seed=%d\n", p.Seed)
	fmt.Fprintf(w, "  replicas=%d clients=%d durability=%s quorum_replication=%d quorum_view_change=%d\n",
		p.ReplicaCount, p.ClientCount, p.Durability, ReplicationQuorum(p.ReplicaCount), ViewChangeQuorum(p.ReplicaCount))
	fmt.Fprintf(w, "  replica: journal_slots=%d message_size_max=%d wal_bytes_max=%d pipeline=%d request_queue=%d checkpoint_interval=%d\n",
		p.JournalSlots, p.MessageSizeMax, p.WALBytesMax, p.PipelinePrepareMax, p.RequestQueueMax, p.CheckpointIntervalOps)
	fmt.Fprintf(w, "  network: delay=%d..%d ticks loss=%dppm duplicate=%dppm reorder=%dppm corrupt=%dppm path_capacity=%d\n",
		p.DelayTicksMin, p.DelayTicksMax, p.LossPPM, p.DuplicatePPM, p.ReorderPPM, p.CorruptPPM, p.PathCapacityMax)
	fmt.Fprintf(w, "  partitions: mode=%s start=%dppm/tick heal=%dppm/tick clog=%dppm/tick clog_ticks_max=%d\n",
		p.PartitionMode, p.PartitionPPM, p.UnpartitionPPM, p.ClogPPM, p.ClogTicksMax)
	fmt.Fprintf(w, "  processes: crash=%dppm/tick restart=%dppm/tick down_max=%d\n",
		p.CrashPPM, p.RestartPPM, DownMax(p.ReplicaCount, p.Durability))
	fmt.Fprintf(w, "  timed crashes (ppm/event): after_prepare_ok=%d after_do_view_change=%d after_start_view=%d before_superblock=%d after_superblock=%d mid_checkpoint=%d mid_transfer=%d power_loss_all_after_view=%d\n",
		p.CrashAfterPrepareOkPPM, p.CrashAfterDoViewChangePPM, p.CrashAfterStartViewPPM, p.CrashBeforeSuperblockPPM,
		p.CrashAfterSuperblockPPM, p.CrashMidCheckpointPPM, p.CrashMidTransferPPM, p.PowerLossAllAfterViewPPM)
	fmt.Fprintf(w, "  storage: io_latency_max=%d slow_disks=%v slow_io=%dppm slow_disk_ticks_max=%d power_loss=%dppm/crash power_loss_all=%dppm/tick unsynced_keep=%dppm torn=%dppm\n",
		p.IOLatencyTicksMax, p.SlowDiskReplica, p.SlowDiskPPM, p.SlowDiskTicksMax, p.PowerLossPPM, p.PowerLossAllPPM, p.UnsyncedKeepPPM, p.TornWritePPM)
	fmt.Fprintf(w, "  storage faults: faulty=%v latent=%dppm/sector misdirect=%dppm/write stale_read=%dppm/read\n",
		p.StorageFaultyReplica, p.LatentErrorPPM, p.MisdirectPPM, p.StaleReadPPM)
	if p.Workload == WorkloadBroker {
		fmt.Fprintf(w, "  broker workload: groups=%d persisted_groups=%s flush_messages=%d batch_messages_max=%d metadata=%d\n",
			p.Groups, persistedGroupsString(p), p.FlushMessages, p.BatchMessagesMax, p.Metadata)
	}
	fmt.Fprintf(w, "  workload: requests_per_client=%d read=%dppm padding_max=%d think_ticks_max=%d request_timeout=%d ticks safety_ticks=%d liveness_ticks_max=%d\n",
		p.RequestsPerClient, p.ReadPPM, p.PaddingBytesMax, p.ThinkTicksMax, p.RequestTimeoutTicks, p.SafetyTicks, p.LivenessTicks)
}
