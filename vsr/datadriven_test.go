package vsr

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestInteraction runs the protocol scripts under testdata/interaction/: one handler
// per command, the trace as golden output (regenerate with -rewrite).
func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata/interaction", func(t *testing.T, path string) {
		var c *testCluster
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "cluster" && c == nil {
				t.Fatalf("%s: no cluster", d.Pos)
			}
			out := runCommand(t, &c, d)
			if c != nil {
				c.checkAgreement()
			}
			return out
		})
	})
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int) int {
	if !d.HasArg(key) {
		return def
	}
	var v int
	d.ScanArgs(t, key, &v)
	return v
}

func runCommand(t *testing.T, cp **testCluster, d *datadriven.TestData) string {
	c := *cp
	switch d.Cmd {
	case "cluster":
		cfg := DefaultConfig(7, uint8(argInt(t, d, "replicas", 3)), 0)
		cfg.JournalSlots = uint64(argInt(t, d, "slots", 64))
		cfg.PipelinePrepareMax = uint32(argInt(t, d, "pipeline", 4))
		cfg.ClientsMax = uint32(argInt(t, d, "clients", 8))
		cfg.MessageSizeMax = 64 << 10
		cfg.WALBytesMax = 16 << 20
		cfg.Group = uint64(argInt(t, d, "group", 0))
		if d.HasArg("sessionless") {
			cfg.Sessionless.Add(OperationUserMin)
		}
		if d.HasArg("durability") {
			var s string
			d.ScanArgs(t, "durability", &s)
			if s == "persisted" {
				cfg.Durability = Persisted
			}
		}
		*cp = newTestCluster(t, cfg)
		return (*cp).status()
	case "request":
		id := uint64(argInt(t, d, "client", 1))
		var body string
		d.ScanArgs(t, "op", &body)
		if err := c.client(id).Submit(OperationUserMin, []byte(body)); err != nil {
			return err.Error()
		}
		return ""
	case "submit":
		// A raw request as a host hands it over: no session unless given.
		var body string
		d.ScanArgs(t, "op", &body)
		to := 0
		if d.HasArg("to") {
			var s string
			d.ScanArgs(t, "to", &s)
			to = parseReplica(t, s)
		}
		c.rawRequest(uint64(argInt(t, d, "client", 1)), to, OperationUserMin, uint64(argInt(t, d, "session", 0)), uint64(argInt(t, d, "req", 1)), body)
		return ""
	case "requests":
		// Submit n operations one after another, ticking until each replies.
		id := uint64(argInt(t, d, "client", 1))
		n := argInt(t, d, "n", 1)
		cl := c.client(id)
		done := 0
		for i := range n {
			if err := cl.Submit(OperationUserMin, []byte(fmt.Sprintf("x%d", i))); err != nil {
				return err.Error()
			}
			for ticks := 0; cl.Busy() && ticks < 1000; ticks++ {
				c.tick(1)
			}
			if !cl.Busy() {
				done++
			}
		}
		c.replies = nil
		return fmt.Sprintf("completed %d of %d\n", done, n)
	case "deliver":
		c.trace.Reset()
		n := c.deliver(!d.HasArg("quiet"), argInt(t, d, "max", 100_000))
		if d.HasArg("quiet") {
			return fmt.Sprintf("delivered %d\n", n)
		}
		return c.trace.String()
	case "tick":
		c.tick(argInt(t, d, "n", 1))
		return c.status()
	case "status":
		return c.status()
	case "replies":
		out := strings.Join(c.replies, "\n")
		c.replies = nil
		return out
	case "crash":
		for _, a := range d.CmdArgs {
			c.crash(parseReplica(t, a.Key))
		}
		return c.status()
	case "restart":
		for _, a := range d.CmdArgs {
			c.start(parseReplica(t, a.Key))
		}
		return c.status()
	case "partition":
		for i := range c.group {
			c.group[i] = 1
		}
		for g, part := range strings.Split(d.CmdArgs[0].Key, "|") {
			for _, s := range strings.Split(part, ",") {
				c.group[parseReplica(t, s)] = g + 1
			}
		}
		return ""
	case "heal":
		for i := range c.group {
			c.group[i] = 0
		}
		return ""
	case "corrupt":
		i := parseReplica(t, d.CmdArgs[0].Key)
		op := uint64(argInt(t, d, "op", 1))
		s := c.nodes[i].storage
		offset := (op % c.cfg.JournalSlots) * uint64(c.cfg.MessageSizeMax)
		s.durable[ZoneWALPrepares][offset+100] ^= 0xff
		return "corrupted prepare op=" + strconv.FormatUint(op, 10) + " on r" + strconv.Itoa(i)
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
