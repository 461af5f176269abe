package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratabroker/strata/client"
)

// TestVSRDescriptorAheadOfFilesFencesThePartition: the partition's
// checkpoint (consensus.vsr's descriptor) records the synced frontier its
// segments reached; partition files that are consistent on their own but
// behind it (here: the whole directory but consensus.vsr put back as it
// was before 300 more persisted sends) are missing history the group
// committed. The restarted server must fence the partition through the
// group host (the binding's Reset reports group.ErrMissingHistory), never
// serve it as a shorter healthy log or number new sends from the old end.
func TestVSRDescriptorAheadOfFilesFencesThePartition(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c := ts.connect()
	if _, err := c.CreateStream(ctx(t), "s"); err != nil {
		t.Fatal(err)
	}
	persisted := client.Options{}.With(client.OptionDurability, client.StringValue(client.DurabilityPersisted))
	if _, err := c.CreateTopic(ctx(t), client.ID(0), "t", 1, persisted); err != nil {
		t.Fatal(err)
	}
	send := func(c *client.Client, n int) {
		t.Helper()
		for i := range n {
			msg := []client.Message{{Payload: []byte{byte(i)}}}
			if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), msg); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(c, 20)
	ts.stop()
	dir := filepath.Join(ts.dir, "streams", "0", "topics", "0", "partitions", "0")
	old := copyPartitionFiles(t, dir, t.TempDir())

	ts = startServer(t, ts.dir)
	c = ts.connect()
	send(c, 300) // past the group's checkpoint interval: a descriptor at op 256 or later
	ts.stop()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "consensus.vsr" && !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	copyPartitionFiles(t, old, dir)

	ts = startServer(t, ts.dir)
	ts.mustLog("the checkpoint records messages up to offset", "missing history")
	c = ts.connect()
	if _, err := c.SendMessages(ctx(t), client.ID(0), client.ID(0), client.PartitionID(0), []client.Message{{Payload: []byte("x")}}); err == nil {
		t.Fatal("a partition behind its checkpoint accepted a send, numbering it from its old end")
	}
}

// copyPartitionFiles copies the regular files of from, but consensus.vsr,
// into to, and returns to.
func copyPartitionFiles(t *testing.T, from, to string) string {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "consensus.vsr" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}
