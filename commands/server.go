package commands

import (
	"math"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/kvserver/kvserver/engine"
)

// serverCommands are the server family's rows (Redis's server.c, rdb.c,
// debug.c, object.c, slowlog.c, latency.c and replication.c): TIME,
// LASTSAVE, SAVE, BGSAVE, DEBUG, SHUTDOWN, ROLE, WAIT, MEMORY, SLOWLOG,
// LATENCY, MODULE, REPLICAOF (SLAVEOF) and LOLWUT (lolwut.go). CONFIG is in config.go, INFO in info.go, COMMAND in
// command.go, OBJECT in keyspace.go.
var serverCommands = []*Spec{
	{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@fast", Handler: cmdTime},
	{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@admin @fast @dangerous", Handler: cmdLastsave},
	{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading | FlagNoMulti, ACL: "@admin @slow @dangerous", Handler: cmdSave},
	{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: cmdBgsave},
	{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Protected: ProtectedByDebug, Handler: cmdDebug},
	{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy, ACL: "@admin @slow @dangerous", Handler: cmdShutdown},
	{Name: "role", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast, ACL: "@admin @fast @dangerous", Handler: cmdRole},
	{Name: "wait", Arity: 3, Flags: FlagNoscript, ACL: "@slow @connection", Handler: cmdWait},
	{Name: "memory", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "memory|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdMemoryHelp},
		{Name: "memory|doctor", Arity: 2, Flags: 0, ACL: "@slow", Handler: cmdMemoryDoctor},
		{Name: "memory|stats", Arity: 2, Flags: 0, ACL: "@slow", Handler: cmdMemoryStats},
		{Name: "memory|usage", Arity: -3, Flags: FlagReadonly, ACL: "@read @slow",
			KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdMemoryUsage},
		{Name: "memory|malloc-stats", Arity: 2, Flags: 0, ACL: "@slow", Handler: cmdMemoryMallocStats},
		{Name: "memory|purge", Arity: 2, Flags: 0, ACL: "@slow", Handler: cmdMemoryPurge},
	}},
	{Name: "module", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "module|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdModuleHelp},
		{Name: "module|list", Arity: 2, Flags: FlagAdmin | FlagNoscript, ACL: "@admin @slow @dangerous", Handler: cmdModuleList},
		{Name: "module|load", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Protected: ProtectedByModule, Handler: cmdModuleLoad},
		{Name: "module|loadex", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Protected: ProtectedByModule, Handler: cmdModuleLoad},
		{Name: "module|unload", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Protected: ProtectedByModule, Handler: cmdModuleUnload},
	}},
	{Name: "replicaof", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: cmdReplicaof},
	{Name: "slaveof", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: cmdReplicaof},
	{Name: "lolwut", Arity: -1, Flags: FlagReadonly | FlagFast, ACL: "@read @fast", Handler: cmdLolwut},
	{Name: "slowlog", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "slowlog|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdSlowlogHelp},
		{Name: "slowlog|get", Arity: -2, Flags: FlagAdmin | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdSlowlogGet},
		{Name: "slowlog|len", Arity: 2, Flags: FlagAdmin | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdSlowlogLen},
		{Name: "slowlog|reset", Arity: 2, Flags: FlagAdmin | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdSlowlogReset},
	}},
	{Name: "latency", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "latency|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdLatencyHelp},
		{Name: "latency|latest", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdLatencyLatest},
		{Name: "latency|history", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdLatencyHistory},
		{Name: "latency|reset", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdLatencyReset},
		{Name: "latency|doctor", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdLatencyDoctor},
		{Name: "latency|graph", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdLatencyGraph},
		{Name: "latency|histogram", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdLatencyHistogram},
	}},
}

// Diagnostics is what ROLE, OBJECT, MEMORY and SLOWLOG read of the server.
type Diagnostics interface {
	// Setting is a CONFIG parameter's value by name ("maxmemory-policy").
	Setting(name string) string
	// SlowLog returns up to n of the newest slow log entries, newest
	// first (all of them when n < 0).
	SlowLog(n int) []SlowLogEntry
	// SlowLogLen is the number of entries in the slow log.
	SlowLogLen() int
	// SlowLogReset empties the slow log.
	SlowLogReset()
}

