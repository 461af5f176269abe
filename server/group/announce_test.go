package group_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stratabroker/strata/server/group"
)

func announcementFrame(n int) []byte {
	entries := make([]group.Announcement, n)
	for i := range entries {
		entries[i] = group.Announcement{Group: uint64(i)<<40 | 7, View: uint64(i % 3), Commit: uint64(1000 + i), CheckpointOp: uint64(i * 256)}
	}
	return group.EncodeAnnouncements(nil, 42, 2, entries)
}

// TestAnnouncementFrameRoundTrip: a frame decodes to the entries encoded,
// and every truncation, extension and single bit flip is refused.
func TestAnnouncementFrameRoundTrip(t *testing.T) {
	frame := announcementFrame(5)
	if len(frame) != group.AnnouncementFrameSize(5) {
		t.Fatalf("frame of 5 entries: %d bytes, want %d", len(frame), group.AnnouncementFrameSize(5))
	}
	f, err := group.DecodeAnnouncements(frame)
	if err != nil {
		t.Fatal(err)
	}
	if f.Cluster != 42 || f.Replica != 2 || f.Len() != 5 {
		t.Fatalf("decoded cluster %d replica %d entries %d", f.Cluster, f.Replica, f.Len())
	}
	if e := f.Entry(3); e != (group.Announcement{Group: 3<<40 | 7, View: 0, Commit: 1003, CheckpointOp: 768}) {
		t.Fatalf("entry 3: %+v", e)
	}
	for n := 0; n < len(frame); n++ {
		if _, err := group.DecodeAnnouncements(frame[:n]); !errors.Is(err, group.ErrAnnouncementFrame) {
			t.Fatalf("frame cut to %d bytes: %v", n, err)
		}
	}
	if _, err := group.DecodeAnnouncements(append(bytes.Clone(frame), 0)); err == nil {
		t.Fatal("a frame with a trailing byte decoded")
	}
	for bit := 0; bit < 8*len(frame); bit++ {
		bad := bytes.Clone(frame)
		bad[bit/8] ^= 1 << (bit % 8)
		if _, err := group.DecodeAnnouncements(bad); err == nil {
			t.Fatalf("a frame with bit %d flipped decoded", bit)
		}
	}
}

// FuzzDecodeAnnouncements: no bytes make the decoder panic, and whatever
// it accepts re-encodes to the same frame.
func FuzzDecodeAnnouncements(f *testing.F) {
	f.Add(announcementFrame(0))
	f.Add(announcementFrame(1))
	f.Add(announcementFrame(3))
	f.Add(announcementFrame(3)[:40])
	f.Add([]byte{})
	f.Add(make([]byte, 32))
	f.Fuzz(func(t *testing.T, frame []byte) {
		d, err := group.DecodeAnnouncements(frame)
		if err != nil {
			return
		}
		entries := make([]group.Announcement, d.Len())
		for i := range entries {
			entries[i] = d.Entry(i)
		}
		if again := group.EncodeAnnouncements(nil, d.Cluster, d.Replica, entries); !bytes.Equal(again, frame) {
			t.Fatalf("decoded frame re-encodes differently")
		}
	})
}
