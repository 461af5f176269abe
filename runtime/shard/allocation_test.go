package shard

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseAllocationGood(t *testing.T) {
	cases := []struct {
		text string
		want Allocation
	}{
		{"all", Allocation{Mode: AllocationAll}},
		{" ALL ", Allocation{Mode: AllocationAll}},
		{"1", Allocation{Mode: AllocationCount, Count: 1}},
		{"4", Allocation{Mode: AllocationCount, Count: 4}},
		{"4096", Allocation{Mode: AllocationCount, Count: ShardCountMax}},
		{"5..8", Allocation{Mode: AllocationRange, RangeStart: 5, RangeEnd: 8}},
		{"0..1", Allocation{Mode: AllocationRange, RangeStart: 0, RangeEnd: 1}},
		{"0..1024", Allocation{Mode: AllocationRange, RangeStart: 0, RangeEnd: 1024}},
		{"numa:auto", Allocation{Mode: AllocationNUMA, NoHyperthreads: true}},
		{"numa:nodes=0,1;cores=4;no_ht=true", Allocation{Mode: AllocationNUMA, Nodes: []int{0, 1}, CoresPerNode: 4, NoHyperthreads: true}},
		{"numa: nodes = 1 ; no_ht = false", Allocation{Mode: AllocationNUMA, Nodes: []int{1}}},
		{"numa:cores=2", Allocation{Mode: AllocationNUMA, CoresPerNode: 2}},
		{"numa:nodes=0-1", Allocation{Mode: AllocationNUMA, Nodes: []int{0, 1}}},
	}
	for _, c := range cases {
		got, err := ParseAllocation(c.text)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseAllocation(%q) = %+v, %v; want %+v", c.text, got, err, c.want)
			continue
		}
		again, err := ParseAllocation(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParseAllocation(%q) (from %q) = %+v, %v; want %+v", got.String(), c.text, again, err, got)
		}
	}
}

func TestParseAllocationBad(t *testing.T) {
	for _, bad := range []string{
		"", "   ", "none", "0", "-1", "4097", "1.5", "2x",
		"8..5", "5..5", "..5", "5..", "a..b", "0..=3", "0..1025", "1..2..3",
		"numa:", "numa:manual", "numa:nodes=", "numa:nodes=x", "numa:cores=-1",
		"numa:cores=4097", "numa:no_ht=yes", "numa:colour=red", "numa:nodes=0;nodes=1",
		"numa:nodes=0;;cores=1",
	} {
		if got, err := ParseAllocation(bad); !errors.Is(err, ErrAllocation) {
			t.Errorf("ParseAllocation(%q) = %+v, %v; want ErrAllocation", bad, got, err)
		}
	}
	long := make([]byte, allocationTextMax+1)
	for index := range long {
		long[index] = '1'
	}
	if _, err := ParseAllocation(string(long)); !errors.Is(err, ErrAllocation) {
		t.Errorf("overlong value accepted: %v", err)
	}
}

func FuzzParseAllocation(f *testing.F) {
	for _, seed := range []string{"all", "4", "5..8", "numa:auto", "numa:nodes=0,1;cores=4;no_ht=true", "numa:x=1", "9..2"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		allocation, err := ParseAllocation(text)
		if err != nil {
			if !errors.Is(err, ErrAllocation) {
				t.Fatalf("ParseAllocation(%q) error %v does not wrap ErrAllocation", text, err)
			}
			return
		}
		again, err := ParseAllocation(allocation.String())
		if err != nil || !reflect.DeepEqual(again, allocation) {
			t.Fatalf("round trip of %q through %q: %+v, %v; want %+v", text, allocation.String(), again, err, allocation)
		}
	})
}
