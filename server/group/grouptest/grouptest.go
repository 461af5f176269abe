// Package grouptest runs partition groups in one process: N group hosts
// over an in-memory, deterministic network, storage and segment store, so
// that tests (and later the server's in-process clusters) drive the real
// group host through ticks, messages and IO completions. Everything runs
// on the caller's goroutine in FIFO order: a run is a function of its
// inputs.
package grouptest

import (
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/partition"
	"github.com/stratabroker/strata/vsr"
)

// io is one pending IO completion of a node.
type io struct {
	node int
	gen  uint64 // the node's incarnation that submitted it
	f    func()
}

// Storage is an in-memory vsr.Storage. Writes are durable once a sync
// submitted after them completes; a crash loses the rest.
type Storage struct {
	c       *Cluster
	node    int
	sizes   [8]uint64
	durable [8][]byte
	pending []pendingWrite
	seq     uint64
	// FailWrites, when set, fails every later write with it (a disk that
	// died): the replica records a storage error (vsr.Replica.Err) and
	// stops.
	FailWrites error
}

type pendingWrite struct {
	zone   vsr.Zone
	offset uint64
	data   []byte
	seq    uint64
}

func newStorage(c *Cluster, node int, cfg *vsr.Config) *Storage {
	s := &Storage{c: c, node: node}
	for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneWALHeaders, vsr.ZoneWALPrepares, vsr.ZoneCheckpoint} {
		s.sizes[z] = cfg.ZoneSize(z)
	}
	return s
}

// ZoneSize implements vsr.Storage.
func (s *Storage) ZoneSize(z vsr.Zone) uint64 {
	if int(z) >= len(s.sizes) {
		return 0
	}
	return s.sizes[z]
}

func (s *Storage) zone(z vsr.Zone, end uint64) []byte {
	if uint64(len(s.durable[z])) < end {
		s.durable[z] = append(s.durable[z], make([]byte, end-uint64(len(s.durable[z])))...)
	}
	return s.durable[z]
}

func (s *Storage) inRange(z vsr.Zone, offset uint64, n int) error {
	if int(z) >= len(s.sizes) || offset+uint64(n) > s.sizes[z] {
		return fmt.Errorf("grouptest: zone %d offset %d length %d beyond %d", z, offset, n, s.ZoneSize(z))
	}
	return nil
}

// Read implements vsr.Storage.
func (s *Storage) Read(z vsr.Zone, offset uint64, buf []byte, done func(error)) {
	if err := s.inRange(z, offset, len(buf)); err != nil {
		s.c.submit(s.node, func() { done(err) })
		return
	}
	copy(buf, s.zone(z, offset+uint64(len(buf)))[offset:])
	for _, w := range s.pending {
		if w.zone != z {
			continue
		}
		lo, hi := max(w.offset, offset), min(w.offset+uint64(len(w.data)), offset+uint64(len(buf)))
		if lo < hi {
			copy(buf[lo-offset:hi-offset], w.data[lo-w.offset:hi-w.offset])
		}
	}
	s.c.submit(s.node, func() { done(nil) })
}

// Write implements vsr.Storage.
func (s *Storage) Write(z vsr.Zone, offset uint64, data []byte, done func(error)) {
	if err := s.FailWrites; err != nil {
		s.c.submit(s.node, func() { done(err) })
		return
	}
	if err := s.inRange(z, offset, len(data)); err != nil {
		s.c.submit(s.node, func() { done(err) })
		return
	}
	s.seq++
	s.pending = append(s.pending, pendingWrite{z, offset, append([]byte(nil), data...), s.seq})
	s.c.submit(s.node, func() { done(nil) })
}

// Sync implements vsr.Storage.
func (s *Storage) Sync(done func(error)) {
	upTo := s.seq
	s.c.submit(s.node, func() {
		kept := s.pending[:0]
		for _, w := range s.pending {
			if w.seq <= upTo {
				copy(s.zone(w.zone, w.offset+uint64(len(w.data)))[w.offset:], w.data)
			} else {
				kept = append(kept, w)
			}
		}
		s.pending = kept
		done(nil)
	})
}

// Corrupt flips every durable byte of zone z (a disk that lost the zone).
func (s *Storage) Corrupt(z vsr.Zone) {
	for i := range s.durable[z] {
		s.durable[z][i] ^= 0xff
	}
}

