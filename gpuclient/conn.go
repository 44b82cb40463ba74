package gpuclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"
)

// ServerError is an error reply (-ERR …) from the server. The connection
// that received it is still in sync and usable.
type ServerError struct {
	Msg string // the reply without '-' and CRLF
}

// Error implements error.
func (e *ServerError) Error() string { return "gpuclient: server replied: " + e.Msg }

// errProtocol is wrapped by errors about replies that are not what the
// command sends back; the connection is out of sync after one.
var errProtocol = errors.New("gpuclient: protocol error")

// readBufSize is the size of a connection's read buffer. Bulk values larger
// than what is buffered are read straight from the socket into the
// caller's buffer (bufio.Reader bypasses its buffer for large reads), so it
// only has to hold reply headers and small values.
const readBufSize = 64 << 10

// conn is one RESP2 connection. It writes batches of commands with one
// vectored write, the values referenced rather than copied, and reads bulk
// replies straight into buffers the caller owns.
//
// Copies of a multi-MiB value on this path: a SET copies it once, from the
// caller's buffer into the socket (writev); a GET copies it once, from the
// socket into the caller's buffer. Nothing is allocated per value.
type conn struct {
	nc  net.Conn
	br  *bufio.Reader
	out batch
	// broken is set once an I/O or protocol error leaves the stream in an
	// unknown state; the pool then closes the connection instead of
	// reusing it.
	broken atomic.Bool
}

func newConn(nc net.Conn) *conn {
	return &conn{nc: nc, br: bufio.NewReaderSize(nc, readBufSize)}
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
	if err := c.out.writeTo(c.nc); err != nil {
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

// readLine reads one reply line without its CRLF. The slice is valid until
// the next read.
func (c *conn) readLine() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return nil, c.fail("read reply", err)
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, c.fail("read reply", fmt.Errorf("%w: bad line %q", errProtocol, line))
	}
	return line[:len(line)-2], nil
}

// replyError turns an error line into a *ServerError and anything else
// unexpected into a protocol error. Only the former leaves the connection
// in sync.
func (c *conn) replyError(line []byte, want string) error {
	if line[0] == '-' {
		return &ServerError{Msg: string(line[1:])}
	}
	return c.fail("read reply", fmt.Errorf("%w: want %s, got %q", errProtocol, want, line))
}

// readOK reads a +OK status reply.
func (c *conn) readOK() error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	if string(line) != "+OK" {
		return c.replyError(line, "+OK")
	}
	return nil
}

// readInt reads an integer reply.
func (c *conn) readInt() (int64, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, err
	}
	if line[0] != ':' {
		return 0, c.replyError(line, "an integer")
	}
	n, err := strconv.ParseInt(string(line[1:]), 10, 64)
	if err != nil {
		return 0, c.fail("read reply", fmt.Errorf("%w: integer %q", errProtocol, line))
	}
	return n, nil
}

// readBulkLen reads a bulk reply's header and returns its length, -1 for
// a null reply. The body (n bytes and CRLF) must then be consumed with
// readBulkBody or skipBulkBody.
func (c *conn) readBulkLen() (int, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, err
	}
	if line[0] != '$' {
		return 0, c.replyError(line, "a bulk string")
	}
	n, err := strconv.Atoi(string(line[1:]))
	if err != nil || n < -1 {
		return 0, c.fail("read reply", fmt.Errorf("%w: bulk length %q", errProtocol, line))
	}
	return n, nil
}

// readBulkBody reads a bulk body of len(dst) bytes into dst and its CRLF.
func (c *conn) readBulkBody(dst []byte) error {
	if _, err := io.ReadFull(c.br, dst); err != nil {
		return c.fail("read value", err)
	}
	return c.readCRLF()
}

// skipBulkBody consumes a bulk body of n bytes without keeping it.
func (c *conn) skipBulkBody(n int) error {
	if _, err := c.br.Discard(n); err != nil {
		return c.fail("skip value", err)
	}
	return c.readCRLF()
}

func (c *conn) readCRLF() error {
	var crlf [2]byte
	if _, err := io.ReadFull(c.br, crlf[:]); err != nil {
		return c.fail("read value", err)
	}
	if crlf != [2]byte{'\r', '\n'} {
		return c.fail("read value", fmt.Errorf("%w: bulk value not followed by CRLF", errProtocol))
	}
	return nil
}

// batch accumulates encoded commands for one vectored write. Command
// headers and small arguments are appended to hdr; large values stay in
// their owners' buffers and are only referenced.
type batch struct {
	hdr  []byte
	mark int // hdr[:mark] is already in segs
	segs []segment
	bufs net.Buffers
}

// segment is one piece of the write: hdr[start:end] or, when ext is not
// nil, ext itself.
type segment struct {
	start, end int
	ext        []byte
}

// bigValue is the size from which a value is referenced instead of copied
// into hdr.
const bigValue = 16 << 10

func (b *batch) reset() {
	b.hdr, b.segs, b.mark = b.hdr[:0], b.segs[:0], 0
}

// add appends one command whose arguments are all strings.
func (b *batch) add(args ...string) {
	b.hdr = appendArrayHeader(b.hdr, len(args))
	for _, a := range args {
		b.hdr = appendBulk(b.hdr, a)
	}
}

// addValue appends one command: args followed by value as the last
// argument. A large value is not copied: it must stay unchanged until the
// batch is written.
func (b *batch) addValue(value []byte, args ...string) {
	b.hdr = appendArrayHeader(b.hdr, len(args)+1)
	for _, a := range args {
		b.hdr = appendBulk(b.hdr, a)
	}
	if len(value) < bigValue {
		b.hdr = appendBulk(b.hdr, value)
		return
	}
	b.hdr = append(b.hdr, '$')
	b.hdr = strconv.AppendInt(b.hdr, int64(len(value)), 10)
	b.hdr = append(b.hdr, '\r', '\n')
	b.cut()
	b.segs = append(b.segs, segment{ext: value})
	b.hdr = append(b.hdr, '\r', '\n')
}

// cut closes the hdr piece written since the last cut.
func (b *batch) cut() {
	if len(b.hdr) > b.mark {
		b.segs = append(b.segs, segment{start: b.mark, end: len(b.hdr)})
		b.mark = len(b.hdr)
	}
}

// writeTo writes the batch with one vectored write and resets it.
func (b *batch) writeTo(w io.Writer) error {
	b.cut()
	b.bufs = b.bufs[:0]
	for _, s := range b.segs {
		if s.ext != nil {
			b.bufs = append(b.bufs, s.ext)
		} else {
			b.bufs = append(b.bufs, b.hdr[s.start:s.end])
		}
	}
	bufs := b.bufs // WriteTo consumes the slice it is called on
	_, err := bufs.WriteTo(w)
	clear(b.bufs) // drop references to the callers' values
	b.reset()
	return err
}

func appendArrayHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulk[S string | []byte](b []byte, s S) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// interrupt makes blocked and later reads and writes fail at once, and
// marks the connection broken. Goroutines that share the connection use it
// to stop each other.
func (c *conn) interrupt() {
	c.broken.Store(true)
	c.nc.SetDeadline(time.Unix(1, 0))
}
