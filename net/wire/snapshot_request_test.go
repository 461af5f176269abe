package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// snapshotTypeLists are type lists a client sends.
var snapshotTypeLists = [][]uint8{
	nil,
	{SnapshotFilesystemOverview}, {SnapshotProcessList}, {SnapshotResourceUsage}, {SnapshotTest},
	{SnapshotServerLogs}, {SnapshotServerConfig}, {SnapshotAll},
	{SnapshotFilesystemOverview, SnapshotProcessList, SnapshotResourceUsage, SnapshotServerLogs, SnapshotServerConfig},
	{SnapshotServerConfig, SnapshotServerConfig, SnapshotTest},
}

// TestGetSnapshotRequestRoundTrip encodes every compression with every
// type list, checks the layout `[compression u8][count u8][type u8 ×
// count]` and decodes it back.
func TestGetSnapshotRequestRoundTrip(t *testing.T) {
	for compression := SnapshotCompressionStored; compression <= SnapshotCompressionXz; compression++ {
		for _, types := range snapshotTypeLists {
			req := GetSnapshotRequest{Compression: compression, Types: types}
			body, err := req.AppendTo(nil)
			if err != nil {
				t.Fatalf("%+v: %v", req, err)
			}
			want := append([]byte{compression, byte(len(types))}, types...)
			if !bytes.Equal(body, want) {
				t.Fatalf("%+v encodes % x, want % x", req, body, want)
			}
			var back GetSnapshotRequest
			if err := back.Decode(body); err != nil {
				t.Fatalf("%+v: decode: %v", req, err)
			}
			if !reflect.DeepEqual(back, req) {
				t.Fatalf("round trip %+v -> %+v", req, back)
			}
		}
	}
	// Iggy's SDK for GetSnapshot{Deflated, [All]}.
	var iggy GetSnapshotRequest
	if err := iggy.Decode([]byte{2, 1, 100}); err != nil || iggy.Compression != SnapshotCompressionDeflated || !reflect.DeepEqual(iggy.Types, []uint8{SnapshotAll}) {
		t.Fatalf("iggy's all-deflated request: %+v, %v", iggy, err)
	}
}

// TestGetSnapshotRequestRefusals: unknown compression or type codes and a
// type list longer than the body are decode errors (Deny 3), and the
// encoder refuses what the decoder would.
func TestGetSnapshotRequestRefusals(t *testing.T) {
	for _, body := range [][]byte{
		{}, {2}, {0, 0}, {7, 0}, {255, 0}, {2, 1, 0}, {2, 1, 7}, {2, 1, 99}, {2, 2, 1}, {2, 3, 1, 2},
	} {
		var req GetSnapshotRequest
		if err := req.Decode(body); err == nil {
			t.Errorf("% x decoded as %+v", body, req)
		} else if !errors.Is(err, ErrBadValue) && !errors.Is(err, ErrTruncated) {
			t.Errorf("% x: %v", body, err)
		}
	}
	for _, req := range []GetSnapshotRequest{{Compression: 0}, {Compression: 7}, {Compression: 2, Types: []uint8{7}}, {Compression: 2, Types: make([]uint8, 256)}} {
		if _, err := req.AppendTo(nil); err == nil {
			t.Errorf("%+v encoded", req)
		}
	}
}

// FuzzGetSnapshotRequest decodes arbitrary bodies: whatever decodes
// re-encodes to the bytes it was read from and decodes to the same
// request; nothing panics.
func FuzzGetSnapshotRequest(f *testing.F) {
	for compression := SnapshotCompressionStored; compression <= SnapshotCompressionXz; compression++ {
		for _, types := range snapshotTypeLists {
			f.Add(append([]byte{compression, byte(len(types))}, types...))
		}
	}
	f.Add([]byte{2, 200, 1})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var req GetSnapshotRequest
		if req.Decode(data) != nil {
			return
		}
		body, err := req.AppendTo(nil)
		if err != nil {
			t.Fatalf("decoded %+v does not encode: %v", req, err)
		}
		if len(body) > len(data) || !bytes.Equal(body, data[:len(body)]) {
			t.Fatalf("% x decoded as %+v, which encodes as % x", data, req, body)
		}
		var again GetSnapshotRequest
		if err := again.Decode(body); err != nil || !reflect.DeepEqual(again, req) {
			t.Fatalf("re-decode of % x: %+v, %v", body, again, err)
		}
	})
}
