package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/server/config"
	"github.com/stratabroker/strata/storage"
	"github.com/stratabroker/strata/vsr"
)

// The prepare WAL of a persisted multi-replica partition.
//
// The durability seed: when either of a topic's policies is persisted,
// each multi-replica partition keeps a bounded on-disk prepare WAL with
// full prepares (payloads included), and a prepare's PrepareOk waits until
// it and its history are durable. The WAL is prepares.wal in the partition
// directory (format in storage/FORMATS.md): a header sector, then vsr's
// two journal zones (ZoneWALHeaders, one sector per slot; ZoneWALPrepares,
// one slot of the group's message size per slot). The group's replica runs
// in vsr's persisted mode over it (vsr.Config.Durability): a backup acks a
// prepare, and the primary counts its own, only once the journal write and
// a sync after it completed; vsr batches the syncs (one in flight, one
// pending), so concurrent prepares share one fdatasync, on the owning
// shard's ring when it has one.
//
// Bounds. The slot size is the group's largest message, derived from
// `[partition] wal_bytes_max` (half of it, at most vsr's 64 MiB limit), and
// the journal has walJournalSlots slots: the file is sparse and holds at
// most slots x the largest prepare. vsr.Config.WALBytesMax is wal_bytes_max:
// it bounds the prepares above the checkpoint (written, in flight and, with
// the request queue, queued); a request that would pass it is answered 58
// TransientNotAccepted (overloaded: retry) and the host's next descriptor
// checkpoint frees the room, a persisted operation is never downgraded.
//
// Reclaim. A journal slot is written again only once the checkpoint above
// its op is durable (vsr's journal window), and the host writes a
// descriptor checkpoint only after the segment and offset writes up to it
// were synced (SyncForCheckpoint): WAL history is reclaimed only after the
// state that replaces it is.
//
// Geometry. The slot count and slot size are fixed when the file is
// created and recorded in its header; a later open takes them from the
// header (a changed wal_bytes_max keeps its byte bound, never below two
// slots, and gives its slot size to WALs created afterwards).

// walFileName is a persisted multi-replica partition's prepare WAL.
const walFileName = "prepares.wal"

// walFileVersion is the version of prepares.wal this build reads.
const walFileVersion = 1

const walFileMagic = "SPWL"

// walJournalSlots is the journal window of a partition with a WAL.
const walJournalSlots = 256

// walSlotSizeMin is the smallest prepare slot: a DoViewChange of the
// window's headers fits it.
const walSlotSizeMin = 32 * vsr.SectorSize

// walGeometry is a WAL's shape: slots and the bytes of each prepare slot.
type walGeometry struct {
	slots, slotSize uint64
}

func (w walGeometry) headersBytes() uint64  { return w.slots * vsr.SectorSize }
func (w walGeometry) preparesBytes() uint64 { return w.slots * w.slotSize }

// walSlotSize is the prepare slot (and message) size wal_bytes_max gives:
// half of it, so that two of the largest prepares fit the bound, rounded
// down to a sector, at most vsr's limit.
func walSlotSize(walBytesMax uint64) (uint64, error) {
	size := min(walBytesMax/2/vsr.SectorSize*vsr.SectorSize, vsr.MessageSizeMaxLimit)
	if size < walSlotSizeMin {
		return 0, fmt.Errorf("%w: [partition] wal_bytes_max %d is below 256 KiB: a prepare WAL needs room for two prepares of at least 128 KiB", config.ErrInvalid, walBytesMax)
	}
	return size, nil
}

// walFile is an open prepares.wal.
type walFile struct {
	file storage.File
	name string
	geo  walGeometry
}

// openWALFile opens (creating it with want when missing) a partition's
// prepare WAL and checks its header: a file of another version, or not a
// WAL, is refused naming file and version.
func openWALFile(fs storage.FS, name string, want walGeometry) (*walFile, error) {
	f, err := fs.OpenReadWrite(name)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	w := &walFile{file: f, name: name, geo: want}
	size, err := f.Size()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("size of %s: %w", name, err), f.Close())
	}
	if size == 0 {
		if _, err := f.WriteAt(encodeWALFileHeader(want), 0); err != nil {
			return nil, errors.Join(fmt.Errorf("write %s: %w", name, err), f.Close())
		}
		if err := f.Sync(); err != nil {
			return nil, errors.Join(fmt.Errorf("sync %s: %w", name, err), f.Close())
		}
		if err := fs.SyncDir(path.Dir(name)); err != nil {
			return nil, errors.Join(fmt.Errorf("sync the directory of %s: %w", name, err), f.Close())
		}
		return w, nil
	}
	hdr := make([]byte, vsr.SectorSize)
	if _, err := f.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, errors.Join(fmt.Errorf("read %s: %w", name, err), f.Close())
	}
	geo, err := checkWALFileHeader(hdr)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("%s: %w", name, err), f.Close())
	}
	w.geo = geo
	return w, nil
}

