package iofs

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

func TestSelect(t *testing.T) {
	probeErr := uring.Probe()
	var logged []string
	logger := func(s string) { logged = append(logged, s) }

	fsys, name, err := Select(EngineSync, uring.DefaultConfig(), logger)
	if err != nil || name != EngineSync || fsys != (storage.OSFS{}) {
		t.Fatalf("sync: %T %q %v", fsys, name, err)
	}
	if _, _, err := Select("io_uring", uring.DefaultConfig(), logger); !errors.Is(err, ErrUnknownEngine) || !strings.Contains(err.Error(), `"io_uring"`) {
		t.Fatalf("unknown engine: %v", err)
	}
	for _, engine := range []string{EngineAuto, "", EngineUring} {
		fsys, name, err := Select(engine, uring.DefaultConfig(), logger)
		switch {
		case probeErr == nil:
			if err != nil || name != EngineUring {
				t.Fatalf("%q with io_uring available: %q %v", engine, name, err)
			}
			if _, ok := fsys.(*FS); !ok {
				t.Fatalf("%q: got %T", engine, fsys)
			}
			exerciseAndClose(t, fsys)
		case engine == EngineUring:
			if !errors.Is(err, uring.ErrUnavailable) {
				t.Fatalf("uring without io_uring: %v", err)
			}
		default:
			if err != nil || name != EngineSync || fsys != (storage.OSFS{}) || len(logged) == 0 {
				t.Fatalf("%q without io_uring: %T %q %v, log %q", engine, fsys, name, err, logged)
			}
		}
	}
	if probeErr == nil && len(logged) != 0 {
		t.Fatalf("logged %q with io_uring available", logged)
	}

	if _, _, err := Select(EngineAuto, uring.Config{Entries: uring.EntriesMax + 1}, logger); !errors.Is(err, uring.ErrConfig) || !strings.Contains(err.Error(), "ring entries") {
		t.Fatalf("bad capacity variable: %v", err)
	}
}

func exerciseAndClose(t *testing.T, fsys storage.FS) {
	t.Helper()
	f, err := fsys.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Append([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	closer, ok := fsys.(io.Closer)
	if !ok {
		t.Fatalf("%T is not an io.Closer", fsys)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
}
