package sim

import (
	"fmt"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// The scratch topics' partition groups (Params.Metadata). A scratch topic
// ("x0".."x2", broker_meta.go) has one partition, whose group a node
// starts when the topic's create commits in its metadata machine and
// stops, deleting its storage, when the delete commits there, as
// production's partition set carries out EffectTopicCreated and
// EffectTopicDeleted (server/partitions.go). A node that restarts
// rebuilds its scratch groups from its recovered metadata once the
// metadata host opened (production ignores the effects of the boot's
// replay and builds its partitions from the machine).
//
// Each incarnation of a topic (a create, up to its delete) is a slot of
// the world: a group index (and vsr group id) of its own, appended after
// the static groups when a node first applies the create, so that group
// ids are never reused across a name's lifetimes (the machine gives a
// re-created topic the lowest free topic id, often the deleted one's).
// A node routes a request for a scratch name through its metadata view:
// no topic, 2010 (nothing submitted); a topic whose group it does not
// host (not yet started), 58, as production answers a partition it does
// not hold.
//
// Checkers: every per-group checker runs for a slot from its create to
// the first commit of its delete on any node (scratchGroup.deletedTick);
// after that its acknowledged messages are no longer required, its
// commits no longer compared. Every node checks, before it applies an op
// of a slot, that its own metadata still holds the slot's topic: no
// partition op is applied after its topic's delete committed on that
// node (checkScratchGate).

// brokerScratchGroup is the group of a request for a scratch name, routed
// by the node.
const brokerScratchGroup = -2

// scratchOpSharePPM is the share of a client's partition operations that
// go to a scratch topic.
const scratchOpSharePPM = PPM / 4

// callChecked reports whether the liveness phase waits for call: a
// scratch call unless the slot it last reached is unchecked.
func (w *brokerWorld) callChecked(call *brokerCall) bool {
	if call.group != brokerScratchGroup {
		return w.livenessChecked(call.group)
	}
	return call.slot < 0 || w.deleted(call.slot) || w.livenessChecked(call.slot)
}

// scratchGroup is one incarnation of a scratch topic: a slot.
type scratchGroup struct {
	topic     int    // name index (brokerGroupsMax + k)
	topicID   uint32 // the machine's topic id
	createdAt uint64 // the topic's CreatedAt (the create op's timestamp)
	createdOp uint64 // the metadata op of the create
	persisted bool   // the topic's durability option
	// deletedTick is the tick a node first applied the topic's delete
	// (0: live).
	deletedTick uint64
}

// scratchCounters count the scratch groups' events (coverage).
type scratchCounters struct {
	created uint64 // slots (incarnations) created
	deleted uint64 // slots deleted
	refused uint64 // scratch sends refused: the topic was deleted
	started uint64 // scratch hosts started on a node
}

// scratchKey identifies an incarnation in a machine's state.
type scratchKey struct {
	topicID   uint32
	createdAt uint64
}

// persisted reports whether group g's topic is persisted.
func (w *brokerWorld) persisted(g int) bool {
	if g < w.params.Groups {
		return w.params.groupPersisted(g)
	}
	return w.slots[g].persisted
}

// isScratch reports whether group g is a scratch topic's slot.
func (w *brokerWorld) isScratch(g int) bool { return g >= w.params.Groups }

// deleted reports whether group g is a scratch slot whose delete
// committed: its checks stopped.
func (w *brokerWorld) deleted(g int) bool {
	return g >= w.params.Groups && w.slots[g].deletedTick != 0
}

// scratchTopicOf returns the topic of scratch name k in machine m, or nil.
func scratchTopicOf(m *metadata.Machine, k int) *metadata.Topic {
	s := m.Stream(metadata.NamedID(brokerStreamName))
	if s == nil {
		return nil
	}
	return s.Topic(metadata.NamedID(metaTopicName(k)))
}

// noteScratchCreated registers the incarnation a node applied the create
// of at op (the first node to apply it makes the slot).
func (w *brokerWorld) noteScratchCreated(m *metadata.Machine, op uint64, topicID uint32) {
	s := m.Stream(metadata.NamedID(brokerStreamName))
	if s == nil {
		return
	}
	t := s.Topic(metadata.NumericID(topicID))
	if t == nil {
		return
	}
	k := -1
	for x := brokerGroupsMax; x < metaTopicNames; x++ {
		if t.Name == metaTopicName(x) {
			k = x
		}
	}
	if k < 0 {
		return
	}
	key := scratchKey{topicID, t.CreatedAt}
	if g, ok := w.scratchSlots[key]; ok && w.slots[g].createdOp == op {
		return
	}
	sg := &scratchGroup{topic: k, topicID: topicID, createdAt: t.CreatedAt, createdOp: op,
		persisted: t.Options.Durability == metadata.DurabilityPersisted}
	g := w.addSlot(sg)
	w.scratchSlots[key] = g
	w.scratchCounters.created++
	w.logf("scratch topic %s (id %d) created at metadata op %d: group %d", metaTopicName(k), topicID, op, g)
}

// addSlot appends a scratch slot to every per-group table.
func (w *brokerWorld) addSlot(sg *scratchGroup) int {
	g := w.groups
	w.groups++
	w.slots = append(w.slots, sg)
	w.commits = append(w.commits, NewCommitChecker(w.n))
	w.unhealthy = append(w.unhealthy, make([]bool, w.n))
	w.lastStartView = append(w.lastStartView, make([]uint64, w.n))
	w.lostMemory = append(w.lostMemory, "")
	w.lostAll = append(w.lostAll, false)
	w.lostAt = append(w.lostAt, 0)
	w.commitMax = append(w.commitMax, 0)
	w.fenced = append(w.fenced, "")
	if w.appliedIDs != nil {
		w.appliedIDs = append(w.appliedIDs, nil)
	}
	if w.meta != nil {
		w.meta.topicCommitted = append(w.meta.topicCommitted, true)
	}
	for i, node := range w.nodes {
		node.hosts = append(node.hosts, nil)
		node.storages = append(node.storages, nil)
		node.segments = append(node.segments, nil)
		node.opened = append(node.opened, false)
		if w.observed != nil {
			w.observed[i] = append(w.observed[i], nil)
		}
		cfg := vsr.DefaultConfig(simCluster, uint8(w.n), uint8(i))
		cfg.Group = uint64(g)
		if sg.persisted {
			cfg.Durability = vsr.Persisted
		}
		p := w.params
		cfg.JournalSlots = p.JournalSlots
		cfg.MessageSizeMax = p.MessageSizeMax
		cfg.WALBytesMax = p.WALBytesMax
		cfg.PipelinePrepareMax = p.PipelinePrepareMax
		cfg.RequestQueueMax = p.RequestQueueMax
		cfg.CheckpointIntervalOps = p.CheckpointIntervalOps
		cfg.Bugs = w.bugs
		if err := cfg.Validate(); err != nil {
			panic(fmt.Sprintf("sim: node %d group %d: %v", i, g, err)) // the static groups' config validated
		}
		w.configs[i] = append(w.configs[i], group.Config{Replica: cfg, Partition: partition.Config{
			StreamID: 1, TopicID: uint32(g + 1), PartitionID: 1, MessagesRequiredToSave: uint32(p.FlushMessages)}})
	}
	return g
}

// reconcileScratch makes node i host exactly the scratch groups its
// applied metadata holds (once its metadata host opened): it starts the
// missing ones over their surviving storage, or a new one, and stops and
// deletes the others.
func (w *brokerWorld) reconcileScratch(i int) {
	m := w.meta
	node := w.nodes[i]
	mn := m.nodes[i]
	if !node.up || mn.host == nil || !mn.opened {
		return
	}
	mach := mn.host.Machine()
	want := [brokerScratchTopics]int{-1, -1, -1}
	for k := range want {
		if t := scratchTopicOf(mach, brokerGroupsMax+k); t != nil {
			if g, ok := w.scratchSlots[scratchKey{t.ID, t.CreatedAt}]; ok {
				want[k] = g
			}
		}
	}
	for g := w.params.Groups; g < w.groups; g++ {
		sg := w.slots[g]
		if node.storages[g] == nil || want[sg.topic-brokerGroupsMax] == g {
			continue
		}
		if mn.appliedOp < sg.createdOp {
			// Its recovered metadata predates the create (a restart
			// opened over an older checkpoint): the group is not the
			// node's yet, but its storage stays for when the create
			// applies again.
			if node.hosts[g] != nil {
				node.storages[g].Crash(false) // the host's IOs in flight die with it
				node.segments[g].crash(false)
				node.segments[g].hostGen++
				node.hosts[g], node.opened[g] = nil, false
				w.answers.OnGroupStopped(i, g)
				w.observed[i][g] = nil
				w.commits[g].OnReset(i)
			}
			continue
		}
		w.stopScratch(i, g)
	}
	for _, g := range want {
		if g >= 0 && node.hosts[g] == nil {
			w.startScratch(i, g)
		}
	}
}

// startScratch starts node i's host of scratch group g over its storage
// (a new one if the node never held it or deleted it).
func (w *brokerWorld) startScratch(i, g int) {
	node := w.nodes[i]
	if node.storages[g] == nil {
		cfg := w.configs[i][g].Replica
		zones := map[vsr.Zone]uint64{}
		for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneWALHeaders, vsr.ZoneWALPrepares, vsr.ZoneCheckpoint} {
			zones[z] = cfg.ZoneSize(z)
		}
		s := NewStorage(i, w.params, w.scratchRoot.Fork(uint64(g)<<8|uint64(i)), &w.now, zones)
		s.onEvent = w.storageEventHandler(i)
		s.SetFaults(w.faultsEnabled)
		node.storages[g] = s
		node.segments[g] = &simSegments{w: w, node: i, group: g, persisted: w.persisted(g)}
		w.unhealthy[g][i] = false
	}
	w.scratchCounters.started++
	if err := w.startHost(i, g); err != nil {
		panic(err) // the config validated when the slot was made
	}
}

