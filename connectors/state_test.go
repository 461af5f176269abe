package connectors

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestStateStoreLoadSave(t *testing.T) {
	dir := t.TempDir()
	s := NewStateStore(dir, "gen")
	if b, err := s.Load(); err != nil || b != nil {
		t.Fatalf("missing file: %q %v", b, err)
	}
	if err := os.WriteFile(s.Path(), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Load(); err != nil || b != nil {
		t.Fatalf("empty file: %q %v", b, err)
	}
	if err := s.Save([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := s.Save([]byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Load(); err != nil || string(b) != "two" {
		t.Fatalf("after saves: %q %v", b, err)
	}
	st, err := os.Stat(s.Path())
	if err != nil || st.Mode().Perm() != stateFileMode {
		t.Fatalf("mode: %v %v", st.Mode(), err)
	}
	if _, err := os.Stat(s.Path() + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temp file left behind: %v", err)
	}
	if filepath.Base(s.Path()) != "source_gen.state" {
		t.Fatalf("path %s", s.Path())
	}
}

func TestStateStoreMissingDirectoryIsAnError(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	s := NewStateStore(dir, "gen")
	if _, err := s.Load(); !errors.Is(err, ErrState) {
		t.Fatalf("load from a missing directory: %v", err)
	}
	if err := s.Save([]byte("x")); !errors.Is(err, ErrState) {
		t.Fatalf("save into a missing directory: %v", err)
	}
}

func TestStateStoreUnreadableIsAnError(t *testing.T) {
	dir := t.TempDir()
	s := NewStateStore(dir, "gen")
	// A directory where the state file should be cannot be read as state.
	if err := os.Mkdir(s.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(); !errors.Is(err, ErrState) {
		t.Fatalf("load of a directory: %v", err)
	}
	if err := s.Save([]byte("x")); !errors.Is(err, ErrState) {
		t.Fatalf("rename over a directory: %v", err)
	}
}

func TestStateStoreConcurrentSavesSerialize(t *testing.T) {
	s := NewStateStore(t.TempDir(), "gen")
	var wg sync.WaitGroup
	values := []string{"aaaa", "bbbbbbbb", "cc"}
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Save([]byte(values[i%len(values)])); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, err := s.Load()
	if err != nil {
		t.Fatal(err)
	}
	ok := false
	for _, v := range values {
		ok = ok || string(b) == v
	}
	if !ok {
		t.Fatalf("state %q is a mix of saves", b)
	}
}