// crash loses every write not yet synced.
func (s *Storage) crash() { s.pending = nil }

// Segments is an in-memory segment and offset store, the partition's own
// storage (group.Effects). Flushed batches survive a process crash, as
// written files do, and a power loss only where a sync covered them; with
// Persisted each flush's reply waits for a sync ticket that the cluster
// completes as an IO completion.
type Segments struct {
	c         *Cluster
	node      int
	persisted bool
	// batches are the flushed, stamped batches in offset order; those
	// ending at or below syncedEnd are durable (offsets are kept whole:
	// the model's offset files survive power loss).
	batches   [][]byte
	syncedEnd uint64
	epoch     uint64 // purges, so that an older sync covers nothing newer
	offsets   []partition.StoredOffset
	ticket    uint64
	// Resets counts Reset calls (restores, or an empty start).
	Resets int
	// CheckpointSyncs and ForcedFlushes count the descriptor checkpoints'
	// syncs and the flushes the journal window forced (group.Syncer).
	CheckpointSyncs, ForcedFlushes int
	// FailNext, when set, fails the next effect with it (a disk error).
	FailNext error
	// FailRestore, when set, fails every Reset to a machine that holds
	// messages (a restored checkpoint whose history the segments lack).
	FailRestore error
	// staged holds a segment transfer's artifacts until installed.
	staged map[int][]byte
	// Installs counts installed segment transfers; ChunksServed the
	// chunks this node read for a peer. CorruptServed flips a byte of
	// every chunk it serves.
	Installs, ChunksServed int
	CorruptServed          bool
	// RefuseServe refuses every segment transfer request (a peer whose
	// files are busy elsewhere, or gone).
	RefuseServe bool
}

// CarryOut implements group.Effects.
func (s *Segments) CarryOut(m *partition.Machine, e partition.Effect) (uint64, wire.ErrorCode, error) {
	if err := s.FailNext; err != nil {
		s.FailNext = nil
		return 0, wire.ErrCannotSaveMessagesToSegment, err
	}
	switch e.Kind {
	case partition.EffectFlush:
		for _, b := range m.Unflushed() {
			v := wire.BatchView(b)
			if v.BaseOffset()+uint64(v.MessageCount())-1 > e.UpTo {
				break
			}
			if end := s.end(); len(s.batches) > 0 && v.BaseOffset() != end {
				// Segments are append-only and contiguous: the host never
				// flushes above a hole (missing history).
				return 0, wire.ErrCannotSaveMessagesToSegment, fmt.Errorf("grouptest: node %d: a flush at offset %d above a hole (the segments end at %d)", s.node, v.BaseOffset(), end)
			}
			s.batches = append(s.batches, append([]byte(nil), b...))
		}
		m.MarkFlushed(e.UpTo)
		if s.persisted {
			return s.sync(), wire.ErrorCodeOK, nil
		}
	case partition.EffectOffsetStored:
		s.setOffset(e.Consumer, e.Offset, true)
	case partition.EffectOffsetDeleted:
		s.setOffset(e.Consumer, 0, false)
	case partition.EffectPurged:
		s.batches, s.offsets, s.syncedEnd = nil, nil, 0
		s.epoch++
	case partition.EffectSegmentsDeleted:
		kept := s.batches[:0]
		for _, b := range s.batches {
			v := wire.BatchView(b)
			if v.BaseOffset()+uint64(v.MessageCount()) > e.Below {
				kept = append(kept, b)
			}
		}
		s.batches = kept
	default:
		return 0, wire.ErrError, fmt.Errorf("grouptest: unknown effect %d", e.Kind)
	}
	return 0, wire.ErrorCodeOK, nil
}

// SyncForCheckpoint implements group.Syncer: the segments' sync is an IO
// completion of the cluster, reported through EffectsDurable.
func (s *Segments) SyncForCheckpoint() uint64 {
	s.CheckpointSyncs++
	return s.sync()
}

// sync makes every batch flushed so far durable, as an IO completion, and
// reports its ticket to the host.
func (s *Segments) sync() uint64 {
	s.ticket++
	ticket, h, end, epoch := s.ticket, s.c.Nodes[s.node], s.end(), s.epoch
	gen := h.gen
	s.c.submit(s.node, func() {
		if s.epoch == epoch {
			s.syncedEnd = max(s.syncedEnd, min(end, s.end()))
		}
		if h.gen == gen {
			h.Host.EffectsDurable(ticket)
		}
	})
	return ticket
}

