package iofs

import (
	"fmt"

	"github.com/stratabroker/strata/runtime/uring"
	"github.com/stratabroker/strata/storage"
)

// Engine names, as written in `[system.io] engine`.
const (
	EngineAuto  = "auto"
	EngineUring = "uring"
	EngineSync  = "sync"
)

// Select returns the FS for the configured engine and the name of the
// engine in use ("uring" or "sync"):
//
//   - "auto" (or empty) probes io_uring; where it is unavailable it calls
//     logger once with the reason and returns storage.OSFS.
//   - "uring" fails, wrapping uring.ErrUnavailable, where io_uring is
//     unavailable.
//   - "sync" returns storage.OSFS.
//
// ring sizes the ring ([system.io] ring_entries and ring_event_interval
// in the server). A uring FS is an io.Closer: close it after every file at
// shutdown. logger may be nil.
func Select(engine string, ring uring.Config, logger func(string)) (storage.FS, string, error) {
	switch engine {
	case EngineSync:
		return storage.OSFS{}, EngineSync, nil
	case EngineUring, EngineAuto, "":
	default:
		return nil, "", fmt.Errorf("io engine %q (want %q, %q or %q): %w", engine, EngineAuto, EngineUring, EngineSync, ErrUnknownEngine)
	}
	if err := ring.Validate(); err != nil {
		return nil, "", fmt.Errorf("io engine %s: %w", engine, err)
	}
	err := uring.Probe()
	var fsys *FS
	if err == nil {
		fsys, err = New(ring)
	}
	if err == nil {
		return fsys, EngineUring, nil
	}
	if engine == EngineUring {
		return nil, "", fmt.Errorf("io engine uring: %w", err)
	}
	if logger != nil {
		logger(fmt.Sprintf("io engine: falling back to sync (pread/pwrite): %v", err))
	}
	return storage.OSFS{}, EngineSync, nil
}
