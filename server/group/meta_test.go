package group_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/vsr"
)

// memStorage is a vsr.Storage in memory: writes are volatile until a
// Sync; crash drops what was not synced. Completions queue on the loop.
type memStorage struct {
	cfg     *vsr.Config
	durable map[vsr.Zone][]byte
	pending []memWrite
	loop    *[]func()
}

type memWrite struct {
	zone   vsr.Zone
	offset uint64
	data   []byte
}

func newMemStorage(cfg *vsr.Config, loop *[]func()) *memStorage {
	s := &memStorage{cfg: cfg, durable: map[vsr.Zone][]byte{}, loop: loop}
	for _, z := range []vsr.Zone{vsr.ZoneSuperblock, vsr.ZoneWALHeaders, vsr.ZoneWALPrepares, vsr.ZoneCheckpoint} {
		s.durable[z] = make([]byte, cfg.ZoneSize(z))
	}
	return s
}

func (s *memStorage) ZoneSize(z vsr.Zone) uint64 { return s.cfg.ZoneSize(z) }

func (s *memStorage) Read(z vsr.Zone, offset uint64, buf []byte, done func(error)) {
	copy(buf, s.durable[z][offset:])
	for _, w := range s.pending {
		if w.zone == z && w.offset < offset+uint64(len(buf)) && offset < w.offset+uint64(len(w.data)) {
			lo, hi := max(w.offset, offset), min(w.offset+uint64(len(w.data)), offset+uint64(len(buf)))
			copy(buf[lo-offset:hi-offset], w.data[lo-w.offset:hi-w.offset])
		}
	}
	*s.loop = append(*s.loop, func() { done(nil) })
}

func (s *memStorage) Write(z vsr.Zone, offset uint64, data []byte, done func(error)) {
	s.pending = append(s.pending, memWrite{z, offset, append([]byte(nil), data...)})
	*s.loop = append(*s.loop, func() { done(nil) })
}

func (s *memStorage) Sync(done func(error)) {
	for _, w := range s.pending {
		copy(s.durable[w.zone][w.offset:], w.data)
	}
	s.pending = nil
	*s.loop = append(*s.loop, func() { done(nil) })
}

func (s *memStorage) crash() { s.pending = nil }

// metaNode is one metadata host over memStorage, recording what it
// applied and answered.
type metaNode struct {
	host    *group.MetaHost
	loop    *[]func()
	applied []string
	replies map[uint64]group.Reply
	// last is the latest reply of any kind (registers and evictions
	// carry no request number of their own).
	last group.Reply
}

func (n *metaNode) Applied(_ *metadata.Machine, op, _ uint64, operation uint8, _ []byte, effects []metadata.Effect) {
	n.applied = append(n.applied, fmt.Sprintf("%d:%d:%d", op, operation, len(effects)))
}

func (n *metaNode) Deliver(r group.Reply) { n.replies[r.Request], n.last = r, r }

func (n *metaNode) run() {
	for len(*n.loop) > 0 {
		f := (*n.loop)[0]
		*n.loop = (*n.loop)[1:]
		f()
	}
}

type noPeers struct{}

func (noPeers) SendToReplica(uint8, *vsr.Message) {}

type stepClock struct{ now uint64 }

func (c *stepClock) RealtimeMicros() uint64 { c.now++; return c.now }

func openMetaNode(t *testing.T, cfg vsr.Config, st *memStorage, loop *[]func()) *metaNode {
	t.Helper()
	n := &metaNode{loop: loop, replies: map[uint64]group.Reply{}}
	h, err := group.NewMeta(group.MetaConfig{Replica: cfg},
		group.MetaBinding{Storage: st, Peers: noPeers{}, Clock: &stepClock{}, Effects: n, Replies: n})
	if err != nil {
		t.Fatal(err)
	}
	n.host = h
	var openErr error
	opened := false
	h.Open(func(err error) { openErr, opened = err, true })
	n.run()
	if !opened || openErr != nil {
		t.Fatalf("open: %v %v", opened, openErr)
	}
	return n
}

