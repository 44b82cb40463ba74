//go:build !linux

package server

import "net"

// peerClosed cannot tell without reading on this system: a waiting client
// whose peer is gone is ended by CLIENT KILL or the server's stop.
func peerClosed(conn net.Conn) bool { return false }
