package server

import (
	"github.com/stratabroker/strata/runtime/pool"
)

// connBuffer is a buffer a connection reuses from request to request,
// lent by the server's memory pool ([system.memory_pool]; plain Go memory
// when the pool is disabled). Only the connection's request in progress
// uses it.
type connBuffer struct {
	pool *pool.Pool
	lent *pool.Buffer
	// data is the whole capacity of lent.
	data []byte
}

// grow returns the buffer, at least n bytes long, trading the lent buffer
// for a larger one when it is too small (its contents are not kept).
func (b *connBuffer) grow(n int) []byte {
	if n <= len(b.data) {
		return b.data
	}
	b.release()
	if b.pool == nil {
		b.data = make([]byte, n)
		return b.data
	}
	b.lent = b.pool.Get(n)
	b.lent.SetLen(b.lent.Cap())
	b.data = b.lent.Bytes()
	return b.data
}

// release returns the lent buffer to the pool.
func (b *connBuffer) release() {
	if b.lent != nil {
		b.pool.Put(b.lent)
		b.lent = nil
	}
	b.data = nil
}

// initBuffers makes the memory pool lend a network connection its frame
// and reply buffers. Nothing is lent yet: each buffer is sized by the
// first frame or reply that needs it (a connection that never logs in
// holds no more than its login), and grows up to connFrameBufferBytes and
// connReplyBufferKeepMax.
func (s *Server) initBuffers(c *connection) {
	c.frameBuf.pool, c.bodyBuf.pool = s.pool, s.pool
}

// releaseBuffers returns a closed connection's buffers to the pool.
func (c *connection) releaseBuffers() {
	c.scratch = nil
	c.frameBuf.release()
	c.bodyBuf.release()
}

// keepScratch runs after a reply was written: when a handler outgrew the
// reply buffer (append moved the body to fresh memory), the connection
// takes a pooled buffer of that size for its next replies, up to
// connReplyBufferKeepMax; the grown slice itself is left to the collector.
func (c *connection) keepScratch() {
	if n := cap(c.scratch); n > len(c.bodyBuf.data) && n <= connReplyBufferKeepMax {
		c.bodyBuf.grow(n)
	}
	if c.bodyBuf.data != nil {
		c.scratch = c.bodyBuf.data[:0]
	}
}

// replyFrame is an encoded reply: the 256-byte header and the body, kept
// apart so a stream transport writes both with one writev and no copy.
type replyFrame struct {
	head, body []byte
}

// join returns the reply as one frame in dst (for message transports).
func (r replyFrame) join(dst []byte) []byte {
	return append(append(dst[:0], r.head...), r.body...)
}

// poolBatches lends the memory pool's buffers to a partition machine for
// the batches it keeps until they are flushed (partition.Buffers).
type poolBatches struct{ pool *pool.Pool }

// poolBatchBytesMin is the smallest batch kept in pooled memory: the
// smallest bucket is 4 KiB, so a smaller batch would waste more than half
// of its buffer (a partition holds up to 1024 unflushed batches); those
// stay on the Go heap.
const poolBatchBytesMin = 2 << 10

// Borrow implements partition.Buffers.
func (b poolBatches) Borrow(n int) ([]byte, any) {
	if n < poolBatchBytesMin {
		return make([]byte, n), nil
	}
	buffer := b.pool.Get(n)
	return buffer.Bytes(), buffer
}

// Return implements partition.Buffers.
func (b poolBatches) Return(token any) {
	if buffer, ok := token.(*pool.Buffer); ok {
		b.pool.Put(buffer)
	}
}

// MemoryPoolStats reports the memory pool's counters (false when the pool
// is disabled).
func (s *Server) MemoryPoolStats() (pool.Stats, bool) {
	if s.pool == nil {
		return pool.Stats{}, false
	}
	return s.pool.Stats(), true
}