// end returns the offset after the last flushed message (0 if none).
func (s *Segments) end() uint64 {
	if len(s.batches) == 0 {
		return 0
	}
	v := wire.BatchView(s.batches[len(s.batches)-1])
	return v.BaseOffset() + uint64(v.MessageCount())
}

// powerLoss drops every flushed batch no sync covered.
func (s *Segments) powerLoss() {
	keep := 0
	for keep < len(s.batches) {
		v := wire.BatchView(s.batches[keep])
		if v.BaseOffset()+uint64(v.MessageCount()) > s.syncedEnd {
			break
		}
		keep++
	}
	clear(s.batches[keep:])
	s.batches = s.batches[:keep]
}

// LoseTail drops every flushed batch at or above offset end: a disk that
// lost the tail of the partition's last segment files (the node must be
// down; its restart finds the segments short of its checkpoint).
func (s *Segments) LoseTail(end uint64) {
	keep := 0
	for keep < len(s.batches) && wire.BatchView(s.batches[keep]).BaseOffset() < end {
		keep++
	}
	clear(s.batches[keep:])
	s.batches = s.batches[:keep]
	s.syncedEnd = min(s.syncedEnd, s.end())
}

// End returns the offset after the last flushed message (0 if none).
func (s *Segments) End() uint64 { return s.end() }

// FlushAll implements group.Syncer.
func (s *Segments) FlushAll(m *partition.Machine) error {
	s.ForcedFlushes++
	batches := m.Unflushed()
	if len(batches) == 0 {
		return nil
	}
	for _, b := range batches {
		s.batches = append(s.batches, append([]byte(nil), b...))
	}
	m.MarkFlushed(m.NextOffset() - 1)
	return nil
}

func (s *Segments) setOffset(key partition.ConsumerKey, offset uint64, stored bool) {
	for i, o := range s.offsets {
		if o.Key == key {
			if stored {
				s.offsets[i].Offset = offset
			} else {
				s.offsets = append(s.offsets[:i], s.offsets[i+1:]...)
			}
			return
		}
	}
	if stored {
		s.offsets = append(s.offsets, partition.StoredOffset{Key: key, Offset: offset})
	}
}

// Reset implements group.Effects: the segments keep what m holds flushed.
func (s *Segments) Reset(m *partition.Machine) error {
	s.Resets++
	if s.FailRestore != nil && m.NextOffset() > 0 {
		return s.FailRestore
	}
	frontier := m.FlushedEnd()
	kept := s.batches[:0]
	for _, b := range s.batches {
		if wire.BatchView(b).BaseOffset() < frontier {
			kept = append(kept, b)
		}
	}
	s.batches = kept
	s.syncedEnd = min(s.syncedEnd, s.end())
	s.offsets = append(s.offsets[:0], m.StoredOffsets()...)
	// The segments must hold every flushed message from the machine's
	// first offset up to its flush frontier: a restored machine that
	// names more (a power loss took unsynced segment data) is missing
	// history, and the host fences the partition.
	next := m.FirstOffset()
	for _, b := range s.batches {
		v := wire.BatchView(b)
		if end := v.BaseOffset() + uint64(v.MessageCount()); end <= next {
			continue
		}
		if v.BaseOffset() != next {
			break
		}
		next = v.BaseOffset() + uint64(v.MessageCount())
	}
	if next < frontier {
		return fmt.Errorf("%w: node %d: segments end at offset %d, the restored machine flushed up to %d", ErrMissingHistory, s.node, next, frontier)
	}
	return nil
}

// ErrMissingHistory reports segments that hold less than the machine
// restored over them flushed.
var ErrMissingHistory = fmt.Errorf("grouptest: segments miss flushed messages: %w", group.ErrMissingHistory)

// errNotHeld refuses a segment transfer of a range not held whole.
var errNotHeld = errors.New("grouptest: segments do not hold the range")

// fileBatches is how many batches one segment file of the model holds.
const fileBatches = 2

