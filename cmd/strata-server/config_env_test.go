package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestMisspeltVariableStopsTheServer: a STRATA_ variable that names no
// key stops strata-server with the nearest key (STRATA_TCP_ADRESS=x and
// STRATA_HTTP_ENABLE=true used to start it silently on the defaults); the
// settings that lived outside the config are keys, and their old names
// say so.
func TestMisspeltVariableStopsTheServer(t *testing.T) {
	for env, want := range map[string]string{
		"STRATA_TCP_ADRESS=x":              "STRATA_TCP_ADRESS names no config key; did you mean STRATA_TCP_ADDRESS (tcp.address)?",
		"STRATA_HTTP_ENABLE=true":          "did you mean STRATA_HTTP_ENABLED (http.enabled)?",
		"STRATA_HTTP_JWT_SECRET=k":         "set STRATA_HTTP_JWT_ENCODING_SECRET instead",
		"STRATA_SHARD_RUNTIME_CAPACITY=64": "set STRATA_SYSTEM_IO_RING_ENTRIES instead",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, serverBinary, "--with-default-root-credentials")
		cmd.Env = append(os.Environ(), "STRATA_SYSTEM_PATH="+t.TempDir(), "STRATA_TCP_ADDRESS=127.0.0.1:0", env)
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("%s: strata-server ran on (it should have refused to start):\n%s", env, out)
		}
		exit, ok := err.(*exec.ExitError)
		if !ok || exit.ExitCode() != 2 || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v\n%s\nwant exit 2 saying %q", env, err, out, want)
		}
	}
	// The other programs' variables do not stop it.
	p := startProcess(t, t.TempDir(), "STRATA_ADDRESS=127.0.0.1:1", "STRATA_USERNAME=someone", "STRATA_CONNECTORS_STRATA_ADDRESS=x",
		"STRATA_TEST_ANYTHING=1", "STRATA_ROOT_USERNAME=iggy", "STRATA_ROOT_PASSWORD=iggy")
	p.terminate(t)

	out, err := exec.Command(serverBinary, "--print-default-config").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"ring_entries = 4096", "ring_event_interval = 128", "[http.jwt]", "encoding_secret"} {
		if !strings.Contains(string(out), key) {
			t.Errorf("--print-default-config lacks %q", key)
		}
	}
}

// TestJWTSecretFromTheConfigNeverWritten: [http.jwt] encoding_secret
// (from STRATA_HTTP_JWT_ENCODING_SECRET) signs the HTTP API's tokens, and
// neither runtime/current_config.toml nor the log holds it.
func TestJWTSecretFromTheConfigNeverWritten(t *testing.T) {
	secret := randomSecret(t, "jwt-")
	dir := t.TempDir()
	p := startProcess(t, dir, "STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0", "STRATA_HTTP_JWT_ENCODING_SECRET="+secret,
		"STRATA_SYSTEM_LOGGING_LEVEL=debug")
	base := "http://" + p.waitFor(t, httpLine)[1]
	token := httpToken(t, base)
	parsed, err := jwt.Parse(token, func(*jwt.Token) (any, error) { return []byte(secret), nil }, jwt.WithValidMethods([]string{"HS256"}))
	if err != nil || !parsed.Valid {
		t.Fatalf("the token is not signed with the configured secret: %v", err)
	}
	p.terminate(t)
	current, err := os.ReadFile(filepath.Join(dir, "runtime", "current_config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(current), secret) || !strings.Contains(string(current), `encoding_secret = "(set)"`) {
		t.Fatalf("current_config.toml:\n%s", current)
	}
	logFile, err := os.ReadFile(filepath.Join(dir, "logs", "strata-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"log file": string(logFile), "stderr": p.stderr.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("the %s holds the secret", what)
		}
	}
}
