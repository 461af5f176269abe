package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/vsr"
)

// Segment state transfer.
//
// A partition's checkpoint is a descriptor, not the log: a replica that
// installs a peer's checkpoint (it fell too far behind for the peers'
// journals) restores a machine whose flushed history its own segments may
// not hold. Its Reset then fails with ErrMissingHistory: the partition is
// fenced on this replica (Err, never served as a shorter healthy log) and
// the host repairs it from a peer, when the binding implements
// SegmentTransfer:
//
//  1. RequestSegments for a manifest of the flushed messages [first, end)
//     of the restored machine's purge generation; a peer that holds them
//     whole answers with the manifest of its segment files (artifacts:
//     name, size, XXH3-64), else refuses (the host asks the next peer).
//  2. RequestSegments for each artifact's chunks in order, one in flight,
//     to the peer that gave the manifest (another peer's files may be cut
//     at other offsets), resent on a timeout, and after a few timeouts
//     the transfer starts over from the next peer; the peer reads each
//     chunk from its files. A late answer to the request in flight is as
//     good as a prompt one. Each chunk travels in a checksummed message; the
//     receiver stages it (SegmentTransfer.StageArtifact) and hashes it,
//     and an artifact whose XXH3-64 differs from the manifest's is
//     discarded and the transfer starts over from another peer.
//  3. Once every artifact is staged and verified, InstallStaged renames
//     them into place, and Reset checks the segments against the machine
//     again: the fence lifts, or the transfer starts over.
//
// Ops the replica applies meanwhile carry out their effects, but for
// their flushes: the host withholds EffectFlush while the history is
// missing, so the batches stay in the machine (unflushed) and nothing
// lands above the missing range. A segment log never has a hole: it holds
// [first, end) whole, and the flush frontier the transfer asks for does
// not move while it runs. (Before, the flushes landed above the hole; two
// fenced replicas each held part of the other's gap, the transfer asked
// for the whole moving history and neither could serve it:
// scenarios/bug_broker_fenced_pair_segment_transfer_ticks6000_2845.txt.)
// No checkpoint is taken while the history is missing. A crash loses the
// staged artifacts; the restarted replica restores its durable
// checkpoint, finds the history missing again and starts over.
//
// A fenced replica still serves a range its segments hold whole (the
// binding's SegmentManifest refuses any other): what it holds below its
// hole is committed history like any peer's, and a group whose live
// replicas are all fenced repairs from the one whose files reach furthest
// (the one with the shorter history first, then the other from it).

// ErrMissingHistory is what an Effects' Reset wraps when the segments hold
// less than the restored machine names flushed: the host fences the
// partition and, with SegmentTransfer, repairs it from a peer.
var ErrMissingHistory = errors.New("group: segments miss flushed history")

// ErrInstallFailed is what an InstallStaged error wraps when the binding
// could not bring its storage back to a state it serves (the live segment
// files were closed and could not be reopened): the host fails (Err)
// instead of starting the transfer over.
var ErrInstallFailed = errors.New("group: segment install left storage unusable")

// SegmentTransfer is an Effects that serves and installs segment state
// transfer. Serving reads from the partition's files; installing writes a
// staging area first and renames into place.
type SegmentTransfer interface {
	// SegmentManifest describes the segment files that hold every flushed
	// message in [first, end) of purge generation generation, or fails
	// when this replica does not hold them whole (another generation,
	// deleted or not yet flushed).
	SegmentManifest(generation, first, end uint64) (Manifest, error)
	// ReadArtifact reads up to len(buf) bytes of artifact index of the
	// manifest SegmentManifest(generation, first, end) gives, at offset,
	// from the file. It returns the bytes read.
	ReadArtifact(generation, first, end uint64, index int, offset uint64, buf []byte) (int, error)
	// StageArtifact writes data at offset of artifact index of m to the
	// staging area (not visible to reads, not in place).
	StageArtifact(m *Manifest, index int, offset uint64, data []byte) error
	// InstallStaged puts every staged artifact of m in place (renames),
	// replacing the segment data below m.End, and keeps what lies at or
	// above it.
	InstallStaged(m *Manifest) error
	// DiscardStaged drops whatever is staged.
	DiscardStaged()
}

// Manifest lists the segment files that hold the flushed messages
// [First, End) of purge generation Generation.
type Manifest struct {
	Generation, First, End uint64
	Artifacts              []Artifact
}

// Artifact is one file of a manifest.
type Artifact struct {
	// Name is the binding's name for the file (a segment's base offset).
	Name string
	// Size is its length in bytes; Checksum its XXH3-64.
	Size, Checksum uint64
}