// files returns the batches holding [first, end) of generation, grouped
// into segment files, or errNotHeld.
func (s *Segments) files(generation, first, end uint64) ([][][]byte, error) {
	m := s.c.Nodes[s.node].Host.Machine()
	if m.PurgeGeneration() != generation || m.FirstOffset() > first {
		return nil, errNotHeld
	}
	var run [][]byte
	next := first
	for _, b := range s.batches {
		v := wire.BatchView(b)
		bEnd := v.BaseOffset() + uint64(v.MessageCount())
		if bEnd <= first || v.BaseOffset() >= end {
			continue
		}
		if (len(run) == 0 && v.BaseOffset() > first) || (len(run) > 0 && v.BaseOffset() != next) {
			return nil, errNotHeld
		}
		run = append(run, b)
		next = bEnd
	}
	if next < end {
		return nil, errNotHeld
	}
	var out [][][]byte
	for len(run) > 0 {
		k := min(len(run), fileBatches)
		out = append(out, run[:k])
		run = run[k:]
	}
	return out, nil
}

// SegmentManifest implements group.SegmentTransfer.
func (s *Segments) SegmentManifest(generation, first, end uint64) (group.Manifest, error) {
	if s.RefuseServe {
		return group.Manifest{}, errNotHeld
	}
	files, err := s.files(generation, first, end)
	if err != nil {
		return group.Manifest{}, err
	}
	man := group.Manifest{Generation: generation, First: first, End: end}
	for _, f := range files {
		h := xxh3.New()
		var size uint64
		for _, b := range f {
			_, _ = h.Write(b)
			size += uint64(len(b))
		}
		man.Artifacts = append(man.Artifacts, group.Artifact{Name: fmt.Sprintf("%020d.log", wire.BatchView(f[0]).BaseOffset()), Size: size, Checksum: h.Sum64()})
	}
	return man, nil
}

// ReadArtifact implements group.SegmentTransfer. With CorruptServed the
// chunk's first byte is flipped (a peer whose file rotted).
func (s *Segments) ReadArtifact(generation, first, end uint64, index int, offset uint64, buf []byte) (int, error) {
	files, err := s.files(generation, first, end)
	if err != nil || index >= len(files) {
		return 0, errNotHeld
	}
	n := 0
	var at uint64
	for _, b := range files[index] {
		if n == len(buf) {
			break
		}
		if at+uint64(len(b)) > offset {
			n += copy(buf[n:], b[max(offset, at)-at:])
		}
		at += uint64(len(b))
	}
	if s.CorruptServed && n > 0 {
		buf[0] ^= 0xff
	}
	s.ChunksServed++
	return n, nil
}

// StageArtifact implements group.SegmentTransfer.
func (s *Segments) StageArtifact(m *group.Manifest, index int, offset uint64, data []byte) error {
	if s.staged == nil {
		s.staged = map[int][]byte{}
	}
	if uint64(len(s.staged[index])) != offset {
		return fmt.Errorf("grouptest: staged artifact %d holds %d bytes, a chunk at %d", index, len(s.staged[index]), offset)
	}
	s.staged[index] = append(s.staged[index], data...)
	return nil
}

// InstallStaged implements group.SegmentTransfer.
func (s *Segments) InstallStaged(m *group.Manifest) error {
	var batches [][]byte
	for i := range m.Artifacts {
		b := s.staged[i]
		for len(b) > 0 {
			if len(b) < wire.BatchHeaderSize {
				return fmt.Errorf("grouptest: staged artifact %d: a truncated batch", i)
			}
			n := wire.BatchView(b).BatchLength()
			if n < wire.BatchHeaderSize || n > uint64(len(b)) {
				return fmt.Errorf("grouptest: staged artifact %d: a batch of %d bytes", i, n)
			}
			batches = append(batches, append([]byte(nil), b[:n]...))
			b = b[n:]
		}
	}
	for _, b := range s.batches {
		if wire.BatchView(b).BaseOffset() >= m.End {
			batches = append(batches, b)
		}
	}
	s.batches = batches
	s.syncedEnd = max(s.syncedEnd, m.End) // staged files are synced before the rename
	s.staged = nil
	s.Installs++
	return nil
}

// DiscardStaged implements group.SegmentTransfer.
func (s *Segments) DiscardStaged() { s.staged = nil }

// Message is one polled message.
type Message struct {
	Offset  uint64
	ID      wire.MessageID
	Payload string
}

