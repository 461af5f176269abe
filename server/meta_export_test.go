package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/stratabroker/strata/journal"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/server/group"
	"github.com/stratabroker/strata/server/metadata"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// Test hooks for the metadata group's files (package server_test).

// metaLayoutForTest returns the replica configuration and the offsets of
// the WAL header and prepare zones in journal.wal for a journal of slots.
func metaLayoutForTest(slots uint32) (c vsr.Config, headers, prepares int64) {
	c = metaReplicaConfig(config.Metadata{JournalSlots: slots})
	headers = int64(metaHeaderSize + metaWALSuperblocks*vsr.SectorSize)
	return c, headers, headers + int64(c.ZoneSize(vsr.ZoneWALHeaders))
}

// MetaPrepareOffsetForTest returns where the slot of op's prepare starts
// in metadata/journal.wal, for a journal of slots.
func MetaPrepareOffsetForTest(slots uint32, op uint64) int64 {
	c, _, prepares := metaLayoutForTest(slots)
	return prepares + int64(op%c.JournalSlots)*int64(c.MessageSizeMax)
}

// MetaJournalEntryForTest is one op a stopped server's metadata journal
// holds above its checkpoint.
type MetaJournalEntryForTest struct {
	Op uint64
	// Operation is Iggy's operation number (Register 1, Logout 3).
	Operation wire.Operation
	// PrepareAt and HeaderAt are the offsets in journal.wal of the op's
	// prepare record and of its slot's header record.
	PrepareAt, HeaderAt int64
}

// MetaJournalForTest reads the metadata group's files in dir (the
// metadata directory of a stopped server whose journal has slots): the
// checkpoint op of the newest valid superblock copy and the ops the
// journal's prepare slots hold above it, in op order.
func MetaJournalForTest(dir string, slots uint32) (uint64, []MetaJournalEntryForTest, error) {
	wal, err := os.ReadFile(filepath.Join(dir, metaWALFile))
	if err != nil {
		return 0, nil, err
	}
	var best *vsr.SuperblockCopy
	for i, name := range metaSuperblockNames {
		sector, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) || len(sector) < vsr.SectorSize {
			at := metaHeaderSize + i*vsr.SectorSize
			sector = wal[at : at+vsr.SectorSize]
		} else if err != nil {
			return 0, nil, err
		}
		s, err := vsr.DecodeSuperblockCopy(sector)
		if err == nil && (best == nil || s.Sequence > best.Sequence) {
			best = &s
		}
	}
	if best == nil {
		return 0, nil, fmt.Errorf("%s: no valid superblock copy", dir)
	}
	c, headers, prepares := metaLayoutForTest(slots)
	var entries []MetaJournalEntryForTest
	for slot := int64(0); slot < int64(c.JournalSlots); slot++ {
		at := prepares + slot*int64(c.MessageSizeMax)
		if at >= int64(len(wal)) {
			break
		}
		rec, err := journal.ParseRecord(wal[at:min(int64(len(wal)), at+int64(c.MessageSizeMax))])
		if err != nil || !rec.Prepare || rec.Op <= best.CheckpointOp {
			continue
		}
		var m vsr.Message
		if err := m.Decode(rec.Payload); err != nil {
			continue
		}
		operation := wire.Operation(m.Operation)
		switch m.Operation {
		case vsr.OperationRegister:
			operation = wire.OpRegister
		case group.OperationLogout:
			operation = wire.OpLogout
		case group.OperationInternal:
			if len(m.Body) > 0 {
				operation = wire.Operation(m.Body[0])
			}
		}
		entries = append(entries, MetaJournalEntryForTest{Op: rec.Op, Operation: operation, PrepareAt: at, HeaderAt: headers + slot*vsr.SectorSize})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Op < entries[j].Op })
	return best.CheckpointOp, entries, nil
}

// SubmitMetadataForTest commits one metadata operation as the server's
// handlers do, bypassing their checks (a fixture's raw operations).
func SubmitMetadataForTest(s *Server, operation uint8, body []byte) ([]byte, error) {
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	_, reply, err := s.meta.submitLocked(operation, body)
	return reply, err
}

// MetaOpForTest is one operation for WriteMetadataDirForTest.
type MetaOpForTest struct {
	Operation uint8
	Timestamp uint64 // the prepare's, micros (0: the previous one's + 1)
	Body      []byte
}

// WriteMetadataDirForTest commits ops through a metadata group of one
// over the metadata directory dir (journal of slots), with no effects
// carried out: it writes a fixture's metadata (users, say) without a
// server. A server booted on the directory then replays them.
func WriteMetadataDirForTest(dir string, slots uint32, ops []MetaOpForTest) error {
	fsys := storage.OSFS{}
	loop := &hostLoop{}
	rc := metaReplicaConfig(config.Metadata{JournalSlots: slots, ClientsTableMax: 8192, ClientsPerUserMax: 1024})
	st, err := openMetaFileStorage(fsys, dir, loop, &rc)
	if err != nil {
		return err
	}
	rec := &fixtureRecorder{}
	now := uint64(1)
	host, err := group.NewMeta(group.MetaConfig{Replica: rc},
		group.MetaBinding{Storage: st, Peers: noPeers{}, Clock: fixtureClock{&now}, Effects: rec, Replies: rec})
	if err != nil {
		return errors.Join(err, st.close())
	}
	var openErr error
	loop.enter()
	host.Open(func(err error) { openErr = err })
	loop.leave()
	for i, op := range ops {
		if openErr != nil {
			break
		}
		now = max(op.Timestamp, now+1)
		rec.reply = nil
		loop.enter()
		host.Submit(metaGroupClient, uint64(i+1), op.Operation, op.Body)
		loop.leave()
		if rec.reply == nil || rec.reply.Disposition != vsr.DispositionNone {
			openErr = fmt.Errorf("op %d (operation %d): not committed (%+v, %v)", i, op.Operation, rec.reply, host.Err())
		}
	}
	if openErr == nil {
		loop.enter()
		host.SyncSeals()
		loop.leave()
		openErr = host.Err()
	}
	return errors.Join(openErr, st.close())
}

type fixtureRecorder struct{ reply *group.Reply }

func (f *fixtureRecorder) Deliver(r group.Reply) { f.reply = &r }

func (f *fixtureRecorder) Applied(*metadata.Machine, uint64, uint64, uint8, []byte, []metadata.Effect) {
}

type fixtureClock struct{ now *uint64 }

func (c fixtureClock) RealtimeMicros() uint64 { return *c.now }

// MetaSyncsForTest returns how many file syncs the metadata group's
// storage has made, and how many ops the group has committed.
func MetaSyncsForTest(s *Server) (syncs, ops uint64) {
	s.meta.mu.Lock()
	defer s.meta.mu.Unlock()
	_ = s.meta.onWriter(func() error { ops = s.meta.host.Replica().CommitNumber(); return nil })
	return s.meta.storage.fsyncs.Load(), ops
}
