package server

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/storage/memfs"
	"github.com/stratabroker/strata/vsr"
)

func TestWALSlotSize(t *testing.T) {
	for _, c := range []struct {
		walBytesMax, want uint64
	}{
		{256 << 20, vsr.MessageSizeMaxLimit}, // the default: vsr's 64 MiB limit
		{1 << 20, 512 << 10},
		{1<<20 + 3, 512 << 10},
		{256 << 10, 128 << 10},
		{300 << 10, 148 << 10}, // rounded down to a sector
	} {
		got, err := walSlotSize(c.walBytesMax)
		if err != nil || got != c.want {
			t.Errorf("walSlotSize(%d) = %d, %v; want %d", c.walBytesMax, got, err, c.want)
		}
	}
	if _, err := walSlotSize(255 << 10); err == nil || !strings.Contains(err.Error(), "wal_bytes_max") {
		t.Fatalf("a wal_bytes_max below 256 KiB: %v", err)
	}
}

// TestWALFileLayout: a new prepares.wal records its geometry in its
// header and is synced; a reopen takes the geometry from the file (not
// from what the configuration would make now); the two journal zones sit
// after the header sector, headers first, and an access beyond a zone is
// an error.
func TestWALFileLayout(t *testing.T) {
	fs := memfs.New()
	if err := fs.MkdirAll("/p"); err != nil {
		t.Fatal(err)
	}
	geo := walGeometry{slots: 32, slotSize: 128 << 10}
	w, err := openWALFile(fs, "/p/prepares.wal", geo)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	fs.Crash() // the header and the file's name were synced
	w, err = openWALFile(fs, "/p/prepares.wal", walGeometry{slots: 256, slotSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if w.geo != geo {
		t.Fatalf("reopened geometry %+v, the file's is %+v", w.geo, geo)
	}
	if got := w.zoneSize(vsr.ZoneWALHeaders); got != 32*vsr.SectorSize {
		t.Fatalf("header zone %d", got)
	}
	if got := w.zoneSize(vsr.ZoneWALPrepares); got != 32*(128<<10) {
		t.Fatalf("prepare zone %d", got)
	}
	for _, c := range []struct {
		zone   vsr.Zone
		offset uint64
		want   int64
	}{
		{vsr.ZoneWALHeaders, 0, 4096},
		{vsr.ZoneWALHeaders, 31 * 4096, 32 * 4096},
		{vsr.ZoneWALPrepares, 0, 4096 + 32*4096},
		{vsr.ZoneWALPrepares, 5 * (128 << 10), 4096 + 32*4096 + 5*(128<<10)},
	} {
		if at, err := w.at(c.zone, c.offset, vsr.SectorSize); err != nil || at != c.want {
			t.Errorf("zone %d offset %d: file offset %d, %v; want %d", c.zone, c.offset, at, err, c.want)
		}
	}
	if _, err := w.at(vsr.ZoneWALHeaders, 31*4096, 2*vsr.SectorSize); err == nil {
		t.Error("a write past the header zone was mapped")
	}
	if _, err := w.at(vsr.ZoneWALPrepares, 32*(128<<10), vsr.SectorSize); err == nil {
		t.Error("a write past the prepare zone was mapped")
	}
}

// TestWALFileRefused: a prepares.wal of another version, with a damaged
// header or an impossible geometry is refused naming what is wrong, and
// the file is left as it was.
func TestWALFileRefused(t *testing.T) {
	geo := walGeometry{slots: 32, slotSize: 128 << 10}
	for _, c := range []struct {
		name   string
		damage func(hdr []byte)
		want   []string
	}{
		{"version", func(hdr []byte) { binary.LittleEndian.PutUint16(hdr[4:], 2) }, []string{"format version 2", "reads version 1"}},
		{"old version", func(hdr []byte) { binary.LittleEndian.PutUint16(hdr[4:], 0) }, []string{"format version 0", "reads version 1"}},
		{"geometry", func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[16:], 1000) }, []string{"not a valid geometry"}},
		{"zone sizes", func(hdr []byte) { binary.LittleEndian.PutUint64(hdr[32:], 1<<40) }, []string{"not a valid geometry"}},
		{"checksum", func(hdr []byte) { hdr[8]++ }, []string{"bad magic or header checksum"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := memfs.New()
			if err := fs.MkdirAll("/p"); err != nil {
				t.Fatal(err)
			}
			hdr := encodeWALFileHeader(geo)
			c.damage(hdr)
			if c.name != "checksum" {
				binary.LittleEndian.PutUint64(hdr[56:], xxh3.Hash(hdr[:56]))
			}
			f, err := fs.Create("/p/prepares.wal")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(hdr, 0); err != nil {
				t.Fatal(err)
			}
			_ = f.Close()
			_, err = openWALFile(fs, "/p/prepares.wal", geo)
			if err == nil || !errors.Is(err, errVSRFormat) {
				t.Fatalf("opened: %v", err)
			}
			for _, want := range append(c.want, "/p/prepares.wal") {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not say %q", err, want)
				}
			}
			if got, _ := fs.ReadFile("/p/prepares.wal"); string(got) != string(hdr) {
				t.Fatal("the refused file was changed")
			}
		})
	}
}

