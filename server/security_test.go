package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
)

// TestFailedLoginsAreRateLimited: after 5 failed logins from one address
// even the right password is refused until the bucket refills.
func TestFailedLoginsAreRateLimited(t *testing.T) {
	ts := startServer(t, t.TempDir())
	c, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 5; i++ {
		if _, err := c.LoginUser(ctx(t), "iggy", "wrong"); !errors.Is(err, wire.ErrInvalidCredentials) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if _, err := c.LoginUser(ctx(t), "iggy", "iggy"); !errors.Is(err, wire.ErrInvalidCredentials) {
		t.Fatalf("login after 5 failures: %v, want refused", err)
	}
	ts.mustLog("too many failed logins")
}

// TestSecretsStayOutOfLogsAndConfig: passwords and tokens never appear in
// the server log or in runtime/current_config.toml.
func TestSecretsStayOutOfLogsAndConfig(t *testing.T) {
	ts := startServer(t, t.TempDir())
	root := ts.connect()
	const password, second = "Sup3r-S3cret-Passw0rd", "An0ther-S3cret-Passw0rd"
	if _, err := root.CreateUser(ctx(t), "alice", password, 1, nil); err != nil {
		t.Fatal(err)
	}
	alice, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	if _, err := alice.LoginUser(ctx(t), "alice", password); err != nil {
		t.Fatal(err)
	}
	token, err := alice.CreatePersonalAccessToken(ctx(t), "ci", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := alice.ChangePassword(ctx(t), client.Named("alice"), password, second); err != nil {
		t.Fatal(err)
	}
	byToken, err := client.Dial(ctx(t), ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer byToken.Close()
	if _, err := byToken.LoginWithToken(ctx(t), token); err != nil {
		t.Fatal(err)
	}
	_, _ = byToken.LoginUser(ctx(t), "alice", "wrong-"+second)
	ts.stop()
	for where, text := range map[string]string{"log": ts.logs.String(), "current_config.toml": readCurrentConfig(t, ts.dir)} {
		for _, secret := range []string{password, second, token} {
			if strings.Contains(text, secret) {
				t.Fatalf("the %s contains a secret", where)
			}
		}
	}
}
