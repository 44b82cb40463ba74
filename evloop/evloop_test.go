package evloop

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineServer is a small line protocol over a Group: "echo X" answers X in
// the loop, "slow X" detaches, sleeps 300 ms and answers X from the
// connection's own goroutine, which parks it again; "big N" answers N
// bytes (more than a socket buffer holds, so the write waits).
type lineServer struct {
	t    *testing.T
	g    *Group
	ln   net.Listener
	mu   sync.Mutex
	bufs map[*Conn][]byte
}

func startLineServer(t *testing.T, loops int) *lineServer {
	t.Helper()
	s := &lineServer{t: t, bufs: map[*Conn][]byte{}}
	var el *Listener
	s.ln, el = startLoops(t, loops, s.handle)
	go parkAll(t, el)
	return s
}

// startLoops listens on a loopback port and serves it with a Group of
// loops loops calling h, all closed when the test ends.
func startLoops(t *testing.T, loops int, h Handler) (net.Listener, *Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(loops, h)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	el, err := g.Listen(ln)
	if err != nil {
		ln.Close()
		g.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		el.Close()
		ln.Close()
		g.Close()
	})
	return ln, el
}

// parkAll parks every connection el accepts, until el is closed.
func parkAll(t *testing.T, el *Listener) {
	for {
		c, err := el.Accept()
		if err != nil {
			return
		}
		if err := c.Park(); err != nil {
			t.Error(err)
		}
	}
}

// acceptOne dials ln and returns both ends: the accepted Conn, running,
// and the client.
func acceptOne(t *testing.T, ln net.Listener, el *Listener) (*Conn, net.Conn) {
	t.Helper()
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := el.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return <-accepted, client
}

func (s *lineServer) handle(c *Conn) {
	var buf [4096]byte
	n, err := c.TryRead(buf[:])
	if err == ErrWouldBlock {
		return
	}
	if err != nil {
		c.Release()
		return
	}
	s.mu.Lock()
	pending := append(s.bufs[c], buf[:n]...)
	s.mu.Unlock()
	for {
		i := strings.IndexByte(string(pending), '\n')
		if i < 0 {
			break
		}
		line := string(pending[:i])
		pending = pending[i+1:]
		cmd, arg, _ := strings.Cut(line, " ")
		switch cmd {
		case "echo":
			c.Write([]byte(arg + "\n"))
		case "slow":
			if !c.Detach() {
				s.t.Error("Detach of a served connection reported false")
			}
			time.Sleep(300 * time.Millisecond)
			c.Write([]byte(arg + "\n"))
		case "big":
			c.Write([]byte(strings.Repeat("x", 8<<20) + "\n"))
		}
	}
	s.mu.Lock()
	s.bufs[c] = pending
	s.mu.Unlock()
	if c.Running() {
		if err := c.Park(); err != nil {
			s.t.Error(err)
		}
	}
}

func dial(t *testing.T, s *lineServer) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

func ask(t *testing.T, conn net.Conn, r *bufio.Reader, line string) string {
	t.Helper()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		t.Fatal(err)
	}
	got, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return strings.TrimSuffix(got, "\n")
}

func TestLoopServesManyConnectionsAndPipelines(t *testing.T) {
	s := startLineServer(t, 2)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, r := dial(t, s)
			for j := range 100 {
				want := strings.Repeat("a", i+j)
				if got := ask(t, conn, r, "echo "+want); got != want {
					t.Errorf("echo: got %d bytes, want %d", len(got), len(want))
					return
				}
			}
			// A pipeline cut anywhere: each line still answered once.
			io.WriteString(conn, "echo 1\necho 2\nec")
			time.Sleep(10 * time.Millisecond)
			io.WriteString(conn, "ho 3\n")
			for _, want := range []string{"1", "2", "3"} {
				if got, _ := r.ReadString('\n'); got != want+"\n" {
					t.Errorf("pipeline: got %q, want %q", got, want)
				}
			}
		}()
	}
	wg.Wait()
}

