package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// benchConn is a RESP client built for large values on respclient: SET
// writes the value with one vectored write (no copy into a request buffer
// from respclient.BigValue up) and GET reads it straight into a reused
// buffer, so the client's own copies do not dominate the measurement.
type benchConn struct {
	conn net.Conn
	rd   *respclient.Reader
	out  respclient.Batch
	buf  []byte // GET values land here; reused
	raw  []byte // Do's and DoBulk's reply bytes; reused
}

func dialBench(ctx context.Context, addr string) (*benchConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &benchConn{conn: conn, rd: respclient.NewReader(conn, 0)}, nil
}

func (c *benchConn) Close() error { return c.conn.Close() }

// flush writes the batched commands; what names them in an error.
func (c *benchConn) flush(what string) error {
	if err := c.out.Flush(c.conn); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

// Set sends SET key value and waits for +OK.
func (c *benchConn) Set(key string, value []byte) error {
	c.out.AddValue(value, "SET", key)
	if err := c.flush("SET"); err != nil {
		return err
	}
	return c.readOK()
}

// readOK reads one reply that must be +OK (a SET's).
func (c *benchConn) readOK() error {
	if err := c.rd.ReadOK(); err != nil {
		return fmt.Errorf("read SET reply: %w", err)
	}
	return nil
}

// Do sends a command and reads its whole reply, returning the reply's
// first line without its CRLF (all of a status, integer or error reply).
// An error reply is also returned as an error.
func (c *benchConn) Do(args ...string) (string, error) {
	rep, err := c.call(args)
	if err != nil {
		return "", err
	}
	first, _, _ := bytes.Cut(rep.Raw, []byte("\r\n"))
	line := string(first)
	if rep.IsError() {
		return line, errors.New(line)
	}
	return line, nil
}

// DoBulk sends a command whose reply is a bulk string and returns its body.
func (c *benchConn) DoBulk(args ...string) (string, error) {
	rep, err := c.call(args)
	if err != nil {
		return "", err
	}
	if rep.Type != '$' || rep.Null {
		return "", fmt.Errorf("%s: want a bulk reply, got %.80q", args[0], rep.Raw)
	}
	return rep.Str, nil
}

// call sends a command and reads its reply, whatever its type.
func (c *benchConn) call(args []string) (respclient.Reply, error) {
	c.out.Add(args...)
	if err := c.flush(args[0]); err != nil {
		return respclient.Reply{}, err
	}
	raw, rep, err := c.rd.ReadReply(c.raw[:0])
	c.raw = raw
	if err != nil {
		return respclient.Reply{}, fmt.Errorf("read %s reply: %w", args[0], err)
	}
	return rep, nil
}

// Get sends GET key and reads the value into the connection's buffer,
// returning its length (-1 for a miss).
func (c *benchConn) Get(key string) (int, error) {
	c.out.Add("GET", key)
	if err := c.flush("GET"); err != nil {
		return 0, err
	}
	return c.readBulk()
}

// SetPipelined sends SET key value for every key in one vectored write
// (a value of respclient.BigValue bytes or more is not copied) and only
// then reads the len(keys) replies, so the connection keeps len(keys)
// requests in flight.
func (c *benchConn) SetPipelined(keys []string, value []byte) error {
	for _, k := range keys {
		c.out.AddValue(value, "SET", k)
	}
	if err := c.flush("pipelined SET"); err != nil {
		return err
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
	for _, k := range keys {
		c.out.Add("GET", k)
	}
	if err := c.flush("pipelined GET"); err != nil {
		return 0, 0, err
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
	n, err := c.rd.ReadBulkLen()
	if err != nil {
		return 0, fmt.Errorf("read GET reply: %w", err)
	}
	if n < 0 {
		return -1, nil
	}
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	if err := c.rd.ReadBody(n, c.buf[:n]); err != nil {
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
