// Package sim is Strata's deterministic simulator. It runs whole VSR
// clusters (vsr.Replica over simulated disks, network and clocks, driven by
// simulated clients) on one goroutine from one seed, injects faults, and
// checks every history.
//
// Determinism. Every random choice derives from the run's seed through
// PRNG and its Fork sub-streams; time is the tick counter; nothing in a run
// starts a goroutine, reads the wall clock, or lets map order reach output.
// A run returns a Result whose TraceHash (xxh3 over every delivered message
// header and every applied op) is the same for the same seed on any
// machine and any GOMAXPROCS. Porcupine's linearizability check runs after
// the run, on the recorded history, and cannot influence it.
//
// Swarm testing. DrawParams turns a seed into a whole configuration: the
// cluster (1-6 replicas, 1-8 clients, replicated or persisted), the
// replica configuration (journal from vsr's minimum to its default,
// message and WAL sizes, pipeline, request queue, checkpoint interval),
// the workload (requests, think time, padding) and the run's length
// (2,000 to 50,000 ticks), and every fault rate from zero to extreme, each
// fault class switched off entirely in some seeds. No flag is needed to
// reach any corner; flags (--ticks) only override for replay. A failed
// run's scenario file spells out every drawn parameter.
//
// Fault model, which keeps every run recoverable so that a failure is a
// bug and not bad luck:
//   - the network may lose, delay, duplicate, reorder and corrupt any
//     packet (a corrupted packet must be rejected by its checksums: the
//     receiver may not send, touch its disk or change state handling it),
//     and partition (isolate one, uniform, asymmetric, isolate the primary;
//     flapping) and clog the paths between replicas, but never partitions
//     clients;
//   - faults timed to the protocol (BUGGIFY): a replica crashes right after
//     it sends a PrepareOk, a DoViewChange or a StartView, with a
//     superblock write in flight or right after one is durable, in the
//     middle of a checkpoint or of a state transfer; every persisted
//     replica loses power soon after a view change; a new primary is cut
//     off right after its first prepares while the old one comes back;
//   - a crash keeps the page cache (completed writes survive, in-flight
//     writes land whole, not at all, or torn at a sector boundary); a power
//     loss also drops unsynced writes (a seeded fraction may survive);
//     slow disks widen every durability window;
//   - under replicated durability at most DownMax replicas are crashed or
//     not yet caught up at once, and power loss is not drawn; under
//     persisted durability any number may crash, all at once included;
//   - latent sector errors, misdirected writes and stale reads strike
//     only a fixed set of fewer than a replication quorum of replicas, in
//     every zone, within what VSR recovers from (see Storage): never both
//     copies of a journal slot, never the newest superblock copy;
//   - the liveness phase stops every fault, restarts the crashed members of
//     a core of max(replication, view-change quorum) replicas (preferring
//     ones with memory and healthy disks), isolates the others, and gives
//     the core livenessTicksMax ticks (plus a journal's read-back) to
//     finish every outstanding request.
//
// Checkers, each in its own file: check_send.go (every message as it is
// sent, against the disk and the commits), check_commits.go (commit-prefix
// agreement), check_exactly_once.go, check_linearizable.go (porcupine),
// check_durability.go and check_liveness.go. Coverage (coverage.go) counts
// the seeds that hit each protocol event and fault.
//
// Workloads. The kv workload (the default) drives vsr replicas with a
// toy replicated log through vsr's client sessions. The broker workload
// (Params.Workload, 1 seed in 8 of the default swarm, or --workload
// broker; broker.go) runs the real partition machine through the real
// group host (server/group): several partition groups per node over the
// same network, disks and faults, a segment store with page-cache
// semantics per group, clients that send batches of unique message ids,
// poll, store offsets and retry at-least-once, and its own checkers
// (broker_check.go). Metadata groups (create and delete topics while
// others send) are not simulated yet.
//
// Entry points: Run (one seed), RunScenario (a scripted scenario file, see
// Scenario), and cmd/strata-sim.
package sim
