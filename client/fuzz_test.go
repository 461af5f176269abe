package client

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

// recordDecoders are the client's record decoders, selected by the first
// fuzz byte.
var recordDecoders = []func([]byte) error{
	func(b []byte) error { _, err := decodeStreamDetails(b); return err },
	func(b []byte) error { _, err := decodeTopicDetails(b); return err },
	func(b []byte) error { _, err := decodeUserDetails(b); return err },
	func(b []byte) error { _, err := decodeClientDetails(b); return err },
	func(b []byte) error { _, err := decodeStats(b); return err },
	func(b []byte) error { _, err := decodeClusterMetadata(b); return err },
	func(b []byte) error { _, err := decodeConsumerGroupDetails(b); return err },
	func(b []byte) error { _, err := decodePermissions(b); return err },
	func(b []byte) error { _, err := parseOptions(b); return err },
}

// FuzzDecodeRecords: no record decoder panics on any input, and decoded
// permissions re-encode to the input.
func FuzzDecodeRecords(f *testing.F) {
	perms := samplePermissions()
	f.Add(append([]byte{7}, perms.AppendTo(nil)...))
	sd := wire.StreamDetails{Stream: wire.Stream{ID: 1, Name: "s"}}
	if b, err := sd.AppendTo([]byte{0}); err == nil {
		f.Add(b)
	}
	ud := wire.UserDetails{User: wire.User{ID: 1, Status: 1, Username: "bob"}, Permissions: perms}
	if b, err := ud.AppendTo([]byte{2}); err == nil {
		f.Add(b)
	}
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) == 0 {
			return
		}
		dec := recordDecoders[int(in[0])%len(recordDecoders)]
		err := dec(in[1:])
		if int(in[0])%len(recordDecoders) == 7 && err == nil {
			p, _ := decodePermissions(in[1:])
			// Bools decode as non-zero = true; compare canonical forms.
			again := appendPermissions(nil, p)
			p2, err := decodePermissions(again)
			if err != nil || !bytes.Equal(appendPermissions(nil, p2), again) {
				t.Fatalf("permissions do not round-trip: %x", in[1:])
			}
		}
	})
}

// FuzzParseHeaders: ParseHeaders never panics; a block it accepts
// re-encodes byte-identically with AppendHeaders when every item's size
// suits its kind.
func FuzzParseHeaders(f *testing.F) {
	b, _ := AppendHeaders(nil, []Header{StringHeader("k", "v"), {Key: StringValue("n"), Value: Uint64Value(7)}})
	f.Add(b)
	f.Add([]byte{2, 1, 0, 0, 0, 'k'})
	f.Fuzz(func(t *testing.T, block []byte) {
		hs, err := ParseHeaders(block)
		if err != nil {
			return
		}
		again, err := AppendHeaders(nil, hs)
		if err != nil {
			return // a fixed-size kind with a wrong length: parse is lenient, append strict
		}
		if !bytes.Equal(again, block) {
			t.Fatalf("headers %x re-encode as %x", block, again)
		}
	})
}

// FuzzDecodePolled: decodePolled never panics; for a reply built from a
// valid batch it yields every message with offset = base + delta.
func FuzzDecodePolled(f *testing.F) {
	var bb wire.BatchBuilder
	for i := range 3 {
		if err := bb.Add(wire.MessageID{Low: uint64(i)}, []byte("payload"), nil, uint64(100+i)); err != nil {
			f.Fatal(err)
		}
	}
	batch, err := bb.Finish()
	if err != nil {
		f.Fatal(err)
	}
	head := make([]byte, pollHeaderSize)
	binary.LittleEndian.PutUint32(head[12:], 3)
	f.Add(append(head, batch...), uint64(40))
	f.Add(head, uint64(0))
	// A message whose user headers are not TLV: the batch is still valid
	// and must decode, the message carrying HeadersErr.
	var poisoned wire.BatchBuilder
	if err := poisoned.Add(wire.MessageID{Low: 1}, []byte("p"), []byte{0, 1, 0, 0, 0, 'k'}, 1); err != nil {
		f.Fatal(err)
	}
	if batch, err = poisoned.Finish(); err != nil {
		f.Fatal(err)
	}
	one := make([]byte, pollHeaderSize)
	binary.LittleEndian.PutUint32(one[12:], 1)
	f.Add(append(one, batch...), uint64(3))
	f.Fuzz(func(t *testing.T, reply []byte, base uint64) {
		dst := &PolledMessages{buf: append([]byte(nil), reply...)}
		_ = decodePolled(dst) // must not panic
		if len(reply) < pollHeaderSize+wire.BatchHeaderSize {
			return
		}
		b := append([]byte(nil), reply[pollHeaderSize:]...)
		if wire.ValidateBatch(b, wire.BatchView(b).MessageCount()) != nil {
			return
		}
		if err := wire.StampBatch(b, 0, base, 1); err != nil {
			return
		}
		valid := append(append([]byte(nil), reply[:pollHeaderSize]...), b...)
		binary.LittleEndian.PutUint32(valid[12:], wire.BatchView(b).MessageCount())
		dst = &PolledMessages{buf: valid}
		if err := decodePolled(dst); err != nil {
			t.Fatalf("valid batch rejected: %v", err)
		}
		for i, m := range dst.Messages {
			if m.Offset != base+uint64(i) || m.Timestamp != 1 {
				t.Fatalf("message %d: offset %d timestamp %d", i, m.Offset, m.Timestamp)
			}
			if _, tlvErr := wire.ValidateTLV(m.RawHeaders); (m.HeadersErr != nil) != (tlvErr != nil) {
				t.Fatalf("message %d: headers error %v for block %x", i, m.HeadersErr, m.RawHeaders)
			}
		}
	})
}
