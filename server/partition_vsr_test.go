package server_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
)

// TestVSROlderConsensusFileRefusedAtBoot: every partition keeps its
// consensus group's consensus.vsr (storage/FORMATS.md); a data directory
// whose file is of another format version is refused at boot with an
// error naming the file and its version, not opened as an empty or
// reformatted group.
func TestVSROlderConsensusFileRefusedAtBoot(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("kept")}}); err != nil {
		t.Fatal(err)
	}
	ts.stop()

	name := filepath.Join(partitionPath(dir, 0, 0, 0), "consensus.vsr")
	image, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("the partition has no consensus file: %v", err)
	}
	if string(image[:4]) != "SPVR" || binary.LittleEndian.Uint16(image[4:]) != 3 {
		t.Fatalf("consensus.vsr header %q version %d", image[:4], binary.LittleEndian.Uint16(image[4:]))
	}
	// The files older builds would have written (version 1 held the
	// superblock zone too, version 2 no consensus group id): a valid
	// header checksum.
	for _, version := range []uint16{1, 2} {
		old := append([]byte(nil), image...)
		binary.LittleEndian.PutUint16(old[4:], version)
		binary.LittleEndian.PutUint64(old[56:], xxh3.Hash(old[:56]))
		if err := os.WriteFile(name, old, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err = newServerErr(t, dir)
		if err == nil {
			t.Fatalf("a data directory with a consensus file of version %d was opened", version)
		}
		for _, want := range []string{"consensus.vsr", fmt.Sprintf("format version %d", version), "reads version 3"} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("boot error %q does not say %q", err, want)
			}
		}
	}
}

// TestVSROlderSuperblockFileRefusedAtBoot: the superblock zones of every
// partition group live in the node's consensus/superblocks.sb
// (storage/FORMATS.md); a data directory whose file is of another format
// version is refused at boot with an error naming the file and its
// version.
func TestVSROlderSuperblockFileRefusedAtBoot(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	ts.stop()
	name := server.SuperblockFile(dir)
	image, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("the node has no superblock file: %v", err)
	}
	if string(image[:4]) != "SSBF" || binary.LittleEndian.Uint16(image[4:]) != 1 {
		t.Fatalf("superblocks.sb header %q version %d", image[:4], binary.LittleEndian.Uint16(image[4:]))
	}
	binary.LittleEndian.PutUint16(image[4:], 0)
	binary.LittleEndian.PutUint64(image[56:], xxh3.Hash(image[:56]))
	if err := os.WriteFile(name, image, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = newServerErr(t, dir)
	if err == nil {
		t.Fatal("a data directory with a superblock file of version 0 was opened")
	}
	for _, want := range []string{"superblocks.sb", "format version 0", "reads version 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("boot error %q does not say %q", err, want)
		}
	}
}