func TestDetachedHandlerDoesNotHoldUpTheLoop(t *testing.T) {
	s := startLineServer(t, 1) // one loop: the slow client's own
	slow, slowR := dial(t, s)
	fast, fastR := dial(t, s)
	ask(t, fast, fastR, "echo warm")
	start := time.Now()
	io.WriteString(slow, "slow s\n")
	for range 20 {
		if got := ask(t, fast, fastR, "echo f"); got != "f" {
			t.Fatalf("got %q", got)
		}
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Errorf("fast client waited %v behind the slow one", d)
	}
	if got, err := slowR.ReadString('\n'); err != nil || got != "s\n" {
		t.Fatalf("slow reply %q, %v", got, err)
	}
	// The slow connection was parked again: it is served by the loop.
	if got := ask(t, slow, slowR, "echo again"); got != "again" {
		t.Fatalf("after park: %q", got)
	}
}

func TestWriteToAClientThatDoesNotReadDetaches(t *testing.T) {
	s := startLineServer(t, 1)
	stuck, stuckR := dial(t, s)
	io.WriteString(stuck, "big\n") // 8 MiB the client does not read yet
	time.Sleep(100 * time.Millisecond)
	fast, fastR := dial(t, s)
	if got := ask(t, fast, fastR, "echo ok"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	stuck.SetDeadline(time.Now().Add(10 * time.Second))
	line, err := stuckR.ReadString('\n')
	if err != nil || len(line) != 8<<20+1 {
		t.Fatalf("big reply: %d bytes, %v", len(line), err)
	}
	if got := ask(t, stuck, stuckR, "echo after"); got != "after" {
		t.Fatalf("got %q", got)
	}
}

func TestRunningConnDeadlinesAndClose(t *testing.T) {
	ln, el := startLoops(t, 1, func(c *Conn) { t.Error("handler called for a running connection") })
	c, client := acceptOne(t, ln, el)
	if c.RemoteAddr().String() != client.LocalAddr().String() || c.LocalAddr().String() != client.RemoteAddr().String() {
		t.Errorf("addresses %v %v, want %v %v", c.LocalAddr(), c.RemoteAddr(), client.RemoteAddr(), client.LocalAddr())
	}
	// A read deadline ends a waiting Read with a timeout error.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	buf := make([]byte, 10)
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past deadline: %v", err)
	}
	// Moving the deadline into the past from another goroutine ends a
	// read waiting without one.
	c.SetReadDeadline(time.Time{})
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.SetReadDeadline(time.Unix(1, 0))
	}()
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read cut short: %v", err)
	}
	c.SetReadDeadline(time.Time{})
	client.Write([]byte("hello"))
	if n, err := c.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	// Close from another goroutine ends a waiting Read.
	go func() {
		time.Sleep(50 * time.Millisecond)
		c.Close()
	}()
	if _, err := c.Read(buf); err == nil {
		t.Fatal("read after Close succeeded")
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := client.Read(buf); err != io.EOF {
		t.Fatalf("client read after Release: %v", err)
	}
}

