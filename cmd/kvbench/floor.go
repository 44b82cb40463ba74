package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
)

// The copy floor: a server that stores nothing. `kvbench sink` answers
// redis-benchmark's SET and GET with no more work than reading requests
// from a socket and writing replies to it: a goroutine per connection on
// Go's poller (as kvserver's own goroutines run), a SET's value read
// straight into one reused buffer and dropped (only its length is kept,
// under its key), and a GET's reply written as "$len\r\n", a shared
// buffer of that many bytes and "\r\n" with one writev(2). For large
// values its CPU per request is what those system calls cost (the
// kernel's copies between socket and memory, the TCP stack, the wake-ups),
// which every server pays on top of whatever it does with the bytes, and
// its throughput what the client gets from a server that does nothing.
// kvbench users measures it beside redis-server and kvserver, so that a
// target can be read against what is possible at all. (A thread blocked
// in read(2) per connection, tried first, spent the same per 4 MiB SET and
// twice as much per 4 MiB GET.) For small requests an event loop costs
// less than a goroutine per connection, so there it is no floor. It parses
// requests itself rather than with package resp's Reader, whose bulk
// budgets, value pool and argument bookkeeping are kvserver's work, not
// work every server must do.

// floorName is the sink's name in tables.
const floorName = "floor"

// sinkReadBuffer is the sink's per-connection input buffer; a bulk of
// more than what it holds is read straight into the connection's value
// buffer, as Redis does for large arguments.
const sinkReadBuffer = 64 << 10

// sinkMaxBulk is the largest bulk the sink reads (Redis's default
// proto-max-bulk-len); a longer one closes the connection.
const sinkMaxBulk = 512 << 20

// runSink serves the sink on --port until it is stopped.
func runSink(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("sink", "--port N", `
Serves the copy floor used by kvbench users: a RESP server that stores
nothing but each SET's value length, serves each connection on a goroutine
and answers GET with a value of that length. It
answers SET, GET, EXISTS, PING, CONFIG GET, INFO, FLUSHALL and FLUSHDB; anything
else gets an unknown-command error. Stops on SIGTERM or SIGINT.`)
	port := fs.Int("port", 0, "TCP port on 127.0.0.1")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	if *port <= 0 {
		return fmt.Errorf("sink: --port is required")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	s := &sink{lengths: map[string]int{}}
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sink: accept: %w", err)
		}
		go s.serve(c.(*net.TCPConn))
	}
}

// sink is the floor server's state: the length of each key's last value,
// and one buffer of bytes that GET replies share.
type sink struct {
	mu      sync.Mutex
	lengths map[string]int
	filler  []byte
}

// set records a SET's value length.
func (s *sink) set(key []byte, n int) {
	s.mu.Lock()
	s.lengths[string(key)] = n
	if n > len(s.filler) {
		s.filler = bytes.Repeat([]byte{'x'}, n)
	}
	s.mu.Unlock()
}

// get returns the bytes a GET of key answers with, and whether it exists.
func (s *sink) get(key []byte) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.lengths[string(key)]
	return s.filler[:n], ok
}

// flush forgets every key (FLUSHALL, FLUSHDB).
func (s *sink) flush() {
	s.mu.Lock()
	clear(s.lengths)
	s.mu.Unlock()
}

// sinkConn is one connection of the sink.
type sinkConn struct {
	s     *sink
	conn  *net.TCPConn
	in    []byte // buffered input: in[r:w]
	r, w  int
	value []byte // a large SET value is read into it and dropped
	out   []byte // replies not yet written
	args  [][]byte
	// arena holds copies of the arguments before the last, which a
	// later read may move in the input buffer.
	arena []byte
}

// serve answers conn's requests until it fails or closes.
func (s *sink) serve(conn *net.TCPConn) {
	c := &sinkConn{s: s, conn: conn, in: make([]byte, sinkReadBuffer), arena: make([]byte, 0, 4<<10)}
	defer conn.Close()
	for {
		if err := c.command(); err != nil {
			return
		}
	}
}

// fill reads more input, compacting the buffer first.
func (c *sinkConn) fill() error {
	if c.r > 0 {
		c.w = copy(c.in, c.in[c.r:c.w])
		c.r = 0
	}
	if c.w == len(c.in) {
		return errors.New("sink: request line too long")
	}
	if len(c.out) > 0 {
		// The replies so far go out before waiting (pipelined requests
		// are answered in one write).
		if err := c.writeAll(c.out); err != nil {
			return err
		}
		c.out = c.out[:0]
	}
	n, err := c.conn.Read(c.in[c.w:])
	c.w += n
	if err != nil {
		return err
	}
	return nil
}

// line returns the next CRLF-terminated line without its CRLF.
func (c *sinkConn) line() ([]byte, error) {
	for {
		if i := bytes.IndexByte(c.in[c.r:c.w], '\n'); i >= 0 {
			l := c.in[c.r : c.r+i]
			c.r += i + 1
			return bytes.TrimSuffix(l, []byte("\r")), nil
		}
		if err := c.fill(); err != nil {
			return nil, err
		}
	}
}

