package server_test

import (
	"bytes"
	"testing"
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
