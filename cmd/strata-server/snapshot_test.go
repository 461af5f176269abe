package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/stratabroker/strata/client"
	"github.com/stratabroker/strata/net/wire"
	"github.com/stratabroker/strata/server"
)

// snapshotEntries unzips an archive into name -> content.
func snapshotEntries(t *testing.T, archive []byte) (map[string]string, *zip.Reader) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatalf("the snapshot is not a zip archive (%d bytes): %v", len(archive), err)
	}
	zr.RegisterDecompressor(zstd.ZipMethodWinZip, zstd.ZipDecompressor())
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("open %s: %v", f.Name, err)
		}
		data, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Name, err)
		}
		out[f.Name] = string(data)
	}
	return out, zr
}

// randomSecret is a secret the snapshot must never contain.
func randomSecret(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// TestSnapshotOverTCPAndHTTP asks the real binary for snapshots over the
// binary protocol (code 11) and over POST /snapshot, opens each archive
// and checks its entries; then checks that no secret set up in the test
// is in any of them: root and user passwords, password hashes, the HTTP
// JWT secret and a token it signed, a personal access token, and the TLS
// private key the server loaded.
func TestSnapshotOverTCPAndHTTP(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if out, err := exec.Command(serverBinary, "--make-certs", certs).CombinedOutput(); err != nil {
		t.Fatalf("make certs: %v\n%s", err, out)
	}
	rootPassword := randomSecret(t, "root-pw-")
	userPassword := randomSecret(t, "user-pw-")
	jwtSecret := randomSecret(t, "jwt-secret-")
	data := filepath.Join(dir, "data")
	p := startProcess(t, data, "STRATA_ROOT_USERNAME=admin", "STRATA_ROOT_PASSWORD="+rootPassword,
		"STRATA_HTTP_ENABLED=true", "STRATA_HTTP_ADDRESS=127.0.0.1:0", "STRATA_HTTP_JWT_ENCODING_SECRET="+jwtSecret,
		"STRATA_WEBSOCKET_ENABLED=true", "STRATA_WEBSOCKET_ADDRESS=127.0.0.1:0", "STRATA_WEBSOCKET_TLS_ENABLED=true",
		"STRATA_WEBSOCKET_TLS_CERT_FILE="+filepath.Join(certs, server.DevServerCertFile), "STRATA_WEBSOCKET_TLS_KEY_FILE="+filepath.Join(certs, server.DevServerKeyFile))
	base := "http://" + p.waitFor(t, httpLine)[1]
	ctx := context.Background()
	c, err := client.Dial(ctx, p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.LoginUser(ctx, "admin", rootPassword); err != nil {
		t.Fatal(err)
	}
	pat, err := c.CreatePersonalAccessToken(ctx, "ci", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateUser(ctx, "reader", userPassword, client.UserActive, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateStream(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	// The unprivileged user gets no snapshot.
	u, err := client.Dial(ctx, p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.Close() })
	if _, err := u.LoginUser(ctx, "reader", userPassword); err != nil {
		t.Fatal(err)
	}
	if _, err := u.GetSnapshot(ctx, client.SnapshotDeflated, client.SnapshotAll); !errors.Is(err, wire.ErrUnauthorized) {
		t.Fatalf("snapshot for a user without read_servers: %v", err)
	}

	all := []string{"filesystem_overview.txt", "process_list.txt", "resource_usage.txt", "server_logs.txt", "server_config.txt"}
	var archives [][]byte
	binary := func(compression uint8, types []uint8, want []string) map[string]string {
		t.Helper()
		archive, err := c.GetSnapshot(ctx, compression, types...)
		if err != nil {
			t.Fatalf("GetSnapshot(%d, %v): %v", compression, types, err)
		}
		archives = append(archives, archive)
		entries, zr := snapshotEntries(t, archive)
		checkEntryNames(t, entries, want)
		t.Logf("binary snapshot compression %d types %v: %d bytes, comment %q", compression, types, len(archive), zr.Comment)
		return entries
	}
	entries := binary(client.SnapshotDeflated, []uint8{client.SnapshotAll}, all)
	for name, fragment := range map[string]string{
		"filesystem_overview.txt": "metadata/journal.wal",
		"process_list.txt":        "strata-server --with-default-root-credentials",
		"resource_usage.txt":      "strata_messages_appended_total",
		"server_logs.txt":         "root user created",
		"server_config.txt":       p.addr,
	} {
		if !strings.Contains(entries[name], fragment) {
			t.Errorf("%s lacks %q:\n%.2000s", name, fragment, entries[name])
		}
	}
	if got := binary(client.SnapshotStored, []uint8{client.SnapshotTest}, []string{"test.txt"}); got["test.txt"] != "test\n" {
		t.Errorf("test.txt = %q", got["test.txt"])
	}
	binary(client.SnapshotZstd, []uint8{client.SnapshotServerConfig, client.SnapshotServerLogs, client.SnapshotServerConfig},
		[]string{"server_config.txt", "server_logs.txt"})
	binary(client.SnapshotXz, []uint8{client.SnapshotProcessList}, []string{"process_list.txt"})
	if _, err := c.GetSnapshot(ctx, client.SnapshotDeflated, client.SnapshotAll, client.SnapshotTest); !errors.Is(err, wire.ErrInvalidCommand) {
		t.Fatalf("all with another type: %v", err)
	}

	// POST /snapshot with a token from POST /users/login.
	loginBody, _ := json.Marshal(map[string]string{"username": "admin", "password": rootPassword})
	resp, err := http.Post(base+"/users/login", "application/json", bytes.NewReader(loginBody))
	if err != nil {
		t.Fatal(err)
	}
	var login struct {
		AccessToken struct {
			Token string `json:"token"`
		} `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&login)
	_ = resp.Body.Close()
	if err != nil || login.AccessToken.Token == "" {
		t.Fatalf("http login: %v %+v", err, login)
	}
	jwt := login.AccessToken.Token
	post := func(body string, want []string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+"/snapshot", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+jwt)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		archive, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/zip" {
			t.Fatalf("POST /snapshot %s: %d %s %v: %.300s", body, resp.StatusCode, resp.Header.Get("Content-Type"), err, archive)
		}
		archives = append(archives, archive)
		entries, _ := snapshotEntries(t, archive)
		checkEntryNames(t, entries, want)
		t.Logf("http snapshot %s: %d bytes", body, len(archive))
	}
	post(`{"compression":"deflated","snapshot_types":["all"]}`, all)
	post(`{}`, all)
	post(`{"compression":"stored","snapshot_types":["server_config","test"]}`, []string{"server_config.txt", "test.txt"})

	// No secret in any archive.
	key, err := os.ReadFile(filepath.Join(certs, server.DevServerKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{"root password": rootPassword, "user password": userPassword, "jwt secret": jwtSecret,
		"jwt token": jwt, "personal access token": pat, "argon2 hash": "$argon2", "bcrypt hash": "$2a$", "bcrypt hash (2b)": "$2b$"}
	for i, line := range strings.Split(string(key), "\n") {
		if len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			secrets[fmt.Sprintf("tls key line %d", i)] = line
		}
	}
	for i, archive := range archives {
		entries, _ := snapshotEntries(t, archive)
		for name, content := range entries {
			for what, secret := range secrets {
				if strings.Contains(content, secret) {
					t.Errorf("archive %d, %s holds the %s", i, name, what)
				}
			}
		}
	}
	p.terminate(t)
}

// checkEntryNames fails unless the archive holds exactly the entries
// wanted, none empty.
func checkEntryNames(t *testing.T, entries map[string]string, want []string) {
	t.Helper()
	if len(entries) != len(want) {
		t.Errorf("entries %v, want %v", keys(entries), want)
	}
	for _, name := range want {
		content, ok := entries[name]
		if !ok || content == "" {
			t.Errorf("entry %s missing or empty (have %v)", name, keys(entries))
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
