package connectors

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/stratabroker/strata/client"
)

func TestTransformChain(t *testing.T) {
	tr := &TransformsConfig{
		FilterFields: &FilterFieldsConfig{Drop: []string{"noise"}},
		DeleteFields: &DeleteFieldsConfig{Fields: []string{"secret"}},
		AddFields:    &FieldsConfig{Fields: []FieldValue{{Key: "source", Value: "strata"}}},
		UpdateFields: &UpdateFieldsConfig{Fields: []FieldValue{{Key: "level", Value: "high"}, {Key: "absent", Value: 1}}},
	}
	out, keep, err := transformPayload(SchemaJSON, tr, []byte(`{"id":7,"secret":"x","noise":1,"level":"low"}`))
	if err != nil || !keep {
		t.Fatal(keep, err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": 7.0, "source": "strata", "level": "high"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}

func TestTransformFilterAndKeep(t *testing.T) {
	tr := &TransformsConfig{Filter: &FilterConfig{Field: "kind", Equals: "click"},
		FilterFields: &FilterFieldsConfig{Keep: []string{"kind", "id"}}}
	if _, keep, err := transformPayload(SchemaJSON, tr, []byte(`{"kind":"view","id":1}`)); err != nil || keep {
		t.Fatalf("view kept: %v %v", keep, err)
	}
	out, keep, err := transformPayload(SchemaJSON, tr, []byte(`{"kind":"click","id":1,"x":2}`))
	if err != nil || !keep || string(out) != `{"id":1,"kind":"click"}` {
		t.Fatalf("click: %s %v %v", out, keep, err)
	}
	// Big integers survive a transform exactly.
	out, _, err = transformPayload(SchemaJSON, &TransformsConfig{AddFields: &FieldsConfig{Fields: []FieldValue{{Key: "a", Value: 1}}}},
		[]byte(`{"n":18446744073709551615}`))
	if err != nil || string(out) != `{"a":1,"n":18446744073709551615}` {
		t.Fatalf("big int: %s %v", out, err)
	}
}

func TestDecodeBySchema(t *testing.T) {
	if _, _, err := transformPayload(SchemaJSON, nil, []byte(`{"a":`)); !errors.Is(err, ErrDecode) {
		t.Fatalf("bad json: %v", err)
	}
	if _, _, err := transformPayload(SchemaJSON, nil, []byte(`{} {}`)); !errors.Is(err, ErrDecode) {
		t.Fatalf("trailing json: %v", err)
	}
	if _, _, err := transformPayload(SchemaText, nil, []byte{0xff, 0xfe}); !errors.Is(err, ErrDecode) {
		t.Fatalf("bad utf-8: %v", err)
	}
	if out, keep, err := transformPayload(SchemaRaw, nil, []byte{0xff}); err != nil || !keep || out[0] != 0xff {
		t.Fatalf("raw: %v %v", keep, err)
	}
	// Non-object JSON passes through untouched.
	if out, keep, err := transformPayload(SchemaJSON, &TransformsConfig{DeleteFields: &DeleteFieldsConfig{Fields: []string{"a"}}}, []byte(`[1,2]`)); err != nil || !keep || string(out) != `[1,2]` {
		t.Fatalf("array: %s %v %v", out, keep, err)
	}
}

func TestSplitBatches(t *testing.T) {
	msgs := make([]client.Message, 25)
	for i := range msgs {
		msgs[i].Offset = uint64(i)
	}
	got := splitBatches(msgs, 10)
	if len(got) != 3 || len(got[0]) != 10 || len(got[2]) != 5 || got[2][4].Offset != 24 {
		t.Fatalf("batches %d", len(got))
	}
	if len(splitBatches(nil, 10)) != 0 {
		t.Fatal("empty poll made a batch")
	}
}

func FuzzTransformPayload(f *testing.F) {
	f.Add([]byte(`{"id":1,"secret":"s"}`))
	f.Add([]byte(`[1]`))
	f.Add([]byte{0xff})
	tr := &TransformsConfig{Filter: &FilterConfig{Field: "id", Exists: true},
		DeleteFields: &DeleteFieldsConfig{Fields: []string{"secret"}},
		AddFields:    &FieldsConfig{Fields: []FieldValue{{Key: "k", Value: "v"}}}}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []Schema{SchemaJSON, SchemaText, SchemaRaw} {
			out, keep, err := transformPayload(s, tr, b)
			if err != nil || !keep || s != SchemaJSON {
				continue
			}
			// A transformed document is valid JSON and transforms again to
			// itself (the chain is idempotent).
			again, keep2, err := transformPayload(s, tr, out)
			if err != nil || !keep2 {
				t.Fatalf("re-transform of %q: %v %v", out, keep2, err)
			}
			if obj, _ := decodePayload(s, out); obj != nil && string(again) != string(out) {
				t.Fatalf("not idempotent: %q then %q", out, again)
			}
		}
	})
}

// BenchmarkTransformPayload measures one JSON message through decode, the
// chain and re-encode (the per-message cost of a transformed pipeline).
func BenchmarkTransformPayload(b *testing.B) {
	tr := &TransformsConfig{DeleteFields: &DeleteFieldsConfig{Fields: []string{"secret"}},
		AddFields: &FieldsConfig{Fields: []FieldValue{{Key: "origin", Value: "strata"}}}}
	payload := []byte(`{"id":123456,"text":"abcdefghijklmnopqrstuvwxyz","secret":"x","created_at":1796011540788351}`)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := transformPayload(SchemaJSON, tr, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPassThrough measures a message with no transforms (schema
// check only).
func BenchmarkPassThrough(b *testing.B) {
	payload := []byte(`{"id":123456,"text":"abcdefghijklmnopqrstuvwxyz"}`)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := transformPayload(SchemaRaw, nil, payload); err != nil {
			b.Fatal(err)
		}
	}
}
