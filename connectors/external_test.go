package connectors

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/stratabroker/strata/connectors/plugin"
	"github.com/stratabroker/strata/connectors/sdk"
)

// testPluginEnv makes the test binary act as an external plugin: "hang"
// never answers Consume, "crash" exits in Consume, "ok" accepts.
const testPluginEnv = "STRATA_TEST_CONNECTORS_PLUGIN"

func TestMain(m *testing.M) {
	if mode := os.Getenv(testPluginEnv); mode != "" {
		sdk.Main(sdk.ServeSink("test-"+mode, &testSink{mode: mode}))
	}
	os.Exit(m.Run())
}

type testSink struct{ mode string }

func (s *testSink) Open(context.Context, plugin.OpenRequest) error { return nil }

func (s *testSink) Consume(ctx context.Context, b plugin.SinkBatch) error {
	switch s.mode {
	case "hang":
		<-make(chan struct{})
	case "crash":
		os.Exit(3)
	case "reject":
		return errors.New("rejected on purpose")
	}
	return nil
}

func (s *testSink) Close(context.Context) error { return nil }

func startTestPlugin(t *testing.T, mode, kind string, timeout time.Duration) (*processPlugin, error) {
	t.Setenv(testPluginEnv, mode)
	return startProcessPlugin(os.Args[0], []string{"-test.run=^$"}, kind, timeout, zap.NewNop())
}

func TestProcessPluginHangIsKilled(t *testing.T) {
	p, err := startTestPlugin(t, "hang", KindSink, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.Open(ctx, plugin.OpenRequest{ID: 1, Key: "k"}); err != nil {
		t.Fatal(err)
	}
	err = p.Consume(ctx, plugin.SinkBatch{Messages: []plugin.ConsumedMessage{{Offset: 1}}})
	if !errors.Is(err, ErrPluginFailed) || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("hung consume: %v", err)
	}
	<-p.exited // the process was killed
	if err := p.Consume(ctx, plugin.SinkBatch{}); !errors.Is(err, ErrPluginFailed) {
		t.Fatalf("call after failure: %v", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatalf("close of a killed plugin: %v", err)
	}
}

func TestProcessPluginCrashAndReject(t *testing.T) {
	ctx := context.Background()
	p, err := startTestPlugin(t, "reject", KindSink, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Consume(ctx, plugin.SinkBatch{}); err == nil || errors.Is(err, ErrPluginFailed) || !strings.Contains(err.Error(), "rejected on purpose") {
		t.Fatalf("reject: %v", err)
	}
	if err := p.Close(ctx); err != nil {
		t.Fatalf("clean close: %v", err)
	}

	p, err = startTestPlugin(t, "crash", KindSink, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Consume(ctx, plugin.SinkBatch{}); !errors.Is(err, ErrPluginFailed) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("crash: %v", err)
	}
	_ = p.Close(ctx)
}

func TestProcessPluginKindMismatch(t *testing.T) {
	if _, err := startTestPlugin(t, "ok", KindSource, time.Second); !errors.Is(err, ErrPluginFailed) || !strings.Contains(err.Error(), "type") {
		t.Fatalf("sink started as a source: %v", err)
	}
	if _, err := startProcessPlugin("/nonexistent/plugin", nil, KindSink, time.Second, zap.NewNop()); !errors.Is(err, ErrPluginFailed) {
		t.Fatalf("missing binary: %v", err)
	}
}
