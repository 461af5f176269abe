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
// Swarm testing. DrawParams turns a seed into a cluster (1-6 replicas, 1-8
// clients, replicated or persisted durability) and a mix of fault rates;
// many fault kinds are switched off entirely for some seeds.
//
// Fault model, which keeps every run recoverable so that a failure is a
// bug and not bad luck:
//   - the network may lose, delay, duplicate and reorder any packet, and
//     partition (isolate one, uniform, asymmetric; flapping) and clog the
//     paths between replicas, but never partitions clients;
//   - a crash keeps the page cache (completed writes survive, in-flight
//     writes land whole, not at all, or torn at a sector boundary); a power
//     loss also drops unsynced writes (a seeded fraction may survive);
//   - under replicated durability at most DownMax replicas are crashed or
//     not yet caught up at once, and power loss is not drawn; under
//     persisted durability any number may crash, all at once included;
//   - latent sector errors and misdirected writes strike only a fixed set
//     of fewer than a replication quorum of replicas, and never the
//     superblock zone;
//   - the liveness phase stops every fault, restarts the crashed members of
//     a core of max(replication, view-change quorum) replicas (preferring
//     ones with memory and healthy disks), isolates the others, and gives
//     the core livenessTicksMax ticks to finish every outstanding request.
//
// Checkers, each in its own file: check_commits.go (commit-prefix
// agreement), check_exactly_once.go, check_linearizable.go (porcupine),
// check_durability.go and check_liveness.go.
//
// Entry points: Run (one seed), RunScenario (a scripted scenario file, see
// Scenario), and cmd/strata-sim.
package sim