// Poll reads count messages from start out of node's applied state: the
// flushed segments, then the machine's unflushed batches, clamped by the
// machine to what it applied (View.PollRange).
func (c *Cluster) Poll(node int, start uint64, count uint32) []Message {
	n := c.Nodes[node]
	first, last, ok := n.Host.View().PollRange(start, count)
	if !ok {
		return nil
	}
	var out []Message
	seen := func(b []byte) {
		v := wire.BatchView(b)
		it := v.Frames()
		for f, ok := it.Next(); ok; f, ok = it.Next() {
			off := v.BaseOffset() + uint64(f.OffsetDelta())
			if off >= first && off <= last && (len(out) == 0 || off > out[len(out)-1].Offset) {
				out = append(out, Message{Offset: off, ID: f.ID(), Payload: string(f.Payload())})
			}
		}
	}
	for _, b := range n.Segments.batches {
		seen(b)
	}
	for _, b := range n.Host.View().Unflushed() {
		seen(b)
	}
	return out
}

// FlushedMessages returns how many messages node's segments hold.
func (s *Segments) FlushedMessages() uint64 {
	var n uint64
	for _, b := range s.batches {
		n += uint64(wire.BatchView(b).MessageCount())
	}
	return n
}

// clock is a deterministic clock: every reading is one microsecond later.
type clock struct{ now *uint64 }

func (c clock) RealtimeMicros() uint64 { *c.now++; return *c.now }

// envelope is a message in flight between replicas.
type envelope struct {
	from, to int
	m        *vsr.Message
}

// peers is one node's group.Peers.
type peers struct {
	c    *Cluster
	from int
}

func (p peers) SendToReplica(replica uint8, m *vsr.Message) {
	p.c.queue = append(p.c.queue, envelope{p.from, int(replica), m})
}

// replies is one node's group.Replies: it records every answer.
type replies struct {
	c    *Cluster
	node int
}

func (r replies) Deliver(reply group.Reply) {
	r.c.Replies = append(r.c.Replies, Answer{Node: r.node, Reply: reply})
}

// Answer is a Reply and the node that gave it.
type Answer struct {
	Node int
	group.Reply
}

// Node is one replica of the group: its host and storages.
type Node struct {
	Host     *group.Host
	Storage  *Storage
	Segments *Segments
	Down     bool
	gen      uint64
}

// Cluster is N hosts of one group over memory.
type Cluster struct {
	Config group.Config
	Nodes  []*Node
	// Replies holds every answer given, in order; tests take what they need.
	Replies []Answer
	queue   []envelope
	ios     []io
	now     uint64
	// cut[i] isolates node i from the others while set.
	cut []bool
	// held[i] keeps node i's IO completions pending while set (HoldIO).
	held []bool
	// Delivered counts the messages delivered between replicas.
	Delivered uint64
	// Drop, when set, loses every message between replicas it reports
	// true for (a lossy link for one kind of message).
	Drop func(from, to int, m *vsr.Message) bool
}

