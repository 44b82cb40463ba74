package commands

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseFloatPrefixIsStrtod(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"1.5", 1.5}, {"  2", 2}, {"-1", -1}, {"1e-1", 0.1}, {".5s", 0.5}, {"3abc", 3},
		{"x", 0}, {"", 0}, {"0x10", 16}, {"+7.", 7}, {"1e", 1},
	}
	for _, tc := range cases {
		if got := parseFloatPrefix([]byte(tc.in)); got != tc.want {
			t.Errorf("parseFloatPrefix(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestSlowLogArgsShortensLikeRedis checks slowlogCreateEntry's limits: 32
// arguments (the last saying how many more), 128 bytes each.
func TestSlowLogArgsShortensLikeRedis(t *testing.T) {
	args := make([][]byte, 40)
	for i := range args {
		args[i] = []byte("a")
	}
	args[1] = make([]byte, 130)
	got := SlowLogArgs(args)
	if len(got) != 32 {
		t.Fatalf("%d arguments kept, want 32", len(got))
	}
	if want := "... (9 more arguments)"; string(got[31]) != want {
		t.Errorf("last argument %q, want %q", got[31], want)
	}
	if want := string(make([]byte, 128)) + "... (2 more bytes)"; string(got[1]) != want {
		t.Errorf("long argument %q, want %q", got[1], want)
	}
	if short := SlowLogArgs(args[:3]); len(short) != 3 || string(short[2]) != "a" {
		t.Errorf("short command shortened: %q", short)
	}
}

func TestSetKeyFlagsFollowGet(t *testing.T) {
	cmd := func(a ...string) [][]byte {
		out := make([][]byte, len(a))
		for i, s := range a {
			out[i] = []byte(s)
		}
		return out
	}
	if f := setKeyFlags(cmd("set", "k", "v")); f != KeyOW|KeyUpdate {
		t.Errorf("SET k v: %v", f.Names())
	}
	if f := setKeyFlags(cmd("set", "k", "v", "NX", "Get")); f != KeyRW|KeyAccess|KeyUpdate {
		t.Errorf("SET k v NX Get: %v", f.Names())
	}
	if f := setKeyFlags(cmd("set", "k", "get")); f != KeyOW|KeyUpdate {
		t.Errorf("SET k get: %v", f.Names())
	}
}

func TestSlowLogArgsRedactSecrets(t *testing.T) {
	split := func(s string) [][]byte {
		var out [][]byte
		for _, f := range strings.Fields(s) {
			out = append(out, []byte(f))
		}
		return out
	}
	join := func(args [][]byte) string { return string(bytes.Join(args, []byte(" "))) }
	for in, want := range map[string]string{
		"AUTH x":                               "AUTH (redacted)",
		"auth u p":                             "auth (redacted) (redacted)",
		"HELLO 2 AUTH default y SETNAME n":     "HELLO 2 AUTH (redacted) (redacted) SETNAME n",
		"HELLO 3 AUTH u":                       "HELLO 3 AUTH u",
		"CONFIG SET requirepass p maxmemory 0": "CONFIG SET requirepass (redacted) maxmemory 0",
		"ACL SETUSER u on >pw":                 "ACL SETUSER (redacted) (redacted) (redacted)",
		"SET requirepass x":                    "SET requirepass x",
	} {
		if got := join(SlowLogArgs(split(in))); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
