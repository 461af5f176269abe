package server

import (
	"container/heap"
	"sync"
	"sync/atomic"

	"github.com/stratabroker/strata/runtime/shard"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/vsr"
)

// Ticks and heartbeats that cost nothing for an idle partition.
//
// A cluster's server hosts a replica of every partition group. Ticking
// every group every tick, and sending every primary's commit heartbeat as
// a message of its own to each peer, made an idle cluster spend a core per
// replica at 10,000 partitions. Instead:
//
//   - Each shard keeps its groups in a min-heap by the tick they are next
//     due (group.Host.TicksUntilDue). A shard's tick task ticks only the
//     groups due at that tick; any other input to a group (a message, a
//     request, a completion) first brings it up to date with
//     group.Host.SkipTicks. A skip is exactly that many ticks (vsr's
//     TestSkipTicksIsTicking), so a group's protocol is the one the
//     simulator runs ticking every group. An idle backup is due only if
//     its primary's heartbeats stop; an idle primary once per commit
//     heartbeat.
//   - A primary's commit heartbeat is an announcement (group.Announcer):
//     the node collects the tick's announcements of all its groups and
//     sends each peer one checksummed frame (group.EncodeAnnouncements)
//     per tick, which the peer demultiplexes into its groups
//     (ReceiveAnnouncements, group.Host.Announce), one task per shard.
//     A transport that cannot carry frames (not an
//     AnnouncementTransport) gets the heartbeats as Commit messages.

// AnnouncementTransport is a ReplicaTransport that also carries the
// replica plane's announcement frames.
type AnnouncementTransport interface {
	ReplicaTransport
	// SendAnnouncements hands the server with replica index to one frame
	// of commit announcements (group.EncodeAnnouncements) for its
	// ReceiveAnnouncements. It never blocks and may lose the frame; the
	// callee may keep frame but not change it (every peer gets the same).
	SendAnnouncements(to uint8, frame []byte)
}

// ReplicaPlaneStats counts the replica plane's work since the server
// started.
type ReplicaPlaneStats struct {
	// Ticks counts the replica plane's ticks; ShardTicks the shards' tick
	// tasks (one per shard per tick that the shard was free to run);
	// GroupTicks the group ticks they ran, and LateTicks those an input
	// ran for a group it found past due (none while the heaps are right).
	Ticks, ShardTicks, GroupTicks, LateTicks uint64
	// Frames and Announcements count the announcement frames sent to
	// peers and the heartbeats they carried; Received the announcements
	// handed to groups here.
	Frames, Announcements, Received uint64
	// Unroutable counts the messages and announcements of peers dropped
	// because no partition here has their group (not yet, or no more).
	Unroutable uint64
}

// replicaPlane is the server's replica plane state: the shards' tick
// schedules and the pending announcements.
type replicaPlane struct {
	mu     sync.Mutex
	scheds map[*shard.Shard]*tickSched
	// pending are the announcements since the last flush; spare is the
	// flushed slice, reused.
	pending, spare []group.Announcement

	ticks, shardTicks, groupTicks, lateTicks, frames, announcements, received, unroutable atomic.Uint64
	// tickShard runs at the end of each shard's tick task (the coalesced
	// superblock sync); set before the ticker starts.
	tickShard func(owner *shard.Shard)
}

// sched returns owner's tick schedule.
func (rp *replicaPlane) sched(owner *shard.Shard) *tickSched {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	if rp.scheds == nil {
		rp.scheds = map[*shard.Shard]*tickSched{}
	}
	ts := rp.scheds[owner]
	if ts == nil {
		ts = &tickSched{plane: rp, owner: owner, busy: make(chan struct{}, 1)}
		ts.run = ts.tick
		rp.scheds[owner] = ts
	}
	return ts
}

// ReplicaPlaneStats returns the replica plane's counters.
func (s *Server) ReplicaPlaneStats() ReplicaPlaneStats {
	rp := &s.plane
	return ReplicaPlaneStats{Ticks: rp.ticks.Load(), ShardTicks: rp.shardTicks.Load(), GroupTicks: rp.groupTicks.Load(), LateTicks: rp.lateTicks.Load(),
		Frames: rp.frames.Load(), Announcements: rp.announcements.Load(), Received: rp.received.Load(), Unroutable: rp.unroutable.Load()}
}

