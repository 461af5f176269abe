package server_test

import (
	"errors"
	"testing"

	"github.com/stratabroker/strata/net/wire"
)

func TestLocalSession(t *testing.T) {
	ts := startServer(t, t.TempDir())
	ls, err := ts.srv.OpenLocalSession(wire.TransportHTTP, "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if _, err := ls.Do(&wire.GetStreamsRequest{}); !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("read before login: %v", err)
	}
	if _, err := ls.Login("iggy", "nope"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("bad login: %v", err)
	}
	if id, err := ls.Login("iggy", "iggy"); err != nil || id != 0 {
		t.Fatalf("login: %d %v", id, err)
	}
	payload, err := ls.Do(&wire.CreateStreamRequest{Name: "via-local"})
	if err != nil {
		t.Fatal(err)
	}
	var details wire.StreamDetails
	if err := details.Decode(payload); err != nil || details.Name != "via-local" {
		t.Fatalf("create stream payload: %+v %v", details, err)
	}
	if _, err := ls.Do(&wire.CreateStreamRequest{Name: "via-local"}); !errors.Is(err, wire.ErrStreamNameAlreadyExists) {
		t.Fatalf("duplicate: %v", err)
	}
	payload, err = ls.Do(&wire.GetStreamsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	streams, err := wire.DecodeStreams(payload)
	if err != nil || len(streams) != 1 {
		t.Fatalf("streams %+v %v", streams, err)
	}
	// The session is listed among the clients with its transport.
	payload, err = ls.Do(&wire.GetClientsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	clients, err := wire.DecodeClients(payload)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range clients {
		found = found || (c.Transport == wire.TransportHTTP && c.UserID == 0)
	}
	if !found {
		t.Fatalf("local session not listed: %+v", clients)
	}
	if _, err := ls.Do(&wire.LogoutRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Do(&wire.GetStreamsRequest{}); !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("read after logout: %v", err)
	}
}
