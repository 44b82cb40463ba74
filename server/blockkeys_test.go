package server

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedCount reads INFO's blocked_clients.
func blockedCount(t *testing.T, ac *adminConn) string {
	_, fields := infoFields(verbatimBody(t, ac.do("INFO", "clients")))
	return fields["blocked_clients"]
}

// waitBlocked waits until INFO reports n blocked clients.
func waitBlocked(t *testing.T, ac *adminConn, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for blockedCount(t, ac) != fmt.Sprint(n) {
		if time.Now().After(deadline) {
			t.Fatalf("blocked_clients stayed %s, want %d", blockedCount(t, ac), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBlockedClientsLetTransactionsRunAndAreServedAfterExec(t *testing.T) {
	as := startAdminServer(t, Options{})
	waiter, other := as.dial(t), as.dial(t)
	waiter.send("BLPOP", "q", "0")
	waitBlocked(t, other, 1)
	// EXEC takes Server.exclusive for writing: the blocked BLPOP must not
	// hold it.
	for _, cmd := range [][]string{{"MULTI"}, {"RPUSH", "q", "a", "b"}, {"LPOP", "q"}, {"EXEC"}} {
		other.do(cmd...)
	}
	if got, err := waiter.reply(); err != nil || got != "*2\r\n$1\r\nq\r\n$1\r\nb\r\n" {
		t.Fatalf("BLPOP after EXEC = %q, %v", got, err)
	}
	waitBlocked(t, other, 0)
}

func TestBlockedClientsGetEveryElementOnceUnderConcurrentPushes(t *testing.T) {
	as := startAdminServer(t, Options{})
	const consumers, producers, each = 6, 3, 40
	var mu sync.Mutex
	var got []string
	var wg sync.WaitGroup
	for i := 0; i < consumers; i++ {
		c := as.dial(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c.send("BRPOP", "k1", "k2", "5")
				r, err := c.reply()
				if err != nil || !strings.HasPrefix(r, "*2\r\n") {
					t.Errorf("BRPOP = %q, %v", r, err)
					return
				}
				v := r[strings.LastIndex(r[:len(r)-2], "\n")+1 : len(r)-2]
				if v == "stop" {
					return
				}
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		}()
	}
	var pw sync.WaitGroup
	for p := 0; p < producers; p++ {
		c := as.dial(t)
		pw.Add(1)
		go func() {
			defer pw.Done()
			for j := 0; j < each; j++ {
				key := fmt.Sprint("k", 1+j%2)
				if p == 0 {
					c.do("MULTI")
					c.do("LPUSH", key, fmt.Sprintf("p%d-%d", p, j))
					c.do("EXEC")
				} else {
					c.do("LPUSH", key, fmt.Sprintf("p%d-%d", p, j))
				}
			}
		}()
	}
	pw.Wait()
	ctl := as.dial(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == producers*each || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < consumers; i++ {
		ctl.do("RPUSH", "k1", "stop")
	}
	wg.Wait()
	sort.Strings(got)
	if len(got) != producers*each {
		t.Fatalf("%d elements delivered, want %d", len(got), producers*each)
	}
	for i := 1; i < len(got); i++ {
		if got[i] == got[i-1] {
			t.Fatalf("%s delivered twice", got[i])
		}
	}
}

func TestBlockedClientThatDisconnectsIsReleased(t *testing.T) {
	as := startAdminServer(t, Options{})
	gone, ctl := as.dial(t), as.dial(t)
	gone.send("BLMPOP", "0", "1", "k", "LEFT")
	waitBlocked(t, ctl, 1)
	gone.conn.Close()
	waitBlocked(t, ctl, 0)
	if got := ctl.do("RPUSH", "k", "v"); got != ":1\r\n" {
		t.Fatalf("RPUSH = %q", got)
	}
	if got := ctl.do("LLEN", "k"); got != ":1\r\n" {
		t.Fatalf("the element went to a disconnected client: LLEN %q", got)
	}
}

func TestBlockingTimeoutExpires(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	start := time.Now()
	if got := c.do("BLPOP", "k", "0.05"); got != "*-1\r\n" {
		t.Fatalf("BLPOP = %q", got)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Fatalf("BLPOP returned after %v", took)
	}
	waitBlocked(t, c, 0)
}
