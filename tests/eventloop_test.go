package tests

import (
	"strings"
	"testing"
	"time"
)

// TestOneEventLoopIsNeverHeldUp runs, with the default single event loop
// (io-threads 1), every kind of client that must leave the loop next to a
// plain one, and checks the plain client is answered promptly throughout:
// a client that never reads 40 MiB of replies, one blocked in BLPOP, one
// that sent half a command, one that sends a 1 MiB value slowly, one
// paused by CLIENT PAUSE... and that each of them is served correctly
// once it goes on.
func TestOneEventLoopIsNeverHeldUp(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("io-threads and the event loop are kvserver's")
	}
	t.Parallel()
	s := startKVServer(t, "--io-threads", "1")
	plain := dialRaw(t, s.Addr)
	prompt := func(when string) {
		t.Helper()
		start := time.Now()
		for range 20 {
			expectReply(t, plain, "+PONG\r\n", "PING")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s: 20 PINGs took %v", when, d)
		}
	}
	expectReply(t, plain, "*2\r\n$10\r\nio-threads\r\n$1\r\n1\r\n", "CONFIG", "GET", "io-threads")
	big := strings.Repeat("v", 1<<20)
	expectReply(t, plain, "+OK\r\n", "SET", "big", big)

	// A client that asks for 40 MiB and reads none of it.
	stalled := dialRaw(t, s.Addr)
	var pipeline []byte
	for range 40 {
		pipeline = append(pipeline, encodeCommand([]string{"GET", "big"})...)
	}
	stalled.Send(pipeline)
	time.Sleep(200 * time.Millisecond)
	prompt("beside a client that does not read")

	// A client blocked on a list.
	blocked := dialRaw(t, s.Addr)
	blocked.Timeout = 10 * time.Second
	blocked.Send(encodeCommand([]string{"BLPOP", "queue", "0"}))
	// Half a command.
	half := dialRaw(t, s.Addr)
	cmd := encodeCommand([]string{"SET", "halfkey", "halfvalue"})
	half.Send(cmd[:len(cmd)/2])
	// A large value sent in pieces.
	slow := dialRaw(t, s.Addr)
	slowCmd := encodeCommand([]string{"SET", "slowkey", big})
	slow.Send(slowCmd[:100000])
	time.Sleep(100 * time.Millisecond)
	prompt("beside a blocked client, half a command and half a large value")

	expectReply(t, plain, ":1\r\n", "LPUSH", "queue", "job")
	if raw, err := blocked.ReadReply(); err != nil || string(raw) != "*2\r\n$5\r\nqueue\r\n$3\r\njob\r\n" {
		t.Fatalf("BLPOP answered %q, %v", raw, err)
	}
	half.Send(cmd[len(cmd)/2:])
	if raw, err := half.ReadReply(); err != nil || string(raw) != "+OK\r\n" {
		t.Fatalf("the completed half command answered %q, %v", raw, err)
	}
	slow.Send(slowCmd[100000:])
	if raw, err := slow.ReadReply(); err != nil || string(raw) != "+OK\r\n" {
		t.Fatalf("the slow large SET answered %q, %v", raw, err)
	}
	// Each is back on the loop and served there.
	for _, c := range []*rawClient{blocked, half, slow} {
		expectReply(t, c, "$9\r\nhalfvalue\r\n", "GET", "halfkey")
	}

	// CLIENT PAUSE holds writes of every client, not reads of others.
	pauser := dialRaw(t, s.Addr)
	expectReply(t, pauser, "+OK\r\n", "CLIENT", "PAUSE", "300", "WRITE")
	writer := dialRaw(t, s.Addr)
	writer.Timeout = 5 * time.Second
	start := time.Now()
	writer.Send(encodeCommand([]string{"SET", "paused", "1"}))
	prompt("during CLIENT PAUSE WRITE")
	if raw, err := writer.ReadReply(); err != nil || string(raw) != "+OK\r\n" {
		t.Fatalf("paused SET answered %q, %v", raw, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("paused SET answered after %v, before the pause ended", d)
	}

	// The stalled client still gets every byte once it reads.
	stalled.Timeout = 20 * time.Second
	for i := range 40 {
		raw, err := stalled.ReadReply()
		if err != nil || len(raw) != len(big)+len("$1048576\r\n\r\n") {
			t.Fatalf("reply %d to the stalled client: %d bytes, %v", i, len(raw), err)
		}
	}
	expectReply(t, stalled, "+PONG\r\n", "PING")

	// CLIENT KILL reaches a parked client.
	idle := dialRaw(t, s.Addr)
	expectReply(t, idle, "+OK\r\n", "CLIENT", "SETNAME", "idle")
	list := string(plain.Do("CLIENT", "LIST"))
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, "name=idle ") {
			id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
			expectReply(t, plain, ":1\r\n", "CLIENT", "KILL", "ID", id)
		}
	}
	expectClosedConn(t, idle)
}

// TestIdleTimeoutClosesParkedConnections sets CONFIG SET timeout and
// checks that an idle connection, parked on its event loop, is closed
// within a couple of seconds of the timeout, while a busy one stays.
func TestIdleTimeoutClosesParkedConnections(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("timing of kvserver's idle sweep")
	}
	t.Parallel()
	s := startKVServer(t)
	busy := dialRaw(t, s.Addr)
	expectReply(t, busy, "+OK\r\n", "CONFIG", "SET", "timeout", "1")
	idle := dialRaw(t, s.Addr)
	expectReply(t, idle, "+PONG\r\n", "PING")
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		expectReply(t, busy, "+PONG\r\n", "PING")
		time.Sleep(200 * time.Millisecond)
	}
	expectClosedConn(t, idle)
	expectReply(t, busy, "+PONG\r\n", "PING")
}

// TestClientKillIsDoneWhenItAnswers: once CLIENT KILL has answered, the
// killed client is gone for everyone, as Redis frees it at once: absent
// from CLIENT LIST, no longer a subscriber. Its connection may be served
// by another event loop, which ends it a moment later (2 of 300 were still
// listed before).
func TestClientKillIsDoneWhenItAnswers(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	killer := dialRaw(t, s.Addr)
	for i := range 200 {
		victim := dialRaw(t, s.Addr)
		id := strings.TrimSuffix(strings.TrimPrefix(string(victim.Do("CLIENT", "ID")), ":"), "\r\n")
		expectReply(t, victim, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n", "SUBSCRIBE", "ch")
		expectReply(t, killer, ":1\r\n", "CLIENT", "KILL", "ID", id)
		if list := string(killer.Do("CLIENT", "LIST")); strings.Contains(list, "id="+id+" ") {
			t.Fatalf("kill %d: client %s still in CLIENT LIST after CLIENT KILL answered:\n%s", i, id, list)
		}
		expectReply(t, killer, ":0\r\n", "PUBLISH", "ch", "x")
		victim.Close()
	}
}
