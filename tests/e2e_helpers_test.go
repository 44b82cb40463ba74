package tests

// Helpers shared by the client, LMCache, bad-input, limits and metrics
// end-to-end tests. They build on harness_test.go and add what those tests
// need beyond it: servers whose readiness is not "+PONG" (requirepass) or
// that the test itself stops (SIGTERM, SHUTDOWN), and checks that the
// server closed a connection.

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// closeWait bounds how long a test waits for the server to close a
// connection after an error reply.
const closeWait = 3 * time.Second

// ownedServer is how startOwnedServer's caller means to end the process.
type ownedServer int

const (
	// harnessStops: the harness's SIGTERM clean-up runs at the end of the
	// test and complains if the process exited early.
	harnessStops ownedServer = iota
	// testStops: the test stops the process itself (SIGTERM, SHUTDOWN);
	// clean-up only kills a process still running.
	testStops
)

// startOwnedServer starts kvserver (redis-server in redis-vs-redis mode)
// with extraArgs, like startKVServer, but counts the server as ready once a
// fresh connection gets any well-formed reply to PING, so that a server
// started with --requirepass (which answers -NOAUTH) can be used.
func startOwnedServer(t testing.TB, stops ownedServer, extraArgs ...string) *server {
	t.Helper()
	name, mkCmd, dir := kvCommand(t, extraArgs)
	const attempts = 3
	var lastErr error
	for i := 0; i < attempts; i++ {
		port := freePort(t)
		s := &server{
			Name:   name,
			Port:   port,
			Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Dir:    dir,
			Cmd:    mkCmd(port),
			output: &syncBuffer{},
			exited: make(chan struct{}),
		}
		s.Cmd.Stdout = s.output
		s.Cmd.Stderr = s.output
		if err := s.Cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		go func() {
			s.waitErr = s.Cmd.Wait()
			close(s.exited)
		}()
		err := waitForPing(s)
		if err == nil {
			if stops == harnessStops {
				t.Cleanup(func() { s.stop(t) })
			} else {
				t.Cleanup(func() {
					s.kill()
					if t.Failed() {
						t.Logf("%s (port %d) output:\n%s", s.Name, s.Port, s.Output())
					}
				})
			}
			return s
		}
		lastErr = err
		s.kill()
		t.Logf("%s on port %d did not start (%v); output:\n%s", name, port, err, s.Output())
	}
	t.Fatalf("%s did not start after %d attempts: %v", name, attempts, lastErr)
	return nil
}

// kvCommand returns the process name, command builder and data directory
// that startKVServer would use for extraArgs.
func kvCommand(t testing.TB, extraArgs []string) (string, func(port int) *exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	if diffAgainstRedis() {
		bin, err := exec.LookPath("redis-server")
		if err != nil {
			t.Fatalf("redis-server is not on PATH (%v); .ci/run installs it", err)
		}
		return "redis", func(port int) *exec.Cmd {
			args := []string{
				"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
			}
			return exec.Command(bin, append(args, extraArgs...)...)
		}, dir
	}
	if kvserverBin == "" {
		t.Fatal("kvserver binary was not built by TestMain")
	}
	return "kvserver", func(port int) *exec.Cmd {
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--metrics-port", "0"}
		return exec.Command(kvserverBin, append(args, extraArgs...)...)
	}, dir
}

// waitExit waits up to d for the process to exit and returns its wait
// error, or fails the test.
func waitExit(t testing.TB, s *server, d time.Duration) error {
	t.Helper()
	select {
	case <-s.exited:
		return s.waitErr
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v", s.Name, d)
		return nil
	}
}

// connClosedErr reports whether err means the peer closed the connection
// (EOF or a reset), as opposed to a timeout.
func connClosedErr(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

// expectClosedConn fails the test unless the server closes c within
// closeWait, without sending anything more.
func expectClosedConn(t testing.TB, c *rawClient) {
	t.Helper()
	old := c.Timeout
	c.Timeout = closeWait
	defer func() { c.Timeout = old }()
	raw, err := c.ReadReply()
	if err == nil {
		t.Fatalf("connection still open: got another reply %q, want the server to close it", raw)
	}
	if !connClosedErr(err) {
		t.Fatalf("connection not closed within %v: %v (read %q)", closeWait, err, raw)
	}
}

// expectReply sends args and fails the test unless the raw reply is want.
func expectReply(t testing.TB, c *rawClient, want string, args ...string) {
	t.Helper()
	raw, err := c.Call(args...)
	if err != nil {
		t.Fatalf("%s: %v (read %s)", quoteArgs(args), err, quoteTrunc(raw))
	}
	if string(raw) != want {
		t.Fatalf("%s = %s, want %s", quoteArgs(args), quoteTrunc(raw), quoteTrunc([]byte(want)))
	}
}

// checkReply is expectReply that records the failure and goes on.
func checkReply(t testing.TB, c *rawClient, want string, args ...string) bool {
	t.Helper()
	raw, err := c.Call(args...)
	if err != nil {
		t.Errorf("%s: %v (read %s)", quoteArgs(args), err, quoteTrunc(raw))
		return false
	}
	if string(raw) != want {
		t.Errorf("%s = %s, want %s", quoteArgs(args), quoteTrunc(raw), quoteTrunc([]byte(want)))
		return false
	}
	return true
}

// quoteArgs renders a command for messages, shortening long arguments.
func quoteArgs(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if len(a) > 80 {
			parts[i] = fmt.Sprintf("<%d bytes>", len(a))
		} else {
			parts[i] = strconv.Quote(a)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// bulk is the RESP2 encoding of a bulk string.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// infoFields runs INFO section on c and returns its fields, or an error if
// INFO answered anything but a bulk or verbatim string.
func infoFields(c *rawClient, section string) (map[string]string, error) {
	raw, err := c.Call("INFO", section)
	if err != nil {
		return nil, err
	}
	r, err := parseReply(raw)
	if err != nil {
		return nil, err
	}
	if r.Type != '$' && r.Type != '=' {
		return nil, fmt.Errorf("INFO %s answered %s", section, quoteTrunc(raw))
	}
	m := make(map[string]string)
	for _, line := range strings.Split(r.Str, "\r\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// raiseNoFileLimit raises this process's soft RLIMIT_NOFILE to at least n.
// It is not restored: other tests may run in parallel, and a higher soft
// limit harms none of them. (The Go runtime already raises the soft limit
// to the hard one at start-up; this guards against a harness that did not.)
func raiseNoFileLimit(t testing.TB, n uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if old.Cur >= n {
		return
	}
	if old.Max < n {
		t.Fatalf("RLIMIT_NOFILE hard limit %d is below the %d descriptors this test needs", old.Max, n)
	}
	raised := old
	raised.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
		t.Fatalf("setrlimit(%d): %v", n, err)
	}
}

// dialRawErr is dialRaw for goroutines other than the test's: it returns
// the dial error instead of failing the test. The connection is closed when
// the test ends.
func dialRawErr(t testing.TB, addr string) (*rawClient, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	c := newRawClient(t, conn)
	t.Cleanup(func() { c.Close() })
	return c, nil
}
