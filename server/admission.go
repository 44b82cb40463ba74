package server

import (
	"context"
	"crypto/tls"
	"net"
	"time"
)

// What happens to a connection before its first command: protected mode
// and the TLS handshake. (maxclients is checked in newClient.)

// errDenied is Redis 7.0's reply to a client that protected mode refuses
// (networking.c, clientAcceptHandler), word for word.
const errDenied = "DENIED Redis is running in protected mode because protected " +
	"mode is enabled and no password is set for the default user. " +
	"In this mode connections are only accepted from the loopback interface. " +
	"If you want to connect from external computers to Redis you " +
	"may adopt one of the following solutions: " +
	"1) Just disable protected mode sending the command " +
	"'CONFIG SET protected-mode no' from the loopback interface " +
	"by connecting to Redis from the same host the server is " +
	"running, however MAKE SURE Redis is not publicly accessible " +
	"from internet if you do so. Use CONFIG REWRITE to make this " +
	"change permanent. " +
	"2) Alternatively you can just disable the protected mode by " +
	"editing the Redis configuration file, and setting the protected " +
	"mode option to 'no', and then restarting the server. " +
	"3) If you started the server manually just for testing, restart " +
	"it with the '--protected-mode no' option. " +
	"4) Setup a an authentication password for the default user. " +
	"NOTE: You only need to do one of the above things in order for " +
	"the server to start accepting connections from the outside."

// tlsHandshakeTimeout bounds a TLS handshake, so that a client that never
// finishes one cannot hold a connection slot.
const tlsHandshakeTimeout = 10 * time.Second

// protectedModeRefuses is Redis 7.0's protected-mode rule: with protected
// mode on and no password on the default user, only loopback (and Unix
// socket) clients are accepted. The bind address does not matter: a
// non-loopback client can only arrive through a non-loopback bind.
func protectedModeRefuses(protected, defaultNoPass bool, remote net.Addr) bool {
	return protected && defaultNoPass && !isLocal(remote)
}

// isLocal is Redis's connIsLocal: a loopback address or a Unix socket.
func isLocal(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// protectedModeDenies applies protectedModeRefuses with the server's
// current settings.
func (s *Server) protectedModeDenies(remote net.Addr) bool {
	return protectedModeRefuses(s.protectedMode.Load(), s.users.Default().NoPass(), remote)
}

// handshake completes a TLS connection's handshake, bounded by
// tlsHandshakeTimeout; a plain connection passes at once. A failed
// handshake (no client certificate where one is required, a certificate
// from another CA, a client speaking plain RESP) only closes the
// connection, as in Redis, which logs it at verbose level.
func (s *Server) handshake(c *Client) bool {
	tc, ok := c.conn.(*tls.Conn)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(c.ctx, tlsHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		s.log.Debug("TLS handshake failed", "client", c.ID, "addr", c.conn.RemoteAddr().String(), "err", err)
		return false
	}
	return true
}
