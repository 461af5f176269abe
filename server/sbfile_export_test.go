package server

import "path"

// Test hooks for the tests of package server_test that damage a
// partition group's superblock copies.

// SuperblockFile is the node superblock file under a data directory.
func SuperblockFile(dataDir string) string { return path.Join(dataDir, sbFileDir, sbFileName) }

// SuperblockZoneAt returns the byte position, in the image of a node's
// superblock file, of the superblock zone of partition (stream, topic,
// partition)'s group (its two copies, one sector each), and the position
// of its slot header; false when no valid slot names the group.
func SuperblockZoneAt(image []byte, stream, topic, partition uint32) (zone, header int64, ok bool) {
	zoneSize := superblockZoneSize()
	slotSize := int64(sbSlotHeaderSize + zoneSize)
	group := vsrGroupID(partKey{stream, topic, partition})
	for i := uint32(0); int64(sbFileHeaderSize)+int64(i+1)*slotSize <= int64(len(image)); i++ {
		at := int64(sbFileHeaderSize) + int64(i)*slotSize
		h, err := decodeSlotHeader(image[at:at+sbSlotHeaderSize], i)
		if err == nil && h.state == slotAllocated && h.group == group {
			return at + sbSlotHeaderSize, at, true
		}
	}
	return 0, 0, false
}
