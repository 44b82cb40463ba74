// Package tests holds kvserver's end-to-end tests: they build the real
// binary, start it on a free port and talk RESP to it over TCP, exactly as a
// client would. The differential suite runs the same scripts against a real
// redis-server 7 and requires byte-identical replies.
package tests

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// kvserverBin is the path of the kvserver binary that TestMain builds once
// for the whole package. It is empty in redis-vs-redis mode.
var kvserverBin string

const (
	// envDiffAgainstRedis, when set to 1, makes startKVServer start a second
	// redis-server instead of kvserver, and TestMain skips building
	// cmd/kvserver. It is a debugging switch: running the differential suite
	// redis-vs-redis proves that every comparison mode normalises away only
	// what really differs between two servers (ids, clocks, ordering), so a
	// failure against kvserver is a deviation of kvserver.
	envDiffAgainstRedis = "KVSERVER_DIFF_AGAINST_REDIS"

	// envRace, when set to 1, builds cmd/kvserver with the race detector
	// (and GORACE=halt_on_error=1 unless GORACE is set), so that the
	// end-to-end tests, with their many clients, event loops and real
	// client libraries, look for data races in the server itself: a race
	// ends the server with status 66 and its report in the test's output.
	// Slow (CPU-heavy steps such as PFSELFTEST may time out); for hunting,
	// not for CI.
	envRace = "KVSERVER_RACE"

	// startTimeout bounds how long a server may take to answer PING.
	startTimeout = 10 * time.Second
	// stopTimeout is how long a server gets after SIGTERM before SIGKILL.
	stopTimeout = 5 * time.Second
	// replyTimeout is the read deadline for one reply.
	replyTimeout = 5 * time.Second
)

// TestMain builds cmd/kvserver once into a temporary directory and runs the
// tests against that binary.
func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

// runTests is TestMain's body, separate so that deferred clean-up runs
// before os.Exit.
func runTests(m *testing.M) int {
	if diffAgainstRedis() {
		fmt.Fprintf(os.Stderr, "tests: %s=1: kvserver is replaced by a second redis-server\n", envDiffAgainstRedis)
		return m.Run()
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tests: cannot find the repository root: %v\n", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kvserver-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "tests: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "kvserver")
	args := []string{"build", "-o", bin}
	if os.Getenv(envRace) == "1" {
		args = append(args, "-race")
		if os.Getenv("GORACE") == "" {
			os.Setenv("GORACE", "halt_on_error=1") // inherited by every kvserver started
		}
	}
	build := exec.Command("go", append(args, "./cmd/kvserver")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "tests: go build ./cmd/kvserver failed: %v\n%s", err, out)
		return 1
	}
	kvserverBin = bin
	return m.Run()
}

// diffAgainstRedis reports whether the redis-vs-redis debugging mode is on.
func diffAgainstRedis() bool {
	return os.Getenv(envDiffAgainstRedis) == "1"
}

// repoRoot is the directory holding go.mod, the parent of tests/.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if gomod := strings.TrimSpace(string(out)); gomod != "" && gomod != os.DevNull {
			return filepath.Dir(gomod), nil
		}
	}
	return filepath.Abs("..")
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("freePort: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is one server process (kvserver or redis-server) and how to start
// it again.
type server struct {
	// Name is "kvserver" or "redis", for messages.
	Name string
	// Addr is host:port for clients.
	Addr string
	// Port is the TCP port the server listens on.
	Port int
	// Dir is the server's data directory; it survives Restart.
	Dir string
	// Cmd is the current process.
	Cmd *exec.Cmd

	// mkCmd builds the command line for a port.
	mkCmd func(port int) *exec.Cmd
	// output collects the processes' stdout and stderr, across restarts.
	output *syncBuffer
	// exited is closed once the current process has exited; waitErr is
	// then valid.
	exited  chan struct{}
	waitErr error
	// stopped is set when the test stopped the server on purpose.
	stopped bool
}

// Output returns what the server has written to stdout and stderr so far.
func (s *server) Output() string { return s.output.String() }

// syncBuffer is a bytes.Buffer safe for the process's writer goroutines and
// the test goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startKVServer starts the kvserver binary built by TestMain on a free port
// with a fresh data directory, waits until it answers PING and stops it when
// the test ends. DEBUG is enabled for local connections, as startRedis does
// (both default to refusing it). In redis-vs-redis mode it starts
// redis-server with the same extra arguments instead.
func startKVServer(t testing.TB, extraArgs ...string) *server {
	t.Helper()
	if diffAgainstRedis() {
		return startRedis(t, extraArgs...)
	}
	if kvserverBin == "" {
		t.Fatal("startKVServer: kvserver binary was not built by TestMain")
	}
	dir := t.TempDir()
	return startServer(t, "kvserver", dir, func(port int) *exec.Cmd {
		base := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--metrics-port", "0",
			"--enable-debug-command", "local"}
		return exec.Command(kvserverBin, append(base, extraArgs...)...)
	})
}

