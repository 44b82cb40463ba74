package server

import (
	"net"
	"testing"
	"time"
)

func TestPeerClosedSeesTheClientHangUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	// Unread bytes from the client do not hide its hang-up.
	client.Write([]byte("*3\r\n$3\r\nSET\r\n"))
	if peerClosed(server) {
		t.Fatal("open connection reported closed")
	}
	client.Close()
	deadline := time.Now().Add(5 * time.Second)
	for !peerClosed(server) {
		if time.Now().After(deadline) {
			t.Fatal("closed connection not seen as closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
