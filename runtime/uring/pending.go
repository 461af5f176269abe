package uring

import "golang.org/x/sys/unix"

// Callback receives one operation's completion, on the goroutine that owns
// the ring. It may prepare and submit further operations.
type Callback func(Completion)

// pendingOp is one operation in flight: its callback and the Go values the
// kernel reads or writes through addresses in its SQE. Holding them here
// keeps them alive (and, Go's heap being non-moving, at the same address)
// until the CQE is reaped.
type pendingOp struct {
	callback Callback
	buf      []byte
	iovs     []unix.Iovec
	path     *byte
	opcode   uint8
	inUse    bool
}

// pendingTable is a fixed table of operations in flight indexed by the
// SQE's user_data, with a stack of free slots. It allocates only in init.
// Invariant: used + len(free) = len(ops); ops[i].inUse iff i is not free.
type pendingTable struct {
	ops  []pendingOp
	free []uint32
	used int
}

func (t *pendingTable) init(n int) {
	t.ops = make([]pendingOp, n)
	t.free = make([]uint32, n)
	for i := range t.free {
		t.free[i] = uint32(n - 1 - i)
	}
	t.used = 0
}

func (t *pendingTable) capacity() int { return len(t.ops) }

func (t *pendingTable) full() bool { return len(t.free) == 0 }

// take claims a free slot; the caller has checked !full().
func (t *pendingTable) take() (uint32, *pendingOp) {
	i := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	t.used++
	op := &t.ops[i]
	op.inUse = true
	return i, op
}

// release frees slot i and returns what its callback and opcode were. It
// reports false for a user_data that names no operation in flight, which
// would be a kernel or binding bug.
func (t *pendingTable) release(i uint64) (Callback, uint8, bool) {
	if i >= uint64(len(t.ops)) || !t.ops[i].inUse {
		return nil, 0, false
	}
	op := &t.ops[i]
	cb, opcode := op.callback, op.opcode
	*op = pendingOp{}
	t.free = append(t.free, uint32(i))
	t.used--
	return cb, opcode, true
}
