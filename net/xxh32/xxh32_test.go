package xxh32

import "testing"

// Reference values of XXH32 with seed 0 (from the xxHash specification's
// published test vectors).
func TestKnownVectors(t *testing.T) {
	cases := []struct {
		in   string
		want uint32
	}{
		{"", 0x02CC5D05},
		{"a", 0x550D7456},
		{"abc", 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0xE2293B2F},
	}
	for _, c := range cases {
		if got := Checksum([]byte(c.in)); got != c.want {
			t.Errorf("XXH32(%q) = %#08x, want %#08x", c.in, got, c.want)
		}
	}
}

func TestSeedChangesResult(t *testing.T) {
	if Checksum([]byte("abc")) == ChecksumSeed([]byte("abc"), 1) {
		t.Fatal("seed ignored")
	}
}

func TestNoAllocation(t *testing.T) {
	b := make([]byte, 1000)
	if n := testing.AllocsPerRun(100, func() { Checksum(b) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
