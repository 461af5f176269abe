package wire

import (
	"bytes"
	"testing"
)

func FuzzOptionsBlock(f *testing.F) {
	block, _ := Options{StringOption("segment_size", "1 GiB"), Uint64Option("message_expiry", 5), BoolOption("enforce_fsync", true)}.AppendTo(nil)
	f.Add(block)
	f.Add([]byte{})
	f.Add([]byte{2, 1, 0, 0, 0, 'k', 0, 1, 0, 0, 0, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		pairs, tlvErr := ValidateTLV(data)
		_, _ = ValidateTLVStrict(data)
		opts, err := ParseOptions(data)
		if err != nil {
			return
		}
		if tlvErr != nil || pairs != len(opts) {
			t.Fatalf("options accepted what TLV rejects: %v %d/%d", tlvErr, pairs, len(opts))
		}
		again, err := opts.AppendTo(nil)
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("re-encode differs: %v", err)
		}
		framed, err := opts.AppendBlock(nil)
		if err != nil {
			t.Fatal(err)
		}
		d := newDecoder(framed)
		if back := d.optionsBlock("o"); d.end("o") != nil || !back.Equal(opts) {
			t.Fatalf("framed round trip: %v", d.err)
		}
		if parsed, err := ParseTopicOptions(data, 1); err == nil {
			again, err := ParseTopicOptions(mustOptions(t, parsed.Explicit), 1)
			if err != nil || again.Settings != parsed.Settings || !again.Derived.Equal(parsed.Derived) {
				t.Fatalf("canonical explicit block does not re-parse: %v", err)
			}
		}
		if u, err := ParseTopicUpdateOptions(data); err == nil {
			_ = u.CheckSegmentSize(DefaultSegmentSize)
		}
	})
}

func FuzzPermissions(f *testing.F) {
	p := Permissions{Global: GlobalPermissions{ReadUsers: true}, Streams: []StreamPermissions{{StreamID: 9, Topics: []TopicPermissions{{TopicID: 1}}}}}
	f.Add(p.AppendTo(nil))
	f.Add(make([]byte, 11))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePermissions(data)
		if err == nil {
			again := p.AppendTo(nil)
			back, err := DecodePermissions(again)
			if err != nil || !bytes.Equal(back.AppendTo(nil), again) {
				t.Fatalf("round trip: %v", err)
			}
		}
		d := newDecoder(data)
		_ = d.optionalPermissions("p")
		d = newDecoder(data)
		_ = d.detailsPermissions("p")
	})
}

func FuzzPrimitives(f *testing.F) {
	f.Add([]byte{1, 4, 1, 0, 0, 0})
	f.Add([]byte{2, 3, 'a', 'b', 'c'})
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if id, n, err := DecodeIdentifier(data); err == nil {
			b, err := id.AppendTo(nil)
			if err != nil || !bytes.Equal(b, data[:n]) {
				t.Fatalf("identifier round trip %v", err)
			}
		}
		if name, n, err := DecodeName(data); err == nil {
			b, err := AppendName(nil, name)
			if err != nil || !bytes.Equal(b, data[:n]) {
				t.Fatalf("name round trip %v", err)
			}
		}
		d := newDecoder(data)
		if c := d.consumer("c"); d.err == nil {
			b, err := c.AppendTo(nil)
			if err != nil || !bytes.Equal(b, data[:d.off]) {
				t.Fatalf("consumer round trip %v", err)
			}
		}
		d = newDecoder(data)
		if p := d.partitioning("p"); d.err == nil {
			b, err := p.AppendTo(nil)
			if err != nil || !bytes.Equal(b, data[:d.off]) {
				t.Fatalf("partitioning round trip %v", err)
			}
		}
		d = newDecoder(data)
		if s := d.pollingStrategy("s"); d.err == nil {
			b, err := s.AppendTo(nil)
			if err != nil || !bytes.Equal(b, data[:d.off]) {
				t.Fatalf("strategy round trip %v", err)
			}
		}
		if payload, _, err := SplitResult(data); err == nil && len(payload) > len(data) {
			t.Fatal("payload longer than body")
		}
		for op := Operation(0); op < 170; op++ {
			_, _ = ReplyPayload(op, 0, data)
		}
	})
}

func mustOptions(t *testing.T, o Options) []byte {
	b, err := o.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzParseStrings(f *testing.F) {
	f.Add("7 days")
	f.Add("1h 30m")
	f.Add("1.5 GiB")
	f.Add("512 MB")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseExpiryString(s)
		_, _ = parseSizeString(s)
	})
}
