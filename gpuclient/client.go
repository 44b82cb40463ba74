package gpuclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// ClientOptions configures a Client. The zero value of every field but
// Addr has a documented default.
type ClientOptions struct {
	// Addr is the server's host:port.
	Addr string
	// MaxIdle is how many idle connections the pool keeps for reuse;
	// default 8. Operations that run in parallel each take their own
	// connection, so more can be open at once.
	MaxIdle int
	// Dial opens a connection; default net.Dialer.DialContext. Tests use
	// it to wrap the connection (to inject latency or count writes). A
	// wrapper that is not a *net.TCPConn loses the vectored write: each
	// piece of a batch then goes out with its own Write.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Client is a pool of RESP2 connections to one kvserver (or any Redis
// server, except for KVC.PROBE). It is safe for concurrent use; Close
// closes the idle connections and makes later operations fail.
//
// It is kvserver's own minimal client rather than go-redis, which the
// module also depends on, because the values are KV chunks of 1 to 32 MiB
// and more: go-redis materialises every bulk reply as a freshly allocated
// string (one multi-MiB allocation per GET, to be collected later) and
// cannot read a value into a buffer the caller already owns, nor skip a
// value of the wrong size without reading it into memory. Here a GET reads
// the value straight from the socket into a reused staging buffer, a
// value whose length is wrong is discarded through the small read buffer,
// and a SET writes the caller's buffer with one vectored write (see conn).
// The protocol needed is small: SET, GET, DEL, KVC.PROBE and their +OK,
// integer, bulk and error replies.
type Client struct {
	opts ClientOptions

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

// ErrClosed is returned by operations on a closed Client.
var ErrClosed = errors.New("gpuclient: client closed")

// NewClient returns a client for opts.Addr. It does not connect until the
// first operation.
func NewClient(opts ClientOptions) *Client {
	if opts.MaxIdle <= 0 {
		opts.MaxIdle = 8
	}
	if opts.Dial == nil {
		var d net.Dialer
		opts.Dial = d.DialContext
	}
	return &Client{opts: opts}
}

// Addr is the server's address.
func (c *Client) Addr() string { return c.opts.Addr }

// get returns an idle connection or dials a new one.
func (c *Client) get(ctx context.Context) (*conn, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	nc, err := c.opts.Dial(ctx, "tcp", c.opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("gpuclient: dial %s: %w", c.opts.Addr, err)
	}
	return newConn(nc), nil
}

// put returns a connection to the pool, or closes it when it is broken,
// the pool is full or the client closed.
func (c *Client) put(cn *conn) {
	c.mu.Lock()
	if cn.broken.Load() || c.closed || len(c.idle) >= c.opts.MaxIdle {
		c.mu.Unlock()
		cn.nc.Close()
		return
	}
	c.idle = append(c.idle, cn)
	c.mu.Unlock()
}

// Close closes the idle connections; connections in use are closed when
// their operation ends.
func (c *Client) Close() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	var errs []error
	for _, cn := range idle {
		errs = append(errs, cn.nc.Close())
	}
	return errors.Join(errs...)
}

// with runs fn on a pooled connection with ctx applied to its I/O.
func (c *Client) with(ctx context.Context, fn func(cn *conn) error) error {
	cn, err := c.get(ctx)
	if err != nil {
		return err
	}
	stop := cn.watch(ctx)
	err = fn(cn)
	stop()
	if ctx.Err() != nil {
		cn.broken.Store(true) // a deadline may have fired mid-reply
		if err != nil {
			err = fmt.Errorf("%w (%w)", err, ctx.Err())
		}
	}
	c.put(cn)
	return err
}

// Probe sends KVC.PROBE and returns how many leading keys exist. With a
// positive leaseMs the found keys' chunks are leased against eviction for
// that many milliseconds.
func (c *Client) Probe(ctx context.Context, leaseMs int64, keys []string) (int, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	var n int64
	err := c.with(ctx, func(cn *conn) error {
		var err error
		n, err = cn.probe(leaseMs, keys)
		return err
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// probe is Probe on one connection.
func (cn *conn) probe(leaseMs int64, keys []string) (int64, error) {
	args := make([]string, 0, len(keys)+3)
	args = append(args, "KVC.PROBE")
	if leaseMs > 0 {
		args = append(args, "LEASE", strconv.FormatInt(leaseMs, 10))
	}
	cn.out.Add(append(args, keys...)...)
	if err := cn.flush(); err != nil {
		return 0, err
	}
	n, err := cn.readInt()
	if err != nil {
		return 0, fmt.Errorf("KVC.PROBE: %w", err)
	}
	if n < 0 || n > int64(len(keys)) {
		cn.broken.Store(true)
		return 0, fmt.Errorf("KVC.PROBE: %w: %d of %d keys", errProtocol, n, len(keys))
	}
	return n, nil
}