// SlowLogEntry is one command in the slow log, as SLOWLOG GET shows it.
type SlowLogEntry struct {
	// ID is the entry's sequence number; Time its unix time in seconds;
	// Micros the command's duration.
	ID, Time, Micros int64
	// Args are the command's arguments, shortened as Redis does.
	Args [][]byte
	// Addr is the client's ip:port and Name its CLIENT SETNAME name.
	Addr, Name string
}

// slowLogMaxArgs and slowLogMaxString are Redis's SLOWLOG_ENTRY_MAX_ARGC
// and SLOWLOG_ENTRY_MAX_STRING: what an entry keeps of a command.
const (
	slowLogMaxArgs   = 32
	slowLogMaxString = 128
)

// SlowLogArgs copies args the way Redis's slowlogCreateEntry keeps them:
// secrets redacted, at most 32 arguments (the last one saying how many
// more there were), each at most 128 bytes (saying how many more bytes
// there were).
func SlowLogArgs(args [][]byte) [][]byte {
	secret := secretArgs(args)
	n := min(len(args), slowLogMaxArgs)
	out := make([][]byte, n)
	for i := range n {
		if n != len(args) && i == n-1 {
			out[i] = []byte("... (" + strconv.Itoa(len(args)-n+1) + " more arguments)")
			continue
		}
		a := args[i]
		if secret(i) {
			a = []byte("(redacted)")
		}
		if len(a) > slowLogMaxString {
			out[i] = append(append([]byte(nil), a[:slowLogMaxString]...),
				"... ("+strconv.Itoa(len(a)-slowLogMaxString)+" more bytes)"...)
			continue
		}
		out[i] = append([]byte(nil), a...)
	}
	return out
}

// secretArgs says which arguments Redis redacts from the slow log
// (redactClientCommandArgument): AUTH's, HELLO's AUTH pair, MIGRATE's
// AUTH and AUTH2 values, ACL
// SETUSER's rules and the values of sensitive CONFIG SET parameters.
func secretArgs(args [][]byte) func(i int) bool {
	switch {
	case equalFold(args[0], "auth"):
		return func(i int) bool { return i >= 1 }
	case equalFold(args[0], "migrate"):
		return MigrateSecretArgs(args)
	case equalFold(args[0], "acl") && len(args) > 2 && equalFold(args[1], "setuser"):
		return func(i int) bool { return i >= 2 }
	case equalFold(args[0], "hello"):
		for j := 2; j+2 < len(args); j++ {
			if equalFold(args[j], "auth") {
				return func(i int) bool { return i == j+1 || i == j+2 }
			}
		}
	case equalFold(args[0], "config") && len(args) > 3 && equalFold(args[1], "set"):
		return func(i int) bool {
			return i >= 3 && i%2 == 1 && (equalFold(args[i-1], "requirepass") || equalFold(args[i-1], "masterauth"))
		}
	}
	return func(int) bool { return false }
}

// cmdRole reports a master without replicas at replication offset 0.
func cmdRole(x *Ctx) {
	x.W.Array(3)
	x.W.BulkString("master")
	x.W.Int(0)
	x.W.Array(0)
}

