// Package migrate is the client side of MIGRATE (Redis's cluster.c
// migrateCommand): connections to target instances, cached per host:port
// for ten seconds after their last use as migrateGetSocket caches them,
// and the exchange over one of them: AUTH, SELECT when the connection's
// database differs, one RESTORE (or RESTORE-ASKING) per key with its DUMP
// payload, then the replies, with Redis's retry on a broken cached
// connection. It knows nothing of the keyspace: the caller serializes the
// keys and deletes those the target accepted. Every blocking step is
// bounded by the request's timeout and by its context.
package migrate

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// Redis's migrate socket cache bounds (MIGRATE_SOCKET_CACHE_ITEMS and
// MIGRATE_SOCKET_CACHE_TTL).
const (
	cacheItems = 64
	cacheTTL   = 10 * time.Second
	// writeChunk is how much one write sends: Redis transfers the
	// commands in 64 KiB pieces, each within the timeout.
	writeChunk = 64 << 10
)

// Key is one key to move.
type Key struct {
	// Name is the key.
	Name []byte
	// TTL is the time to live in milliseconds, 0 for none.
	TTL int64
	// Payload is the key's value as DUMP serializes it.
	Payload []byte
}

// Request is one MIGRATE.
type Request struct {
	// Host and Port name the target as the client wrote them; the cache
	// is keyed by "host:port".
	Host, Port string
	// DB is the target database.
	DB int64
	// Timeout bounds the connect and each write and read (Redis's
	// timeout argument; the caller turns 0 into Redis's 1000 ms).
	Timeout time.Duration
	// Auth are the arguments of an AUTH sent first: the password
	// (MIGRATE's AUTH), or the username and password (AUTH2); nil sends
	// none.
	Auth []string
	// Replace adds REPLACE to each RESTORE.
	Replace bool
	// Asking sends RESTORE-ASKING (a cluster node) instead of RESTORE.
	Asking bool
	// Keys are the keys to send, in order.
	Keys []Key
}

// Result is how a MIGRATE ended.
type Result struct {
	// Accepted says, key by key, whether the target restored it (the
	// others were refused or not answered).
	Accepted []bool
	// TargetError is the first error line the target answered (without
	// its '-'), "" if none.
	TargetError string
	// IOError is Redis's reply to a connection failure, "" if none:
	// "IOERR error or timeout connecting to the client", or writing or
	// reading "to target instance".
	IOError string
}

// Errors the exchange can end with, as Redis words them.
const (
	errConnecting = "IOERR error or timeout connecting to the client"
	errWriting    = "IOERR error or timeout writing to target instance"
	errReading    = "IOERR error or timeout reading to target instance"
)

// conn is a connection to a target and the database it has selected.
type conn struct {
	name string
	nc   net.Conn
	r    *respclient.Reader
	// lastDB is the database selected on it, -1 for unknown.
	lastDB int64
	// idle closes the connection once it has sat in the cache for
	// cacheTTL.
	idle *time.Timer
}

// Pool caches connections to targets. The zero value is not usable; use
// New. Close closes every cached connection.
type Pool struct {
	mu     sync.Mutex
	conns  map[string]*conn
	closed bool
	// idleTTL is how long a cached connection waits for its next use
	// (cacheTTL; shorter in tests).
	idleTTL time.Duration
	// dialer dials targets; its Timeout is set per request.
	dialer net.Dialer
}

// New returns an empty pool.
func New() *Pool { return &Pool{conns: make(map[string]*conn), idleTTL: cacheTTL} }

// Close closes the cached connections; later migrations are refused
// with a connecting error.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for name, c := range p.conns {
		c.idle.Stop()
		c.nc.Close()
		delete(p.conns, name)
	}
}

// Cached reports how many connections the pool holds.
func (p *Pool) Cached() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// errDNS marks a target whose name did not resolve, the one connect
// failure Redis reports as such (anetTcpNonBlockConnect fails); a refused
// or timed out connection only shows when the first write fails.
var errDNS = errors.New("migrate: target address does not resolve")

// get takes the cached connection to name out of the cache, or dials one.
// A caller that uses a connection alone is why it leaves the cache: a
// second MIGRATE to the same target meanwhile dials its own.
func (p *Pool) get(ctx context.Context, host, port string, timeout time.Duration) (*conn, error) {
	name := host + ":" + port
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, net.ErrClosed
	}
	if c := p.conns[name]; c != nil {
		delete(p.conns, name)
		p.mu.Unlock()
		c.idle.Stop()
		return c, nil
	}
	p.mu.Unlock()
	d := p.dialer
	d.Timeout = timeout
	nc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) {
			return nil, errors.Join(errDNS, err)
		}
		return nil, err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &conn{name: name, nc: nc, r: respclient.NewReader(nc, 4096), lastDB: -1}, nil
}

// put returns a healthy connection to the cache, where it stays for
// cacheTTL unless used again. With the cache full a random connection
// makes room, as in Redis.
func (p *Pool) put(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.nc.Close()
		return
	}
	if old := p.conns[c.name]; old != nil {
		old.idle.Stop()
		old.nc.Close()
		delete(p.conns, c.name)
	}
	if len(p.conns) >= cacheItems {
		for name, victim := range p.conns { // map order is random
			victim.idle.Stop()
			victim.nc.Close()
			delete(p.conns, name)
			break
		}
	}
	p.conns[c.name] = c
	c.idle = time.AfterFunc(p.idleTTL, func() { p.expire(c) })
}

// expire closes c if it is still the cached connection of its target.
func (p *Pool) expire(c *conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns[c.name] == c {
		delete(p.conns, c.name)
		c.nc.Close()
	}
}

