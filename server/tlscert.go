package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/stratabroker/strata/server/config"
)

// selfSignedValidity is how long a generated development certificate is
// valid.
const selfSignedValidity = 365 * 24 * time.Hour

// serverTLSConfig is the TLS configuration of a TCP, HTTP or WebSocket
// listener.
func serverTLSConfig(t config.TLS) (*tls.Config, error) {
	cert, err := loadCertificate(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// loadCertificate returns the certificate of a TLS listener: the files
// when both are given, else a self-signed certificate for localhost and
// 127.0.0.1 generated in memory (development only).
func loadCertificate(certFile, keyFile string) (tls.Certificate, error) {
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("load certificate %s / %s: %w", certFile, keyFile, err)
		}
		return cert, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("serial number: %w", err)
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "strata self-signed"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("self-sign certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// Development certificate files written by WriteDevelopmentCertificates.
const (
	DevCAFile         = "ca.pem"
	DevCAKeyFile      = "ca-key.pem"
	DevServerCertFile = "server.pem"
	DevServerKeyFile  = "server-key.pem"
)

// WriteDevelopmentCertificates writes a development CA and a server
// certificate it signs (for localhost, 127.0.0.1 and ::1) as PEM files in
// dir (`make certs`). Keys are written with mode 0600.
func WriteDevelopmentCertificates(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "strata development CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return fmt.Errorf("parse CA certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate server key: %w", err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("create server certificate: %w", err)
	}
	for _, f := range []struct {
		name  string
		block *pem.Block
		mode  os.FileMode
	}{
		{DevCAFile, &pem.Block{Type: "CERTIFICATE", Bytes: caDER}, 0o644},
		{DevCAKeyFile, ecKeyBlock(caKey), 0o600},
		{DevServerCertFile, &pem.Block{Type: "CERTIFICATE", Bytes: der}, 0o644},
		{DevServerKeyFile, ecKeyBlock(key), 0o600},
	} {
		if f.block == nil {
			return fmt.Errorf("encode %s", f.name)
		}
		if err := os.WriteFile(filepath.Join(dir, f.name), pem.EncodeToMemory(f.block), f.mode); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// ecKeyBlock is the PEM block of an EC private key, nil if it does not
// encode.
func ecKeyBlock(key *ecdsa.PrivateKey) *pem.Block {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}