func TestCloseAndWakeReachParkedConnections(t *testing.T) {
	calls := make(chan error, 10)
	ln, el := startLoops(t, 1, func(c *Conn) {
		var buf [16]byte
		_, err := c.TryRead(buf[:])
		calls <- err
		if err != ErrWouldBlock {
			c.Release()
		}
	})
	c, _ := acceptOne(t, ln, el)
	c.Park()
	c.SetReadDeadline(time.Unix(1, 0)) // a past deadline wakes it
	if err := <-calls; err != ErrWouldBlock {
		t.Fatalf("woken handler read: %v", err)
	}
	c.Close()
	select {
	case err := <-calls:
		if err != io.EOF && !errors.Is(err, net.ErrClosed) {
			t.Fatalf("handler after Close read %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not reach the parked connection's handler")
	}
}

// TestDetachFromAnotherGoroutine detaches a connection whose handler runs
// too long from a timer's goroutine, as the server does for a script past
// busy-reply-threshold: the loop's other connections are served at once,
// and the long handler keeps its connection when it ends.
func TestDetachFromAnotherGoroutine(t *testing.T) {
	release := make(chan struct{})
	var slowOnce sync.Once
	ln, el := startLoops(t, 1, func(c *Conn) {
		var buf [64]byte
		n, err := c.TryRead(buf[:])
		if err == ErrWouldBlock {
			return
		}
		if err != nil {
			c.Release()
			return
		}
		if string(buf[:n]) == "slow\n" {
			slowOnce.Do(func() {
				timer := time.AfterFunc(50*time.Millisecond, func() { c.Detach() })
				defer timer.Stop()
				<-release
			})
		}
		c.Write(buf[:n])
		if c.Running() {
			c.Park()
		}
	})
	go parkAll(t, el)
	s := &lineServer{t: t, ln: ln}
	slow, slowR := dial(t, s)
	fast, fastR := dial(t, s)
	io.WriteString(slow, "slow\n")
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if got := ask(t, fast, fastR, "ping"); got != "ping" {
		t.Fatalf("fast client got %q", got)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("fast client waited %v", d)
	}
	close(release)
	if got, err := slowR.ReadString('\n'); err != nil || got != "slow\n" {
		t.Fatalf("slow client got %q, %v", got, err)
	}
	if got := ask(t, slow, slowR, "again"); got != "again" {
		t.Fatalf("slow client after its handler: %q", got)
	}
}

// TestDeferRunsTheHandlerAgainAfterTheBatch has two connections become
// readable while the loop is busy, so that one wait finds both: each
// handler defers, and both second runs (Again) come after both first runs.
func TestDeferRunsTheHandlerAgainAfterTheBatch(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var calls []string
	names := map[*Conn]string{}
	h := func(c *Conn) {
		if c.Again() {
			mu.Lock()
			calls = append(calls, names[c]+" again")
			mu.Unlock()
			return
		}
		var buf [16]byte
		n, err := c.TryRead(buf[:])
		if err != nil {
			return
		}
		if string(buf[:n]) == "gate" {
			<-release // holds the loop up while the others become readable
			return
		}
		mu.Lock()
		names[c] = string(buf[:n])
		calls = append(calls, names[c])
		mu.Unlock()
		if !c.Defer() {
			t.Error("Defer refused by a connection the loop serves")
		}
	}
	ln, el := startLoops(t, 1, h)
	var clients []net.Conn
	for range 3 {
		c, client := acceptOne(t, ln, el)
		if err := c.Park(); err != nil {
			t.Fatal(err)
		}
		clients = append(clients, client)
	}
	clients[0].Write([]byte("gate"))
	time.Sleep(50 * time.Millisecond) // the loop is in the gate's handler
	clients[1].Write([]byte("a"))
	clients[2].Write([]byte("b"))
	time.Sleep(50 * time.Millisecond)
	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		got := append([]string(nil), calls...)
		mu.Unlock()
		if len(got) == 4 {
			if strings.HasSuffix(got[0], "again") || strings.HasSuffix(got[1], "again") ||
				!strings.HasSuffix(got[2], "again") || !strings.HasSuffix(got[3], "again") || got[2] != got[0]+" again" {
				t.Fatalf("calls %q: want both first runs, then both second runs in the same order", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls %q after 5 s, want 4", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestDeferIsRefusedOffTheLoop: a running connection has no batch to
// join.
func TestDeferIsRefusedOffTheLoop(t *testing.T) {
	ln, el := startLoops(t, 1, func(*Conn) {})
	c, _ := acceptOne(t, ln, el)
	if c.Defer() {
		t.Fatal("Defer accepted for a running connection")
	}
}
