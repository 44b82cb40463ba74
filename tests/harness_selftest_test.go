package tests

import (
	"testing"
)

// TestParseReplyRejectsMalformedInput checks that a broken reply, or one
// followed by more bytes, is an error rather than a silent partial match.
// (respclient's tests cover the reply reader itself.)
func TestParseReplyRejectsMalformedInput(t *testing.T) {
	for _, raw := range []string{
		"",
		"+OK\n",
		"$5\r\nab\r\n",
		"$3\r\nabcd\r\n",
		"*2\r\n:1\r\n",
		":x\r\n",
		"?1\r\n",
		"#x\r\n",
		"_x\r\n",
		"%-1\r\n",
		"+OK\r\n+extra\r\n",
	} {
		if r, err := parseReply([]byte(raw)); err == nil {
			t.Errorf("parseReply(%q) = %+v, want an error", raw, r)
		}
	}
}

// TestServerRestartKeepsPortAndDirectory checks the harness's Terminate and
// Restart on a redis-server: the restarted process answers on the same
// address and the end-of-test clean-up accepts a deliberate stop.
func TestServerRestartKeepsPortAndDirectory(t *testing.T) {
	t.Parallel()
	s := startRedis(t)
	addr, dir := s.Addr, s.Dir
	if got := string(dialRaw(t, s.Addr).Do("PING")); got != "+PONG\r\n" {
		t.Fatalf("PING = %q", got)
	}
	s.Restart(t)
	if s.Addr != addr || s.Dir != dir {
		t.Fatalf("after Restart: addr %s dir %s, want %s %s", s.Addr, s.Dir, addr, dir)
	}
	if got := string(dialRaw(t, s.Addr).Do("PING")); got != "+PONG\r\n" {
		t.Fatalf("PING after Restart = %q", got)
	}
	s.Terminate(t)
}