// stopScratch stops node i's host of scratch group g and deletes its
// storage (production removes the partition's directory).
func (w *brokerWorld) stopScratch(i, g int) {
	node := w.nodes[i]
	w.markDeleted(g, i)
	node.hosts[g], node.storages[g], node.segments[g], node.opened[g] = nil, nil, nil, false
	w.answers.OnGroupStopped(i, g)
	if w.observed != nil {
		w.observed[i][g] = nil
	}
	w.unhealthy[g][i] = false
	w.commits[g].OnReset(i)
}

// markDeleted notes that node i applied the delete of scratch slot g's
// topic: the first such apply ends the slot's checks.
func (w *brokerWorld) markDeleted(g, i int) {
	sg := w.slots[g]
	if sg.deletedTick == 0 {
		sg.deletedTick = w.now
		w.scratchCounters.deleted++
		w.logf("scratch topic %s group %d deleted (node %d applied the delete)", metaTopicName(sg.topic), g, i)
	}
}

// noteScratchDeleted marks the slot of topic id topicID deleted when node
// i applied its delete at op (also a node that never held the group):
// the live slots' topic ids are distinct, so the one of that id created
// before op is the deleted one.
func (w *brokerWorld) noteScratchDeleted(i int, op uint64, topicID uint32) {
	for g := w.params.Groups; g < w.groups; g++ {
		if sg := w.slots[g]; sg.topicID == topicID && sg.createdOp < op && sg.deletedTick == 0 {
			w.markDeleted(g, i)
		}
	}
}