// cmdWait implements WAIT numreplicas timeout: kvserver has no replicas,
// so it answers 0, at once when none were asked for, else (as Redis
// does) after the timeout in milliseconds, 0 meaning never.
func cmdWait(x *Ctx) {
	replicas, ok := ParseInt64(x.Args[1])
	if !ok {
		x.W.Error(errNotInteger)
		return
	}
	timeout, ok := ParseInt64(x.Args[2])
	switch {
	case !ok:
		x.W.Error("ERR timeout is not an integer or out of range")
	case timeout < 0:
		x.W.Error("ERR timeout is negative")
	default:
		// kvserver has no replicas: WAIT for one or more blocks for its
		// timeout, except inside EXEC, where Redis answers at once.
		if replicas > 0 && !x.Transaction.InMulti() {
			d := time.Duration(min(timeout, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
			if x.Blocker.Block(d, nil) == UnblockedError {
				x.W.Error(errUnblocked)
				return
			}
		}
		x.W.Int(0)
	}
}

func cmdMemoryHelp(x *Ctx) {
	writeHelp(x, "MEMORY",
		"DOCTOR",
		"    Return memory problems reports.",
		"MALLOC-STATS",
		"    Return internal statistics report from the memory allocator.",
		"PURGE",
		"    Attempt to purge dirty pages for reclamation by the allocator.",
		"STATS",
		"    Return information about the memory usage of the server.",
		"USAGE <key> [SAMPLES <count>]",
		"    Return memory in bytes used by <key> and its value. Nested values are",
		"    sampled up to <count> times (default: 5, 0 means sample all).",
	)
}

// Redis's MEMORY DOCTOR reports for an (almost) empty instance and for one
// without problems; kvserver's memory is its accounting, so it finds none.
const (
	doctorEmpty = "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be " +
		"used in these conditions. Please, leave for your mission on Earth and fill it with some data. " +
		"The new Sam and I will be back to our programming as soon as I finished rebooting.\n"
	doctorFine = "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs " +
		"on this base.\n"
	// doctorMinMemory is the used memory below which Redis calls an
	// instance empty (5 MB).
	doctorMinMemory = 1024 * 1024 * 5
)

func cmdMemoryDoctor(x *Ctx) {
	used, _ := x.Stats.UsedMemory()
	if used < doctorMinMemory {
		x.W.Verbatim(doctorEmpty)
		return
	}
	x.W.Verbatim(doctorFine)
}

// cmdMemoryStats reports Redis's MEMORY STATS fields, in its order, from
// kvserver's accounting: the allocator's figures are the accounted
// memory, and what kvserver does not have (replication, AOF, Lua) is 0.
func cmdMemoryStats(x *Ctx) {
	used, peak := x.Stats.UsedMemory()
	clients := x.Stats.ClientMemory()
	var keys int64
	var dbs []int
	for i, d := range x.Engine.DBStats() {
		keys += int64(d.Keys)
		if d.Keys > 0 {
			dbs = append(dbs, i)
		}
	}
	field := func(name string, v int64) {
		x.W.BulkString(name)
		x.W.Int(v)
	}
	ratio := func(name string, v float64) {
		x.W.BulkString(name)
		x.W.Double(v)
	}
	x.W.Map(27 + len(dbs))
	field("peak.allocated", peak)
	field("total.allocated", used)
	for _, name := range []string{"startup.allocated", "replication.backlog", "clients.slaves"} {
		field(name, 0)
	}
	field("clients.normal", clients)
	for _, name := range []string{"cluster.links", "aof.buffer", "lua.caches", "functions.caches"} {
		field(name, 0)
	}
	for _, db := range dbs {
		x.W.BulkString("db." + strconv.Itoa(db))
		x.W.Map(3)
		for _, name := range []string{"overhead.hashtable.main", "overhead.hashtable.expires", "overhead.hashtable.slot-to-keys"} {
			field(name, 0)
		}
	}
	field("overhead.total", clients)
	field("keys.count", keys)
	field("keys.bytes-per-key", used/max(keys, 1))
	field("dataset.bytes", used)
	ratio("dataset.percentage", 100)
	ratio("peak.percentage", float64(used)*100/float64(max(peak, 1)))
	for _, name := range []string{"allocator.allocated", "allocator.active", "allocator.resident"} {
		field(name, used)
	}
	for _, name := range []string{"allocator-fragmentation", "allocator-rss", "rss-overhead"} {
		ratio(name+".ratio", 1)
		field(name+".bytes", 0)
	}
	ratio("fragmentation", 1)
	field("fragmentation.bytes", 0)
}

// cmdMemoryUsage implements MEMORY USAGE key [SAMPLES count] with
// kvserver's accounting of the key.
func cmdMemoryUsage(x *Ctx) {
	args := x.Args
	for i := 3; i < len(args); i++ {
		if !equalFold(args[i], "samples") || i+1 >= len(args) {
			x.W.Error(errSyntax)
			return
		}
		if _, ok := countArg(x, i+1, 0); !ok {
			return
		}
		i++
	}
	var info engine.KeyInfo
	var found bool
	x.View(func(tx *engine.Tx) { info, found = tx.Info(args[2]) })
	if !found {
		x.W.Null()
		return
	}
	x.W.Int(info.Memory)
}

func cmdSlowlogHelp(x *Ctx) {
	writeHelp(x, "SLOWLOG",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.",
	)
}

// cmdSlowlogGet implements SLOWLOG GET [count].
func cmdSlowlogGet(x *Ctx) {
	n := int64(10)
	switch len(x.Args) {
	case 2:
	case 3:
		var ok bool
		n, ok = ParseInt64(x.Args[2])
		if !ok || n < -1 {
			x.W.Error("ERR count should be greater than or equal to -1")
			return
		}
	default:
		replySubcommandSyntaxError(x, x.Args[1], "SLOWLOG")
		return
	}
	entries := x.Diagnostics.SlowLog(int(min(n, math.MaxInt32)))
	x.W.Array(len(entries))
	for _, e := range entries {
		x.W.Array(6)
		x.W.Int(e.ID)
		x.W.Int(e.Time)
		x.W.Int(e.Micros)
		x.W.Array(len(e.Args))
		for _, a := range e.Args {
			x.W.Bulk(a)
		}
		x.W.BulkString(e.Addr)
		x.W.BulkString(e.Name)
	}
}

func cmdSlowlogReset(x *Ctx) {
	x.Diagnostics.SlowLogReset()
	x.W.OK()
}

func cmdSlowlogLen(x *Ctx) { x.W.Int(int64(x.Diagnostics.SlowLogLen())) }

func cmdLatencyHelp(x *Ctx) {
	writeHelp(x, "LATENCY",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"GRAPH <event>",
		"    Return an ASCII latency graph for the <event> class.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)",
		"HISTOGRAM [COMMAND ...]",
		"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
		"    If no commands are specified then all histograms are replied.",
	)
}

// kvserver records no latency events (Redis's fork, AOF and eviction
// events do not occur), so LATEST and HISTORY are empty and RESET resets
// none.
func cmdLatencyLatest(x *Ctx)  { x.W.Array(0) }
func cmdLatencyHistory(x *Ctx) { x.W.Array(0) }
func cmdLatencyReset(x *Ctx)   { x.W.Int(0) }

// cmdLatencyDoctor is Redis's report while latency monitoring is off,
// which it always is here (latency-monitor-threshold stays 0).
func cmdLatencyDoctor(x *Ctx) {
	x.W.Verbatim("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. " +
		"You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. " +
		"If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n")
}

// cmdLatencyGraph is LATENCY GRAPH <event>: no event has samples here.
func cmdLatencyGraph(x *Ctx) {
	event := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(x.Args[2]))
	x.W.Error("ERR No samples available for event '" + event + "'")
}

// cmdLatencyHistogram is LATENCY HISTOGRAM [command ...] (Redis's
// latencyAllCommandsFillCDF and latencySpecificCommandsFillCDF): a map
// from each command that has latencies, all of them or those named (a
// container naming its subcommands too; unknown names skipped), to its
// calls and its distribution.
func cmdLatencyHistogram(x *Ctx) {
	var stats []CommandStat
	if len(x.Args) == 2 {
		for _, st := range x.Stats.CommandStats() {
			if st.Latency != nil {
				stats = append(stats, st)
			}
		}
	} else {
		for _, name := range x.Args[2:] {
			spec := x.Commands.LookupFullName(name)
			if spec == nil {
				continue
			}
			for _, s := range append([]*Spec{spec}, spec.Subcommands...) {
				if h := x.Stats.CommandLatency(s); h != nil {
					stats = append(stats, CommandStat{Name: s.Name, Latency: h})
				}
			}
		}
	}
	x.W.Map(len(stats))
	for _, st := range stats {
		cdf := st.Latency.CDF()
		var calls uint64
		if len(cdf) > 0 {
			calls = cdf[len(cdf)-1].Cumulative
		}
		x.W.BulkString(st.Name)
		x.W.Map(2)
		x.W.BulkString("calls")
		x.W.Int(int64(calls))
		x.W.BulkString("histogram_usec")
		x.W.Map(len(cdf))
		for _, p := range cdf {
			x.W.Int(p.Micros)
			x.W.Int(int64(p.Cumulative))
		}
	}
}

// Lifecycle is what SHUTDOWN and DEBUG SLEEP use of the server's life.
type Lifecycle interface {
	// Shutdown stops the server, as the calling connection asked.
	Shutdown()
	// Stopping is closed when the server starts to shut down.
	Stopping() <-chan struct{}
	// WillWait tells the server that the command is about to wait: its
	// connection leaves the event loop it shares with other clients.
	WillWait()
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
		replySubcommandSyntaxError(x, sub, "DEBUG")
	}
}

