package server

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/stratabroker/strata/storage"
)

// writeFileAtomic replaces path with data durably: a temporary file is
// written and synced, renamed over path, and the directory synced.
func writeFileAtomic(fsys storage.FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if _, err := f.Append(data); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", tmp, err), f.Close())
	}
	if err := f.Sync(); err != nil {
		return errors.Join(fmt.Errorf("sync %s: %w", tmp, err), f.Close())
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s: %w", tmp, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return nil
}

// writeFileIfMissing creates path with data unless it exists.
func writeFileIfMissing(fsys storage.FS, path string, data []byte) error {
	exists, err := storage.Exists(fsys, path)
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	if exists {
		return nil
	}
	return writeFileAtomic(fsys, path, data)
}
