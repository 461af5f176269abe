//go:build !linux

package storage

// dataSync falls back to fsync where fdatasync is not available.
func (o *osFile) dataSync() error { return o.f.Sync() }

// writeVector writes the buffers one by one at off.
func (o *osFile) writeVector(buffers [][]byte, off int64) (int, error) {
	total := 0
	for _, b := range buffers {
		n, err := o.f.WriteAt(b, off)
		total += n
		off += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// iovec is unused where vectored writes are written one by one.
type iovec struct{}
