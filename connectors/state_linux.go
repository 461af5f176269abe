package connectors

import (
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync flushes f's data (not every metadata field) to stable storage.
func fdatasync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
