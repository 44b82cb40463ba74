package server

import (
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
