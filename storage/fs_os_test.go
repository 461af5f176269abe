package storage_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/storage"
)

func TestOSFSFileOperations(t *testing.T) {
	dir := t.TempDir()
	fsys := storage.OSFS{}
	p := filepath.Join(dir, "f")
	f, err := fsys.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// More buffers than one vectored write takes, some empty.
	var buffers [][]byte
	var want []byte
	for i := 0; i < 2500; i++ {
		b := bytes.Repeat([]byte{byte(i)}, i%3)
		buffers = append(buffers, b)
		want = append(want, b...)
	}
	n, err := f.AppendVector(buffers)
	if err != nil || n != len(want) {
		t.Fatalf("vector write: %d of %d, %v", n, len(want), err)
	}
	if _, err := f.Append([]byte("tail")); err != nil {
		t.Fatal(err)
	}
	want = append(want, "tail"...)
	if size, _ := f.Size(); size != int64(len(want)) {
		t.Fatalf("size %d, want %d", size, len(want))
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("content differs: %v", err)
	}
	if err := f.Truncate(10); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Append([]byte("xy")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 12)
	if _, err := f.ReadAt(buf, 0); err != nil || !bytes.Equal(buf[10:], []byte("xy")) {
		t.Fatalf("append after truncate: %q %v", buf, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Rename(p, p+"2"); err != nil {
		t.Fatal(err)
	}
	if ok, err := storage.Exists(fsys, p); ok || err != nil {
		t.Fatalf("exists after rename: %v %v", ok, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := fsys.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name != "f2" {
		t.Fatalf("readdir %+v %v", entries, err)
	}
	if _, err := fsys.Open(p); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("open missing: %v", err)
	}
}
