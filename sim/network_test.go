package sim

import "testing"

type testPacket struct{ id int }

func testNetwork(p *Params, nodes, replicas int) *Network[*testPacket] {
	p.normalize()
	return NewNetwork[*testPacket](nodes, replicas, p, NewPRNG(p.Seed), func(x *testPacket) *testPacket {
		c := *x
		return &c
	}, nil)
}

func drain(n *Network[*testPacket], from, to uint64) (got []int) {
	for now := from; now <= to; now++ {
		n.DeliverDue(now, func(_, _ int, p *testPacket, _ bool) { got = append(got, p.id) })
	}
	return got
}

func TestNetworkDeliversEverythingWithoutFaults(t *testing.T) {
	p := QuietParams(1, 3, 1, DurabilityReplicated)
	p.DelayTicksMax = 10
	n := testNetwork(&p, 4, 3)
	for i := 0; i < 50; i++ {
		n.Send(0, i%4, (i+1)%4, &testPacket{i})
	}
	got := drain(n, 1, 20)
	if len(got) != 50 || n.Counters.Delivered != 50 || n.InFlight() != 0 {
		t.Fatalf("delivered %d of 50 (%+v)", len(got), n.Counters)
	}
}

func TestNetworkLossAndDuplication(t *testing.T) {
	p := QuietParams(2, 3, 1, DurabilityReplicated)
	p.LossPPM = PPM / 2
	p.DuplicatePPM = PPM / 2
	n := testNetwork(&p, 3, 3)
	for i := 0; i < 1000; i++ {
		n.Send(0, 0, 1, &testPacket{i})
	}
	got := drain(n, 1, 10)
	c := n.Counters
	if c.DroppedLoss < 400 || c.DroppedLoss > 600 || c.Duplicated < 150 || uint64(len(got)) != 1000-c.DroppedLoss+c.Duplicated-c.DroppedCapacity {
		t.Fatalf("counters %+v, delivered %d", c, len(got))
	}
}

func TestNetworkPartitionAndHeal(t *testing.T) {
	p := QuietParams(3, 3, 1, DurabilityReplicated)
	n := testNetwork(&p, 4, 3)
	n.Partition([]int{0, 1, 1}, false)
	n.Send(0, 0, 1, &testPacket{1}) // cut
	n.Send(0, 1, 0, &testPacket{2}) // cut
	n.Send(0, 1, 2, &testPacket{3}) // same side
	n.Send(0, 3, 0, &testPacket{4}) // client: never partitioned
	if got := drain(n, 1, 10); len(got) != 2 || n.Counters.DroppedPartition != 2 {
		t.Fatalf("delivered %v, counters %+v", got, n.Counters)
	}
	n.Partition([]int{0, 1, -1}, true) // one way: 0 -> 1 cut, 1 -> 0 open
	n.Send(10, 0, 1, &testPacket{5})
	n.Send(10, 1, 0, &testPacket{6})
	n.Send(10, 2, 0, &testPacket{7})
	if got := drain(n, 11, 20); len(got) != 2 {
		t.Fatalf("asymmetric partition delivered %v", got)
	}
	n.Heal()
	n.Send(20, 0, 1, &testPacket{8})
	if got := drain(n, 21, 30); len(got) != 1 {
		t.Fatalf("after heal delivered %v", got)
	}
}

func TestNetworkClogHoldsPackets(t *testing.T) {
	p := QuietParams(4, 3, 1, DurabilityReplicated)
	n := testNetwork(&p, 3, 3)
	n.Clog(0, 1, 100)
	n.Send(0, 0, 1, &testPacket{1})
	if got := drain(n, 1, 99); len(got) != 0 {
		t.Fatalf("clogged path delivered %v", got)
	}
	if got := drain(n, 100, 100); len(got) != 1 {
		t.Fatalf("unclogged path delivered %v", got)
	}
}

func TestNetworkDeliveryOrderDeterministic(t *testing.T) {
	run := func() []int {
		p := QuietParams(5, 3, 1, DurabilityReplicated)
		p.DelayTicksMax = 30
		p.ReorderPPM = PPM / 3
		n := testNetwork(&p, 5, 3)
		for i := 0; i < 200; i++ {
			n.Send(uint64(i/10), i%5, (i+2)%5, &testPacket{i})
		}
		return drain(n, 1, 200)
	}
	a, b := run(), run()
	if len(a) != 200 || fmtInts(a) != fmtInts(b) {
		t.Fatalf("orders differ or packets lost: %d, %d", len(a), len(b))
	}
}
