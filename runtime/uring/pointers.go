package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// iovecAddr is the address of the iovec array as an SQE field.
func iovecAddr(iovs []unix.Iovec) uint64 {
	return uint64(uintptr(unsafe.Pointer(&iovs[0])))
}

// pointerAddr is the address of a NUL-terminated string as an SQE field.
func pointerAddr(p *byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(p)))
}

// advanceIovec drops the first n bytes of v (0 < n < v.Len). The new Base
// still points into the same buffer, so it keeps that buffer alive.
func advanceIovec(v unix.Iovec, n int) unix.Iovec {
	v.Base = (*byte)(unsafe.Add(unsafe.Pointer(v.Base), n))
	v.SetLen(int(v.Len) - n)
	return v
}
