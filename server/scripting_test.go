package server

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestScriptsRunAlone checks that no other client's command runs between
// the commands of a script: scripts incrementing a counter twice always
// see consecutive values while other clients increment it too.
func TestScriptsRunAlone(t *testing.T) {
	as := startAdminServer(t, Options{})
	const script = "local a = redis.call('incr', KEYS[1]); local b = redis.call('incr', KEYS[1]); return b - a"
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := as.dial(t)
			for range 200 {
				if i%2 == 0 {
					if got := c.do("EVAL", script, "1", "n"); got != ":1\r\n" {
						errs <- "EVAL = " + got
						return
					}
				} else if got := c.do("INCR", "n"); !strings.HasPrefix(got, ":") {
					errs <- "INCR = " + got
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := as.dial(t).do("GET", "n"); got != "$4\r\n1200\r\n" {
		t.Errorf("counter = %q, want 1200 (2 x 200 scripts adding 2, 2 x 200 INCRs)", got)
	}
}

// TestBusyScriptIsKilled runs a script past busy-reply-threshold: other
// clients get BUSY, FUNCTION STATS too (an EVAL runs), SCRIPT KILL stops
// it and its caller gets Redis's error, after which commands run again.
func TestBusyScriptIsKilled(t *testing.T) {
	as := startAdminServer(t, Options{})
	a, b := as.dial(t), as.dial(t)
	if got := b.do("CONFIG", "SET", "busy-reply-threshold", "50"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET = %q", got)
	}
	a.send("EVAL", "local n = 0 while true do n = n + 1 end", "0")
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := b.do("PING")
		if got == "-"+errBusyScript+"\r\n" {
			break
		}
		if got != "+PONG\r\n" || time.Now().After(deadline) {
			t.Fatalf("PING while the script runs = %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := b.do("FUNCTION", "STATS"); got != "-"+errBusyScript+"\r\n" {
		t.Errorf("FUNCTION STATS = %q", got)
	}
	if got := b.do("FUNCTION", "KILL"); got != "-"+errBusyScript+"\r\n" {
		t.Errorf("FUNCTION KILL of an EVAL = %q", got)
	}
	if got := b.do("SCRIPT", "KILL"); got != "+OK\r\n" {
		t.Errorf("SCRIPT KILL = %q", got)
	}
	got, err := a.reply()
	if err != nil || !strings.HasPrefix(got, "-ERR Script killed by user with SCRIPT KILL... script: ") {
		t.Errorf("killed script's reply = %q, %v", got, err)
	}
	if got := b.do("SCRIPT", "KILL"); got != "-NOTBUSY No scripts in execution right now.\r\n" {
		t.Errorf("SCRIPT KILL after = %q", got)
	}
	if got := a.do("EVAL", "return 'again'", "0"); got != "$5\r\nagain\r\n" {
		t.Errorf("EVAL after the kill = %q", got)
	}
}

// TestScriptCommandsKeepTheirValues checks that what a script's command
// stores is its own: the arguments of redis.call live in a buffer the next
// call reuses, so a value kept without a copy would change under it.
func TestScriptCommandsKeepTheirValues(t *testing.T) {
	c := startAdminServer(t, Options{}).dial(t)
	const script = "redis.call('set', KEYS[1], ARGV[1]) redis.call('rpush', KEYS[2], ARGV[2], 12.5) " +
		"redis.call('set', 'other', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx') " +
		"return {redis.call('get', KEYS[1]), redis.call('lrange', KEYS[2], 0, -1)}"
	want := "*2\r\n$5\r\nvalue\r\n*2\r\n$4\r\nelem\r\n$4\r\n12.5\r\n"
	if got := c.do("EVAL", script, "2", "k", "l", "value", "elem"); got != want {
		t.Errorf("EVAL = %q, want %q", got, want)
	}
	if got := c.do("GET", "k"); got != "$5\r\nvalue\r\n" {
		t.Errorf("GET k = %q", got)
	}
}

// TestPipelinedScriptsLetOthersRun checks the lock a client keeps between
// its pipelined scripts: other clients run between the client's batches,
// and not at all while a script runs; and a client whose next command has
// only partly arrived does not hold the others up while it waits for the
// rest.
func TestPipelinedScriptsLetOthersRun(t *testing.T) {
	as := startAdminServer(t, Options{})
	a, b := as.dial(t), as.dial(t)
	const script = "local a = redis.call('incr', KEYS[1]); local b = redis.call('incr', KEYS[1]); return b - a"
	var req strings.Builder
	for range 50 {
		req.WriteString("*4\r\n$4\r\nEVAL\r\n$" + strconv.Itoa(len(script)) + "\r\n" + script + "\r\n$1\r\n1\r\n$1\r\nn\r\n")
	}
	// A pipeline of scripts, then the first bytes of a GET.
	if _, err := io.WriteString(a.conn, req.String()+"*2\r\n$3\r\nGET\r\n"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if got, err := a.reply(); got != ":1\r\n" || err != nil {
			t.Fatalf("script %d = %q, %v", i, got, err)
		}
	}
	done := make(chan string, 1)
	go func() {
		b.send("INCR", "n")
		got, _ := b.reply()
		done <- got
	}()
	select {
	case got := <-done:
		if got != ":101\r\n" {
			t.Errorf("INCR from another client = %q, want :101", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("another client's INCR waited for the rest of a pipelined command")
	}
	if _, err := io.WriteString(a.conn, "$1\r\nn\r\n"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.reply(); got != "$3\r\n101\r\n" || err != nil {
		t.Errorf("GET after the scripts = %q, %v", got, err)
	}
}

// TestPipelinedScriptsServeBlockedClients checks that a client served
// after a script's push (serveBlocked) is served under the lock the
// script's client kept for its next pipelined script, without waiting for
// it.
func TestPipelinedScriptsServeBlockedClients(t *testing.T) {
	as := startAdminServer(t, Options{})
	a, b := as.dial(t), as.dial(t)
	a.send("BLPOP", "q", "5")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(b.do("CLIENT", "LIST"), "cmd=blpop") {
		if time.Now().After(deadline) {
			t.Fatal("BLPOP never blocked")
		}
		time.Sleep(5 * time.Millisecond)
	}
	const script = "return redis.call('rpush', KEYS[1], ARGV[1])"
	eval := "*5\r\n$4\r\nEVAL\r\n$" + strconv.Itoa(len(script)) + "\r\n" + script + "\r\n$1\r\n1\r\n$1\r\nq\r\n$1\r\nx\r\n"
	if _, err := io.WriteString(b.conn, eval+eval); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{":1\r\n", ":1\r\n"} {
		if got, err := b.reply(); got != want || err != nil {
			t.Errorf("script %d = %q, %v, want %q", i, got, err, want)
		}
	}
	if got, err := a.reply(); got != "*2\r\n$1\r\nq\r\n$1\r\nx\r\n" || err != nil {
		t.Errorf("BLPOP = %q, %v", got, err)
	}
	if got := b.do("LLEN", "q"); got != ":1\r\n" {
		t.Errorf("LLEN q = %q, want 1", got)
	}
}

// BenchmarkEvalSHA runs EVALSHA of kvbench's lock-extend script (GET,
// compare, PEXPIRE) through a real connection and the real dispatch, 64
// calls a batch: the server side of issue 15's comparison.
func BenchmarkEvalSHA(b *testing.B) {
	as := startAdminServer(b, Options{})
	c := as.dial(b)
	const script = "local v = redis.call('get', KEYS[1])\nif v == ARGV[1] then\n  return redis.call('pexpire', KEYS[1], ARGV[2])\nend\nreturn 0"
	sha := c.do("SCRIPT", "LOAD", script)
	sha = strings.TrimSuffix(sha[strings.IndexByte(sha, '\n')+1:], "\r\n")
	if got := c.do("SET", "lock", "token"); got != "+OK\r\n" {
		b.Fatalf("SET = %q", got)
	}
	const batch = 64
	req := strings.Repeat("*6\r\n$7\r\nEVALSHA\r\n$40\r\n"+sha+"\r\n$1\r\n1\r\n$4\r\nlock\r\n$5\r\ntoken\r\n$5\r\n60000\r\n", batch)
	benchRoundTrips(b, c, req, strings.Repeat(":1\r\n", batch), batch)
}
