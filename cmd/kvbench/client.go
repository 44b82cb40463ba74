package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// benchConn is a minimal RESP client built for large values: SET writes the
// value with one vectored write and GET reads it straight into a reused
// buffer, so the client's own copies do not dominate the measurement.
type benchConn struct {
	conn net.Conn
	rd   *bufio.Reader
	hdr  []byte
	buf  []byte
	ends []int       // end offsets of the per-command headers in hdr (pipelined SET)
	bufs net.Buffers // vectored write of a pipelined SET batch, reused
}

func dialBench(ctx context.Context, addr string) (*benchConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &benchConn{conn: conn, rd: bufio.NewReaderSize(conn, 64*1024)}, nil
}

func (c *benchConn) Close() error { return c.conn.Close() }

// appendArgs encodes a command's name and arguments except a trailing
// value, which is written separately.
func appendArgs(b []byte, n int, args ...string) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// Set sends SET key value and waits for +OK.
func (c *benchConn) Set(key string, value []byte) error {
	c.hdr = appendArgs(c.hdr[:0], 3, "SET", key)
	c.hdr = append(c.hdr, '$')
	c.hdr = strconv.AppendInt(c.hdr, int64(len(value)), 10)
	c.hdr = append(c.hdr, '\r', '\n')
	bufs := net.Buffers{c.hdr, value, []byte("\r\n")}
	if _, err := bufs.WriteTo(c.conn); err != nil {
		return fmt.Errorf("write SET: %w", err)
	}
	return c.readOK()
}

// readOK reads one reply that must be +OK (a SET's).
func (c *benchConn) readOK() error {
	line, err := c.rd.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("read SET reply: %w", err)
	}
	if string(line) != "+OK\r\n" {
		return fmt.Errorf("SET reply %q", line)
	}
	return nil
}

// Do sends a command and discards a simple reply (status, integer, error
// or small bulk), returning its first line.
func (c *benchConn) Do(args ...string) (string, error) {
	line, err := c.request(args)
	if err != nil {
		return "", err
	}
	if len(line) > 0 && line[0] == '$' {
		n, _ := strconv.Atoi(line[1 : len(line)-2])
		if n >= 0 {
			if _, err := c.rd.Discard(n + 2); err != nil {
				return "", err
			}
		}
	}
	if len(line) > 0 && line[0] == '-' {
		return line, errors.New(line[:len(line)-2])
	}
	return line, nil
}

// Get sends GET key and reads the value into the connection's buffer,
// returning its length (-1 for a miss).
func (c *benchConn) Get(key string) (int, error) {
	c.hdr = appendArgs(c.hdr[:0], 2, "GET", key)
	if _, err := c.conn.Write(c.hdr); err != nil {
		return 0, fmt.Errorf("write GET: %w", err)
	}
	return c.readBulk()
}

// SetPipelined sends SET key value for every key in one vectored write
// (the value is not copied) and only then reads the len(keys) replies, so
// the connection keeps len(keys) requests in flight.
func (c *benchConn) SetPipelined(keys []string, value []byte) error {
	c.hdr, c.ends = c.hdr[:0], c.ends[:0]
	for i, k := range keys {
		if i > 0 {
			c.hdr = append(c.hdr, '\r', '\n') // ends the previous value
		}
		c.hdr = appendArgs(c.hdr, 3, "SET", k)
		c.hdr = append(c.hdr, '$')
		c.hdr = strconv.AppendInt(c.hdr, int64(len(value)), 10)
		c.hdr = append(c.hdr, '\r', '\n')
		c.ends = append(c.ends, len(c.hdr))
	}
	c.bufs = c.bufs[:0]
	start := 0
	for _, end := range c.ends {
		c.bufs = append(c.bufs, c.hdr[start:end], value)
		start = end
	}
	c.bufs = append(c.bufs, []byte("\r\n"))
	bufs := c.bufs // WriteTo consumes the slice it is called on
	if _, err := bufs.WriteTo(c.conn); err != nil {
		return fmt.Errorf("write pipelined SET: %w", err)
	}
	for range keys {
		if err := c.readOK(); err != nil {
			return err
		}
	}
	return nil
}

// GetPipelined sends GET for every key in one write and then reads the
// replies into the connection's buffer. It returns the bytes received and
// how many keys missed.
func (c *benchConn) GetPipelined(keys []string) (int64, int, error) {
	c.hdr = c.hdr[:0]
	for _, k := range keys {
		c.hdr = appendArgs(c.hdr, 2, "GET", k)
	}
	if _, err := c.conn.Write(c.hdr); err != nil {
		return 0, 0, fmt.Errorf("write pipelined GET: %w", err)
	}
	var total int64
	misses := 0
	for range keys {
		n, err := c.readBulk()
		if err != nil {
			return total, misses, err
		}
		if n < 0 {
			misses++
			continue
		}
		total += int64(n)
	}
	return total, misses, nil
}

// readBulk reads one bulk reply into the connection's buffer and returns
// its length (-1 for a nil reply).
func (c *benchConn) readBulk() (int, error) {
	line, err := c.rd.ReadSlice('\n')
	if err != nil {
		return 0, fmt.Errorf("read GET reply: %w", err)
	}
	if len(line) < 4 || line[0] != '$' {
		return 0, fmt.Errorf("GET reply %q", line)
	}
	n, err := strconv.Atoi(string(line[1 : len(line)-2]))
	if err != nil {
		return 0, fmt.Errorf("GET reply %q", line)
	}
	if n < 0 {
		return -1, nil
	}
	if cap(c.buf) < n+2 {
		c.buf = make([]byte, n+2)
	}
	if _, err := io.ReadFull(c.rd, c.buf[:n+2]); err != nil {
		return 0, fmt.Errorf("read GET value: %w", err)
	}
	return n, nil
}

// waitReady polls addr with a cheap command until it answers or the timeout passes.
func waitReady(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := dialBench(ctx, addr)
		if err == nil {
			_, err = c.Do("EXISTS", "kvbench:ready")
			c.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server at %s not ready after %s: %w", addr, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DoBulk sends a command whose reply is a bulk string and returns its body.
func (c *benchConn) DoBulk(args ...string) (string, error) {
	line, err := c.request(args)
	if err != nil {
		return "", err
	}
	if len(line) < 3 || line[0] != '$' {
		return "", fmt.Errorf("%s: want a bulk reply, got %q", args[0], line)
	}
	n, err := strconv.Atoi(line[1 : len(line)-2])
	if err != nil || n < 0 {
		return "", fmt.Errorf("%s: bad bulk header %q", args[0], line)
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(c.rd, body); err != nil {
		return "", fmt.Errorf("read %s reply: %w", args[0], err)
	}
	return string(body[:n]), nil
}

// request sends a command and returns the first line of its reply.
func (c *benchConn) request(args []string) (string, error) {
	c.hdr = appendArgs(c.hdr[:0], len(args), args...)
	if _, err := c.conn.Write(c.hdr); err != nil {
		return "", fmt.Errorf("write %s: %w", args[0], err)
	}
	line, err := c.rd.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read %s reply: %w", args[0], err)
	}
	return line, nil
}
