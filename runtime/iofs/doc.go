// Package iofs is the io_uring engine behind storage.FS (DESIGN.md
// decision 10): FS and File implement the storage interfaces with their
// data path (opens, reads, writes, vectored appends, fdatasync,
// preallocation, closes) going through one runtime/uring Ring, while
// namespace operations (mkdir, rename, readdir, stat, remove, directory
// sync) use plain system calls through storage.OSFS.
//
// The server is goroutine-per-connection for now, so the engine is safe
// for concurrent callers: a single submitter goroutine owns the ring, and
// callers hand it requests over a bounded channel and block until their
// completion. The loop batches: it takes up to the ring's event interval
// requests before each io_uring_enter, so concurrent callers share system
// calls. Individual File values keep the storage contract (one owner at a
// time).
//
// NewDirect is the per-shard variant (one io_uring per shard, driven by
// its event loop): no submitter goroutine, every operation prepared,
// submitted and waited for by the calling goroutine, so a small append
// costs one io_uring_enter and no goroutine hand-off. Such an FS and its
// files belong to one goroutine at a time (a shard's tasks); the
// invariants build panics on overlapping use. FS.Poll makes either kind a
// shard.Poller.
//
// New returns an *FS, which is also an io.Closer: close it at shutdown
// after every file. Files it opens are *File, which adds Preallocate
// (fallocate with FALLOC_FL_KEEP_SIZE) for segment preallocation.
//
// Select picks the engine named by the `[system.io] engine` setting:
// "auto" probes io_uring and falls back to storage.OSFS (logging why),
// "uring" insists on io_uring, "sync" is storage.OSFS.
package iofs
