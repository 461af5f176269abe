package connectors

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// stateFileMode is the permission of state files: the owner only.
const stateFileMode = 0o600

// StateStore keeps one source's state in {dir}/source_{key}.state, saved
// crash-atomically: after a crash the file holds the old or the new state,
// never a mix or nothing. Saves are serialized.
type StateStore struct {
	dir, key string
	mu       sync.Mutex
}

// NewStateStore returns the store of source key under dir.
func NewStateStore(dir, key string) *StateStore { return &StateStore{dir: dir, key: key} }

// Path is the state file path.
func (s *StateStore) Path() string { return filepath.Join(s.dir, "source_"+s.key+".state") }

// Load returns the saved state, nil for a missing or empty file, and an
// error (ErrState) when the file cannot be read or the state directory
// itself is missing, so a broken state path never passes for a fresh start.
func (s *StateStore) Load() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		if st, derr := os.Stat(s.dir); derr != nil {
			return nil, fmt.Errorf("%w: state directory %s: %w", ErrState, s.dir, derr)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("%w: state path %s is not a directory", ErrState, s.dir)
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrState, s.Path(), err)
	}
	if len(b) == 0 {
		return nil, nil
	}
	return b, nil
}

// Save replaces the state: write a temp file, fsync it, rename it over
// the state file, fsync the directory. Any failed step is an ErrState.
// (fsync, not fdatasync: the temp file is new, so its size must reach the
// disk either way, and os.File.Sync is portable and retries EINTR.)
func (s *StateStore) Save(state []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	tmp := s.Path() + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, stateFileMode)
	if err != nil {
		return fmt.Errorf("%w: create %s: %w", ErrState, tmp, err)
	}
	if _, err := f.Write(state); err != nil {
		_ = f.Close()
		return fmt.Errorf("%w: write %s: %w", ErrState, tmp, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("%w: sync %s: %w", ErrState, tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%w: close %s: %w", ErrState, tmp, err)
	}
	if err := os.Rename(tmp, s.Path()); err != nil {
		return fmt.Errorf("%w: rename %s: %w", ErrState, tmp, err)
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("%w: open directory %s: %w", ErrState, s.dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: sync directory %s: %w", ErrState, s.dir, err)
	}
	return nil
}