// startRedis starts a real redis-server (persistence off) on a free port
// with a fresh data directory, waits until it answers PING and stops it when
// the test ends. DEBUG is enabled for local connections because kvserver
// accepts DEBUG SLEEP, and the suite diffs it.
func startRedis(t testing.TB, extraArgs ...string) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH (%v); .ci/run installs it (Debian package redis-server, Redis 7.0)", err)
	}
	dir := t.TempDir()
	return startServer(t, "redis", dir, func(port int) *exec.Cmd {
		base := []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no",
			"--enable-debug-command", "local",
		}
		return exec.Command(bin, append(base, extraArgs...)...)
	})
}

// startServer starts mkCmd's process on a free port and waits for PING. A
// server that exits before answering (say the port was taken in the
// meantime) is retried on another port a few times. The process is stopped
// when the test ends.
func startServer(t testing.TB, name, dir string, mkCmd func(port int) *exec.Cmd) *server {
	t.Helper()
	const attempts = 3
	s := &server{Name: name, Dir: dir, mkCmd: mkCmd, output: &syncBuffer{}}
	var lastErr error
	for i := 0; i < attempts; i++ {
		died, err := s.launch(freePort(t))
		if err == nil {
			t.Cleanup(func() { s.stop(t) })
			return s
		}
		if !died {
			t.Fatalf("%s on port %d did not answer PING: %v\noutput:\n%s", name, s.Port, err, s.Output())
		}
		lastErr = err
		t.Logf("%s on port %d did not start (%v); output:\n%s", name, s.Port, err, s.Output())
	}
	t.Fatalf("%s did not start after %d attempts: %v", name, attempts, lastErr)
	return nil
}

// launch starts a process on port and waits for PING. On failure it
// reports whether the process died by itself; one that hangs is killed.
func (s *server) launch(port int) (died bool, err error) {
	s.Port = port
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.Cmd = s.mkCmd(port)
	s.Cmd.Stdout = s.output
	s.Cmd.Stderr = s.output
	s.stopped = false
	exited := make(chan struct{})
	s.exited = exited
	if err := s.Cmd.Start(); err != nil {
		close(exited)
		return true, fmt.Errorf("start: %w", err)
	}
	cmd := s.Cmd
	go func() {
		err := cmd.Wait()
		s.waitErr = err
		close(exited)
	}()
	if err := waitForPing(s); err != nil {
		select {
		case <-exited:
			return true, err
		default:
			s.kill()
			return false, err
		}
	}
	return false, nil
}

// Terminate sends SIGTERM and waits for the process to exit (SIGKILL after
// stopTimeout). Use it, not Cmd directly, for tests that stop the server on
// purpose; the end-of-test stop then has nothing left to do.
func (s *server) Terminate(t testing.TB) {
	t.Helper()
	s.stopped = true
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		t.Errorf("%s did not exit within %v of SIGTERM; killing it", s.Name, stopTimeout)
		s.kill()
	}
}

// Restart stops the server if it is running and starts it again on the
// same port with the same data directory and arguments (persistence
// tests).
func (s *server) Restart(t testing.TB) {
	t.Helper()
	if s.mkCmd == nil {
		t.Fatalf("%s was not started by startServer and cannot be restarted", s.Name)
	}
	s.Terminate(t)
	s.Relaunch(t)
}

// Crash kills the process with SIGKILL, as a crash would (nothing is
// flushed or cleaned up), and waits for it. Relaunch starts it again.
func (s *server) Crash() {
	s.stopped = true
	s.kill()
}

// Relaunch starts a stopped (terminated or crashed) server again on the
// same port with the same data directory and arguments.
func (s *server) Relaunch(t testing.TB) {
	t.Helper()
	if s.mkCmd == nil {
		t.Fatalf("%s was not started by startServer and cannot be restarted", s.Name)
	}
	if _, err := s.launch(s.Port); err != nil {
		t.Fatalf("%s did not restart on port %d: %v\noutput:\n%s", s.Name, s.Port, err, s.Output())
	}
}

