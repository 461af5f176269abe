package pool

import "unsafe"

// allocateAligned returns a zeroed slice of exactly size bytes whose first
// byte sits on a PageSize boundary, and whether it needed the
// over-allocation fallback. The Go heap does not move objects, so the
// alignment holds for the slice's life.
func allocateAligned(size int) (data []byte, fallback bool) {
	data = make([]byte, size)
	if pageOffset(data) == 0 {
		return data, false
	}
	return alignWithin(make([]byte, size+PageSize), size), true
}

// alignWithin returns the size bytes of raw that start at its first page
// boundary; raw must hold at least size+PageSize-1 bytes.
func alignWithin(raw []byte, size int) []byte {
	skip := (PageSize - pageOffset(raw)) % PageSize
	return raw[skip : skip+size : skip+size]
}

// pageOffset returns how far the slice's first byte is past a page boundary.
func pageOffset(data []byte) int {
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(data))) % PageSize)
}

// roundUpToPage rounds size up to a multiple of PageSize.
func roundUpToPage(size int) int {
	return (size + PageSize - 1) / PageSize * PageSize
}