// New starts replicaCount hosts of the group cfg describes
// (cfg.Replica.ReplicaIndex is set per node); persisted makes each flush's
// reply wait for a sync.
func New(cfg group.Config, persisted bool) (*Cluster, error) {
	c := &Cluster{Config: cfg}
	for i := range int(cfg.Replica.ReplicaCount) {
		rc := cfg.Replica
		rc.ReplicaIndex = uint8(i)
		c.Nodes = append(c.Nodes, &Node{Storage: newStorage(c, i, &rc), Segments: &Segments{c: c, node: i, persisted: persisted}})
		c.cut = append(c.cut, false)
		c.held = append(c.held, false)
	}
	for i := range c.Nodes {
		if err := c.Start(i); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Cluster) submit(node int, f func()) {
	c.ios = append(c.ios, io{node: node, gen: c.Nodes[node].gen, f: f})
}

// Start (re)starts node i's host on its surviving storage and opens it.
func (c *Cluster) Start(i int) error {
	n := c.Nodes[i]
	n.gen++
	n.Down = false
	cfg := c.Config
	cfg.Replica.ReplicaIndex = uint8(i)
	h, err := group.New(cfg, group.Binding{
		Storage: n.Storage, Peers: peers{c, i}, Clock: clock{&c.now}, Effects: n.Segments, Replies: replies{c, i},
	})
	if err != nil {
		return err
	}
	n.Host = h
	var openErr error
	opened := false
	h.Open(func(err error) { openErr, opened = err, true })
	c.PumpIO()
	if !opened {
		return fmt.Errorf("grouptest: node %d did not open", i)
	}
	return openErr
}

// Crash stops node i: its unsynced writes, pending completions and
// messages in flight to it are lost; its synced storage and segment files
// survive.
func (c *Cluster) Crash(i int) {
	n := c.Nodes[i]
	n.Down = true
	n.gen++
	n.Storage.crash()
	n.Segments.staged = nil
}

// PowerLoss stops node i as Crash does, and its segment files also lose
// what no sync covered (the page cache is gone).
func (c *Cluster) PowerLoss(i int) {
	c.Crash(i)
	c.Nodes[i].Segments.powerLoss()
}

// Isolate cuts node i off from the other replicas (true) or heals it.
func (c *Cluster) Isolate(i int, cut bool) { c.cut[i] = cut }

// HoldIO keeps node i's IO completions pending (true: a slow disk) or
// lets the next PumpIO run them, in their order (false). Completions of
// the other nodes run meanwhile.
func (c *Cluster) HoldIO(i int, hold bool) { c.held[i] = hold }

// PumpIO runs pending IO completions, except those of nodes whose IO is
// held, until none is left.
func (c *Cluster) PumpIO() {
	for steps := 0; steps < 10_000_000; steps++ {
		k := 0
		for k < len(c.ios) && c.held[c.ios[k].node] {
			k++
		}
		if k == len(c.ios) {
			return
		}
		op := c.ios[k]
		if k == 0 {
			c.ios = c.ios[1:]
		} else {
			c.ios = append(c.ios[:k], c.ios[k+1:]...)
		}
		if c.Nodes[op.node].gen == op.gen && !c.Nodes[op.node].Down {
			op.f()
		}
	}
}

// Deliver runs IO and delivers messages until the cluster is quiet or
// limit messages were delivered.
func (c *Cluster) Deliver(limit int) {
	for delivered := 0; delivered < limit && c.DeliverOne(); delivered++ {
	}
	c.PumpIO()
}

// DeliverOne runs pending IO and hands the next queued message to its
// node (a message to or from a down or cut-off node is lost); it reports
// false when no message was queued.
func (c *Cluster) DeliverOne() bool {
	c.PumpIO()
	if len(c.queue) == 0 {
		return false
	}
	e := c.queue[0]
	c.queue = c.queue[1:]
	to := c.Nodes[e.to]
	if to.Down || c.Nodes[e.from].Down || c.cut[e.from] || c.cut[e.to] || (c.Drop != nil && c.Drop(e.from, e.to, e.m)) {
		return true
	}
	// The wire: every message is encoded and decoded.
	var m vsr.Message
	if err := m.Decode(e.m.Encode(nil)); err != nil {
		panic(fmt.Sprintf("grouptest: decode: %v", err))
	}
	c.Delivered++
	to.Host.Step(&m)
	return true
}

// TickHosts ticks every running node once, delivering nothing.
func (c *Cluster) TickHosts() {
	for _, node := range c.Nodes {
		if !node.Down {
			node.Host.Tick()
		}
	}
}

// Tick ticks every running node n times, delivering after each tick.
func (c *Cluster) Tick(n int) {
	for range n {
		c.TickHosts()
		c.Deliver(1_000_000)
	}
}

// Primary returns the node that is primary (normal status), or -1.
func (c *Cluster) Primary() int {
	for i, n := range c.Nodes {
		if !n.Down && n.Host.Replica().Primary() {
			return i
		}
	}
	return -1
}

// TakeReplies returns the answers given since the last call.
func (c *Cluster) TakeReplies() []Answer {
	out := c.Replies
	c.Replies = nil
	return out
}

// Status renders every node's replica state, for failure messages.
func (c *Cluster) Status() string {
	var out string
	for i, n := range c.Nodes {
		if n.Down {
			out += fmt.Sprintf("r%d: down\n", i)
			continue
		}
		r := n.Host.Replica()
		out += fmt.Sprintf("r%d: %s primary=%v view=%d op=%d commit=%d/%d checkpoint=%d next_offset=%d flushed=%d\n",
			i, r.Status(), r.Primary(), r.View(), r.OpNumber(), r.CommitNumber(), r.CommitMax(), r.CheckpointOp(),
			n.Host.View().NextOffset(), n.Segments.FlushedMessages())
	}
	return out
}