// tickSched is one shard's schedule of group ticks; only that shard's
// goroutine touches now and the heap. busy holds a token while its tick
// task is queued or running, so a slow shard gets one at a time, not a
// backlog.
type tickSched struct {
	plane *replicaPlane
	owner *shard.Shard
	now   uint64
	due   dueHeap
	busy  chan struct{}
	run   func()
}

// groupTicks is a group's place in its shard's schedule: at is the tick
// its host's timers stand at, due the tick it must next be ticked
// (index in the heap, -1 when it is not scheduled: never due).
type groupTicks struct {
	sched   *tickSched
	at, due uint64
	index   int
}

// tick is the shard's tick task: the tick's due groups are ticked.
func (ts *tickSched) tick() {
	ts.now++
	ts.plane.shardTicks.Add(1)
	for len(ts.due) > 0 && ts.due[0].tk.due <= ts.now {
		g := ts.due[0]
		heap.Pop(&ts.due)
		if g.closed || !g.opened {
			continue
		}
		g.advance(false)
		g.reschedule()
		g.logGroupFailure()
	}
	if ts.plane.tickShard != nil {
		ts.plane.tickShard(ts.owner)
	}
	<-ts.busy
}

// scheduled returns the group's schedule, joining its shard's on first
// use (nil for a group of one, which is never ticked).
func (g *vsrGroup) scheduled() *tickSched {
	if !g.clustered || g.host == nil {
		return nil
	}
	if g.tk.sched == nil {
		g.tk.sched = g.p.s.plane.sched(g.p.owner)
		g.tk.at, g.tk.index = g.tk.sched.now, -1
	}
	return g.tk.sched
}

// advance brings the host's ticks to its shard's: it skips the ticks in
// which the host is not due and ticks it on those it is (a group is
// ticked late only if its schedule missed its due tick: late counts it).
func (g *vsrGroup) advance(late bool) {
	ts := g.scheduled()
	if ts == nil {
		return
	}
	for g.tk.at < ts.now {
		n := ts.now - g.tk.at
		due := g.host.TicksUntilDue()
		if n < due {
			g.host.SkipTicks(n)
			g.tk.at = ts.now
			return
		}
		g.host.SkipTicks(due - 1)
		g.tk.at += due
		g.hostLoop.enter()
		g.host.Tick()
		g.hostLoop.leave()
		ts.plane.groupTicks.Add(1)
		if late {
			ts.plane.lateTicks.Add(1)
		}
	}
}

// reschedule puts the group at the tick it is next due.
func (g *vsrGroup) reschedule() {
	ts := g.scheduled()
	if ts == nil {
		return
	}
	d := g.host.TicksUntilDue()
	if g.closed || d == vsr.NoDeadline {
		if g.tk.index >= 0 {
			heap.Remove(&ts.due, g.tk.index)
		}
		return
	}
	g.tk.due = g.tk.at + d
	if g.tk.index >= 0 {
		heap.Fix(&ts.due, g.tk.index)
	} else {
		heap.Push(&ts.due, g)
	}
}

// outermost reports whether no host call runs: an input starts here.
func (g *vsrGroup) outermost() bool { return g.hostLoop.depth == 0 && !g.hostLoop.draining }

// enter, leave and later are hostLoop's, with the host's ticks brought up
// to date before an input and its schedule updated after it.
func (g *vsrGroup) enter() {
	if g.outermost() {
		g.advance(true)
	}
	g.hostLoop.enter()
}

func (g *vsrGroup) leave() {
	g.hostLoop.leave()
	if g.outermost() {
		g.reschedule()
	}
}

func (g *vsrGroup) later(f func()) {
	if !g.outermost() {
		g.hostLoop.later(f)
		return
	}
	g.advance(true)
	g.hostLoop.later(f)
	g.reschedule()
}

