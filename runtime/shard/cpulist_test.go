package shard

import (
	"errors"
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	good := []struct {
		text string
		want []int
	}{
		{"", nil},
		{"\n", nil},
		{"0", []int{0}},
		{"0-3\n", []int{0, 1, 2, 3}},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}},
		{"5,1-2,2", []int{1, 2, 5}},
		{" 3 - 4 ", []int{3, 4}},
		{"1023", []int{1023}},
	}
	for _, c := range good {
		got, err := ParseCPUList(c.text)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", c.text, got, err, c.want)
		}
	}
	for _, bad := range []string{"a", "1-", "-1", "3-1", "1,,2", "1024", "0-99999999999999999999", "1.5", "+1"} {
		if got, err := ParseCPUList(bad); !errors.Is(err, ErrCPUList) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want ErrCPUList", bad, got, err)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	cases := map[string][]int{"": nil, "0": {0}, "0-3": {0, 1, 2, 3}, "0-1,4,6-7": {0, 1, 4, 6, 7}}
	for want, cpus := range cases {
		if got := FormatCPUList(cpus); got != want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", cpus, got, want)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, seed := range []string{"0-3,8", "", "1023", "3-1", "0-1,,", "7\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		cpus, err := ParseCPUList(text)
		if err != nil {
			return
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("ParseCPUList(%q) = %v, not ascending and distinct", text, cpus)
		}
		again, err := ParseCPUList(FormatCPUList(cpus))
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("round trip of %v through %q gave %v, %v", cpus, FormatCPUList(cpus), again, err)
		}
	})
}
