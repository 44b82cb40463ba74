package tests

// Server limits (maxclients, maxmemory, requirepass) and how the process
// ends (SIGTERM, SHUTDOWN).

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestMaxClientsRefusesTheEleventhConnection starts the server with
// --maxclients 10: ten connections work, the eleventh gets Redis's error
// and is closed, and a slot freed by a client is reused.
func TestMaxClientsRefusesTheEleventhConnection(t *testing.T) {
	t.Parallel()
	const maxClients = 10
	s := startKVServer(t, "--maxclients", strconv.Itoa(maxClients))
	const full = "-ERR max number of clients reached\r\n"

	// openClient connects and PINGs. The harness's readiness probe may
	// still hold a slot for a moment after it closed, so a refusal is
	// retried for a while.
	openClient := func(i int) *rawClient {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for {
			c := dialRaw(t, s.Addr)
			raw, err := c.Call("PING")
			if err == nil && string(raw) == "+PONG\r\n" {
				return c
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatalf("connection %d of %d: PING = %q, %v", i+1, maxClients, raw, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	clients := make([]*rawClient, maxClients)
	for i := range clients {
		clients[i] = openClient(i)
	}

	extra := dialRaw(t, s.Addr)
	raw, err := extra.ReadReply()
	if err != nil || string(raw) != full {
		t.Fatalf("connection %d: got %q, %v; want %q without sending anything", maxClients+1, raw, err, full)
	}
	expectClosedConn(t, extra)

	// The ten admitted clients are unaffected.
	for i, c := range clients {
		checkReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("mc:%d", i), "v")
	}

	// Closing one frees a slot.
	clients[0].Close()
	c := openClient(maxClients)
	checkReply(t, c, ":10\r\n", "DBSIZE")
}

// TestMaxMemoryDemotesInsteadOfFailing writes 40 MiB of 256 KiB values into
// a server limited to 8 MiB: every write succeeds, memory stays within the
// bound because cold keys move to the disk tier, and every key stays
// readable (Redis would have evicted most of them).
func TestMaxMemoryDemotesInsteadOfFailing(t *testing.T) {
	t.Parallel()
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	s := startKVServer(t, "--maxmemory", "8mb")
	c := dialRaw(t, s.Addr)

	const valueSize, total = 256 << 10, 40 << 20
	const n = total / valueSize
	for i := range n {
		expectReply(t, c, "+OK\r\n", "SET", fmt.Sprintf("mm:%03d", i), string(randomBytes(uint64(i), valueSize)))
	}
	mem, err := infoFields(c, "memory")
	if err != nil {
		t.Fatalf("INFO memory: %v", err)
	}
	if mem["maxmemory"] != strconv.Itoa(8<<20) {
		t.Errorf("INFO memory maxmemory = %q, want %d", mem["maxmemory"], 8<<20)
	}
	if used, err := strconv.ParseInt(mem["used_memory"], 10, 64); err != nil || used <= 0 || used > 8<<20 {
		t.Errorf("INFO memory used_memory = %q, want 1..%d", mem["used_memory"], 8<<20)
	}
	for i := range n {
		checkReply(t, c, bulk(string(randomBytes(uint64(i), valueSize))), "GET", fmt.Sprintf("mm:%03d", i))
	}
	checkReply(t, c, fmt.Sprintf(":%d\r\n", n), "DBSIZE")
	tiers, err := infoFields(c, "tiers")
	if err != nil {
		t.Fatalf("INFO tiers: %v", err)
	}
	if d, _ := strconv.Atoi(tiers["tier_disk_keys"]); d <= 0 {
		t.Errorf("INFO tiers tier_disk_keys = %q, want > 0", tiers["tier_disk_keys"])
	}
	if d, _ := strconv.Atoi(tiers["tier_memory_demotions"]); d <= 0 {
		t.Errorf("INFO tiers tier_memory_demotions = %q, want > 0", tiers["tier_memory_demotions"])
	}
	stats, err := infoFields(c, "stats")
	if err != nil {
		t.Fatalf("INFO stats: %v", err)
	}
	if stats["evicted_keys"] != "0" {
		t.Errorf("INFO stats evicted_keys = %q, want 0: nothing may be dropped while the disk has room", stats["evicted_keys"])
	}
}

// TestRequirePass starts the server with --requirepass: commands need AUTH
// first, with Redis's exact errors.
func TestRequirePass(t *testing.T) {
	t.Parallel()
	s := startOwnedServer(t, harnessStops, "--requirepass", "secret")

	t.Run("AUTH", func(t *testing.T) {
		c := dialRaw(t, s.Addr)
		checkReply(t, c, "-NOAUTH Authentication required.\r\n", "GET", "k")
		checkReply(t, c, "-NOAUTH Authentication required.\r\n", "PING")
		checkReply(t, c, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "AUTH", "wrong")
		checkReply(t, c, "-NOAUTH Authentication required.\r\n", "SET", "k", "v")
		checkReply(t, c, "+OK\r\n", "AUTH", "secret")
		checkReply(t, c, "$-1\r\n", "GET", "k")
		checkReply(t, c, "+OK\r\n", "SET", "k", "v")
		checkReply(t, c, "$1\r\nv\r\n", "GET", "k")
		checkReply(t, c, "+OK\r\n", "AUTH", "default", "secret")
	})

	t.Run("HELLO 3 AUTH", func(t *testing.T) {
		c := dialRaw(t, s.Addr)
		checkReply(t, c, "-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n", "HELLO", "3")
		checkReply(t, c, "-WRONGPASS invalid username-password pair or user is disabled.\r\n", "HELLO", "3", "AUTH", "default", "wrong")
		raw := c.Do("HELLO", "3", "AUTH", "default", "secret")
		if r, err := parseReply(raw); err != nil || r.Type != '%' {
			t.Fatalf("HELLO 3 AUTH default secret = %s, want a map", quoteTrunc(raw))
		}
		checkReply(t, c, "$1\r\nv\r\n", "GET", "k")
	})

	t.Run("unauthenticated clients get small request limits", func(t *testing.T) {
		// Redis refuses big requests before AUTH, so that a client without
		// the password cannot make the server buffer much.
		c := dialRaw(t, s.Addr)
		c.Timeout = 2 * time.Second
		c.Send([]byte("*11\r\n"))
		if raw, err := c.ReadReply(); err != nil || string(raw) != protocolErr("unauthenticated multibulk length") {
			t.Errorf("*11 before AUTH = %q, %v; want %q", raw, err, protocolErr("unauthenticated multibulk length"))
		} else {
			expectClosedConn(t, c)
		}
		c = dialRaw(t, s.Addr)
		c.Timeout = 2 * time.Second
		c.Send([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$16385\r\n"))
		if raw, err := c.ReadReply(); err != nil || string(raw) != protocolErr("unauthenticated bulk length") {
			t.Errorf("a 16385-byte bulk before AUTH = %q, %v; want %q", raw, err, protocolErr("unauthenticated bulk length"))
		} else {
			expectClosedConn(t, c)
		}
	})
}

// TestSIGTERMStopsCleanly sends SIGTERM to a server with a client
// connected: the process exits with status 0 and the client sees the
// connection closed.
func TestSIGTERMStopsCleanly(t *testing.T) {
	t.Parallel()
	s := startOwnedServer(t, testStops)
	c := dialRaw(t, s.Addr)
	expectReply(t, c, "+OK\r\n", "SET", "k", "v")
	if err := s.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	if err := waitExit(t, s, stopTimeout); err != nil {
		t.Errorf("after SIGTERM the process ended with %v, want exit status 0", err)
	}
	expectClosedConn(t, c)
}

// TestShutdownCommandStopsServer runs SHUTDOWN: like Redis, the server
// closes the connection without a reply and the process exits with
// status 0.
func TestShutdownCommandStopsServer(t *testing.T) {
	t.Parallel()
	s := startOwnedServer(t, testStops)
	c := dialRaw(t, s.Addr)
	other := dialRaw(t, s.Addr)
	expectReply(t, c, "+OK\r\n", "SET", "k", "v")
	c.Send(encodeCommand([]string{"SHUTDOWN"}))
	expectClosedConn(t, c)
	if err := waitExit(t, s, stopTimeout); err != nil {
		t.Errorf("after SHUTDOWN the process ended with %v, want exit status 0", err)
	}
	expectClosedConn(t, other)
}
