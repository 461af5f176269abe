package uring

// Kernel ABI of io_uring (include/uapi/linux/io_uring.h). The struct
// layouts below are fixed by the kernel and identical on every 64-bit
// architecture; sizes are checked in init.

import "unsafe"

// Opcodes (enum io_uring_op).
const (
	opNop       uint8 = 0
	opReadv     uint8 = 1
	opWritev    uint8 = 2
	opFsync     uint8 = 3
	opFallocate uint8 = 17
	opOpenat    uint8 = 18
	opClose     uint8 = 19
	opRead      uint8 = 22
	opWrite     uint8 = 23
)

// io_uring_setup flags and feature bits.
const (
	setupCQSize       uint32 = 1 << 3 // IORING_SETUP_CQSIZE
	featureSingleMmap uint32 = 1 << 0 // IORING_FEAT_SINGLE_MMAP
	featureNoDrop     uint32 = 1 << 1 // IORING_FEAT_NODROP
)

// io_uring_enter flags.
const enterGetEvents uint32 = 1 << 0 // IORING_ENTER_GETEVENTS

// mmap offsets of the three shared regions.
const (
	offSQRing int64 = 0          // IORING_OFF_SQ_RING
	offCQRing int64 = 0x8000000  // IORING_OFF_CQ_RING
	offSQEs   int64 = 0x10000000 // IORING_OFF_SQES
)

// fsyncDataSync is IORING_FSYNC_DATASYNC: fdatasync instead of fsync.
const fsyncDataSync uint32 = 1 << 0

// entriesMax is IORING_MAX_ENTRIES, the largest SQ the kernel accepts.
const entriesMax = 32768

// SQEFlags are the IOSQE_* flags of one submission.
type SQEFlags uint8

// Submission flags.
const (
	// FlagDrain (IOSQE_IO_DRAIN) starts the operation only after every
	// earlier submission has completed.
	FlagDrain SQEFlags = 1 << 1
	// FlagLink (IOSQE_IO_LINK) starts the next submission only after this
	// one succeeds; if this one fails (or is short, for reads and writes)
	// the rest of the chain completes with ECANCELED.
	FlagLink SQEFlags = 1 << 2
	// FlagHardLink (IOSQE_IO_HARDLINK) links like FlagLink but the chain
	// goes on even when this operation fails.
	FlagHardLink SQEFlags = 1 << 3
	// FlagAsync (IOSQE_ASYNC) skips the inline non-blocking attempt and
	// hands the operation to a kernel worker at once.
	FlagAsync SQEFlags = 1 << 4
)

// sqringOffsets is struct io_sqring_offsets.
type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// cqringOffsets is struct io_cqring_offsets.
type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// params is struct io_uring_params, filled in by io_uring_setup.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

// sqe is struct io_uring_sqe (64 bytes). The unions are named after the
// member each opcode here uses.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64 // file offset (addr2 for some opcodes)
	addr        uint64 // buffer, iovec array or path address; length for fallocate
	len         uint32 // bytes, iovec count, open mode or fallocate mode
	opFlags     uint32 // rw_flags, fsync_flags, open_flags
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFD    int32
	addr3       uint64
	pad         uint64
}

// cqe is struct io_uring_cqe (16 bytes, no big-CQE setup).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

func init() {
	if unsafe.Sizeof(sqe{}) != 64 || unsafe.Sizeof(cqe{}) != 16 || unsafe.Sizeof(params{}) != 120 {
		panic("uring: io_uring ABI struct sizes do not match the kernel's")
	}
}
