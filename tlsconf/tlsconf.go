// Package tlsconf builds the crypto/tls configuration of kvserver's TLS
// port from the tls-* settings, with Redis's meaning of tls-auth-clients.
//
// It is for the server side only and reads the files once, at start; it
// does not watch them for renewal or listen on anything.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// Server returns the TLS configuration of the server: the certificate
// chain and key of certFile and keyFile; client certificates as
// authClients says: "yes" requires one that chains to caFile, "optional"
// verifies one when the client sends it, "no" does not ask for one; TLS
// 1.2 at least (Redis's default tls-protocols).
func Server(certFile, keyFile, caFile, authClients string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: load tls-cert-file %s and tls-key-file %s: %w", certFile, keyFile, err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}
	switch authClients {
	case "yes", "":
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case "no":
		cfg.ClientAuth = tls.NoClientCert
	default:
		return nil, fmt.Errorf("tls: tls-auth-clients %q is not yes, no or optional", authClients)
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("tls: read tls-ca-cert-file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: tls-ca-cert-file %s holds no PEM certificate", caFile)
		}
		cfg.ClientCAs = pool
	} else if cfg.ClientAuth != tls.NoClientCert {
		return nil, errors.New("tls: tls-auth-clients needs tls-ca-cert-file to verify client certificates")
	}
	return cfg, nil
}
