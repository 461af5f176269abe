package group

import (
	"math/rand/v2"
	"testing"
)

// TestSegmentTransferCodecs: a manifest and a request survive the round
// trip, and no byte string a peer may send makes a decoder panic or
// accept a manifest that does not end where it should.
func TestSegmentTransferCodecs(t *testing.T) {
	q := segmentRequest{generation: 3, first: 10, end: 99, index: 2, offset: 4096}
	got, rest, ok := decodeSegmentRequest(append(q.append(nil), 7))
	if !ok || got != q || len(rest) != 1 || rest[0] != 7 {
		t.Fatalf("request round trip: %+v %v %v", got, rest, ok)
	}
	m := &Manifest{Generation: 3, First: 10, End: 99, Artifacts: []Artifact{{Name: "00000000000000000010.log", Size: 5000, Checksum: 42}, {Name: "", Size: 0, Checksum: 7}}}
	enc := m.append(nil)
	back, err := decodeManifest(q, enc)
	if err != nil || len(back.Artifacts) != 2 || back.Artifacts[0] != m.Artifacts[0] || back.Artifacts[1] != m.Artifacts[1] || back.End != 99 {
		t.Fatalf("manifest round trip: %+v %v", back, err)
	}
	if _, err := decodeManifest(q, append(enc, 0)); err == nil {
		t.Fatal("a manifest with trailing bytes was accepted")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		b := make([]byte, r.IntN(80))
		for k := range b {
			b[k] = byte(r.Uint32())
		}
		if i%2 == 0 && len(b) > 0 {
			cut := enc[:r.IntN(len(enc))]
			b = append(append([]byte(nil), cut...), b[:r.IntN(len(b))]...)
		}
		_, _, _ = decodeSegmentRequest(b)
		_, _ = decodeManifest(q, b)
	}
}
