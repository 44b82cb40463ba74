package migrate

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// target is a TCP server that plays a migration target: in "ok" mode it
// answers every command +OK except a RESTORE of the key "busy" (BUSYKEY),
// in "silent" mode it reads and never answers, in "close" mode it closes
// each connection as soon as it accepts it.
type target struct {
	ln       net.Listener
	mode     string
	accepted atomic.Int32
	mu       sync.Mutex
	commands []string // "SELECT 2", "RESTORE k", in arrival order
}

func startTarget(t *testing.T, mode string) *target {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tg := &target{ln: ln, mode: mode}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			tg.accepted.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				tg.serve(nc)
			}()
		}
	}()
	return tg
}

func (tg *target) serve(nc net.Conn) {
	defer nc.Close()
	if tg.mode == "close" {
		return
	}
	r := respclient.NewReader(nc, 0)
	for {
		_, req, err := r.ReadReply(nil)
		if err != nil {
			return
		}
		words := []string{req.Elems[0].Str}
		if len(req.Elems) > 1 {
			words = append(words, req.Elems[1].Str)
		}
		tg.mu.Lock()
		tg.commands = append(tg.commands, strings.Join(words, " "))
		tg.mu.Unlock()
		if tg.mode == "silent" {
			continue
		}
		reply := "+OK\r\n"
		if words[0] == "RESTORE" && words[1] == "busy" {
			reply = "-BUSYKEY Target key name already exists.\r\n"
		}
		if _, err := nc.Write([]byte(reply)); err != nil {
			return
		}
	}
}

func (tg *target) port() string {
	_, port, _ := net.SplitHostPort(tg.ln.Addr().String())
	return port
}

func (tg *target) seen() []string {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return append([]string(nil), tg.commands...)
}

func request(port string, db int64, timeout time.Duration, keys ...string) Request {
	req := Request{Host: "127.0.0.1", Port: port, DB: db, Timeout: timeout}
	for _, k := range keys {
		req.Keys = append(req.Keys, Key{Name: []byte(k), Payload: []byte("payload")})
	}
	return req
}

func TestCachedConnectionIsReusedAndSelectsOnlyOnAChange(t *testing.T) {
	tg := startTarget(t, "ok")
	p := New()
	defer p.Close()
	ctx := context.Background()
	for _, r := range []Request{
		request(tg.port(), 2, time.Second, "k1"),
		request(tg.port(), 2, time.Second, "k2", "k3"),
		request(tg.port(), 3, time.Second, "k4"),
	} {
		if res := p.Migrate(ctx, r); res.IOError != "" || res.TargetError != "" {
			t.Fatalf("migrate %v: %+v", r.Keys, res)
		}
	}
	want := []string{"SELECT 2", "RESTORE k1", "RESTORE k2", "RESTORE k3", "SELECT 3", "RESTORE k4"}
	if got := tg.seen(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("target saw %q, want %q", got, want)
	}
	if n := tg.accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (cached)", n)
	}
	if p.Cached() != 1 {
		t.Errorf("cached %d, want 1", p.Cached())
	}
}

func TestCachedConnectionClosesAfterItsIdleTime(t *testing.T) {
	tg := startTarget(t, "ok")
	p := New()
	p.idleTTL = 50 * time.Millisecond
	defer p.Close()
	p.Migrate(context.Background(), request(tg.port(), 0, time.Second, "k"))
	deadline := time.Now().Add(5 * time.Second)
	for p.Cached() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection was not closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res := p.Migrate(context.Background(), request(tg.port(), 0, time.Second, "k"))
	if res.IOError != "" || tg.accepted.Load() != 2 {
		t.Fatalf("after the idle close: %+v, %d connections, want a new one", res, tg.accepted.Load())
	}
	// A new connection selects again.
	if got := tg.seen(); len(got) != 4 || got[2] != "SELECT 0" {
		t.Errorf("target saw %q", got)
	}
}

func TestTargetErrorsLeaveTheirKeysUnaccepted(t *testing.T) {
	tg := startTarget(t, "ok")
	p := New()
	defer p.Close()
	res := p.Migrate(context.Background(), request(tg.port(), 0, time.Second, "a", "busy", "c"))
	if res.TargetError != "BUSYKEY Target key name already exists." || res.IOError != "" {
		t.Fatalf("result %+v", res)
	}
	if want := []bool{true, false, true}; len(res.Accepted) != 3 || res.Accepted[0] != want[0] || res.Accepted[1] != want[1] || res.Accepted[2] != want[2] {
		t.Errorf("accepted %v, want %v", res.Accepted, want)
	}
}

func TestSilentTargetTimesOutReadingWithoutRetry(t *testing.T) {
	tg := startTarget(t, "silent")
	p := New()
	defer p.Close()
	start := time.Now()
	res := p.Migrate(context.Background(), request(tg.port(), 0, 100*time.Millisecond, "k"))
	if res.IOError != errReading {
		t.Fatalf("result %+v, want %q", res, errReading)
	}
	if n := tg.accepted.Load(); n != 1 {
		t.Errorf("%d connections: a timeout must not be retried", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v with a 100 ms timeout", d)
	}
	if p.Cached() != 0 {
		t.Error("a failed connection stayed cached")
	}
}

func TestBrokenConnectionIsRetriedOnce(t *testing.T) {
	tg := startTarget(t, "close")
	p := New()
	defer p.Close()
	res := p.Migrate(context.Background(), request(tg.port(), 0, time.Second, "k"))
	if res.IOError != errReading && res.IOError != errWriting {
		t.Fatalf("result %+v, want an IOERR", res)
	}
	if n := tg.accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (one retry)", n)
	}
}

func TestUnreachableTargets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	p := New()
	defer p.Close()
	ctx := context.Background()
	if res := p.Migrate(ctx, request(closedPort, 0, time.Second, "k")); res.IOError != errWriting {
		t.Errorf("refused: %+v, want %q", res, errWriting)
	}
	req := request(closedPort, 0, time.Second, "k")
	req.Host = "nosuch.invalid"
	if res := p.Migrate(ctx, req); res.IOError != errConnecting {
		t.Errorf("unresolvable: %+v, want %q", res, errConnecting)
	}
	p.Close()
	tg := startTarget(t, "ok")
	if res := p.Migrate(ctx, request(tg.port(), 0, time.Second, "k")); res.IOError != errConnecting {
		t.Errorf("closed pool: %+v, want %q", res, errConnecting)
	}
}

func TestContextEndInterruptsTheExchange(t *testing.T) {
	tg := startTarget(t, "silent")
	p := New()
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	res := p.Migrate(ctx, request(tg.port(), 0, time.Minute, "k"))
	if res.IOError != errReading {
		t.Fatalf("result %+v, want %q", res, errReading)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v: the context's end did not interrupt the read", d)
	}
}
