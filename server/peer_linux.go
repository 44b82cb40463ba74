package server

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// tcpEstablished is TCP_ESTABLISHED of Linux's include/net/tcp_states.h.
const tcpEstablished = 1

// peerClosed reports whether the peer of a TCP connection has closed or
// reset it, from the socket's state (TCP_INFO), without reading: bytes it
// sent before closing may still wait unread. It is false for other
// connections.
func peerClosed(conn net.Conn) bool {
	if nc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = nc.NetConn() // TLS: the TCP connection under it
	}
	sc, ok := conn.(syscall.Conn) // *net.TCPConn or an event loop's
	if _, tcp := conn.LocalAddr().(*net.TCPAddr); !ok || !tcp {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return true
	}
	closed := false
	if err := raw.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		closed = err == nil && info.State != tcpEstablished
	}); err != nil {
		return true
	}
	return closed
}