// Limits of a manifest a receiver accepts.
const (
	manifestArtifactsMax = 1 << 16
	artifactNameMax      = 255
	// transferTimeoutRepairs is how many repair timeouts
	// (vsr.Config.RepairTimeoutTicks) a request waits for its answer
	// before it is sent again; transferTriesMax how many times a chunk is
	// asked of the manifest's peer before the transfer starts over from
	// the next.
	transferTimeoutRepairs = 3
	transferTriesMax       = 3
)

// segmentRequest is the body of a RequestSegments and the head of every
// Segments answer: the range and generation asked for, the artifact
// (segmentManifestIndex for the manifest) and the byte offset in it.
type segmentRequest struct {
	generation, first, end uint64
	index                  uint32
	offset                 uint64
}

const (
	segmentRequestSize   = 8*3 + 4 + 8
	segmentManifestIndex = ^uint32(0)
	// segmentAnswer statuses, the byte after the request echo.
	segmentOK      = 0
	segmentRefused = 1
)

func (q segmentRequest) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, q.generation)
	b = binary.LittleEndian.AppendUint64(b, q.first)
	b = binary.LittleEndian.AppendUint64(b, q.end)
	b = binary.LittleEndian.AppendUint32(b, q.index)
	return binary.LittleEndian.AppendUint64(b, q.offset)
}

func decodeSegmentRequest(b []byte) (segmentRequest, []byte, bool) {
	if len(b) < segmentRequestSize {
		return segmentRequest{}, nil, false
	}
	le := binary.LittleEndian
	q := segmentRequest{generation: le.Uint64(b), first: le.Uint64(b[8:]), end: le.Uint64(b[16:]), index: le.Uint32(b[24:]), offset: le.Uint64(b[28:])}
	return q, b[segmentRequestSize:], true
}

func (m *Manifest) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.Artifacts)))
	for _, a := range m.Artifacts {
		b = binary.LittleEndian.AppendUint64(b, a.Size)
		b = binary.LittleEndian.AppendUint64(b, a.Checksum)
		b = append(b, byte(len(a.Name)))
		b = append(b, a.Name...)
	}
	return b
}

// decodeManifest reads a manifest of q's range; it never panics.
func decodeManifest(q segmentRequest, b []byte) (*Manifest, error) {
	le := binary.LittleEndian
	if len(b) < 4 {
		return nil, errors.New("short manifest")
	}
	n := le.Uint32(b)
	b = b[4:]
	if n > manifestArtifactsMax || uint64(n)*17 > uint64(len(b)) {
		return nil, fmt.Errorf("manifest of %d artifacts in %d bytes", n, len(b))
	}
	m := &Manifest{Generation: q.generation, First: q.first, End: q.end, Artifacts: make([]Artifact, 0, n)}
	for i := uint32(0); i < n; i++ {
		if len(b) < 17 {
			return nil, fmt.Errorf("manifest artifact %d truncated", i)
		}
		a := Artifact{Size: le.Uint64(b), Checksum: le.Uint64(b[8:])}
		l := int(b[16])
		b = b[17:]
		if l > len(b) {
			return nil, fmt.Errorf("manifest artifact %d name truncated", i)
		}
		a.Name = string(b[:l])
		b = b[l:]
		m.Artifacts = append(m.Artifacts, a)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the manifest", len(b))
	}
	return m, nil
}

// segmentFetch is the receiving side's state: the range it repairs, the
// peer it asks, the manifest once known, and the next chunk it wants.
type segmentFetch struct {
	active bool
	want   segmentRequest // range; index and offset of the chunk asked for
	// peer is the one asked for the manifest; source the one that gave
	// it, asked for the chunks; tries counts unanswered chunk requests.
	peer, source uint8
	tries        int
	manifest     *Manifest
	hasher       xxh3.Hasher
	asked        uint64 // tick of the last request
	// Transfers counts completed installs; Restarts counts transfers
	// started over (refusals, timeouts, checksum mismatches).
	installs, restarts uint64
}

// TransferStats are the host's segment state transfer counters.
type TransferStats struct {
	Installs, Restarts uint64
	// Active reports a transfer in progress.
	Active bool
}

// TransferStats returns the segment state transfer counters.
func (h *Host) TransferStats() TransferStats {
	return TransferStats{Installs: h.fetch.installs, Restarts: h.fetch.restarts, Active: h.fetch.active}
}

// chunkMax is the largest chunk a Segments message carries.
func (h *Host) chunkMax() int {
	n := max(int(h.cfg.Replica.MessageSizeMax)-vsr.HeaderSize-segmentRequestSize-64, 512)
	if c := h.cfg.TransferChunkBytes; c > 0 {
		n = min(n, max(c, 512))
	}
	return n
}

// transferCommand reports whether m is the host's, not the replica's.
func transferCommand(c vsr.Command) bool {
	return c == vsr.CommandRequestSegments || c == vsr.CommandSegments
}

