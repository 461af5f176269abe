package pool

import (
	"sync/atomic"
)

// Buffer is a page-aligned byte buffer lent by a Pool. The holder of an
// unfrozen Buffer owns it and may write it; a frozen Buffer is read-only
// and shared by reference count.
//
// Invariant: refs > 0 while the buffer is outside its bucket; refs == 0
// while it sits in a bucket's free list.
type Buffer struct {
	// data is the whole class-sized region; len(data) == Cap().
	data []byte
	// length is how much of data the holder uses.
	length int
	pool   *Pool
	// bucket is the class index, or -1 for a buffer allocated outside the
	// pool (over budget or over BufferSizeMax).
	bucket int
	frozen bool
	refs   atomic.Int32
	// next links the bucket's free list; guarded by the bucket mutex.
	next *Buffer
}

// Bytes returns the used part of the buffer. The slice aliases pooled
// memory: it must not be kept after the holder's Put or Release, and must
// not be written once the buffer is frozen.
func (b *Buffer) Bytes() []byte { return b.data[:b.length] }

// Len returns how many bytes of the buffer are in use.
func (b *Buffer) Len() int { return b.length }

// Cap returns the buffer's capacity in bytes: its class size, or the
// requested size rounded up to a page for buffers from outside the pool.
func (b *Buffer) Cap() int { return len(b.data) }

// SetLen sets how many bytes are in use. Only the owner of an unfrozen
// buffer may call it; a length outside 0..Cap() is a caller bug and panics.
func (b *Buffer) SetLen(n int) {
	if b.frozen {
		panic("pool: SetLen on a frozen buffer")
	}
	if n < 0 || n > len(b.data) {
		panic("pool: SetLen outside the buffer's capacity")
	}
	b.length = n
}

// Pooled reports whether the buffer belongs to a bucket (false for buffers
// allocated outside the budget or over BufferSizeMax).
func (b *Buffer) Pooled() bool { return b.bucket >= 0 }

// Frozen reports whether the buffer has been frozen.
func (b *Buffer) Frozen() bool { return b.frozen }

// Refs returns the current reference count (for tests and diagnostics).
func (b *Buffer) Refs() int32 { return b.refs.Load() }

// Freeze makes the buffer read-only so that it can be shared; the caller
// keeps the one reference it had. Only the sole owner may freeze a buffer;
// freezing a frozen buffer is a no-op. It returns b for chaining.
func (b *Buffer) Freeze() *Buffer {
	if b.refs.Load() <= 0 {
		b.pool.misuse(&b.pool.useAfterRelease, "Freeze of a released buffer")
		return b
	}
	b.frozen = true
	return b
}

// Retain takes one more reference to a frozen buffer for a new holder, who
// must Release it. Retaining an unfrozen buffer would share writable memory
// and panics; retaining a released buffer is a use after release (panics
// with the invariants tag, otherwise counted and ignored). It returns b.
func (b *Buffer) Retain() *Buffer {
	if !b.frozen {
		panic("pool: Retain of a buffer that is not frozen")
	}
	for {
		refs := b.refs.Load()
		if refs <= 0 {
			b.pool.misuse(&b.pool.useAfterRelease, "Retain of a released buffer")
			return b
		}
		if b.refs.CompareAndSwap(refs, refs+1) {
			return b
		}
	}
}

// Release drops the caller's reference; the last release returns the
// buffer to its pool. Releasing a buffer with no references left is a
// double release: it panics with the invariants build tag, otherwise it is
// counted in Stats.DoubleReleases and ignored. (A double release that comes
// after the buffer was lent out again cannot be told from a valid one; the
// invariants build's tests are what catch those.)
func (b *Buffer) Release() {
	for {
		refs := b.refs.Load()
		if refs <= 0 {
			b.pool.misuse(&b.pool.doubleReleases, "double release of a buffer")
			return
		}
		if b.refs.CompareAndSwap(refs, refs-1) {
			if refs == 1 {
				b.pool.recycle(b)
			}
			return
		}
	}
}
