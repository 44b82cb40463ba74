package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a self-signed certificate and its key, and returns the
// paths (the certificate doubles as a CA file).
func selfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "t"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	return cert, key
}

func TestServerMapsTLSAuthClients(t *testing.T) {
	cert, key := selfSigned(t)
	for auth, want := range map[string]tls.ClientAuthType{
		"yes":      tls.RequireAndVerifyClientCert,
		"optional": tls.VerifyClientCertIfGiven,
		"no":       tls.NoClientCert,
	} {
		cfg, err := Server(cert, key, cert, auth)
		if err != nil {
			t.Fatalf("%s: %v", auth, err)
		}
		if cfg.ClientAuth != want || cfg.MinVersion != tls.VersionTLS12 || cfg.ClientCAs == nil || len(cfg.Certificates) != 1 {
			t.Errorf("%s: ClientAuth %v, MinVersion %x, CAs %v", auth, cfg.ClientAuth, cfg.MinVersion, cfg.ClientCAs != nil)
		}
	}
}

func TestServerErrors(t *testing.T) {
	cert, key := selfSigned(t)
	tests := []struct {
		name                string
		cert, key, ca, auth string
		want                string
	}{
		{"missing certificate", "/nonexistent", key, cert, "yes", "load tls-cert-file"},
		{"key of another file", cert, cert, cert, "yes", "load tls-cert-file"},
		{"client auth without CA", cert, key, "", "yes", "needs tls-ca-cert-file"},
		{"CA file without PEM", cert, key, "/dev/null", "yes", "holds no PEM certificate"},
		{"bad tls-auth-clients", cert, key, cert, "maybe", "is not yes, no or optional"},
	}
	for _, tt := range tests {
		if _, err := Server(tt.cert, tt.key, tt.ca, tt.auth); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := Server(cert, key, "", "no"); err != nil {
		t.Errorf("no client certificates and no CA: %v", err)
	}
}