// Migrate runs the exchange of req, retrying once on a fresh connection
// when the cached one turns out broken before the target processed
// anything, unless the failure was a timeout (Redis's may_retry). ctx
// ending interrupts any step as a timeout would.
func (p *Pool) Migrate(ctx context.Context, req Request) Result {
	res, retry := p.attempt(ctx, req)
	if retry && ctx.Err() == nil {
		res, _ = p.attempt(ctx, req)
	}
	return res
}

// socketError ends an attempt on a failed write (writing) or read: the
// reply is Redis's IOERR, and a retry is worth it unless the step timed
// out.
func socketError(res Result, writing bool, err error) (Result, bool) {
	res.IOError = errReading
	if writing {
		res.IOError = errWriting
	}
	return res, !isTimeout(err)
}

// attempt is one try of req on one connection. retry reports a socket
// failure before any key was processed that was not a timeout.
func (p *Pool) attempt(ctx context.Context, req Request) (res Result, retry bool) {
	res = Result{Accepted: make([]bool, len(req.Keys))}
	c, err := p.get(ctx, req.Host, req.Port, req.Timeout)
	if err != nil {
		if errors.Is(err, errDNS) || errors.Is(err, net.ErrClosed) {
			res.IOError = errConnecting
			return res, false
		}
		// Redis's blocking connect "succeeds" on a refused or timed out
		// connection and the first write fails.
		return socketError(res, true, err)
	}
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	healthy := false
	defer func() {
		if healthy {
			p.put(c)
		} else {
			c.nc.Close()
		}
	}()

	sel := c.lastDB != req.DB
	if err := p.send(c, req, sel); err != nil {
		return socketError(res, true, err)
	}
	var authReply, selectReply string
	if req.Auth != nil {
		if authReply, err = p.readLine(c, req.Timeout); err != nil {
			return socketError(res, false, err)
		}
	}
	if sel {
		if selectReply, err = p.readLine(c, req.Timeout); err != nil {
			return socketError(res, false, err)
		}
	}
	for i := range req.Keys {
		line, err := p.readLine(c, req.Timeout)
		if err != nil {
			if res.TargetError != "" {
				return res, false // the target's error is the reply
			}
			res, retry = socketError(res, false, err)
			return res, retry && i == 0
		}
		switch {
		case authReply != "" && authReply[0] == '-':
			line = authReply
		case selectReply != "" && selectReply[0] == '-':
			line = selectReply
		}
		if line != "" && line[0] == '-' {
			if res.TargetError == "" {
				res.TargetError = line[1:]
			}
			continue
		}
		res.Accepted[i] = true
	}
	if res.TargetError == "" {
		c.lastDB = req.DB
	} else {
		c.lastDB = -1
	}
	healthy = true
	return res, false
}

// send writes AUTH, SELECT (when sel) and the RESTOREs in writeChunk
// pieces, each within the timeout. The commands' small parts are gathered
// in one buffer; a payload of writeChunk or more is written from the
// caller's slice, so a large value is copied once on its way out (by
// DUMP's serialization), not again into the request.
func (p *Pool) send(c *conn, req Request, sel bool) error {
	w := chunkWriter{nc: c.nc, timeout: req.Timeout}
	if req.Auth != nil {
		w.buf = respclient.AppendCommand(w.buf, append([]string{"AUTH"}, req.Auth...)...)
	}
	if sel {
		w.buf = respclient.AppendCommand(w.buf, "SELECT", strconv.FormatInt(req.DB, 10))
	}
	restore := "RESTORE"
	if req.Asking {
		restore = "RESTORE-ASKING"
	}
	n := 4
	if req.Replace {
		n = 5
	}
	for _, k := range req.Keys {
		w.buf = respclient.AppendArrayHeader(w.buf, n)
		w.buf = respclient.AppendBulk(w.buf, restore)
		w.buf = respclient.AppendBulk(w.buf, k.Name)
		w.buf = respclient.AppendBulk(w.buf, strconv.AppendInt(nil, k.TTL, 10))
		w.buf = respclient.AppendBulkHeader(w.buf, len(k.Payload))
		if err := w.value(k.Payload); err != nil {
			return err
		}
		w.buf = append(w.buf, '\r', '\n')
		if req.Replace {
			w.buf = respclient.AppendBulk(w.buf, "REPLACE")
		}
	}
	return w.flush()
}

// chunkWriter writes to a target in pieces of at most writeChunk bytes,
// each within the timeout.
type chunkWriter struct {
	nc      net.Conn
	timeout time.Duration
	// buf gathers small parts until the next flush.
	buf []byte
}

// value adds v: into buf when it is small, else written straight after
// what buf holds.
func (w *chunkWriter) value(v []byte) error {
	if len(v) < writeChunk {
		w.buf = append(w.buf, v...)
		return nil
	}
	if err := w.flush(); err != nil {
		return err
	}
	return w.write(v)
}

// flush writes buf and empties it.
func (w *chunkWriter) flush() error {
	err := w.write(w.buf)
	w.buf = w.buf[:0]
	return err
}

// write sends b in writeChunk pieces.
func (w *chunkWriter) write(b []byte) error {
	for len(b) > 0 {
		n := min(len(b), writeChunk)
		if err := w.nc.SetWriteDeadline(time.Now().Add(w.timeout)); err != nil {
			return err
		}
		if _, err := w.nc.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// readLine reads one reply's first line within the timeout.
func (p *Pool) readLine(c *conn, timeout time.Duration) (string, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return "", err
	}
	line, err := c.r.ReadLine()
	if err != nil {
		return "", err
	}
	return string(line), nil
}

// isTimeout reports a deadline that passed (Redis's ETIMEDOUT, after
// which it does not retry); a cancelled context shows as one too.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		(errors.As(err, &ne) && ne.Timeout())
}
