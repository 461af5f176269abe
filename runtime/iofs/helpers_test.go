package iofs

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
)

// newFS sets up a uring FS for a test, skipping where io_uring is
// unavailable.
func newFS(t testing.TB, cfg uring.Config) *FS {
	t.Helper()
	if err := uring.Probe(); err != nil {
		if errors.Is(err, uring.ErrUnavailable) {
			t.Skipf("io_uring unavailable: %v", err)
		}
		t.Fatalf("probe: %v", err)
	}
	fsys, err := New(cfg)
	if err != nil {
		t.Fatalf("new FS: %v", err)
	}
	t.Cleanup(func() {
		if err := fsys.Close(); err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("close FS: %v", err)
		}
	})
	return fsys
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*13)
	}
	return b
}
