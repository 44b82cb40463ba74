package tests

import (
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// heldTarget is a migration target that answers SELECT at once and each
// RESTORE only after release is closed, telling restoring when the first
// RESTORE arrived: a target that is slow to answer.
type heldTarget struct {
	port      int
	restoring chan struct{}
	release   chan struct{}
}

func startHeldTarget(t *testing.T) *heldTarget {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &heldTarget{port: ln.Addr().(*net.TCPAddr).Port, restoring: make(chan struct{}), release: make(chan struct{})}
	var once sync.Once
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close() // the server caches its connection for 10 s
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				r := respclient.NewReader(nc, 0)
				for {
					_, req, err := r.ReadReply(nil)
					if err != nil {
						return
					}
					if req.Elems[0].Str == "RESTORE" {
						once.Do(func() { close(h.restoring) })
						select {
						case <-h.release:
						case <-time.After(time.Minute):
							return
						}
					}
					if _, err := nc.Write([]byte("+OK\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return h
}

// migrateHeld writes "changed" and "same", starts a MIGRATE of both to a
// held target and returns, once the target has the RESTORE, a second client
// and finish, which lets the target answer and checks that MIGRATE answered
// OK, that "changed" (which the test rewrites to "new" meanwhile) kept the
// newer value, and that the unchanged "same" was migrated away.
func migrateHeld(t *testing.T) (c2 *rawClient, finish func()) {
	t.Helper()
	kv := startKVServer(t)
	target := startHeldTarget(t)
	port := strconv.Itoa(target.port)
	c1 := dialRaw(t, kv.Addr)
	c2 = dialRaw(t, kv.Addr)
	c1.Do("SET", "changed", "old")
	c1.Do("SET", "same", "v")
	reply := make(chan string, 1)
	go func() {
		r, err := c1.Call("MIGRATE", "127.0.0.1", port, "", "0", "20000", "KEYS", "changed", "same")
		if err != nil {
			r = []byte(err.Error())
		}
		reply <- string(r)
	}()
	select {
	case <-target.restoring:
	case <-time.After(20 * time.Second):
		t.Fatal("the target got no RESTORE")
	}
	var once sync.Once
	return c2, func() {
		t.Helper()
		once.Do(func() { close(target.release) })
		if r := <-reply; r != "+OK\r\n" {
			t.Fatalf("MIGRATE = %q", r)
		}
		if r := string(c2.Do("GET", "changed")); r != "$3\r\nnew\r\n" {
			t.Errorf("the key written during MIGRATE: GET = %q, want the new value kept", r)
		}
		if r := string(c2.Do("EXISTS", "same")); r != ":0\r\n" {
			t.Errorf("the unchanged key: EXISTS = %q, want it migrated away", r)
		}
	}
}

// TestMigrateWaitsForTheTargetWithoutHoldingTheKeyspace: while a target
// is slow to answer MIGRATE's RESTORE, other clients read and write (the
// engine lock is not held across the network exchange), and a key written
// meanwhile is not deleted when the target then accepts the older value,
// while an unchanged one is.
func TestMigrateWaitsForTheTargetWithoutHoldingTheKeyspace(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("redis-server blocks every client during MIGRATE")
	}
	t.Parallel()
	c2, finish := migrateHeld(t)
	start := time.Now()
	if r := string(c2.Do("SET", "changed", "new")); r != "+OK\r\n" {
		t.Fatalf("SET during MIGRATE = %q", r)
	}
	if r := string(c2.Do("GET", "same")); r != "$1\r\nv\r\n" {
		t.Fatalf("GET during MIGRATE = %q", r)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("SET and GET took %v while MIGRATE waited for its target", d)
	}
	finish()
}

// TestMigrateWaitingForItsTargetHoldsUpNoExecAndNoScript: an EXEC and a
// script, which run alone (Server.exclusive held for writing), run while
// MIGRATE waits for a slow target: MIGRATE lets the lock it holds shared
// go for its network exchange, as a blocked BLPOP does. They waited for
// the target before. A key the EXEC changed stays, as after a plain SET.
func TestMigrateWaitingForItsTargetHoldsUpNoExecAndNoScript(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("redis-server blocks every client during MIGRATE")
	}
	t.Parallel()
	c2, finish := migrateHeld(t)
	got := make(chan string, 1)
	go func() {
		var out []byte
		for _, cmd := range [][]string{{"MULTI"}, {"SET", "changed", "new"}, {"EXEC"},
			{"EVAL", "return redis.call('GET', KEYS[1])", "1", "same"}} {
			r, err := c2.Call(cmd...)
			if err != nil {
				got <- err.Error()
				return
			}
			out = append(out, r...)
		}
		got <- string(out)
	}()
	const want = "+OK\r\n+QUEUED\r\n*1\r\n+OK\r\n$1\r\nv\r\n"
	select {
	case r := <-got:
		if r != want {
			t.Errorf("MULTI, SET, EXEC, EVAL during MIGRATE = %q, want %q", r, want)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("EXEC and EVAL still wait for MIGRATE's target after 10 s")
		finish()
		<-got
		return
	}
	finish()
}