// TestMetaHostRecoversCheckpointAndJournal: metadata operations (the
// server's own, sessionless, and sessions' exactly-once ones) committed by
// a metadata group of one over persisted storage; a crash (unsynced
// writes lost: none were acknowledged) and a reopen restore the checkpoint
// and apply the journal's ops above it, in order, to the same machine
// state, and keep the sessions: a duplicate request after the reopen is
// answered from the cached reply, not applied again; a logout never
// reaches the machine.
func TestMetaHostRecoversCheckpointAndJournal(t *testing.T) {
	cfg := vsr.DefaultConfig(0, 1, 0)
	cfg.Durability = vsr.Persisted
	cfg.JournalSlots = 32
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = uint32(vsr.HeadersMessageSize(32)+vsr.SectorSize-1) / vsr.SectorSize * vsr.SectorSize
	cfg.MessageSizeMax = max(cfg.MessageSizeMax, 64<<10)
	cfg.WALBytesMax = 16 << 20
	cfg.ClientsMax = 8
	cfg.CheckpointSizeMax = 1 << 20
	loop := &[]func(){}
	st := newMemStorage(&cfg, loop)
	n := openMetaNode(t, cfg, st, loop)
	server := vsr.Uint128{Lo: 1}
	request := uint64(0)
	n.host.SubmitInternal(server, 1, metadata.OperationCreateUser, metadata.BootstrapRoot("root", "hash", nil))
	n.run()
	if r := n.replies[1]; r.Op == 0 || r.Disposition != vsr.DispositionNone {
		t.Fatalf("create root: %+v", r)
	}
	type session struct {
		client  vsr.Uint128
		session uint64
		request uint64
	}
	var sessions []session
	for i := 0; i < 30; i++ {
		if i%5 == 0 {
			c := vsr.Uint128{Lo: 100 + uint64(i), Hi: 7}
			n.host.SubmitRequest(group.MetaRequest{Client: c, Operation: group.OperationRegister, Owner: uint64(metadata.RootUserID)})
			n.run()
			if n.last.Client != c || n.last.Session == 0 || n.last.Operation != group.OperationRegister {
				t.Fatalf("register %d: %+v", i, n.last)
			}
			sessions = append(sessions, session{client: c, session: n.last.Session})
		}
		s := &sessions[len(sessions)-1]
		s.request++
		request++
		tag := vsr.Uint128{Lo: request, Hi: 99}
		n.host.SubmitRequest(group.MetaRequest{Client: s.client, Session: s.session, Request: s.request, Tag: tag, Operation: metadata.OperationCreateStream,
			Body: metadata.EncodeOp(metadata.Envelope{UserID: metadata.RootUserID}, &metadata.CreateStream{Name: fmt.Sprint("s", i)})})
		n.run()
		r := n.last
		if code, ok := metadata.ReplyCode(r.Body); !ok || code != metadata.CodeOK || r.Tag != tag || r.Replayed || r.Request != s.request {
			t.Fatalf("create stream %d: %+v", i, r)
		}
	}
	// The last session logs out: its entry goes.
	last := sessions[len(sessions)-1]
	n.host.SubmitRequest(group.MetaRequest{Client: last.client, Session: last.session, Request: last.request + 1, Operation: group.OperationLogout})
	n.run()
	if n.last.Op == 0 || n.last.Disposition != vsr.DispositionNone {
		t.Fatalf("logout: %+v", n.last)
	}
	if _, ok := n.host.Session(last.client); ok {
		t.Fatal("a logged-out session stands")
	}
	r := n.host.Replica()
	if r.CheckpointOp() == 0 {
		t.Fatalf("no checkpoint after %d ops into %d slots", r.OpNumber(), cfg.JournalSlots)
	}
	want := n.host.Machine().Checkpoint()
	lastOp, checkpoint := r.OpNumber(), r.CheckpointOp()
	var wantApplied []string
	for _, a := range n.applied {
		var op uint64
		fmt.Sscanf(a, "%d:", &op)
		if op > checkpoint {
			wantApplied = append(wantApplied, a)
		}
	}
	wantSession, _ := n.host.Session(sessions[0].client)
	st.crash()
	n2 := openMetaNode(t, cfg, st, loop)
	if got := n2.host.Machine().Checkpoint(); !bytes.Equal(got, want) {
		t.Fatal("the reopened group's machine differs")
	}
	if fmt.Sprint(n2.applied) != fmt.Sprint(wantApplied) {
		t.Fatalf("reopen applied %v, want the ops above checkpoint %d: %v", n2.applied, checkpoint, wantApplied)
	}
	if n2.host.Replica().OpNumber() != lastOp || len(n2.host.Machine().Streams()) != 30 {
		t.Fatalf("reopened at op %d with %d streams, want op %d and 30", n2.host.Replica().OpNumber(), len(n2.host.Machine().Streams()), lastOp)
	}
	if !strings.Contains(fmt.Sprint(n2.applied), fmt.Sprintf(":%d:", group.OperationLogout)) {
		t.Fatalf("no logout among the replayed %v", n2.applied)
	}
	if got, ok := n2.host.Session(sessions[0].client); !ok || got != wantSession {
		t.Fatalf("session after reopen: %+v %v, want %+v", got, ok, wantSession)
	}
	if _, ok := n2.host.Session(last.client); ok {
		t.Fatal("the logged-out session is back after the reopen")
	}
	// Each session's latest request again: its cached reply, nothing
	// applied; a later one of a session is new.
	for _, s := range sessions[:len(sessions)-1] {
		applied := len(n2.applied)
		n2.host.SubmitRequest(group.MetaRequest{Client: s.client, Session: s.session, Request: s.request, Operation: metadata.OperationCreateStream,
			Body: metadata.EncodeOp(metadata.Envelope{UserID: metadata.RootUserID}, &metadata.CreateStream{Name: "again"})})
		n2.run()
		if r := n2.last; !r.Replayed || r.Op == 0 || r.Request != s.request || len(n2.applied) != applied {
			t.Fatalf("duplicate of session %v's request %d after reopen: %+v (applied %d -> %d)", s.client, s.request, r, applied, len(n2.applied))
		}
	}
	n2.host.SubmitRequest(group.MetaRequest{Client: last.client, Session: last.session, Request: last.request + 2, Operation: metadata.OperationCreateStream,
		Body: metadata.EncodeOp(metadata.Envelope{UserID: metadata.RootUserID}, &metadata.CreateStream{Name: "gone"})})
	n2.run()
	if !n2.last.Evicted {
		t.Fatalf("request of a logged-out session: %+v, want an eviction", n2.last)
	}
	t.Logf("%d ops, checkpoint at %d, %d applied again at reopen", lastOp, checkpoint, len(n2.applied))
}

