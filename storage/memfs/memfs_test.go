package memfs

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stratabroker/strata/storage"
)

func mustWrite(t *testing.T, f storage.File, data []byte) {
	t.Helper()
	if _, err := f.Append(data); err != nil {
		t.Fatal(err)
	}
}

func TestCrashDropsUnsyncedKeepsSynced(t *testing.T) {
	m := New()
	if err := m.MkdirAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/a/b/f")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("synced"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/a/b"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("-lost"))
	if err := f.Truncate(2); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if _, err := f.Size(); !errors.Is(err, ErrStaleHandle) {
		t.Fatalf("stale handle: %v", err)
	}
	data, _ := m.ReadFile("/a/b/f")
	if string(data) != "synced" {
		t.Fatalf("after crash %q", data)
	}
}

func TestCrashTornKeepsSectorPrefix(t *testing.T) {
	m := New()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, bytes.Repeat([]byte{1}, 300))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, bytes.Repeat([]byte{2}, 100))  // unsynced, kept whole
	mustWrite(t, f, bytes.Repeat([]byte{3}, 2000)) // the last write, torn
	m.CrashTorn("/f", 1000)
	data, _ := m.ReadFile("/f")
	// The last write starts at 400; 400+1000 = 1400 rounds down to 1024.
	if len(data) != 1024 || data[399] != 2 || data[400] != 3 || data[1023] != 3 {
		t.Fatalf("torn file of %d bytes", len(data))
	}
	// The torn state is now durable.
	m.Crash()
	if again, _ := m.ReadFile("/f"); len(again) != 1024 {
		t.Fatal("torn prefix not durable")
	}
}

func TestInjectedReadErrors(t *testing.T) {
	m := New()
	f, err := m.Create("/f")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, make([]byte, 100))
	m.InjectReadError("/f", 50, 10)
	buf := make([]byte, 10)
	if _, err := f.ReadAt(buf, 40); err != nil {
		t.Fatalf("read before the fault: %v", err)
	}
	if _, err := f.ReadAt(buf, 45); !errors.Is(err, ErrInjected) {
		t.Fatalf("read over the fault: %v", err)
	}
	m.ClearFaults()
	if _, err := f.ReadAt(buf, 55); err != nil {
		t.Fatal(err)
	}
	if n, err := f.ReadAt(buf, 95); n != 5 || err != io.EOF {
		t.Fatalf("short read: %d %v", n, err)
	}
}

func TestNamespace(t *testing.T) {
	m := New()
	if _, err := m.Create("/missing/f"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("create without parent: %v", err)
	}
	if err := m.MkdirAll("/d/sub"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/d/b", "/d/a"} {
		f, err := m.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, []byte(name))
	}
	entries, err := m.ReadDir("/d")
	if err != nil || len(entries) != 3 || entries[0].Name != "a" || entries[2] != (storage.DirEntry{Name: "sub", IsDir: true}) {
		t.Fatalf("readdir %+v %v", entries, err)
	}
	if err := m.Rename("/d/a", "/d/b"); err != nil {
		t.Fatal(err)
	}
	data, _ := m.ReadFile("/d/b")
	if string(data) != "/d/a" {
		t.Fatalf("rename kept %q", data)
	}
	if ok, err := storage.Exists(m, "/d/a"); ok || err != nil {
		t.Fatal("renamed file still exists")
	}
	if err := m.Remove("/d"); err == nil {
		t.Fatal("removing a non-empty directory must fail")
	}
	ro, err := m.Open("/d/b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Append([]byte("x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("write through a read-only handle: %v", err)
	}
	if err := m.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := storage.Exists(m, "/d/sub"); ok {
		t.Fatal("RemoveAll left a directory")
	}
}

func TestCrashRestoresDurableNames(t *testing.T) {
	m := New()
	if err := m.MkdirAll("/d"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/d/old", "/d/gone"} {
		f, err := m.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, []byte(name))
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	// Unsynced namespace changes: a new file (data synced), a rename and
	// a remove.
	f, err := m.Create("/d/new")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("new"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/d/old", "/d/renamed"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("/d/gone"); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	entries, err := m.ReadDir("/d")
	if err != nil || len(entries) != 2 || entries[0].Name != "gone" || entries[1].Name != "old" {
		t.Fatalf("after crash %+v %v", entries, err)
	}
	if data, _ := m.ReadFile("/d/old"); string(data) != "/d/old" {
		t.Fatalf("old holds %q", data)
	}
	// Once the directory is synced the changes survive.
	if err := m.Rename("/d/old", "/d/renamed"); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	m.Crash()
	if ok, _ := storage.Exists(m, "/d/renamed"); !ok {
		t.Fatal("synced rename lost")
	}
	if ok, _ := storage.Exists(m, "/d/old"); ok {
		t.Fatal("synced rename undone")
	}
}

// TestRenameDirectory moves a directory tree (as the server moves an
// orphaned stream aside): names and contents follow, the move survives a
// crash, and a file's unsynced writes are still lost by it.
func TestRenameDirectory(t *testing.T) {
	m := New()
	if err := m.MkdirAll("/s/1/topics/0/partitions/0"); err != nil {
		t.Fatal(err)
	}
	if err := m.MkdirAll("/s/.orphaned"); err != nil {
		t.Fatal(err)
	}
	f, err := m.Create("/s/1/topics/0/partitions/0/log")
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("durable"))
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := m.SyncDir("/s/1/topics/0/partitions/0"); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, f, []byte("+unsynced"))
	if err := m.Rename("/s/1", "/s/.orphaned/1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/s/.orphaned", "/s/.orphaned/1/x"); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("rename into itself: %v", err)
	}
	if err := m.MkdirAll("/s/other"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/s/other", "/s/.orphaned/1"); !errors.Is(err, ErrExist) {
		t.Fatalf("rename onto a directory: %v", err)
	}
	if ok, _ := storage.Exists(m, "/s/1"); ok {
		t.Fatal("the old directory is still there")
	}
	if data, _ := m.ReadFile("/s/.orphaned/1/topics/0/partitions/0/log"); string(data) != "durable+unsynced" {
		t.Fatalf("moved file holds %q", data)
	}
	m.Crash()
	if ok, _ := storage.Exists(m, "/s/1"); ok {
		t.Fatal("the old directory came back after a crash")
	}
	if data, _ := m.ReadFile("/s/.orphaned/1/topics/0/partitions/0/log"); string(data) != "durable" {
		t.Fatalf("after a crash the moved file holds %q", data)
	}
	entries, err := m.ReadDir("/s/.orphaned/1/topics/0")
	if err != nil || len(entries) != 1 || entries[0] != (storage.DirEntry{Name: "partitions", IsDir: true}) {
		t.Fatalf("moved tree %+v %v", entries, err)
	}
}