// stop is the end-of-test clean-up: a server that died by itself is an
// error; a running one is terminated. The output is logged if the test
// failed.
func (s *server) stop(t testing.TB) {
	if !s.stopped {
		select {
		case <-s.exited:
			t.Errorf("%s exited before the end of the test: %v", s.Name, s.waitErr)
		default:
			s.Terminate(t)
		}
	}
	if t.Failed() {
		t.Logf("%s (port %d) output:\n%s", s.Name, s.Port, s.Output())
	}
}

// waitForPing polls until a fresh connection gets an answer to PING, the
// process exits, or startTimeout passes.
func waitForPing(s *server) error {
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("process exited: %v", s.waitErr)
		default:
		}
		if err := pingOnce(s.Addr); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pingOnce connects, sends PING and waits for a reply. Any complete reply
// means the server is up, except -LOADING and -BUSY, which mean "not yet";
// a reply other than +PONG is for the tests to catch, not the harness.
func pingOnce(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write(encodeCommand([]string{"PING"})); err != nil {
		return err
	}
	raw, _, err := respclient.NewReader(conn, 0).ReadReply(nil)
	if err != nil {
		return err
	}
	if bytes.HasPrefix(raw, []byte("-LOADING")) || bytes.HasPrefix(raw, []byte("-BUSY")) {
		return fmt.Errorf("PING answered %q", raw)
	}
	return nil
}

// kill sends SIGKILL and waits for the process.
func (s *server) kill() {
	_ = s.Cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
	}
}

// rawClient is a RESP client on respclient that returns the exact bytes
// of each reply, so tests can compare them byte for byte.
type rawClient struct {
	t    testing.TB
	conn net.Conn
	rd   *respclient.Reader
	// Timeout is the read deadline applied to each reply.
	Timeout time.Duration
}

// dialRaw connects to addr; the connection is closed when the test ends.
func dialRaw(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := dialRawErr(t, addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return c
}

// Do sends one command and returns the raw bytes of its reply; any I/O or
// protocol error fails the test.
func (c *rawClient) Do(args ...string) []byte {
	c.t.Helper()
	raw, err := c.Call(args...)
	if err != nil {
		c.t.Fatalf("%q: %v", args, err)
	}
	return raw
}

// Call sends one command and returns the raw bytes of its reply or the I/O
// or protocol error that prevented reading it.
func (c *rawClient) Call(args ...string) ([]byte, error) {
	if err := c.SendErr(encodeCommand(args)); err != nil {
		return nil, err
	}
	return c.ReadReply()
}

// Send writes raw bytes (a pre-encoded or deliberately malformed request);
// a write error fails the test.
func (c *rawClient) Send(raw []byte) {
	c.t.Helper()
	if err := c.SendErr(raw); err != nil {
		c.t.Fatalf("send %q: %v", raw, err)
	}
}

// SendErr writes raw bytes and returns any write error.
func (c *rawClient) SendErr(raw []byte) error {
	c.conn.SetWriteDeadline(time.Now().Add(c.Timeout))
	_, err := c.conn.Write(raw)
	return err
}

// ReadReply reads exactly one complete reply (an attribute and the reply it
// precedes count as one) and returns its raw bytes.
func (c *rawClient) ReadReply() ([]byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(c.Timeout))
	raw, _, err := c.rd.ReadReply(nil)
	return raw, err
}

// Close closes the connection; closing twice is harmless.
func (c *rawClient) Close() error {
	return c.conn.Close()
}

// newRawClient wraps an open connection; the read buffer is small, as a
// plain client's would be.
func newRawClient(t testing.TB, conn net.Conn) *rawClient {
	return &rawClient{t: t, conn: conn, rd: respclient.NewReader(conn, 4096), Timeout: replyTimeout}
}

// encodeCommand encodes args as a RESP multibulk request.
func encodeCommand(args []string) []byte { return respclient.AppendCommand(nil, args...) }

// Reply is a parsed RESP2/RESP3 reply (respclient's).
type Reply = respclient.Reply

// parseReply parses exactly one reply; trailing bytes are an error.
func parseReply(raw []byte) (Reply, error) {
	got, r, err := respclient.NewReader(bytes.NewReader(raw), 0).ReadReply(nil)
	if err != nil {
		return Reply{}, err
	}
	if n := len(raw) - len(got); n > 0 {
		return Reply{}, fmt.Errorf("%d trailing bytes after reply", n)
	}
	return r, nil
}