// debugSleep blocks the calling connection (only it: it leaves the event
// loop first) for secs seconds, or until shutdown.
func debugSleep(x *Ctx, secs float64) {
	if !(secs > 0) {
		return
	}
	x.Lifecycle.WillWait()
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

// cmdMemoryMallocStats implements MEMORY MALLOC-STATS. Redis prints
// jemalloc's statistics; kvserver's allocator is Go's runtime, so it
// prints the runtime's: the heap, what was returned to the system, the
// garbage collector's goal and cycles.
func cmdMemoryMallocStats(x *Ctx) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	var b strings.Builder
	b.WriteString("___ Begin Go runtime statistics ___\n")
	for _, f := range []struct {
		name string
		v    uint64
	}{
		{"heap_alloc", m.HeapAlloc},
		{"heap_inuse", m.HeapInuse},
		{"heap_idle", m.HeapIdle},
		{"heap_released", m.HeapReleased},
		{"heap_objects", m.HeapObjects},
		{"heap_sys", m.HeapSys},
		{"stack_inuse", m.StackInuse},
		{"sys", m.Sys},
		{"total_alloc", m.TotalAlloc},
		{"mallocs", m.Mallocs},
		{"frees", m.Frees},
		{"next_gc", m.NextGC},
		{"num_gc", uint64(m.NumGC)},
		{"gc_pause_total_ns", m.PauseTotalNs},
	} {
		b.WriteString(f.name)
		b.WriteString(": ")
		b.WriteString(strconv.FormatUint(f.v, 10))
		b.WriteByte('\n')
	}
	b.WriteString("--- End Go runtime statistics ---\n")
	x.W.Verbatim(b.String())
}