// onMissingHistory starts repairing err (a Reset that found the segments
// short of the machine) when the binding can transfer segments and the
// group has peers.
func (h *Host) onMissingHistory(err error) {
	h.missing = err
	if h.transfer == nil || h.cfg.Replica.ReplicaCount < 2 {
		return
	}
	h.startFetch()
}

// startFetch (re)starts the transfer of the machine's flushed history,
// from the next peer.
func (h *Host) startFetch() {
	if h.fetch.active {
		h.fetch.restarts++
		h.transfer.DiscardStaged()
	}
	f := &h.fetch
	f.active = true
	f.manifest = nil
	f.tries = 0
	f.want = h.wantedRange()
	f.peer = h.nextPeer(f.peer)
	h.askSegments()
}

func (h *Host) nextPeer(p uint8) uint8 {
	n := h.cfg.Replica.ReplicaCount
	p = (p + 1) % n
	if p == h.cfg.Replica.ReplicaIndex {
		p = (p + 1) % n
	}
	return p
}

func (h *Host) askSegments() {
	f := &h.fetch
	f.asked = h.ticks
	to := f.peer
	if f.manifest != nil {
		to = f.source
	}
	h.sendHostMessage(to, vsr.CommandRequestSegments, f.want.append(nil))
}

func (h *Host) sendHostMessage(to uint8, c vsr.Command, body []byte) {
	m := &vsr.Message{Header: vsr.Header{
		Command: c,
		Cluster: h.cfg.Replica.Cluster,
		Group:   h.cfg.Replica.Group,
		Replica: h.cfg.Replica.ReplicaIndex,
		View:    h.replica.View(),
	}, Body: body}
	m.Seal()
	h.b.Peers.SendToReplica(to, m)
}

// tickFetch resends a request that went unanswered: a manifest request
// to the next peer, a chunk request to the manifest's peer, or, after
// transferTriesMax of those, the transfer from the next peer.
func (h *Host) tickFetch() {
	f := &h.fetch
	if !f.active || h.ticks-f.asked < transferTimeoutRepairs*max(h.cfg.Replica.RepairTimeoutTicks, 1) {
		return
	}
	if f.manifest != nil {
		if f.tries++; f.tries < transferTriesMax {
			h.askSegments()
			return
		}
		h.transfer.DiscardStaged()
		f.manifest = nil
		f.restarts++
	}
	// Ask for the machine's range as it is now: a deletion or a later
	// checkpoint may have moved it since (a peer refuses a range it no
	// longer holds whole).
	f.peer = h.nextPeer(f.peer)
	f.want = h.wantedRange()
	h.askSegments()
}

// wantedRange is the manifest request for the machine's flushed history:
// from its first offset to its flush frontier, of its purge generation.
func (h *Host) wantedRange() segmentRequest {
	m := h.machine
	end := m.FlushedEnd()
	return segmentRequest{generation: m.PurgeGeneration(), first: m.FirstOffset(), end: end, index: segmentManifestIndex}
}

// stepTransfer handles a host message from a peer. It never panics on
// its bytes.
func (h *Host) stepTransfer(m *vsr.Message) {
	c := h.cfg.Replica
	if m.Cluster != c.Cluster || m.Group != c.Group || m.Replica >= c.ReplicaCount || m.Replica == c.ReplicaIndex || !m.Valid() {
		return
	}
	switch m.Command {
	case vsr.CommandRequestSegments:
		h.serveSegments(m)
	case vsr.CommandSegments:
		h.onSegments(m)
	}
}

// serveSegments answers a peer's request from this replica's files: the
// manifest, or one chunk; a refusal when it does not hold the range whole
// (SegmentManifest decides) or its storage failed. A replica fenced for
// missing history of its own serves what it does hold whole.
func (h *Host) serveSegments(m *vsr.Message) {
	q, _, ok := decodeSegmentRequest(m.Body)
	if !ok || h.transfer == nil || h.failed != nil {
		if ok {
			h.sendHostMessage(m.Replica, vsr.CommandSegments, append(q.append(nil), segmentRefused))
		}
		return
	}
	refuse := func() { h.sendHostMessage(m.Replica, vsr.CommandSegments, append(q.append(nil), segmentRefused)) }
	man, err := h.transfer.SegmentManifest(q.generation, q.first, q.end)
	if m := h.machine; err != nil && h.missing == nil && m.PurgeGeneration() == q.generation && m.NextOffset() >= q.end && len(m.Unflushed()) > 0 {
		// Applied here but not flushed yet (a checkpoint flushes what
		// its replica holds, and the peer's came further): flush it, as
		// a checkpoint does, to serve it from the files. Not while this
		// replica's own history is missing: the flush would land above
		// its hole.
		if ferr := h.b.Effects.FlushAll(m); ferr != nil {
			if h.failed == nil {
				h.failed = fmt.Errorf("group %d: flush to serve a segment transfer: %w", h.cfg.Replica.Group, ferr)
			}
			refuse()
			return
		}
		man, err = h.transfer.SegmentManifest(q.generation, q.first, q.end)
	}
	if err != nil {
		refuse()
		return
	}
	out := append(q.append(nil), segmentOK)
	if q.index == segmentManifestIndex {
		h.sendHostMessage(m.Replica, vsr.CommandSegments, man.append(out))
		return
	}
	if int64(q.index) >= int64(len(man.Artifacts)) || q.offset >= man.Artifacts[q.index].Size {
		refuse()
		return
	}
	n := min(uint64(h.chunkMax()), man.Artifacts[q.index].Size-q.offset)
	buf := make([]byte, len(out)+int(n))
	copy(buf, out)
	read, err := h.transfer.ReadArtifact(q.generation, q.first, q.end, int(q.index), q.offset, buf[len(out):])
	if err != nil || read == 0 {
		refuse()
		return
	}
	h.sendHostMessage(m.Replica, vsr.CommandSegments, buf[:len(out)+read])
}

