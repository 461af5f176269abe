package uring

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// unsafeBytes views the memory an iovec describes.
func unsafeBytes(v unix.Iovec) []byte { return unsafe.Slice(v.Base, v.Len) }