// checkScratchGate is called before node i applies op of scratch group
// g: node i's metadata must still hold the group's topic incarnation.
func (w *brokerWorld) checkScratchGate(i, g int, op uint64) {
	mn := w.meta.nodes[i]
	sg := w.slots[g]
	var t *metadata.Topic
	if mn.host != nil {
		t = scratchTopicOf(mn.host.Machine(), sg.topic)
	}
	if t == nil || t.ID != sg.topicID || t.CreatedAt != sg.createdAt {
		w.failAs("topic-gate", fmt.Errorf("node %d applied op %d of scratch group %d (topic %s, id %d) whose topic its metadata does not hold: after the delete committed there",
			i, op, g, metaTopicName(sg.topic), sg.topicID))
	}
}

// resolveScratch routes node i's request for scratch name k: the slot its
// metadata maps the name to, or the code that refuses it.
func (w *brokerWorld) resolveScratch(i, k int) (int, uint32) {
	mn := w.meta.nodes[i]
	if mn.host == nil || !mn.opened {
		return -1, uint32(wire.ErrTransientNotAccepted)
	}
	t := scratchTopicOf(mn.host.Machine(), k)
	if t == nil {
		return -1, uint32(metadata.CodeTopicIDNotFound)
	}
	g, ok := w.scratchSlots[scratchKey{t.ID, t.CreatedAt}]
	if !ok || w.nodes[i].hosts[g] == nil {
		return -1, uint32(wire.ErrTransientNotAccepted)
	}
	return g, 0
}

// appliedLog returns the log of group g as the nodes applied it (the
// first applier of each offset), from offset 0 up to the first gap: a
// deleted slot's final log.
func (w *brokerWorld) appliedLog(g int) []uint64 {
	if w.appliedIDs == nil || g >= len(w.appliedIDs) {
		return nil
	}
	var ids []uint64
	for off := uint64(0); ; off++ {
		id, ok := w.appliedIDs[g][off]
		if !ok {
			return ids
		}
		ids = append(ids, id)
	}
}
