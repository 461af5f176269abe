package server_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// passwordVerifications reads strata_password_verifications_total.
func passwordVerifications(t *testing.T, ts *testServer) float64 {
	t.Helper()
	families, err := ts.srv.MetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "strata_password_verifications_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no strata_password_verifications_total")
	return 0
}

// tryLogin dials addr and logs in once, returning the login's error and
// how long the login (not the dial) took. The connection is closed.
func tryLogin(t *testing.T, addr, username, password string) (time.Duration, error) {
	t.Helper()
	c, err := client.Dial(ctx(t), addr, client.WithTransientBackoff(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.LoginUser(ctx(t), username, password)
	return time.Since(start), err
}

// median of a sample.
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestUnknownUsersCostTheSameHashWork: a login naming no user computes one
// password hash, like a wrong password for a real user and like a login
// of an inactive user, so the answer's timing does not tell which names
// exist. The counted work is asserted; the login times are only logged.
func TestUnknownUsersCostTheSameHashWork(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_LOGIN_FAILURES_PER_USER_ADDRESS=1000",
		"STRATA_LOGIN_FAILURES_PER_USER=1000", "STRATA_LOGIN_FAILURES_PER_ADDRESS=1000")
	root := ts.connect()
	if _, err := root.CreateUser(ctx(t), "dormant", "dormant-pw", 2, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, username, password string
		ok                       bool
	}{
		{"known user, right password", "iggy", "iggy", true},
		{"known user, wrong password", "iggy", "wrong-password", false},
		{"unknown user", "nobody-by-this-name", "wrong-password", false},
		{"inactive user, right password", "dormant", "dormant-pw", false},
	}
	for _, c := range cases {
		before := passwordVerifications(t, ts)
		_, err := tryLogin(t, ts.addr, c.username, c.password)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, wire.ErrInvalidCredentials)) {
			t.Fatalf("%s: login error %v", c.name, err)
		}
		if n := passwordVerifications(t, ts) - before; n != 1 {
			t.Fatalf("%s: %v password hashes computed, want 1", c.name, n)
		}
	}
	// The figure: medians of alternating logins (timing is logged, never
	// asserted: the machine is shared).
	const logins = 15
	var known, unknown []time.Duration
	for range logins {
		d, _ := tryLogin(t, ts.addr, "iggy", "wrong-password")
		known = append(known, d)
		d, _ = tryLogin(t, ts.addr, "nobody-by-this-name", "wrong-password")
		unknown = append(unknown, d)
	}
	t.Logf("login over TCP, median of %d each: known user with a wrong password %v, unknown user %v",
		logins, median(known), median(unknown))
}

// TestBcryptHashesOfEarlierDataDirsStillVerify boots a data directory
// written when passwords were bcrypt hashes: its users log in with their
// passwords (an 87-byte one too), each such login stores the password
// again as Argon2id (so the users of an old directory do not stay
// distinguishable by their login's work), and the logins that follow
// verify the new hashes.
func TestBcryptHashesOfEarlierDataDirsStillVerify(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "datadir-bcrypt"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	const argon2Iggy = "$argon2id$v=19$m=19456,t=2,p=1$"
	journal := func() []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "metadata", "journal.wal"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if bytes.Contains(journal(), []byte("$argon2id$")) || !bytes.Contains(journal(), []byte("$2a$10$")) {
		t.Fatal("the fixture is not a bcrypt-only data directory")
	}
	ts := startServer(t, dir, "STRATA_METADATA_JOURNAL_SLOTS=16")
	const long = "a-password-longer-than-seventy-two-bytes-which-bcrypt-alone-would-truncate-0123456789"
	users := [][2]string{{"iggy", "iggy"}, {"legacy", "legacy-pw"}, {"longpw", long}}
	for _, u := range users {
		if _, err := tryLogin(t, ts.addr, u[0], u[1]); err != nil {
			t.Fatalf("%s: %v", u[0], err)
		}
	}
	if n := bytes.Count(journal(), []byte(argon2Iggy)); n != len(users) {
		t.Fatalf("%d Argon2id hashes stored after the first logins of %d bcrypt users", n, len(users))
	}
	ts.mustLog("password hash upgraded from bcrypt to argon2id")
	for _, u := range users {
		if _, err := tryLogin(t, ts.addr, u[0], u[1]); err != nil {
			t.Fatalf("%s after the upgrade: %v", u[0], err)
		}
	}
	if n := bytes.Count(journal(), []byte(argon2Iggy)); n != len(users) {
		t.Fatalf("%d Argon2id hashes after the second logins, want still %d", n, len(users))
	}
	for _, u := range [][2]string{{"longpw", long[:72]}, {"legacy", "wrong"}} {
		if _, err := tryLogin(t, ts.addr, u[0], u[1]); !errors.Is(err, wire.ErrInvalidCredentials) {
			t.Fatalf("%s with a wrong password: %v", u[0], err)
		}
	}
	// The upgraded hashes survive a restart.
	ts.stop()
	ts = startServer(t, dir, "STRATA_METADATA_JOURNAL_SLOTS=16")
	for _, u := range users {
		if _, err := tryLogin(t, ts.addr, u[0], u[1]); err != nil {
			t.Fatalf("%s after a restart: %v", u[0], err)
		}
	}
}

