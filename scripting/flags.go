package scripting

import (
	"bytes"
	"strings"
)

// Flags are a script's or function's flags ("#!lua flags=no-writes,..."
// for EVAL, register_function's flags for functions), Redis 7.0's
// SCRIPT_FLAG_*.
type Flags uint8

// The flags scripts may declare.
const (
	// FlagNoWrites: the script only reads; it may run with EVAL_RO/FCALL_RO
	// and write commands inside it fail.
	FlagNoWrites Flags = 1 << iota
	// FlagAllowOOM: the script may run, and write, over maxmemory.
	FlagAllowOOM
	// FlagAllowStale: the script may run on a stale replica.
	FlagAllowStale
	// FlagNoCluster: the script refuses to run in cluster mode.
	FlagNoCluster
	// FlagAllowCrossSlot: the script may touch keys of several slots.
	FlagAllowCrossSlot
	// FlagEvalCompat: an EVAL script without a shebang, which keeps Redis
	// 6's rules (it may write, cross slots inside, and is checked for OOM
	// per command).
	FlagEvalCompat
)

// flagNames are the names scripts declare flags by, in Redis's order.
var flagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites},
	{"allow-oom", FlagAllowOOM},
	{"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster},
	{"allow-cross-slot-keys", FlagAllowCrossSlot},
}

// Names lists the declared flags, in Redis's order (FUNCTION LIST).
func (f Flags) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.flag != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// flagByName finds a flag by its name; false for an unknown one.
func flagByName(name string) (Flags, bool) {
	for _, n := range flagNames {
		if n.name == name {
			return n.flag, true
		}
	}
	return 0, false
}

// evalFlags reads an EVAL script's shebang, like Redis's
// evalExtractShebangFlags: no shebang is FlagEvalCompat; it returns the
// flags, where the Lua code starts, and an error reply.
func evalFlags(body []byte) (Flags, int, string) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return FlagEvalCompat, 0, ""
	}
	end := bytes.IndexByte(body, '\n')
	line := body
	if end >= 0 {
		line = body[:end]
	} else {
		end = len(body)
	}
	parts := strings.Fields(string(line))
	if len(parts) == 0 || parts[0] != "#!lua" {
		return 0, 0, "ERR Unexpected engine in script shebang: " + firstWord(string(line))
	}
	var flags Flags
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, "ERR Unknown lua shebang option: " + p
		}
		for _, name := range strings.Split(list, ",") {
			if name == "" {
				continue
			}
			f, ok := flagByName(name)
			if !ok {
				return 0, 0, "ERR Unexpected flag in script shebang: " + name
			}
			flags |= f
		}
	}
	// The shebang line is kept as an empty line, so that line numbers in
	// errors match the script as written.
	return flags, end, ""
}

// firstWord is s up to its first space.
func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}
