package vsr

import (
	"errors"
	"strings"
	"testing"
)

func groupTestConfig(replicas uint8, group uint64) Config {
	cfg := DefaultConfig(7, replicas, 0)
	cfg.Group = group
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.WALBytesMax = 16 << 20
	return cfg
}

// TestHeaderCarriesGroup checks that the group survives the wire, that the
// header checksum covers it, and that group 0 encodes exactly as the
// reserved bytes did before groups existed.
func TestHeaderCarriesGroup(t *testing.T) {
	m := sampleMessage()
	m.Group = 0xfedcba9876543210
	m.Seal()
	buf := m.Encode(nil)
	var got Message
	if err := got.Decode(buf); err != nil || got.Group != m.Group {
		t.Fatalf("decode: %v, group %#x", err, got.Group)
	}
	for i := 160; i < 168; i++ {
		bad := append([]byte(nil), buf...)
		bad[i] ^= 1
		if err := got.Decode(bad); !errors.Is(err, ErrMessageChecksum) {
			t.Fatalf("flipped group byte %d: %v", i, err)
		}
	}
	zero := sampleMessage().Encode(nil)
	for i := 160; i < HeaderSize; i++ {
		if zero[i] != 0 {
			t.Fatalf("group 0 header has byte %d = %#x", i, zero[i])
		}
	}
	// The bytes past the group stay reserved.
	bad := append([]byte(nil), buf...)
	bad[168] = 1
	putUint128(bad[0:], checksum(bad[16:HeaderSize]))
	if err := got.Decode(bad); !errors.Is(err, ErrMessageInvalid) {
		t.Fatalf("reserved byte 168 set: %v", err)
	}
}

// TestRootHeaderPerGroup checks that two groups' logs start from different
// roots, so that no prepare of one chains onto the other's log.
func TestRootHeaderPerGroup(t *testing.T) {
	a, b := rootHeader(7, 1), rootHeader(7, 2)
	if a.Checksum == b.Checksum || a.Group != 1 || b.Group != 2 {
		t.Fatalf("roots of groups 1 and 2: %+v %+v", a, b)
	}
}

// TestStepDropsForeignGroup delivers a commit heartbeat of another group
// (same cluster, validly sealed) to a backup: it is dropped and counted,
// and the same message of the replica's own group is handled.
func TestStepDropsForeignGroup(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(3, 5))
	b := 0
	for c.nodes[b].replica.Primary() {
		b++
	}
	backup := c.nodes[b].replica
	future := &Message{Header: Header{Command: CommandStartViewChange, Cluster: 7, Group: 6, Replica: uint8(b+1) % 3, View: 9}}
	future.Seal()
	backup.Step(future)
	if backup.View() != 0 || backup.ForeignGroupMessages() != 1 {
		t.Fatalf("foreign group message: view %d, counted %d", backup.View(), backup.ForeignGroupMessages())
	}
	own := future.Clone()
	own.Group = 5
	own.Seal()
	backup.Step(own)
	if backup.View() != 9 || backup.ForeignGroupMessages() != 1 {
		t.Fatalf("own group message: view %d, counted %d", backup.View(), backup.ForeignGroupMessages())
	}
}

// TestGroupRequestsCommit runs requests through a cluster of group 3: every
// message it sends carries the group and the log commits.
func TestGroupRequestsCommit(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(3, 3))
	cl := NewClient(ClientConfig{ID: Uint128{Lo: 1}, Cluster: 7, Group: 3, ReplicaCount: 3, RequestTimeoutTicks: 50}, func(replica uint8, m *Message) {
		c.queue = append(c.queue, envelope{-1, int(replica), m})
	})
	c.clients[1] = cl
	for i := range 3 {
		if err := cl.Submit(OperationUserMin, []byte{'a' + byte(i)}); err != nil {
			t.Fatal(err)
		}
		for ticks := 0; cl.Busy() && ticks < 1000; ticks++ {
			c.tick(1)
		}
		if cl.Busy() {
			t.Fatalf("request %d did not complete:\n%s", i, c.status())
		}
	}
	c.tick(20)
	for i, n := range c.nodes {
		if got := strings.Join(n.sm.entries, ","); got != "a,b,c" {
			t.Fatalf("replica %d applied %q", i, got)
		}
		if n.replica.ForeignGroupMessages() != 0 {
			t.Fatalf("replica %d dropped %d messages of its own group", i, n.replica.ForeignGroupMessages())
		}
	}
}

// TestSuperblockOfAnotherGroupRefused opens a replica of group 2 on the
// storage a replica of group 1 formatted: Open fails and says so.
func TestSuperblockOfAnotherGroupRefused(t *testing.T) {
	c := newTestCluster(t, groupTestConfig(1, 1))
	storage := c.nodes[0].storage
	cfg := groupTestConfig(1, 2)
	r, err := NewReplica(cfg, storage, &testNetwork{c, 0}, &testStateMachine{}, &c.clock)
	if err != nil {
		t.Fatal(err)
	}
	var openErr error
	opened := false
	r.Open(func(err error) { openErr, opened = err, true })
	c.pumpIO()
	if !opened || !errors.Is(openErr, ErrForeignGroup) || !errors.Is(openErr, ErrSuperblock) {
		t.Fatalf("open of group 2 on group 1's storage: opened=%v err=%v", opened, openErr)
	}
	if !strings.Contains(openErr.Error(), "holds group 1") || !strings.Contains(openErr.Error(), "of group 2") {
		t.Fatalf("error does not name both groups: %v", openErr)
	}
	// The right group opens it.
	c.start(0)
}

// TestPrimariesSpreadByGroup checks that the primary of view v in group g
// is replica (v + g) % n, in a running cluster and as PrimaryIndex says.
func TestPrimariesSpreadByGroup(t *testing.T) {
	for group := uint64(0); group < 4; group++ {
		c := newTestCluster(t, groupTestConfig(3, group))
		want := int(group % 3)
		for i, n := range c.nodes {
			if n.replica.Primary() != (i == want) {
				t.Fatalf("group %d: replica %d primary=%v, want replica %d primary of view 0", group, i, n.replica.Primary(), want)
			}
		}
		// A view change moves the primary on to the next replica.
		c.crash(want)
		c.tick(400)
		next := (want + 1) % 3
		if !c.nodes[next].replica.Primary() || c.nodes[next].replica.View() != 1 {
			t.Fatalf("group %d after the primary crashed:\n%s", group, c.status())
		}
	}
	if PrimaryIndex(1<<63, 1<<63, 3) != uint8(((1<<63)%3+(1<<63)%3)%3) {
		t.Fatal("PrimaryIndex overflows")
	}
}