// dialFrom logs in over TCP from a chosen loopback source address (the
// client library always lets the kernel choose), with bytes laid out as
// PROTOCOL.md §1.3 and §2.3 say; it returns the login's reply.
func dialFrom(t *testing.T, source, addr, username, password string) rawReply {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
	conn, err := d.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := &rawConn{t: t, conn: conn, counter: 1}
	r.client[0], r.client[15] = 0x6B, 0x02
	return r.roundTrip(r.requestFrame(1, 0, 0, 0, true, loginBody(username, password)))
}

// loopbackAlias reports whether 127.0.0.2 is a local address (Linux
// routes all of 127/8 to the loopback; other systems may not).
func loopbackAlias() bool {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return false
	}
	_ = ln.Close()
	return true
}

// TestSharedAddressDoesNotLockOutOtherUsers: failed logins are counted
// per (address, username) and per username, not per address alone, so one
// user's mistakes behind a shared address (NAT) do not lock the others out.
// The user who failed waits at that address (the limit is what stops
// someone guessing that name there) but not at another.
func TestSharedAddressDoesNotLockOutOtherUsers(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := ts.connect()
	for _, name := range []string{"alice", "bob"} {
		if _, err := root.CreateUser(ctx(t), name, name+"-pw", 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		if _, err := tryLogin(t, ts.addr, "alice", "wrong"); !errors.Is(err, wire.ErrInvalidCredentials) {
			t.Fatalf("alice's wrong password %d: %v", i, err)
		}
	}
	if _, err := tryLogin(t, ts.addr, "bob", "bob-pw"); err != nil {
		t.Fatalf("bob behind the same address after alice's 5 failures: %v", err)
	}
	if _, err := tryLogin(t, ts.addr, "iggy", "iggy"); err != nil {
		t.Fatalf("root behind the same address after alice's 5 failures: %v", err)
	}
	if _, err := tryLogin(t, ts.addr, "alice", "alice-pw"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("alice's right password at the address of her 5 failures: %v, want refused until a refill", err)
	}
	ts.mustLog("too many failed logins")
	if !loopbackAlias() {
		t.Log("127.0.0.2 is not a local address here: alice's login from another address is not tried")
		return
	}
	if reply := dialFrom(t, "127.0.0.2", ts.addr, "alice", "alice-pw"); reply.command != 8 || reply.status != 0 {
		t.Fatalf("alice from another address: command %d status %d reason %d", reply.command, reply.status, reply.reason)
	}
}

// TestClientTableEvictsOnlyTheUsersOwnSessions: the client table bounds
// each user's sessions; a user's login past it ends that user's oldest
// session, and a login into a table full of other users' sessions is
// refused (TransientNotAccepted) without ending any of them. Before, the
// table's oldest session went, whoever's it was: one user logging in
// enough times logged root out.
func TestClientTableEvictsOnlyTheUsersOwnSessions(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_METADATA_CLIENTS_TABLE_MAX=5", "STRATA_METADATA_CLIENTS_PER_USER_MAX=3")
	root := ts.connect()
	for _, name := range []string{"flood", "carol", "dave"} {
		if _, err := root.CreateUser(ctx(t), name, name+"-pw", 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	var flood []*client.Client
	for range 4 {
		c, err := client.Dial(ctx(t), ts.addr, client.WithCredentials("flood", "flood-pw"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		flood = append(flood, c)
	}
	// flood's fourth session ended its first; root's is untouched.
	if _, err := flood[0].GetMe(ctx(t)); !errors.Is(err, wire.ErrUnauthenticated) {
		t.Fatalf("flood's oldest session past its bound: %v, want Unauthenticated", err)
	}
	for i, c := range flood[1:] {
		if _, err := c.GetMe(ctx(t)); err != nil {
			t.Fatalf("flood's session %d: %v", i+1, err)
		}
	}
	carol, err := client.Dial(ctx(t), ts.addr, client.WithCredentials("carol", "carol-pw"))
	if err != nil {
		t.Fatal(err)
	}
	defer carol.Close()
	// Full: root 1, flood 3, carol 1. dave is refused; nobody is ended.
	if _, err := tryLogin(t, ts.addr, "dave", "dave-pw"); !errors.Is(err, wire.ErrTransientNotAccepted) {
		t.Fatalf("dave into a full table: %v, want TransientNotAccepted", err)
	}
	ts.mustLog("the client table is full")
	for name, c := range map[string]*client.Client{"root": root, "carol": carol, "flood": flood[3]} {
		if _, err := c.GetMe(ctx(t)); err != nil {
			t.Fatalf("%s after dave's refused login: %v", name, err)
		}
	}
	if _, err := root.GetStreams(ctx(t)); err != nil {
		t.Fatalf("root: %v", err)
	}
}