// TestVSRStorageSyncsWrittenFiles: vsr.Storage's Sync syncs the files
// written since the last one (a journal write costs one sync of
// prepares.wal, not of consensus.vsr or the superblock file too; a
// superblock write one of superblocks.sb), with or without a prepare WAL.
// What a Sync covered survives a crash.
func TestVSRStorageSyncsWrittenFiles(t *testing.T) {
	fs := memfs.New()
	if err := fs.MkdirAll("/p"); err != nil {
		t.Fatal(err)
	}
	store, owner := newTestSuperblockStore(t, fs, "/data")
	g := &vsrGroup{p: &partitionRuntime{fs: fs}}
	st, err := openVSRFileStorage(g, "/p/consensus.vsr", 2*vsr.SectorSize, store, owner, 7)
	if err != nil {
		t.Fatal(err)
	}
	if st.wal, err = openWALFile(fs, "/p/prepares.wal", walGeometry{slots: 16, slotSize: 8 * vsr.SectorSize}); err != nil {
		t.Fatal(err)
	}
	defer st.close()
	if got := st.ZoneSize(vsr.ZoneWALPrepares); got != 16*8*vsr.SectorSize {
		t.Fatalf("prepare zone %d", got)
	}
	var errs []error
	done := func(err error) { errs = append(errs, err) }
	sector := func(b byte) []byte {
		s := make([]byte, vsr.SectorSize)
		s[0] = b
		return s
	}
	syncs := func(f func()) int {
		before := fs.Syncs()
		f()
		return fs.Syncs() - before
	}
	if n := syncs(func() { st.Sync(done) }); n != 0 {
		t.Fatalf("a sync with nothing written synced %d files", n)
	}
	st.Write(vsr.ZoneWALPrepares, 3*8*vsr.SectorSize, sector(7), done)
	if n := syncs(func() { st.Sync(done) }); n != 1 {
		t.Fatalf("a journal write's sync synced %d files", n)
	}
	st.Write(vsr.ZoneWALHeaders, vsr.SectorSize, sector(8), done)
	st.Write(vsr.ZoneSuperblock, vsr.SectorSize, sector(9), done)
	if n := syncs(func() { st.Sync(done) }); n != 2 {
		t.Fatalf("a sync after journal and superblock writes synced %d files", n)
	}
	st.Write(vsr.ZoneCheckpoint, vsr.SectorSize, sector(10), done)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	fs.Crash() // the checkpoint sector was never synced
	for _, c := range []struct {
		file string
		at   int64
		want byte
	}{
		{"/p/prepares.wal", vsr.SectorSize + 16*vsr.SectorSize + 3*8*vsr.SectorSize, 7},
		{"/p/prepares.wal", 2 * vsr.SectorSize, 8},
		{store.name, store.zoneOffset(st.slot.index) + vsr.SectorSize, 9},
		{"/p/consensus.vsr", vsrFileHeaderSize + vsr.SectorSize, 0},
	} {
		data, _ := fs.ReadFile(c.file)
		if got := byte(0); int64(len(data)) > c.at {
			got = data[c.at]
			if got != c.want {
				t.Errorf("%s at %d: %d after the crash, want %d", c.file, c.at, got, c.want)
			}
		} else if c.want != 0 {
			t.Errorf("%s at %d: lost in the crash", c.file, c.at)
		}
	}

	// Without a WAL: what was written.
	store, owner = newTestSuperblockStore(t, fs, "/data") // the old handles went with the crash
	g2 := &vsrGroup{p: &partitionRuntime{fs: fs}}
	plain, err := openVSRFileStorage(g2, "/p/other.vsr", 2*vsr.SectorSize, store, owner, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.close()
	if plain.ZoneSize(vsr.ZoneWALPrepares) != 0 {
		t.Fatal("a group without a WAL has journal zones")
	}
	if n := syncs(func() { plain.Sync(done) }); n != 0 {
		t.Fatalf("a sync without a WAL and nothing written synced %d files", n)
	}
	plain.Write(vsr.ZoneCheckpoint, 0, sector(11), done)
	if n := syncs(func() { plain.Sync(done) }); n != 1 {
		t.Fatalf("a sync of a checkpoint write without a WAL synced %d files", n)
	}
	plain.Write(vsr.ZoneCheckpoint, 0, sector(12), done)
	plain.Write(vsr.ZoneSuperblock, 0, sector(13), done)
	if n := syncs(func() { plain.Sync(done) }); n != 2 {
		t.Fatalf("a sync of a checkpoint and a superblock write synced %d files", n)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}
