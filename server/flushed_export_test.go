package server

// Test hooks for the flushed state tests of package server_test.

// FlushedStateFileName is a partition's flushed state file.
const FlushedStateFileName = flushedFileName

// FlushedStateOp decodes a flushed.state image and returns the op its
// state is of.
func FlushedStateOp(image []byte) (uint64, error) {
	s, err := decodeFlushedState(image)
	return s.Op, err
}