// cmdMemoryPurge implements MEMORY PURGE: Redis asks jemalloc to return
// its dirty pages to the system; kvserver asks Go's runtime to collect and
// return the heap's free pages (debug.FreeOSMemory). A collection of a
// large heap takes a while, so the connection leaves its event loop first,
// as for DEBUG SLEEP: the loop's other clients go on meanwhile.
func cmdMemoryPurge(x *Ctx) {
	x.Lifecycle.WillWait()
	debug.FreeOSMemory()
	x.W.OK()
}

func cmdModuleHelp(x *Ctx) {
	writeHelp(x, "MODULE",
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.",
	)
}

// cmdModuleList implements MODULE LIST: kvserver has no modules loaded.
func cmdModuleList(x *Ctx) { x.W.Array(0) }

// errModuleLoad is Redis's reply to a MODULE LOAD or LOADEX that failed.
const errModuleLoad = "ERR Error loading the extension. Please check the server logs."

// cmdModuleLoad implements MODULE LOAD and LOADEX where
// enable-module-command allows them. Redis modules are C shared objects
// built against Redis's internals (its module API), which kvserver does
// not provide, so every load fails as Redis's does for a file it cannot
// load: the reply asks to check the log, and the log says why.
func cmdModuleLoad(x *Ctx) {
	x.Log.Warn("module load refused: kvserver cannot load Redis modules (C shared objects for Redis's module API)",
		"path", Sanitize(Truncate(string(x.Args[2]), 256)))
	x.W.Error(errModuleLoad)
}

// cmdModuleUnload implements MODULE UNLOAD: no module is loaded, so
// there is none of that name.
func cmdModuleUnload(x *Ctx) {
	x.W.Error("ERR Error unloading module: no such module with that name")
}

// errNoReplication is the refusal of REPLICAOF host port: kvserver is
// always a master; its data survives restarts and crashes through its disk
// tier, not through replicas.
const errNoReplication = "ERR kvserver does not replicate: REPLICAOF and SLAVEOF accept only NO ONE"

// cmdReplicaof implements REPLICAOF (and SLAVEOF) with Redis 7.0's checks:
// refused in cluster mode; NO ONE, which makes a replica a master, answers
// OK since kvserver is always a master; a host and port are checked as
// Redis checks them (the port 0 to 65535) and then refused, since
// kvserver cannot replicate from another server.
func cmdReplicaof(x *Ctx) {
	if x.KeyspaceConfig.ClusterEnabled() {
		x.W.Error("ERR REPLICAOF not allowed in cluster mode.")
		return
	}
	if strings.EqualFold(string(x.Args[1]), "no") && strings.EqualFold(string(x.Args[2]), "one") {
		x.W.OK()
		return
	}
	if port, ok := ParseInt64(x.Args[2]); !ok || port < 0 || port > math.MaxUint16 {
		x.W.Error("ERR Invalid master port")
		return
	}
	x.W.Error(errNoReplication)
}
