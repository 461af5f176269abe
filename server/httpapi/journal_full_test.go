package httpapi

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
	"github.com/stratabroker/strata/server/config"
)

// startOver runs a broker over dir (kept across restarts) with TCP and
// HTTP on 127.0.0.1:0; stop shuts it down gracefully and may be called
// before the test ends.
func startOver(t *testing.T, dir string) (h *harness, stop func()) {
	t.Helper()
	environ := []string{"STRATA_SYSTEM_PATH=" + dir, "STRATA_TCP_ADDRESS=127.0.0.1:0",
		"STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0"}
	if engine := os.Getenv("STRATA_SYSTEM_IO_ENGINE"); engine != "" {
		environ = append(environ, "STRATA_SYSTEM_IO_ENGINE="+engine)
	}
	conf, err := config.Load("", environ)
	if err != nil {
		t.Fatal(err)
	}
	h = &harness{t: t, clock: &testClock{t: time.Now()}, logs: &logBuffer{}, http: &http.Client{Timeout: 30 * time.Second}}
	// The churn logs one user in thousands of times from one address:
	// the per-(user, address) success limit is lifted so that the test
	// measures the journal, not the limiter.
	cfg := Config{Now: h.clock.Now, SuccessesPerUserAddress: 1 << 20}
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()), h.logs, zapcore.DebugLevel)
	srv, err := server.New(server.Options{
		Config: conf, Logger: zap.New(core), Root: server.RootCredentials{Username: "iggy", Password: "iggy"},
		HTTP: func(s *server.Server) (http.Handler, error) { return New(s, cfg) },
	})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	h.srv = srv
	h.base = "http://" + srv.HTTPAddr().String()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	t.Cleanup(stop)
	return h, stop
}

// dialTCP connects a binary client to the harness's TCP listener.
func dialTCP(t *testing.T, h *harness) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, h.srv.TCPAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSessionEntriesNeverFillMetadataJournal logs in and out 5,000 times,
// half over TCP and half over HTTP (personal access tokens: each login
// and each logout is one metadata journal entry, 10,000 in all, almost ten
// times journal_slots) with no other metadata change in between. Every
// login and logout must succeed, a stream is then created, and after a
// restart on the same data directory the stream is there and another one
// can be created: session entries fill the journal like any other
// operation and the checkpoint empties it.
func TestSessionEntriesNeverFillMetadataJournal(t *testing.T) {
	const rounds = 2500 // per transport
	dir := t.TempDir()
	h, stop := startOver(t, dir)
	root := h.root()
	var pat tokenRequest
	h.expect(http.StatusOK, "POST", "/personal-access-tokens", root, map[string]any{"name": "churn", "expiry": 0}).decode(t, &pat)

	c := dialTCP(t, h)
	started := time.Now()
	for i := 0; i < rounds; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := c.LoginWithToken(ctx, pat.Token); err != nil {
			cancel()
			t.Fatalf("TCP login %d: %v", i, err)
		}
		if err := c.Logout(ctx); err != nil {
			cancel()
			t.Fatalf("TCP logout %d: %v", i, err)
		}
		cancel()
	}
	t.Logf("%d TCP PAT logins and logouts in %v", rounds, time.Since(started))
	started = time.Now()
	for i := 0; i < rounds; i++ {
		r := h.do("POST", "/personal-access-tokens/login", "", map[string]string{"token": pat.Token})
		if r.status != http.StatusOK {
			t.Fatalf("HTTP login %d: status %d: %s", i, r.status, r.body)
		}
		var id identityInfo
		r.decode(t, &id)
		if r := h.do("DELETE", "/users/logout", id.AccessToken.Token, nil); r.status != http.StatusNoContent {
			t.Fatalf("HTTP logout %d: status %d: %s", i, r.status, r.body)
		}
	}
	t.Logf("%d HTTP PAT logins and logouts in %v", rounds, time.Since(started))
	logJournalFiles(t, dir)

	// A new connection: the logged-out one above sat unauthenticated
	// through the HTTP churn, past [tcp] unauthenticated_idle_timeout.
	c = dialTCP(t, h)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.LoginUser(ctx, "iggy", "iggy"); err != nil {
		t.Fatalf("login after the churn: %v", err)
	}
	if _, err := c.CreateStream(ctx, "after-churn"); err != nil {
		t.Fatalf("create a stream after the churn: %v", err)
	}
	stop()

	h, _ = startOver(t, dir)
	c = dialTCP(t, h)
	if _, err := c.LoginUser(ctx, "iggy", "iggy"); err != nil {
		t.Fatalf("login after the restart: %v", err)
	}
	if _, err := c.CreateStream(ctx, "after-restart"); err != nil {
		t.Fatalf("create a stream after the restart: %v", err)
	}
	streams, err := c.GetStreams(ctx)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, s := range streams {
		names[s.Name] = true
	}
	if !names["after-churn"] || !names["after-restart"] {
		t.Fatalf("streams after the restart: %+v", streams)
	}
}

// logJournalFiles logs the size of the metadata files of a data dir.
func logJournalFiles(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"journal.wal", "snapshot.bin"} {
		info, err := os.Stat(filepath.Join(dir, "metadata", name))
		if err != nil {
			t.Logf("metadata/%s: %v", name, err)
			continue
		}
		t.Logf("metadata/%s: %d bytes", name, info.Size())
	}
}
