package vsr

import (
	"errors"
	"slices"
	"testing"
)

// TestSuperblockLostReplicaRecoversAsOneThatLostItsMemory: a backup whose
// both superblock copies are damaged while it is down opens (it does not
// fail), but as a replica that lost its memory: while only the primary
// answers it (the third replica down) it stays recovering, acks nothing
// (an op submitted meanwhile does not commit with the primary and it as
// a quorum) and answers no restart; once the third replica is back it
// recovers from the quorum, catches up on every committed op and records
// a superblock that no longer says MemoryLost. In both durabilities (a
// persisted one also wipes the journal it can no longer vouch for).
func TestSuperblockLostReplicaRecoversAsOneThatLostItsMemory(t *testing.T) {
	for _, durability := range []Durability{Replicated, Persisted} {
		name := "replicated"
		if durability == Persisted {
			name = "persisted"
		}
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig(7, 3, 0)
			cfg.JournalSlots = 64
			cfg.PipelinePrepareMax = 4
			cfg.MessageSizeMax = 64 << 10
			cfg.CheckpointIntervalOps = 4
			cfg.Durability = durability
			cfg.RecoverLostSuperblock = true
			c := newTestCluster(t, cfg)
			submit(t, c, 1, 10, "a")
			c.tick(50)
			primary := -1
			for i, n := range c.nodes {
				if n.replica.Primary() {
					primary = i
				}
			}
			lost, other := (primary+1)%3, (primary+2)%3
			c.crash(lost)
			sb := c.nodes[lost].storage.durable[ZoneSuperblock]
			sb[64] ^= 0xff
			sb[SectorSize+64] ^= 0xff
			submit(t, c, 1, 3, "b")
			c.crash(other)
			c.queue = nil
			c.start(lost)
			r := c.nodes[lost].replica
			if !r.MemoryLost() || r.Status() != StatusRecovering {
				t.Fatalf("r%d opened without a superblock as %s (memory lost %v), want recovering without memory\n%s", lost, r.Status(), r.MemoryLost(), c.status())
			}
			p := c.nodes[primary].replica
			commit := p.CommitNumber()
			if err := c.client(1).Submit(OperationUserMin, []byte("c-0")); err != nil {
				t.Fatal(err)
			}
			c.tick(300)
			if r.Status() != StatusRecovering || !r.MemoryLost() || p.CommitNumber() != commit {
				t.Fatalf("with only the primary up, the replica without a superblock is %s (memory lost %v) and the primary committed %d (was %d): it acked or voted without its memory\n%s",
					r.Status(), r.MemoryLost(), p.CommitNumber(), commit, c.status())
			}
			c.start(other)
			for ticks := 0; ticks < 3000 && (!c.normal() || c.client(1).Busy() || r.CommitNumber() != p.CommitNumber()); ticks++ {
				c.tick(1)
			}
			if !c.normal() || c.client(1).Busy() || r.MemoryLost() || r.CommitNumber() != p.CommitNumber() {
				t.Fatalf("the replica without a superblock did not recover (memory lost %v, busy %v):\n%s", r.MemoryLost(), c.client(1).Busy(), c.status())
			}
			c.tick(50)
			if d := r.sb.durable; d.MemoryLost || d.Sequence == 0 {
				t.Fatalf("after the recovery the durable superblock is %+v, want one recorded without MemoryLost", d)
			}
			c.checkAgreement()
			want := c.nodes[primary].sm.entries
			if got := c.nodes[lost].sm.entries; !slices.Equal(got, want) && !slices.Equal(got, want[len(want)-len(got):]) {
				t.Fatalf("the recovered replica applied %v, the primary %v", got, want)
			}
		})
	}
}

// TestSuperblockLostSingletonFailsOpen: a group of one has no peer to
// recover from; its Open reports ErrSuperblockLost (which the host turns
// into a fence) instead of formatting the storage as a fresh group.
func TestSuperblockLostSingletonFailsOpen(t *testing.T) {
	cfg := DefaultConfig(7, 1, 0)
	cfg.JournalSlots = 64
	cfg.MessageSizeMax = 64 << 10
	c := newTestCluster(t, cfg)
	submit(t, c, 1, 3, "a")
	c.crash(0)
	sb := c.nodes[0].storage.durable[ZoneSuperblock]
	sb[64] ^= 0xff
	sb[SectorSize+64] ^= 0xff
	r, err := NewReplica(cfg, c.nodes[0].storage, &testNetwork{c, 0}, &testStateMachine{}, &c.clock)
	if err != nil {
		t.Fatal(err)
	}
	var openErr error
	opened := false
	r.Open(func(err error) { openErr, opened = err, true })
	c.pumpIO()
	if !opened || !errors.Is(openErr, ErrSuperblockLost) || !errors.Is(openErr, ErrSuperblock) {
		t.Fatalf("open of a singleton without a valid superblock: opened %v, %v; want ErrSuperblockLost", opened, openErr)
	}
}

