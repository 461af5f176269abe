package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/client/clienttest"
	"github.com/stratabroker/strata/net/wire"
)

// TestRequestNumbering checks §1.9/§3.2: Register 0/0; metadata and Logout
// use the counter then increment; partition ops, reads and Ping use it
// unchanged; a new login starts a fresh client id and counter.
func TestRequestNumbering(t *testing.T) {
	srv := startServer(t)
	ctx := testContext(t)
	c, err := client.Dial(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	type want struct {
		op      wire.Operation
		code    wire.Code
		request uint64
		session bool
		stamped bool
	}
	check := func(step string, w want) clienttest.Request {
		t.Helper()
		r := lastRequest(t, srv)
		if r.Operation != w.op || r.Code != w.code || r.Request != w.request {
			t.Fatalf("%s: got op %v code %v request %d, want op %v code %v request %d",
				step, r.Operation, r.Code, r.Request, w.op, w.code, w.request)
		}
		if (r.Session != 0) != w.session {
			t.Fatalf("%s: session %d, want bound=%v", step, r.Session, w.session)
		}
		if w.stamped && r.Checksum != xxh3.Hash(r.Body) {
			t.Fatalf("%s: request_checksum %#x, want XXH3 of body %#x", step, r.Checksum, xxh3.Hash(r.Body))
		}
		if !w.stamped && r.Checksum != 0 {
			t.Fatalf("%s: request_checksum %#x on an unstamped op", step, r.Checksum)
		}
		if r.ClientLo == 0 && r.ClientHi == 0 {
			t.Fatalf("%s: client id 0", step)
		}
		return r
	}

	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	first := check("ping before login", want{wire.OpNonReplicated, wire.CodePing, 1, false, false})
	id, err := c.LoginUser(ctx, clienttest.RootUsername, clienttest.RootPassword)
	if err != nil {
		t.Fatal(err)
	}
	if id.Session == 0 || id.ServerVersion != wire.ServerVersion || id.ServerProtocolVersion != wire.ProtocolVersion {
		t.Fatalf("identity %+v", id)
	}
	login := check("login", want{wire.OpRegister, 0, 0, false, true})
	if login.ClientLo == first.ClientLo && login.ClientHi == first.ClientHi {
		t.Fatal("login reused the pre-login client id")
	}
	if _, err := c.CreateStream(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	cs := check("create stream", want{wire.OpCreateStream, 0, 1, true, true})
	if cs.Session != id.Session || cs.ClientLo != login.ClientLo {
		t.Fatalf("create stream carries session %d client %#x, want %d %#x", cs.Session, cs.ClientLo, id.Session, login.ClientLo)
	}
	if _, err := c.GetStreams(ctx); err != nil {
		t.Fatal(err)
	}
	check("get streams", want{wire.OpNonReplicated, wire.CodeGetStreams, 2, true, false})
	if _, err := c.CreateTopic(ctx, client.Named("s1"), "t1", 2, nil); err != nil {
		t.Fatal(err)
	}
	check("create topic", want{wire.OpCreateTopic, 0, 2, true, true})
	msgs := []client.Message{{Payload: []byte("a")}}
	if _, err := c.SendMessages(ctx, client.ID(0), client.ID(0), client.PartitionID(1), msgs); err != nil {
		t.Fatal(err)
	}
	check("send", want{wire.OpSendMessages, 0, 3, true, false})
	if err := c.StoreConsumerOffset(ctx, client.IndividualConsumer(client.ID(1)), client.ID(0), client.ID(0), 1, 0); err != nil {
		t.Fatal(err)
	}
	check("store offset", want{wire.OpStoreConsumerOffset, 0, 3, true, false})
	if err := c.DeleteSegments(ctx, client.ID(0), client.ID(0), 0, 1); err != nil {
		t.Fatal(err)
	}
	check("delete segments", want{wire.OpDeleteSegments, 0, 3, true, true})
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	check("ping", want{wire.OpNonReplicated, wire.CodePing, 4, true, false})
	if err := c.Logout(ctx); err != nil {
		t.Fatal(err)
	}
	check("logout", want{wire.OpLogout, 0, 4, true, true})
	if c.LoggedIn() {
		t.Fatal("still logged in after logout")
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	afterLogout := check("ping after logout", want{wire.OpNonReplicated, wire.CodePing, 1, false, false})
	if afterLogout.ClientLo == login.ClientLo && afterLogout.ClientHi == login.ClientHi {
		t.Fatal("logout kept the client id")
	}
	if _, err := c.LoginUser(ctx, clienttest.RootUsername, clienttest.RootPassword); err != nil {
		t.Fatal(err)
	}
	relogin := check("second login", want{wire.OpRegister, 0, 0, false, true})
	if relogin.ClientLo == login.ClientLo && relogin.ClientHi == login.ClientHi {
		t.Fatal("second login reused the first login's client id")
	}
	if err := c.DeleteStream(ctx, client.ID(0)); err != nil {
		t.Fatal(err)
	}
	check("delete stream after relogin", want{wire.OpDeleteStream, 0, 1, true, true})
	if v := srv.Violations(); len(v) != 0 {
		t.Fatalf("header rule violations: %v", v)
	}
}

// TestLoginOnBoundConnectionLogsOutFirst: a second login sends Logout.
func TestLoginOnBoundConnectionLogsOutFirst(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	if _, err := c.LoginUser(ctx, clienttest.RootUsername, clienttest.RootPassword); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	ops := []wire.Operation{}
	for _, r := range reqs {
		ops = append(ops, r.Operation)
	}
	want := []wire.Operation{wire.OpRegister, wire.OpLogout, wire.OpRegister}
	if len(ops) != len(want) {
		t.Fatalf("operations %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Fatalf("operations %v, want %v", ops, want)
		}
	}
}

func TestWrongPasswordIsInvalidCredentials(t *testing.T) {
	srv := startServer(t)
	_, err := client.Dial(testContext(t), srv.Addr(), client.WithCredentials("iggy", "wrong"))
	if !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("got %v, want InvalidCredentials", err)
	}
	var e *client.Error
	if !errors.As(err, &e) || e.Eviction != uint8(wire.EvictInvalidCredentials) {
		t.Fatalf("got %#v, want an eviction-mapped *Error", err)
	}
	if !strings.Contains(err.Error(), "42 InvalidCredentials") {
		t.Fatalf("message %q does not name the protocol error", err)
	}
}

func TestIncompatibleProtocolVersion(t *testing.T) {
	srv := startServer(t)
	_, err := client.Dial(testContext(t), srv.Addr(), client.WithProtocolVersion(wire.PackVersion(0, 12, 0)),
		client.WithCredentials("iggy", "iggy"))
	if !errors.Is(err, wire.ErrIncompatibleProtocolVersion) {
		t.Fatalf("got %v, want IncompatibleProtocolVersion", err)
	}
}

func TestTokenLogin(t *testing.T) {
	srv := startServer(t)
	c := dialRoot(t, srv)
	ctx := testContext(t)
	token, err := c.CreatePersonalAccessToken(ctx, "ci", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePersonalAccessToken(ctx, "ci", 0); !errors.Is(err, wire.ErrPersonalAccessTokenAlreadyExists) {
		t.Fatalf("duplicate token: %v", err)
	}
	pats, err := c.GetPersonalAccessTokens(ctx)
	if err != nil || len(pats) != 1 || pats[0].Name != "ci" {
		t.Fatalf("tokens %+v, %v", pats, err)
	}
	tc, err := client.Dial(ctx, srv.Addr(), client.WithToken(token))
	if err != nil {
		t.Fatalf("token login: %v", err)
	}
	defer tc.Close()
	me, err := tc.GetMe(ctx)
	if err != nil || me.UserID != 0 {
		t.Fatalf("me %+v, %v", me, err)
	}
	if err := c.DeletePersonalAccessToken(ctx, "ci"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeletePersonalAccessToken(ctx, "ci"); !errors.Is(err, wire.ErrResourceNotFound) {
		t.Fatalf("delete missing token: %v", err)
	}
	if _, err := client.Dial(ctx, srv.Addr(), client.WithToken(token)); !errors.Is(err, wire.ErrInvalidPersonalAccessToken) {
		t.Fatalf("login with deleted token: %v", err)
	}
}