// encodeWALFileHeader lays out the header sector: magic, version, slots,
// slot size, the two zone sizes and a checksum of the first 56 bytes.
func encodeWALFileHeader(g walGeometry) []byte {
	hdr := make([]byte, vsr.SectorSize)
	copy(hdr, walFileMagic)
	binary.LittleEndian.PutUint16(hdr[4:], walFileVersion)
	binary.LittleEndian.PutUint64(hdr[8:], g.slots)
	binary.LittleEndian.PutUint64(hdr[16:], g.slotSize)
	binary.LittleEndian.PutUint64(hdr[24:], g.headersBytes())
	binary.LittleEndian.PutUint64(hdr[32:], g.preparesBytes())
	binary.LittleEndian.PutUint64(hdr[56:], xxh3.Hash(hdr[:56]))
	return hdr
}

func checkWALFileHeader(hdr []byte) (walGeometry, error) {
	if len(hdr) < vsr.SectorSize || string(hdr[:4]) != walFileMagic || binary.LittleEndian.Uint64(hdr[56:]) != xxh3.Hash(hdr[:56]) {
		return walGeometry{}, fmt.Errorf("%w: not a prepare WAL (bad magic or header checksum)", errVSRFormat)
	}
	if v := binary.LittleEndian.Uint16(hdr[4:]); v != walFileVersion {
		return walGeometry{}, fmt.Errorf("%w: prepare WAL format version %d, this build reads version %d (no migration: recreate the data directory)", errVSRFormat, v, walFileVersion)
	}
	g := walGeometry{slots: binary.LittleEndian.Uint64(hdr[8:]), slotSize: binary.LittleEndian.Uint64(hdr[16:])}
	switch {
	case g.slots < vsr.JournalSlotsMin || g.slots > vsr.JournalSlotsMax,
		g.slotSize < 2*vsr.SectorSize || g.slotSize > vsr.MessageSizeMaxLimit || g.slotSize%vsr.SectorSize != 0,
		binary.LittleEndian.Uint64(hdr[24:]) != g.headersBytes(), binary.LittleEndian.Uint64(hdr[32:]) != g.preparesBytes():
		return walGeometry{}, fmt.Errorf("%w: prepare WAL of %d slots of %d bytes is not a valid geometry", errVSRFormat, g.slots, g.slotSize)
	}
	return g, nil
}

// at maps a journal zone offset to a file offset.
func (w *walFile) at(z vsr.Zone, offset uint64, n int) (int64, error) {
	base, size := uint64(vsr.SectorSize), w.geo.headersBytes()
	if z == vsr.ZoneWALPrepares {
		base, size = base+w.geo.headersBytes(), w.geo.preparesBytes()
	}
	if offset+uint64(n) > size {
		return 0, fmt.Errorf("%s: zone %d offset %d length %d beyond %d", w.name, z, offset, n, size)
	}
	return int64(base + offset), nil
}

func (w *walFile) zoneSize(z vsr.Zone) uint64 {
	switch z {
	case vsr.ZoneWALHeaders:
		return w.geo.headersBytes()
	case vsr.ZoneWALPrepares:
		return w.geo.preparesBytes()
	}
	return 0
}

func (w *walFile) close() error {
	if err := w.file.Close(); err != nil {
		return fmt.Errorf("close %s: %w", w.name, err)
	}
	return nil
}

// walConfigure makes rc a persisted group over the WAL's geometry, with
// the byte bound walBytesMax (never below two slots: vsr's rule that two
// of the largest prepares fit).
func walConfigure(rc *vsr.Config, geo walGeometry, walBytesMax uint64) {
	rc.Durability = vsr.Persisted
	rc.JournalSlots = geo.slots
	rc.MessageSizeMax = uint32(geo.slotSize)
	rc.WALBytesMax = max(walBytesMax, 2*geo.slotSize)
	rc.ReleaseApplied = false
}

// needsWAL reports whether the partition keeps a prepare WAL: a
// multi-replica partition whose topic has either policy persisted (only
// replicated / replicated avoids it; a group of one never has one).
func (p *partitionRuntime) needsWAL() bool {
	return p.s.cluster.clustered() && (p.persisted || p.offsetsPersisted)
}
