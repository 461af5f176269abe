package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratabroker/strata/connectors"
	"github.com/stratabroker/strata/connectors/plugin"
)

func TestRegistered(t *testing.T) {
	if got := strings.Join(connectors.Sources(), ","); got != "file,postgres,random" {
		t.Fatalf("sources %s", got)
	}
	if got := strings.Join(connectors.Sinks(), ","); got != "file,http,postgres,stdout" {
		t.Fatalf("sinks %s", got)
	}
}

func cfgJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFileSourceCompleteLinesAndResume hands out complete lines only and
// resumes from the byte offset in its state.
func TestFileSourceCompleteLinesAndResume(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte("{\"a\":1}\n\n{\"a\":2}\n{\"a\":"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := &fileSource{}
	if err := src.Open(ctx, plugin.OpenRequest{Config: cfgJSON(t, map[string]any{"path": path, "lines_per_batch": 10})}); err != nil {
		t.Fatal(err)
	}
	b, err := src.Poll(ctx)
	if err != nil || len(b.Messages) != 2 || string(b.Messages[1].Payload) != `{"a":2}` || string(b.State) != `{"offset":17}` {
		t.Fatalf("first poll: %+v %s %v", b.Messages, b.State, err)
	}
	if b, err := src.Poll(ctx); err != nil || len(b.Messages) != 0 || b.State != nil {
		t.Fatalf("partial line handed out: %+v %v", b, err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("3}\n{\"a\":4}\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, err = src.Poll(ctx)
	if err != nil || len(b.Messages) != 2 || string(b.Messages[0].Payload) != `{"a":3}` {
		t.Fatalf("after append: %+v %v", b.Messages, err)
	}
	state := b.State
	_ = src.Close(ctx)

	again := &fileSource{}
	if err := again.Open(ctx, plugin.OpenRequest{Config: cfgJSON(t, map[string]any{"path": path}), State: state}); err != nil {
		t.Fatal(err)
	}
	defer again.Close(ctx)
	if b, err := again.Poll(ctx); err != nil || len(b.Messages) != 0 {
		t.Fatalf("resumed source re-read lines: %+v %v", b.Messages, err)
	}
}

func TestRandomSourceResumesCount(t *testing.T) {
	ctx := context.Background()
	src := &randomSource{}
	if err := src.Open(ctx, plugin.OpenRequest{Config: cfgJSON(t, map[string]any{"messages_per_batch": 4, "max_count": 6}), State: []byte(`{"count":3}`)}); err != nil {
		t.Fatal(err)
	}
	b, err := src.Poll(ctx)
	if err != nil || len(b.Messages) != 3 || string(b.State) != `{"count":6}` {
		t.Fatalf("poll: %d messages state %s %v", len(b.Messages), b.State, err)
	}
	var first struct{ ID int }
	if err := json.Unmarshal(b.Messages[0].Payload, &first); err != nil || first.ID != 3 {
		t.Fatalf("first id %d %v", first.ID, err)
	}
	if b, _ := src.Poll(ctx); len(b.Messages) != 0 {
		t.Fatal("produced past max_count")
	}
	if err := (&randomSource{}).Open(ctx, plugin.OpenRequest{Config: []byte(`{"messages_per_batch":-1}`)}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad config: %v", err)
	}
}

// TestHTTPSinkRetryPolicy retries 5xx and stops at once on 4xx.
func TestHTTPSinkRetryPolicy(t *testing.T) {
	var calls atomic.Int32
	status := atomic.Int32{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("X-Token") != "t" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	ctx := context.Background()
	s := &httpSink{}
	if err := s.Open(ctx, plugin.OpenRequest{Config: cfgJSON(t, map[string]any{"url": srv.URL, "max_retries": 2,
		"retry_backoff": "1ms", "headers": map[string]string{"X-Token": "t"}})}); err != nil {
		t.Fatal(err)
	}
	batch := plugin.SinkBatch{Schema: "json", Messages: []plugin.ConsumedMessage{{Offset: 1, Payload: []byte(`{"x":1}`)}}}
	status.Store(http.StatusBadGateway)
	if err := s.Consume(ctx, batch); err == nil || calls.Load() != 3 {
		t.Fatalf("5xx: %v after %d calls, want 3", err, calls.Load())
	}
	calls.Store(0)
	status.Store(http.StatusUnprocessableEntity)
	if err := s.Consume(ctx, batch); !errors.Is(err, errHTTPPermanent) || calls.Load() != 1 {
		t.Fatalf("4xx: %v after %d calls, want 1", err, calls.Load())
	}
	calls.Store(0)
	status.Store(http.StatusNoContent)
	if err := s.Consume(ctx, batch); err != nil || calls.Load() != 1 {
		t.Fatalf("2xx: %v after %d calls", err, calls.Load())
	}
}

func TestSinkLineFormats(t *testing.T) {
	b := plugin.SinkBatch{Stream: "s", Topic: "t", Partition: 2}
	m := plugin.ConsumedMessage{Offset: 5, Payload: []byte("hé")}
	for schema, want := range map[string]string{"text": `"payload":"hé"`, "raw": `"payload":"aMOp"`} {
		b.Schema = schema
		line, err := appendLine(nil, formatJSONL, &b, &m)
		if err != nil || !strings.Contains(string(line), want) || !strings.HasSuffix(string(line), "\n") {
			t.Fatalf("%s: %s %v", schema, line, err)
		}
	}
	line, err := appendLine(nil, formatRaw, &b, &m)
	if err != nil || string(line) != "hé\n" {
		t.Fatalf("raw format: %q %v", line, err)
	}
}
