package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stratabroker/strata/connectors/plugin"
)

type countingSource struct {
	opened  plugin.OpenRequest
	n       int
	reports []plugin.BatchResult
}

func (s *countingSource) Open(_ context.Context, r plugin.OpenRequest) error {
	s.opened = r
	return nil
}

func (s *countingSource) Poll(context.Context) (plugin.ProducedBatch, error) {
	s.n++
	if s.n == 2 {
		return plugin.ProducedBatch{}, errors.New("no data source")
	}
	return plugin.ProducedBatch{Messages: []plugin.ProducedMessage{{Payload: []byte("m")}}, State: []byte{byte(s.n)}}, nil
}

func (s *countingSource) Report(_ context.Context, r plugin.BatchResult) error {
	s.reports = append(s.reports, r)
	return nil
}

func (s *countingSource) Close(context.Context) error { return nil }

// TestServeSource drives a source through a scripted conversation.
func TestServeSource(t *testing.T) {
	var in bytes.Buffer
	var scratch []byte
	send := func(kind uint8, v any) {
		var body []byte
		if v != nil {
			body, _ = json.Marshal(v)
		}
		var err error
		if scratch, err = plugin.WriteFrame(&in, scratch, kind, body); err != nil {
			t.Fatal(err)
		}
	}
	send(plugin.KindOpen, plugin.OpenRequest{ID: 9, Key: "k", State: []byte("s0")})
	send(plugin.KindPoll, nil)
	send(plugin.KindReport, plugin.BatchResult{Sent: true, Messages: 1})
	send(plugin.KindPoll, nil)
	send(plugin.KindClose, nil)
	src := &countingSource{}
	var out bytes.Buffer
	if err := ServeSource("counter", src).Serve(context.Background(), &in, &out); err != nil {
		t.Fatal(err)
	}
	fr := plugin.NewFrameReader(&out)
	wantKinds := []uint8{plugin.KindHello, plugin.KindOk, plugin.KindBatch, plugin.KindOk, plugin.KindError, plugin.KindOk}
	for i, want := range wantKinds {
		f, err := fr.ReadFrame()
		if err != nil || f.Kind != want {
			t.Fatalf("reply %d: kind %d (%v), want %d", i, f.Kind, err, want)
		}
		if want == plugin.KindBatch {
			var b plugin.ProducedBatch
			if err := json.Unmarshal(f.Body, &b); err != nil || len(b.Messages) != 1 || string(b.Messages[0].Payload) != "m" {
				t.Fatalf("batch %s %v", f.Body, err)
			}
		}
		if want == plugin.KindHello {
			var h plugin.Hello
			if err := json.Unmarshal(f.Body, &h); err != nil || h.Type != "source" || h.Protocol != plugin.ProtocolVersion {
				t.Fatalf("hello %s", f.Body)
			}
		}
	}
	if src.opened.ID != 9 || string(src.opened.State) != "s0" || len(src.reports) != 1 || !src.reports[0].Sent {
		t.Fatalf("source saw %+v %+v", src.opened, src.reports)
	}
}
