package commands

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// serverCommands are the server family's rows (Redis's server.c, rdb.c
// and debug.c): TIME, LASTSAVE, SAVE, BGSAVE, DEBUG and SHUTDOWN. CONFIG
// is in config.go, INFO in info.go, COMMAND in command.go.
var serverCommands = []*Spec{
	{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@fast", Handler: cmdTime},
	{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@admin @fast @dangerous", Handler: cmdLastsave},
	{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading | FlagNoMulti, ACL: "@admin @slow @dangerous", Handler: cmdSave},
	{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: cmdBgsave},
	{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Protected: true, Handler: cmdDebug},
	{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy, ACL: "@admin @slow @dangerous", Handler: cmdShutdown},
}

// Lifecycle is what SHUTDOWN and DEBUG SLEEP use of the server's life.
type Lifecycle interface {
	// Shutdown stops the server, as the calling connection asked.
	Shutdown()
	// Stopping is closed when the server starts to shut down.
	Stopping() <-chan struct{}
}

// cmdTime replies with the unix time in seconds and microseconds.
func cmdTime(x *Ctx) {
	now := time.Now()
	x.W.Array(2)
	x.W.BulkInt(now.Unix())
	x.W.BulkInt(int64(now.Nanosecond() / 1000))
}

func cmdLastsave(x *Ctx) { x.W.Int(x.Stats.LastSave()) }

// cmdSave succeeds at once: the memory tier has nothing to snapshot, so a
// save only records its time for LASTSAVE and INFO persistence.
func cmdSave(x *Ctx) {
	x.Stats.Saved(time.Now().Unix())
	x.W.OK()
}

// cmdBgsave implements BGSAVE [SCHEDULE] like SAVE.
func cmdBgsave(x *Ctx) {
	args := x.Args
	if len(args) > 2 || (len(args) == 2 && !equalFold(args[1], "schedule")) {
		x.W.Error(errSyntax)
		return
	}
	x.Stats.Saved(time.Now().Unix())
	x.W.Simple("Background saving started")
}

// cmdShutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. On
// success there is no reply: the server stops and the connection closes.
// A shutdown is never left pending, so ABORT always finds none.
func cmdShutdown(x *Ctx) {
	var nosave, save, flags, abort bool
	for _, a := range x.Args[1:] {
		switch {
		case equalFold(a, "nosave"):
			nosave, flags = true, true
		case equalFold(a, "save"):
			save, flags = true, true
		case equalFold(a, "now"), equalFold(a, "force"):
			flags = true
		case equalFold(a, "abort"):
			abort = true
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	if (abort && flags) || (nosave && save) {
		x.W.Error(errSyntax)
		return
	}
	if abort {
		x.W.Error("ERR No shutdown in progress.")
		return
	}
	x.Lifecycle.Shutdown()
	x.Session.CloseAfterReply()
}

// debugIgnored are Redis DEBUG subcommands that have no meaning for
// kvserver (encodings, RDB/AOF, crashes, replication, allocator): they are
// acknowledged with +OK and do nothing.
var debugIgnored = []string{
	"aof-flush-sleep", "assert", "change-repl-id", "client-eviction", "clusterlink",
	"config-rewrite-force-all", "crash-and-recover", "dict-resizing", "digest",
	"digest-value", "drop-cluster-packet-filter", "htstats", "htstats-key", "jmap",
	"leak", "listpack", "loadaof", "mallctl", "mallctl-str", "object", "oom", "panic",
	"pause-cron", "populate", "protocol", "quicklist", "quicklist-packed-threshold",
	"reload", "replicate", "replybuffer", "restart", "sdslen", "segfault",
	"set-active-expire", "set-disable-deny-scripts", "set-skip-checksum-validation",
	"stringmatch-len", "stringmatch-test", "structsize",
}

// cmdDebug implements DEBUG SLEEP, ERROR, LOG and HELP; Redis's other
// subcommands do not apply and answer +OK.
func cmdDebug(x *Ctx) {
	args := x.Args
	sub := args[1]
	switch {
	case equalFold(sub, "help") && len(args) == 2:
		writeHelp(x, "DEBUG",
			"ERROR <string>",
			"    Return a Redis protocol error with <string> as message. Useful for clients",
			"    unit tests to simulate Redis errors.",
			"LOG <message>",
			"    Write <message> to the server log.",
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.",
			"    (kvserver: only the calling connection sleeps.)",
			"Other Redis DEBUG subcommands are accepted and do nothing.",
		)
	case equalFold(sub, "sleep") && len(args) == 3:
		debugSleep(x, parseFloatPrefix(args[2]))
		x.W.OK()
	case equalFold(sub, "error") && len(args) == 3:
		x.W.Error(Sanitize(string(args[2])))
	case equalFold(sub, "log") && len(args) == 3:
		x.Log.Warn("DEBUG LOG: "+string(args[2]), "client", x.Session.ID())
		x.W.OK()
	default:
		for _, name := range debugIgnored {
			if equalFold(sub, name) {
				x.W.OK()
				return
			}
		}
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" +
			Sanitize(Truncate(string(sub), 128)) + "'. Try DEBUG HELP.")
	}
}

// debugSleep blocks the calling connection (only it: other clients are
// served by their own goroutines) for secs seconds, or until shutdown.
func debugSleep(x *Ctx, secs float64) {
	if !(secs > 0) {
		return
	}
	d := time.Duration(math.MaxInt64)
	if secs < d.Seconds() {
		d = time.Duration(secs * float64(time.Second))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-x.Lifecycle.Stopping():
	}
}

// Patterns of what C's strtod consumes after the sign: a decimal number
// with an optional exponent, or a hexadecimal one.
var (
	decimalPrefix = regexp.MustCompile(`^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)
	hexPrefix     = regexp.MustCompile(`^0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)`)
)

// parseFloatPrefix reads a number the way Redis's DEBUG SLEEP does, with
// strtod and no error check: leading space skipped, the longest numeric
// prefix taken, 0 if there is none.
func parseFloatPrefix(b []byte) float64 {
	rest := strings.TrimLeft(string(b), " \t\n\v\f\r")
	sign := 1.0
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		if rest[0] == '-' {
			sign = -1
		}
		rest = rest[1:]
	}
	lower := strings.ToLower(rest)
	switch {
	case strings.HasPrefix(lower, "inf"):
		return sign * math.Inf(1)
	case strings.HasPrefix(lower, "nan"):
		return math.NaN()
	}
	num := decimalPrefix.FindString(rest)
	if h := hexPrefix.FindString(rest); h != "" {
		num = h + "p0"
	}
	// Out of range gives ±Inf or 0 with an error, as strtod does.
	f, _ := strconv.ParseFloat(num, 64)
	return sign * f
}