// TestSuperblockLostWithoutRecoveryFailsOpen: a host that does not set
// Config.RecoverLostSuperblock keeps Open failing with ErrSuperblockLost
// for a replica with peers too.
func TestSuperblockLostWithoutRecoveryFailsOpen(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.MessageSizeMax = 64 << 10
	c := newTestCluster(t, cfg)
	submit(t, c, 1, 3, "a")
	c.crash(2)
	sb := c.nodes[2].storage.durable[ZoneSuperblock]
	sb[64] ^= 0xff
	sb[SectorSize+64] ^= 0xff
	rc := cfg
	rc.ReplicaIndex = 2
	r, err := NewReplica(rc, c.nodes[2].storage, &testNetwork{c, 2}, &testStateMachine{}, &c.clock)
	if err != nil {
		t.Fatal(err)
	}
	var openErr error
	r.Open(func(err error) { openErr = err })
	c.pumpIO()
	if !errors.Is(openErr, ErrSuperblockLost) || r.MemoryLost() {
		t.Fatalf("open without RecoverLostSuperblock: %v (memory lost %v), want ErrSuperblockLost", openErr, r.MemoryLost())
	}
}

// TestMemoryLostFlagSurvivesARestart: a superblock written while the
// replica still recovered from the loss of its superblock (a checkpoint
// transfer meanwhile) records MemoryLost; a persisted replica that opens
// with it must not take its view as a promise: with only the primary
// answering it stays recovering (without the flag, a persisted replica
// recovers from the primary alone: recoveryFromPrimary), and it recovers
// once the quorum answers, clearing the flag durably.
func TestMemoryLostFlagSurvivesARestart(t *testing.T) {
	cfg := DefaultConfig(7, 3, 0)
	cfg.JournalSlots = 64
	cfg.PipelinePrepareMax = 4
	cfg.MessageSizeMax = 64 << 10
	cfg.CheckpointIntervalOps = 4
	cfg.Durability = Persisted
	cfg.RecoverLostSuperblock = true
	c := newTestCluster(t, cfg)
	submit(t, c, 1, 6, "a")
	c.tick(50)
	primary := -1
	for i, n := range c.nodes {
		if n.replica.Primary() {
			primary = i
		}
	}
	lost, other := (primary+1)%3, (primary+2)%3
	c.crash(lost)
	zone := c.nodes[lost].storage.durable[ZoneSuperblock]
	for copyIndex := range superblockCopies {
		sector := zone[copyIndex*SectorSize : (copyIndex+1)*SectorSize]
		s, err := decodeSuperblock(sector)
		if err != nil {
			t.Fatalf("copy %d: %v", copyIndex, err)
		}
		if s.MemoryLost {
			t.Fatalf("copy %d records MemoryLost before any loss", copyIndex)
		}
		s.MemoryLost = true
		encodeSuperblock(&s, sector)
		if back, err := decodeSuperblock(sector); err != nil || !back.MemoryLost {
			t.Fatalf("copy %d: MemoryLost does not round-trip: %+v, %v", copyIndex, back, err)
		}
	}
	c.crash(other)
	c.queue = nil
	c.start(lost)
	r := c.nodes[lost].replica
	c.tick(300)
	if r.Status() != StatusRecovering || !r.MemoryLost() {
		t.Fatalf("a persisted replica whose superblock records MemoryLost is %s (memory lost %v) with only the primary up, want recovering\n%s",
			r.Status(), r.MemoryLost(), c.status())
	}
	c.start(other)
	for ticks := 0; ticks < 3000 && (!c.normal() || r.MemoryLost()); ticks++ {
		c.tick(1)
	}
	c.tick(50)
	if !c.normal() || r.MemoryLost() || r.sb.durable.MemoryLost {
		t.Fatalf("the replica did not recover (memory lost %v, durable %v):\n%s", r.MemoryLost(), r.sb.durable.MemoryLost, c.status())
	}
	c.checkAgreement()
}
