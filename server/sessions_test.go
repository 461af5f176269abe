package server_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/server"
)

// TestSessionSurvivesRestart: sessions are the metadata group's client
// table, replicated state in its journal and checkpoints, so a restart
// keeps them. A client that reconnects after the restart with its client
// id resumes its session (the same session number, nothing committed)
// and a duplicate of a metadata request it sent before the restart is
// answered from the cached reply, the latest and an older one alike (the
// ring of 5), not applied a second time; its next request number is new.
// Before, sessions lived in the server's memory: after the restart the
// duplicate was new and applied again (here: CreateStream of a name that
// now exists, answered with an error instead of the stream).
func TestSessionSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	ts := startServer(t, dir)
	r := dialRaw(t, ts.addr)
	r.login()
	first, code := r.metadataOpAt(128, 1, []byte{5, 'k', 'e', 'e', 'p', '1'})
	if code != 0 {
		t.Fatalf("create stream: result %d", code)
	}
	second, code := r.metadataOpAt(128, 2, []byte{5, 'k', 'e', 'e', 'p', '2'})
	if code != 0 {
		t.Fatalf("create stream: result %d", code)
	}
	session := r.session
	ts.stop()

	ts = startServer(t, dir)
	again := dialRaw(t, ts.addr) // the same client id
	again.login()
	if again.session != session {
		t.Fatalf("session after restart %d, want the session %d resumed", again.session, session)
	}
	for _, c := range []struct {
		request uint64
		name    string
		want    []byte
	}{{2, "keep2", second}, {1, "keep1", first}} {
		got, code := again.metadataOpAt(128, c.request, append([]byte{byte(len(c.name))}, c.name...))
		if code != 0 || !bytes.Equal(got, c.want) {
			t.Fatalf("duplicate of request %d after restart: result %d payload % x, want the cached reply % x", c.request, code, got, c.want)
		}
	}
	if _, code := again.metadataOpAt(128, 3, []byte{5, 'k', 'e', 'e', 'p', '3'}); code != 0 {
		t.Fatalf("request 3 after restart: result %d, want a new stream", code)
	}
	streams, err := ts.connect().GetStreams(ctx(t))
	if err != nil || len(streams) != 3 {
		t.Fatalf("streams after restart: %d (%v), want 3: no duplicate applied twice", len(streams), err)
	}
}

// TestLoginLogoutSyncs logs in (personal access token) and out over TCP
// 1,000 times and logs the time and the metadata journal's file syncs
// per committed op: a metadata op costs one sync (its seal rides the next
// op's sync, vsr.Config.SealLazily), where it took two in a row. The
// figures are in the log, not asserted (vsr's
// TestSealLazilyOneSyncPerOp asserts the count deterministically).
func TestLoginLogoutSyncs(t *testing.T) {
	const rounds = 1000
	ts := startServer(t, t.TempDir())
	root := ts.connect()
	token, err := root.CreatePersonalAccessToken(ctx(t), "churn", 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	syncs0, ops0 := server.MetaSyncsForTest(ts.srv)
	started := time.Now()
	for i := range rounds {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := c.LoginWithToken(cctx, token); err != nil {
			cancel()
			t.Fatalf("login %d: %v", i, err)
		}
		if err := c.Logout(cctx); err != nil {
			cancel()
			t.Fatalf("logout %d: %v", i, err)
		}
		cancel()
	}
	elapsed := time.Since(started)
	syncs, ops := server.MetaSyncsForTest(ts.srv)
	if ops-ops0 != 2*rounds {
		t.Fatalf("%d metadata ops committed for %d logins and logouts", ops-ops0, 2*rounds)
	}
	t.Logf("%d TCP PAT logins and logouts in %v (%v per op): %d journal syncs for %d ops, %.2f per op",
		rounds, elapsed, elapsed/time.Duration(2*rounds), syncs-syncs0, ops-ops0, float64(syncs-syncs0)/float64(ops-ops0))
}