// announce hands the host a commit announcement, on the owning shard.
func (g *vsrGroup) announce(from uint8, a group.Announcement) {
	if g == nil || g.closed || !g.opened {
		return
	}
	g.enter()
	g.host.Announce(from, a)
	g.leave()
	g.logGroupFailure()
}

// dueHeap orders groups by their due tick.
type dueHeap []*vsrGroup

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].tk.due < h[j].tk.due }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].tk.index, h[j].tk.index = i, j
}
func (h *dueHeap) Push(x any) {
	g := x.(*vsrGroup)
	g.tk.index = len(*h)
	*h = append(*h, g)
}
func (h *dueHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	g.tk.index = -1
	return g
}

// announcingPeers is a partition group's Peers when the transport carries
// announcement frames: commit heartbeats wait for the tick's frame.
type announcingPeers struct {
	replicaPeers
	rp *replicaPlane
}

func (p announcingPeers) AnnounceCommit(a group.Announcement) {
	p.rp.mu.Lock()
	p.rp.pending = append(p.rp.pending, a)
	p.rp.mu.Unlock()
}

// vsrCluster is the cluster id of the partition groups' messages.
var vsrCluster = vsrReplicaConfig(0).Cluster

// flushAnnouncements sends every peer the announcements collected since
// the last flush: one frame per peer (more only past
// group.AnnouncementsPerFrameMax). It runs on the ticker, once a tick.
func (s *Server) flushAnnouncements() {
	at, ok := s.cluster.Transport.(AnnouncementTransport)
	if !ok {
		return
	}
	rp := &s.plane
	rp.mu.Lock()
	batch := rp.pending
	rp.pending, rp.spare = rp.spare[:0], nil
	rp.mu.Unlock()
	for rest := batch; len(rest) > 0; {
		n := min(len(rest), group.AnnouncementsPerFrameMax)
		frame := group.EncodeAnnouncements(make([]byte, 0, group.AnnouncementFrameSize(n)), vsrCluster, s.cluster.ReplicaIndex, rest[:n])
		rest = rest[n:]
		for to := uint8(0); to < s.cluster.ReplicaCount; to++ {
			if to != s.cluster.ReplicaIndex {
				at.SendAnnouncements(to, frame)
				rp.frames.Add(1)
				rp.announcements.Add(uint64(n))
			}
		}
	}
	clear(batch)
	rp.mu.Lock()
	if rp.spare == nil {
		rp.spare = batch[:0]
	}
	rp.mu.Unlock()
}

// announced is one decoded announcement on its way to its group.
type announced struct {
	p *partitionRuntime
	a group.Announcement
}

// ReceiveAnnouncements takes an announcement frame a peer sent (the
// transport's receiving side): each announcement is handed to its group
// on the partition's owning shard, one task per shard. A frame that does
// not decode (group.DecodeAnnouncements: size, kind, checksum), of another
// cluster or from no peer is dropped, as is an announcement of a group
// this server does not have (counted unroutable). Safe from any
// goroutine; frame is only read.
func (s *Server) ReceiveAnnouncements(frame []byte) {
	if !s.cluster.clustered() {
		return
	}
	f, err := group.DecodeAnnouncements(frame)
	if err != nil || f.Cluster != vsrCluster || f.Replica >= s.cluster.ReplicaCount || f.Replica == s.cluster.ReplicaIndex {
		return
	}
	byOwner := map[*shard.Shard][]announced{}
	unroutable := uint64(0)
	s.parts.mu.RLock()
	for i := range f.Len() {
		a := f.Entry(i)
		if p, ok := s.parts.groups[a.Group]; ok {
			byOwner[p.owner] = append(byOwner[p.owner], announced{p, a})
		} else {
			unroutable++
		}
	}
	s.parts.mu.RUnlock()
	s.plane.unroutable.Add(unroutable)
	from := f.Replica
	for owner, items := range byOwner {
		_ = owner.Submit(func() {
			for _, it := range items {
				it.p.vsr.announce(from, it.a)
			}
			s.plane.received.Add(uint64(len(items)))
		})
	}
}
