package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/stratabroker/strata/vsr"
)

// Coalesced commit heartbeats.
//
// A server hosts thousands of partition groups; each primary announces its
// commit to its backups every vsr CommitHeartbeatTicks. Sent as one Commit
// message per group and peer, that is thousands of messages, checksums and
// hand-offs per heartbeat interval for a cluster that does nothing. A
// binding whose Peers implements Announcer gets the announcements instead
// (vsr.CommitAnnouncer) and sends, per tick, one announcement frame to
// each peer carrying (group, view, commit, checkpoint) for every group
// whose primary announced that tick; the receiving node decodes the frame
// (DecodeAnnouncements verifies its checksum) and hands each entry to its
// group's host (Host.Announce), which handles it as the Commit message it
// stands for.
//
// Frame layout (little endian):
//
//	0   checksum      u128  XXH3-128 of bytes 16..end
//	16  kind          u8    AnnouncementKind
//	17  version       u8    AnnouncementVersion
//	18  replica       u8    the sender's replica index
//	19  reserved      u8    0
//	20  count         u32   entries
//	24  cluster       u64
//	32  entries       count x 32 bytes: group, view, commit, checkpoint op (u64 each)

// Announcement is one group's commit heartbeat.
type Announcement struct {
	Group, View, Commit, CheckpointOp uint64
}

// Announcer is an optional interface of Peers: a binding that coalesces
// the commit heartbeats of the groups it hosts. AnnounceCommit stands for
// a Commit message of this replica to every other replica of the group;
// it never blocks and may be lost.
type Announcer interface {
	AnnounceCommit(a Announcement)
}

// announcingNetwork is the replica's network when Peers is an Announcer.
type announcingNetwork struct {
	hostNetwork
	a Announcer
}

func (n *announcingNetwork) AnnounceCommit(view, commit, checkpointOp uint64) {
	n.a.AnnounceCommit(Announcement{Group: n.h.cfg.Replica.Group, View: view, Commit: commit, CheckpointOp: checkpointOp})
}

// Frame constants.
const (
	// AnnouncementKind is the replica-plane message kind of a frame.
	AnnouncementKind = 0xA1
	// AnnouncementVersion is the frame version this build writes and reads.
	AnnouncementVersion      = 1
	announcementHeaderSize   = 32
	announcementEntrySize    = 32
	AnnouncementsPerFrameMax = 1 << 14 // a frame of at most 512 KiB
)

// ErrAnnouncementFrame reports a frame DecodeAnnouncements refuses.
var ErrAnnouncementFrame = errors.New("group: bad announcement frame")

// AnnouncementFrameSize is the encoded size of a frame of n entries.
func AnnouncementFrameSize(n int) int { return announcementHeaderSize + n*announcementEntrySize }

// EncodeAnnouncements appends the frame of entries (at most
// AnnouncementsPerFrameMax) from replica of cluster to dst.
func EncodeAnnouncements(dst []byte, cluster uint64, replica uint8, entries []Announcement) []byte {
	if len(entries) > AnnouncementsPerFrameMax {
		entries = entries[:AnnouncementsPerFrameMax] // the caller splits; never a frame the decoder refuses
	}
	start := len(dst)
	var hdr [announcementHeaderSize]byte
	hdr[16], hdr[17], hdr[18] = AnnouncementKind, AnnouncementVersion, replica
	binary.LittleEndian.PutUint32(hdr[20:], uint32(len(entries)))
	binary.LittleEndian.PutUint64(hdr[24:], cluster)
	dst = append(dst, hdr[:]...)
	var e [announcementEntrySize]byte
	for _, a := range entries {
		binary.LittleEndian.PutUint64(e[0:], a.Group)
		binary.LittleEndian.PutUint64(e[8:], a.View)
		binary.LittleEndian.PutUint64(e[16:], a.Commit)
		binary.LittleEndian.PutUint64(e[24:], a.CheckpointOp)
		dst = append(dst, e[:]...)
	}
	sum := vsr.Checksum(dst[start+16:])
	binary.LittleEndian.PutUint64(dst[start:], sum.Lo)
	binary.LittleEndian.PutUint64(dst[start+8:], sum.Hi)
	return dst
}

// AnnouncementFrame is a decoded frame; its entries alias the frame's
// bytes (Entry reads one).
type AnnouncementFrame struct {
	Cluster uint64
	Replica uint8
	entries []byte
}

// Len is the number of entries.
func (f *AnnouncementFrame) Len() int { return len(f.entries) / announcementEntrySize }

// Entry returns entry i, below Len.
func (f *AnnouncementFrame) Entry(i int) Announcement {
	e := f.entries[i*announcementEntrySize : (i+1)*announcementEntrySize]
	return Announcement{Group: binary.LittleEndian.Uint64(e[0:]), View: binary.LittleEndian.Uint64(e[8:]),
		Commit: binary.LittleEndian.Uint64(e[16:]), CheckpointOp: binary.LittleEndian.Uint64(e[24:])}
}

// DecodeAnnouncements checks a frame (its size, kind, version, entry count
// and checksum) and returns it; it never panics on any bytes.
func DecodeAnnouncements(frame []byte) (AnnouncementFrame, error) {
	if len(frame) < announcementHeaderSize {
		return AnnouncementFrame{}, fmt.Errorf("%w: %d bytes, below the %d-byte header", ErrAnnouncementFrame, len(frame), announcementHeaderSize)
	}
	if frame[16] != AnnouncementKind || frame[17] != AnnouncementVersion || frame[19] != 0 {
		return AnnouncementFrame{}, fmt.Errorf("%w: kind %#x version %d", ErrAnnouncementFrame, frame[16], frame[17])
	}
	count := uint64(binary.LittleEndian.Uint32(frame[20:]))
	if count > AnnouncementsPerFrameMax || uint64(len(frame)) != announcementHeaderSize+count*announcementEntrySize {
		return AnnouncementFrame{}, fmt.Errorf("%w: %d entries in %d bytes", ErrAnnouncementFrame, count, len(frame))
	}
	sum := vsr.Checksum(frame[16:])
	if sum.Lo != binary.LittleEndian.Uint64(frame[0:]) || sum.Hi != binary.LittleEndian.Uint64(frame[8:]) {
		return AnnouncementFrame{}, fmt.Errorf("%w: checksum mismatch", ErrAnnouncementFrame)
	}
	return AnnouncementFrame{Cluster: binary.LittleEndian.Uint64(frame[24:]), Replica: frame[18], entries: frame[announcementHeaderSize:]}, nil
}
