package server

import (
	"encoding/binary"
	"fmt"
	"os"
	"path"
)

// Test hooks for the tests of package server_test that damage a
// partition group's superblock copies.

// SuperblockFile is the node superblock file under a data directory.
func SuperblockFile(dataDir string) string { return path.Join(dataDir, sbFileDir, sbFileName) }

// ConsensusFileGroup returns the consensus group id that the
// consensus.vsr of a partition directory names in its header.
func ConsensusFileGroup(partitionDir string) (uint64, error) {
	image, err := os.ReadFile(path.Join(partitionDir, vsrFileName))
	if err != nil {
		return 0, err
	}
	if len(image) < vsrFileHeaderSize || string(image[:4]) != vsrFileMagic || binary.LittleEndian.Uint16(image[4:]) != vsrFileVersion {
		return 0, fmt.Errorf("%s: not a consensus file of this build", partitionDir)
	}
	return binary.LittleEndian.Uint64(image[24:]), nil
}

// SuperblockZoneAt returns the byte position, in the image of a node's
// superblock file, of the superblock zone of consensus group group (its
// two copies, one sector each), and the position of its slot header;
// false when no valid slot names the group.
func SuperblockZoneAt(image []byte, group uint64) (zone, header int64, ok bool) {
	zoneSize := superblockZoneSize()
	slotSize := int64(sbSlotHeaderSize + zoneSize)
	for i := uint32(0); int64(sbFileHeaderSize)+int64(i+1)*slotSize <= int64(len(image)); i++ {
		at := int64(sbFileHeaderSize) + int64(i)*slotSize
		h, err := decodeSlotHeader(image[at:at+sbSlotHeaderSize], i)
		if err == nil && h.state == slotAllocated && h.group == group {
			return at + sbSlotHeaderSize, at, true
		}
	}
	return 0, 0, false
}
