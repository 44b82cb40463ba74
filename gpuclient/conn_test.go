package gpuclient

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/respclient"
)

// TestConnReadsReplies: the reply reader's handling of each reply kind,
// and which errors leave the connection in sync.
func TestConnReadsReplies(t *testing.T) {
	stream := "+OK\r\n" + ":42\r\n" + "-ERR nope\r\n" + "$5\r\nhello\r\n" + "$-1\r\n" + "$3\r\nabc\r\n" + "+PONG\r\n"
	c := &conn{rd: respclient.NewReader(strings.NewReader(stream), 0)}
	if err := c.readOK(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.readInt(); n != 42 || err != nil {
		t.Fatalf("readInt = %d, %v", n, err)
	}
	var se *ServerError
	if _, err := c.readInt(); !errors.As(err, &se) || se.Msg != "ERR nope" || c.broken.Load() {
		t.Fatalf("error reply: %v (broken %v)", err, c.broken.Load())
	}
	n, err := c.readBulkLen()
	if n != 5 || err != nil {
		t.Fatalf("readBulkLen = %d, %v", n, err)
	}
	dst := make([]byte, 5)
	if err := c.readBulkBody(dst); err != nil || string(dst) != "hello" {
		t.Fatalf("body %q, %v", dst, err)
	}
	if n, err := c.readBulkLen(); n != -1 || err != nil {
		t.Fatalf("null bulk = %d, %v", n, err)
	}
	if n, _ := c.readBulkLen(); n != 3 || c.skipBulkBody(n) != nil {
		t.Fatal("skip failed")
	}
	if err := c.readOK(); err == nil || !c.broken.Load() {
		t.Fatalf("+PONG for +OK: %v, broken %v; want a protocol error that breaks the connection", err, c.broken.Load())
	}
}

func TestConnRejectsMalformedBulk(t *testing.T) {
	for _, stream := range []string{"$3\r\nabcd\r\n", "$x\r\n", "$3\nabc\r\n", "$-2\r\n"} {
		c := &conn{rd: respclient.NewReader(strings.NewReader(stream), 0)}
		n, err := c.readBulkLen()
		if err == nil {
			err = c.readBulkBody(make([]byte, n))
		}
		if err == nil || !errors.Is(err, errProtocol) && !c.broken.Load() {
			t.Errorf("%q: err %v, broken %v", stream, err, c.broken.Load())
		}
	}
}

// TestClientPoolReusesHealthyConnections: a connection goes back to the
// pool only if it is in sync, and Close makes later operations fail.
func TestClientPoolReusesHealthyConnections(t *testing.T) {
	ctx := context.Background()
	dials := 0
	cl := NewClient(ClientOptions{Addr: "pipe", MaxIdle: 1, Dial: func(context.Context, string, string) (net.Conn, error) {
		dials++
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a, nil
	}})
	c1, err := cl.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cl.put(c1)
	if c2, _ := cl.get(ctx); c2 != c1 || dials != 1 {
		t.Fatalf("healthy connection not reused (%d dials)", dials)
	}
	c1.broken.Store(true)
	cl.put(c1)
	if c3, _ := cl.get(ctx); c3 == c1 || dials != 2 {
		t.Fatalf("broken connection reused (%d dials)", dials)
	}
	cl.Close()
	if _, err := cl.get(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after Close: %v", err)
	}
}
