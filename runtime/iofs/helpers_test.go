package iofs

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/runtime/uring"
)

// newFS sets up a uring FS (goroutine engine) for a test, skipping where
// io_uring is unavailable.
func newFS(t testing.TB, cfg uring.Config) *FS { return setUp(t, cfg, New) }

// newDirectFS sets up a direct uring FS for a test, skipping where
// io_uring is unavailable.
func newDirectFS(t testing.TB, cfg uring.Config) *FS { return setUp(t, cfg, NewDirect) }

func setUp(t testing.TB, cfg uring.Config, construct func(uring.Config) (*FS, error)) *FS {
	t.Helper()
	if err := uring.Probe(); err != nil {
		if errors.Is(err, uring.ErrUnavailable) {
			t.Skipf("io_uring unavailable: %v", err)
		}
		t.Fatalf("probe: %v", err)
	}
	fsys, err := construct(cfg)
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

// fsMaker sets up one kind of uring FS for a test.
type fsMaker func(testing.TB, uring.Config) *FS

// uringEngines are the two ways to run the FS; behaviour tests run on
// both.
var uringEngines = []struct {
	name string
	make fsMaker
}{
	{"goroutine", newFS},
	{"direct", newDirectFS},
}

// forEachEngine runs test as one subtest per uring engine.
func forEachEngine(t *testing.T, test func(t *testing.T, newFS fsMaker)) {
	for _, engine := range uringEngines {
		t.Run(engine.name, func(t *testing.T) { test(t, engine.make) })
	}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*13)
	}
	return b
}