// TestMetaHostClientTableAppliesARetryOnce: through SubmitRequest the
// group's client table registers a client (the register's op is its
// session) and answers a retry of a committed request, under the same
// request number, from its cached reply: the request is applied once.
// Submit's sessionless path (the server's own operations) applies the
// retry again.
func TestMetaHostClientTableAppliesARetryOnce(t *testing.T) {
	for _, table := range []bool{true, false} {
		cfg := vsr.DefaultConfig(0, 1, 0)
		cfg.Durability = vsr.Persisted
		cfg.JournalSlots = 32
		cfg.PipelinePrepareMax = 4
		cfg.MessageSizeMax = 64 << 10
		cfg.WALBytesMax = 16 << 20
		cfg.ClientsMax = 4
		loop := &[]func(){}
		st := newMemStorage(&cfg, loop)
		n := &metaNode{loop: loop, replies: map[uint64]group.Reply{}}
		h, err := group.NewMeta(group.MetaConfig{Replica: cfg},
			group.MetaBinding{Storage: st, Peers: noPeers{}, Clock: &stepClock{}, Effects: n, Replies: n})
		if err != nil {
			t.Fatal(err)
		}
		n.host = h
		h.Open(func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		})
		n.run()
		client := vsr.Uint128{Lo: 7}
		session := uint64(0)
		if table {
			h.SubmitRequest(group.MetaRequest{Client: client, Operation: group.OperationRegister})
			n.run()
			r := n.replies[0]
			if r.Disposition != vsr.DispositionNone || r.Op == 0 {
				t.Fatalf("register: %+v", r)
			}
			session = r.Op
		}
		body := metadata.EncodeOp(metadata.Envelope{UserID: metadata.RootUserID}, &metadata.CreateStream{Name: "s"})
		var ops []uint64
		var codes []metadata.Code
		for try := 0; try < 2; try++ {
			delete(n.replies, 1)
			if table {
				h.SubmitRequest(group.MetaRequest{Client: client, Session: session, Request: 1, Operation: metadata.OperationCreateStream, Body: body})
			} else {
				h.Submit(client, 1, metadata.OperationCreateStream, body)
			}
			n.run()
			r, ok := n.replies[1]
			if !ok || r.Disposition != vsr.DispositionNone {
				t.Fatalf("client table %v, try %d: %+v %v", table, try, r, ok)
			}
			code, _ := metadata.ReplyCode(r.Body)
			ops, codes = append(ops, r.Op), append(codes, code)
		}
		applied := len(n.applied)
		t.Logf("client table %v: replies at ops %v with codes %v, %d ops applied", table, ops, codes, applied)
		if table && (applied != 1 || ops[0] != ops[1] || codes[1] != metadata.CodeOK) {
			t.Fatalf("with the client table a retried create was applied %d times (replies at ops %v, codes %v)", applied, ops, codes)
		}
		if !table && (applied != 2 || codes[1] != metadata.CodeStreamNameAlreadyExists) {
			t.Fatalf("without the client table the retry applied %d times with codes %v: the test no longer shows the difference", applied, codes)
		}
	}
}
