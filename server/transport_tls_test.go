package server_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratabroker/strata/server"
)

// TestTLSOnTheTCPListener: a TLS client speaks the protocol over the TCP
// listener with TLS on; a plaintext client gets a clean failure (the
// connection closes, no reply) and the server keeps serving.
func TestTLSOnTheTCPListener(t *testing.T) {
	ts := startServer(t, t.TempDir(), "STRATA_TCP_TLS_ENABLED=true")
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ts.addr, &tls.Config{InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := &rawConn{t: t, conn: conn, counter: 1}
	r.client[0] = 3
	if reply := r.roundTrip(r.requestFrame(2, 1, 1, 0, false, nil)); reply.command != 8 || reply.status != 0 {
		t.Fatalf("ping over tls: %+v", reply)
	}
	r.login()

	plain, err := net.DialTimeout("tcp", ts.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	p := &rawConn{t: t, conn: plain, counter: 1}
	p.client[0] = 4
	if _, err := plain.Write(p.requestFrame(2, 1, 1, 0, false, nil)); err != nil {
		t.Fatal(err)
	}
	_ = plain.SetReadDeadline(time.Now().Add(15 * time.Second))
	buf := make([]byte, 512)
	n, err := io.ReadFull(plain, buf[:256])
	if err == nil {
		t.Fatalf("plaintext client on a TLS port got a %d-byte answer", n)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("plaintext client left hanging: %v", err)
	}
	// The TLS session still works.
	if reply := r.roundTrip(r.requestFrame(2, 1, 1, r.session, false, nil)); reply.status != 0 {
		t.Fatalf("ping after the plaintext attempt: %+v", reply)
	}
}

// TestDevelopmentCertificates: `make certs` output verifies against its CA
// on the TCP listener.
func TestDevelopmentCertificates(t *testing.T) {
	dir := t.TempDir()
	if err := server.WriteDevelopmentCertificates(dir); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, t.TempDir(), "STRATA_TCP_TLS_ENABLED=true",
		"STRATA_TCP_TLS_CERT_FILE="+filepath.Join(dir, server.DevServerCertFile),
		"STRATA_TCP_TLS_KEY_FILE="+filepath.Join(dir, server.DevServerKeyFile))
	caPEM, err := os.ReadFile(filepath.Join(dir, server.DevCAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA does not parse")
	}
	conn, err := tls.Dial("tcp", ts.addr, &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		t.Fatalf("verified TLS dial: %v", err)
	}
	defer conn.Close()
	r := &rawConn{t: t, conn: conn, counter: 1}
	r.client[0] = 5
	r.login()
}
