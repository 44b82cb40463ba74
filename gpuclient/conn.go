package gpuclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// ServerError is an error reply (-ERR …) from the server. The connection
// that received it is still in sync and usable.
type ServerError = respclient.ServerError

// errProtocol is wrapped by errors about replies that are not what the
// command sends back; the connection is out of sync after one.
var errProtocol = respclient.ErrProtocol

// conn is one RESP2 connection. It writes batches of commands with one
// vectored write, the values referenced rather than copied
// (respclient.Batch), and reads bulk replies straight into buffers the
// caller owns (respclient.Reader).
//
// Copies of a multi-MiB value on this path: a SET copies it once, from the
// caller's buffer into the socket (writev); a GET copies it once, from the
// socket into the caller's buffer. Nothing is allocated per value.
type conn struct {
	nc  net.Conn
	rd  *respclient.Reader
	out respclient.Batch
	// broken is set once an I/O or protocol error leaves the stream in an
	// unknown state; the pool then closes the connection instead of
	// reusing it.
	broken atomic.Bool
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, rd: respclient.NewReader(nc, 0)}
}

// watch applies ctx to the connection until the returned stop is called:
// ctx's deadline becomes the I/O deadline, and cancelling ctx interrupts a
// blocked read or write (which then fails and marks the connection broken).
func (c *conn) watch(ctx context.Context) (stop func()) {
	d, _ := ctx.Deadline()
	c.nc.SetDeadline(d) // zero: none
	unwatch := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	return func() { unwatch() }
}

// fail marks the connection broken and wraps err with what was being done.
func (c *conn) fail(what string, err error) error {
	c.broken.Store(true)
	return fmt.Errorf("gpuclient: %s: %w", what, err)
}

// flush writes the pending batch.
func (c *conn) flush() error {
	if err := c.out.Flush(c.nc); err != nil {
		return c.fail("write", err)
	}
	return nil
}

// flushAsync writes the pending batch from a new goroutine and reports
// the result on the returned channel, so that the caller can read replies
// while the requests are still going out. A batch of requests is written
// this way whenever its replies can be large: the server stops reading
// requests while its replies wait for us, and a blocking write of many
// requests would then never finish. The caller must receive from the
// channel before it touches the batch again.
func (c *conn) flushAsync() <-chan error {
	done := make(chan error, 1)
	go func() { done <- c.flush() }()
	return done
}

// check passes a reply reader's error on: a *ServerError as it is (the
// connection is still in sync), anything else wrapped with what was being
// read, after marking the connection broken.
func (c *conn) check(what string, err error) error {
	var se *ServerError
	if err == nil || errors.As(err, &se) {
		return err
	}
	return c.fail(what, err)
}

// readOK reads a +OK status reply.
func (c *conn) readOK() error {
	return c.check("read reply", c.rd.ReadOK())
}

// readInt reads an integer reply.
func (c *conn) readInt() (int64, error) {
	n, err := c.rd.ReadInt()
	return n, c.check("read reply", err)
}

// readBulkLen reads a bulk reply's header and returns its length, -1 for
// a null reply. The body (n bytes and CRLF) must then be consumed with
// readBulkBody or skipBulkBody.
func (c *conn) readBulkLen() (int, error) {
	n, err := c.rd.ReadBulkLen()
	return n, c.check("read reply", err)
}

// readBulkBody reads a bulk body of len(dst) bytes into dst and its CRLF.
func (c *conn) readBulkBody(dst []byte) error {
	return c.check("read value", c.rd.ReadBody(len(dst), dst))
}

// skipBulkBody consumes a bulk body of n bytes without keeping it.
func (c *conn) skipBulkBody(n int) error {
	return c.check("skip value", c.rd.ReadBody(n, nil))
}

// interrupt makes blocked and later reads and writes fail at once, and
// marks the connection broken. Goroutines that share the connection use it
// to stop each other.
func (c *conn) interrupt() {
	c.broken.Store(true)
	c.nc.SetDeadline(time.Unix(1, 0))
}