// bulk reads a bulk string of n bytes and its CRLF. A bulk that is not
// whole in the input buffer and does not fit in it is read into c.value,
// the rest of it with one read call per chunk the socket has.
func (c *sinkConn) bulk(n int) ([]byte, error) {
	if n+2 <= len(c.in) {
		for c.w-c.r < n+2 {
			if err := c.fill(); err != nil {
				return nil, err
			}
		}
		b := c.in[c.r : c.r+n]
		c.r += n + 2
		return b, nil
	}
	if cap(c.value) < n+2 {
		c.value = make([]byte, n+2)
	}
	v := c.value[:n+2]
	got := copy(v, c.in[c.r:c.w])
	c.r += got
	for got < len(v) {
		m, err := c.conn.Read(v[got:])
		got += m
		if err != nil && got < len(v) {
			return nil, err
		}
	}
	return v[:n], nil
}

// length reads a RESP length line: kind ('*' or '$') and a count of at
// least atLeast.
func (c *sinkConn) length(kind byte, atLeast int) (int, error) {
	l, err := c.line()
	if err != nil {
		return 0, err
	}
	if len(l) < 2 || l[0] != kind {
		return 0, fmt.Errorf("sink: want %q, got %q", kind, l)
	}
	n, err := strconv.Atoi(string(l[1:]))
	if err != nil || n < atLeast {
		return 0, fmt.Errorf("sink: bad length %q", l)
	}
	return n, nil
}

// command reads one request (a RESP array of bulks) and answers it.
func (c *sinkConn) command() error {
	count, err := c.length('*', 1)
	if err != nil {
		return err
	}
	c.args, c.arena = c.args[:0], c.arena[:0]
	for range count {
		n, err := c.length('$', 0)
		if err != nil {
			return err
		}
		if n > sinkMaxBulk {
			return fmt.Errorf("sink: bulk of %d bytes, over %d", n, sinkMaxBulk)
		}
		// The arguments before the last must outlive the input
		// buffer's compaction by a later read, so they are copied; the
		// last one (a SET's value) is only measured.
		b, err := c.bulk(n)
		if err != nil {
			return err
		}
		if len(c.args) < count-1 {
			start := len(c.arena)
			c.arena = append(c.arena, b...)
			b = c.arena[start:len(c.arena):len(c.arena)]
		}
		c.args = append(c.args, b)
	}
	return c.answer()
}

// answer queues or writes the reply to the request in c.args.
func (c *sinkConn) answer() error {
	name := c.args[0]
	switch {
	case bytes.EqualFold(name, []byte("SET")) && len(c.args) >= 3:
		c.s.set(c.args[1], len(c.args[2]))
		c.out = append(c.out, "+OK\r\n"...)
	case bytes.EqualFold(name, []byte("GET")) && len(c.args) == 2:
		v, ok := c.s.get(c.args[1])
		if !ok {
			c.out = append(c.out, "$-1\r\n"...)
			return nil
		}
		c.out = append(c.out, '$')
		c.out = strconv.AppendInt(c.out, int64(len(v)), 10)
		c.out = append(c.out, "\r\n"...)
		if len(v) < 16<<10 {
			c.out = append(c.out, v...)
			c.out = append(c.out, "\r\n"...)
			return nil
		}
		err := c.writev(c.out, v, []byte("\r\n"))
		c.out = c.out[:0]
		return err
	case bytes.EqualFold(name, []byte("EXISTS")):
		n := 0
		for _, k := range c.args[1:] {
			if _, ok := c.s.get(k); ok {
				n++
			}
		}
		c.out = fmt.Appendf(c.out, ":%d\r\n", n)
	case bytes.EqualFold(name, []byte("PING")):
		c.out = append(c.out, "+PONG\r\n"...)
	case bytes.EqualFold(name, []byte("CONFIG")) && len(c.args) == 3:
		c.out = fmt.Appendf(c.out, "*2\r\n$%d\r\n%s\r\n$0\r\n\r\n", len(c.args[2]), c.args[2])
	case bytes.EqualFold(name, []byte("INFO")):
		c.out = append(c.out, "$0\r\n\r\n"...)
	case bytes.EqualFold(name, []byte("FLUSHALL")), bytes.EqualFold(name, []byte("FLUSHDB")):
		c.s.flush()
		c.out = append(c.out, "+OK\r\n"...)
	default:
		c.out = fmt.Appendf(c.out, "-ERR unknown command '%s'\r\n", bytes.ReplaceAll(name, []byte("\r\n"), nil))
	}
	return nil
}

func (c *sinkConn) writeAll(b []byte) error {
	_, err := c.conn.Write(b)
	return err
}

// writev writes the buffers in order, with writev(2).
func (c *sinkConn) writev(bufs ...[]byte) error {
	nb := net.Buffers(bufs)
	_, err := nb.WriteTo(c.conn)
	return err
}

// startFloor starts the sink (this kvbench binary's sink subcommand) on a
// free port.
func startFloor(ctx context.Context) (*target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", floorName, err)
	}
	return startOnFreePort(ctx, floorName, self, "", func(port string) []string {
		return []string{"sink", "--port", port}
	})
}
