package server

import (
	"net"
	"strconv"
	"syscall"

	"github.com/kvserver/kvserver/resp"
)

// What the connection family (package commands, connection.go) needs of
// the sockets: the measures of a connection CLIENT LIST reports. The
// family's view of the clients is in session_connection.go.

// Buffer sizes reported for clients other than the caller, whose buffers
// belong to their own goroutines and cannot be read safely: what a
// connection starts with and returns to when idle.
const (
	idleQueryBuffer = resp.DefaultReadBuffer
	idleReplyBuffer = 16 * 1024
	// clientOverhead approximates the memory of a Client and its
	// goroutine beyond the two buffers (tot-mem).
	clientOverhead = 8 * 1024
)

// encodedLen is the size of args as a RESP multibulk request.
func encodedLen(args [][]byte) int {
	n := 1 + len(strconv.Itoa(len(args))) + 2
	for _, a := range args {
		n += 1 + len(strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return n
}

// connFD returns the file descriptor of conn, or -1 when it has none or is
// closed. Control holds a reference on the descriptor, so this is safe
// while another goroutine reads from the connection.
func connFD(conn net.Conn) int {
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		conn = tc.NetConn() // TLS: the descriptor of the TCP connection under it
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	if raw.Control(func(f uintptr) { fd = int(f) }) != nil {
		return -1
	}
	return fd
}