// onSegments takes a peer's answer to the request in flight.
func (h *Host) onSegments(m *vsr.Message) {
	f := &h.fetch
	q, rest, ok := decodeSegmentRequest(m.Body)
	if !f.active || !ok || q != f.want || len(rest) == 0 {
		return
	}
	// Any peer's manifest of the range will do (a late answer of one
	// asked before); chunks and refusals only count from the peer asked.
	status, data := rest[0], rest[1:]
	asked := f.peer
	if f.manifest != nil {
		asked = f.source
	}
	if (status != segmentOK || f.manifest != nil) && m.Replica != asked {
		return
	}
	if status != segmentOK {
		// The next peer is asked on the timeout (tickFetch), not at once,
		// for the range as it is then: a peer that deleted or purged
		// files since the manifest refuses its chunks.
		if f.manifest != nil {
			h.transfer.DiscardStaged()
			f.manifest = nil
			f.restarts++
		}
		f.asked = h.ticks
		return
	}
	if q.index == segmentManifestIndex {
		man, err := decodeManifest(q, data)
		if err != nil {
			h.startFetch()
			return
		}
		h.transfer.DiscardStaged()
		f.manifest = man
		f.source = m.Replica
		f.tries = 0
		f.hasher.Reset()
		f.want.index, f.want.offset = 0, 0
		h.nextChunk()
		return
	}
	a := f.manifest.Artifacts[q.index]
	if uint64(len(data)) > a.Size-q.offset {
		h.startFetch()
		return
	}
	if err := h.transfer.StageArtifact(f.manifest, int(q.index), q.offset, data); err != nil {
		h.startFetch()
		return
	}
	_, _ = f.hasher.Write(data)
	f.tries = 0
	f.want.offset += uint64(len(data))
	if f.want.offset == a.Size {
		if f.hasher.Sum64() != a.Checksum {
			h.startFetch() // a peer whose file differs: start over elsewhere
			return
		}
		f.hasher.Reset()
		f.want.index++
		f.want.offset = 0
	}
	h.nextChunk()
}

// nextChunk asks for the next chunk, skipping empty artifacts, or
// installs the staged artifacts once all are verified.
func (h *Host) nextChunk() {
	f := &h.fetch
	for int(f.want.index) < len(f.manifest.Artifacts) && f.manifest.Artifacts[f.want.index].Size == 0 {
		if xxh3.Hash(nil) != f.manifest.Artifacts[f.want.index].Checksum {
			h.startFetch()
			return
		}
		f.want.index++
	}
	if int(f.want.index) < len(f.manifest.Artifacts) {
		h.askSegments()
		return
	}
	man := f.manifest
	if err := h.transfer.InstallStaged(man); err != nil {
		if errors.Is(err, ErrInstallFailed) {
			h.fetch = segmentFetch{installs: f.installs, restarts: f.restarts}
			if h.failed == nil {
				h.failed = fmt.Errorf("group %d: install a segment transfer: %w", h.cfg.Replica.Group, err)
			}
			return
		}
		h.startFetch()
		return
	}
	if err := h.b.Effects.Reset(h.machine); err != nil {
		if errors.Is(err, ErrMissingHistory) {
			h.startFetch() // the machine moved on meanwhile (a later checkpoint)
			return
		}
		h.fetch = segmentFetch{installs: f.installs, restarts: f.restarts}
		h.missing = nil
		if h.failed == nil {
			h.failed = fmt.Errorf("group %d: reset storage after a segment transfer: %w", h.cfg.Replica.Group, err)
		}
		return
	}
	h.fetch = segmentFetch{installs: f.installs + 1, restarts: f.restarts}
	h.missing = nil
}
