package tests

import (
	"bufio"
	"strings"
	"testing"
)

// TestReadReplyFindsTheExtentOfEveryRESPType checks that the raw client
// reads exactly one reply of every RESP2 and RESP3 type, no more and no
// less, so that byte-for-byte comparisons never straddle two replies.
func TestReadReplyFindsTheExtentOfEveryRESPType(t *testing.T) {
	tests := []struct {
		name  string
		reply string
	}{
		{"simple string", "+OK\r\n"},
		{"error", "-ERR wrong number of arguments for 'get' command\r\n"},
		{"integer", ":-42\r\n"},
		{"bulk", "$5\r\nhello\r\n"},
		{"bulk with CRLF inside", "$4\r\na\r\nb\r\n"},
		{"empty bulk", "$0\r\n\r\n"},
		{"null bulk", "$-1\r\n"},
		{"null array", "*-1\r\n"},
		{"empty array", "*0\r\n"},
		{"nested array", "*2\r\n*1\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n"},
		{"resp3 null", "_\r\n"},
		{"double", ",3.14\r\n"},
		{"double inf", ",inf\r\n"},
		{"boolean", "#t\r\n"},
		{"blob error", "!21\r\nSYNTAX invalid syntax\r\n"},
		{"verbatim", "=15\r\ntxt:Some string\r\n"},
		{"big number", "(3492890328409238509324850943850943825024385\r\n"},
		{"map", "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n_\r\n"},
		{"set", "~2\r\n+a\r\n+b\r\n"},
		{"push", ">2\r\n+message\r\n$2\r\nhi\r\n"},
		{"attribute before reply", "|1\r\n+ttl\r\n:3600\r\n*2\r\n:1\r\n:2\r\n"},
		{"attribute inside aggregate", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			br := bufio.NewReader(strings.NewReader(tt.reply + "+NEXT\r\n"))
			raw, _, err := readReply(br)
			if err != nil {
				t.Fatalf("readReply(%q): %v", tt.reply, err)
			}
			if string(raw) != tt.reply {
				t.Fatalf("readReply read %q, want %q", raw, tt.reply)
			}
			next, _, err := readReply(br)
			if err != nil || string(next) != "+NEXT\r\n" {
				t.Fatalf("after the reply: %q, %v; want +NEXT", next, err)
			}
		})
	}
}

// TestParseReplyDecodesValues checks the parsed form that non-exact
// comparisons rely on.
func TestParseReplyDecodesValues(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		check func(Reply) bool
	}{
		{"integer", ":-42\r\n", func(r Reply) bool { return r.Type == ':' && r.Int == -42 }},
		{"null bulk", "$-1\r\n", func(r Reply) bool { return r.Type == '$' && r.Null }},
		{"null array", "*-1\r\n", func(r Reply) bool { return r.Type == '*' && r.Null }},
		{"resp3 null", "_\r\n", func(r Reply) bool { return r.Type == '_' && r.Null }},
		{"error", "-WRONGTYPE x\r\n", func(r Reply) bool { return r.IsError() && r.Str == "WRONGTYPE x" }},
		{"blob error", "!3\r\nERR\r\n", func(r Reply) bool { return r.IsError() && r.Str == "ERR" }},
		{"verbatim", "=7\r\ntxt:abc\r\n", func(r Reply) bool { return r.Format == "txt" && r.Str == "abc" }},
		{"double", ",1.5\r\n", func(r Reply) bool { return r.Float == 1.5 }},
		{"boolean false", "#f\r\n", func(r Reply) bool { return r.Type == '#' && r.Int == 0 }},
		{"map", "%1\r\n+k\r\n:7\r\n", func(r Reply) bool {
			return r.Type == '%' && len(r.Elems) == 2 && r.Elems[0].Str == "k" && r.Elems[1].Int == 7
		}},
		{"element raw bytes", "*2\r\n$1\r\na\r\n:1\r\n", func(r Reply) bool {
			return string(r.Elems[0].Raw) == "$1\r\na\r\n" && string(r.Elems[1].Raw) == ":1\r\n"
		}},
		{"attribute", "|1\r\n+ttl\r\n:9\r\n+OK\r\n", func(r Reply) bool {
			return r.Type == '+' && r.Str == "OK" && len(r.Attrs) == 2 && r.Attrs[1].Int == 9
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseReply([]byte(tt.raw))
			if err != nil {
				t.Fatalf("parseReply(%q): %v", tt.raw, err)
			}
			if !tt.check(r) {
				t.Fatalf("parseReply(%q) = %+v", tt.raw, r)
			}
			if string(r.Raw) != tt.raw {
				t.Fatalf("Raw = %q, want %q", r.Raw, tt.raw)
			}
		})
	}
}

// TestParseReplyRejectsMalformedInput checks that a broken reply is an
// error rather than a silent partial match.
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
