package server

import (
	"strings"
)

// CommandFlags are a command's properties, as Redis's COMMAND INFO names them.
type CommandFlags uint32

// Command flags, in the order Redis lists them in COMMAND INFO.
const (
	FlagWrite CommandFlags = 1 << iota
	FlagReadonly
	FlagDenyoom
	FlagModule
	FlagAdmin
	FlagPubsub
	FlagNoscript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagAsking
	FlagFast
	FlagNoAuth
	FlagNoMandatoryKeys
	FlagNoAsyncLoading
	FlagNoMulti
	FlagMovablekeys
	FlagAllowBusy
)

// flagNames are the COMMAND INFO names of the flags, bit by bit.
var flagNames = [...]string{
	"write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
	"blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking",
	"fast", "no_auth", "no_mandatory_keys", "no_async_loading", "no_multi",
	"movablekeys", "allow_busy",
}

// Names lists the flag names set in f, in Redis's order.
func (f CommandFlags) Names() []string {
	var out []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// HandlerFunc executes a command whose arity and flags the dispatcher has
// already checked. args[0] is the command name (for a subcommand, args[1]
// is the subcommand name).
type HandlerFunc func(s *Server, c *Client, args [][]byte)

// CommandSpec is one entry of the command table.
type CommandSpec struct {
	// Name is the lower-case name; subcommands are "parent|sub".
	Name string
	// Arity is the exact argument count including the name, or -N for
	// at least N.
	Arity int
	// Flags are the command's properties.
	Flags CommandFlags
	// FirstKey, LastKey and Step locate the keys in the arguments
	// (LastKey -1 means the last argument); all 0 when there are none.
	FirstKey, LastKey, Step int
	// Handler runs the command; nil for a container of subcommands.
	Handler HandlerFunc
	// Subcommands of a container command such as CLIENT.
	Subcommands []*CommandSpec
	// Protected is Redis's CMD_PROTECTED: the command runs only where
	// enable-debug-command allows it (DEBUG).
	Protected bool

	subs map[string]*CommandSpec
}

// checkArity reports whether argc arguments fit the arity.
func (c *CommandSpec) checkArity(argc int) bool {
	if c.Arity >= 0 {
		return argc == c.Arity
	}
	return argc >= -c.Arity
}

// commandTable is the Redis-style command table: one entry per command, in
// families (strings.go, keyspace.go, connection.go, server.go hold the
// handlers).
var commandTable = []*CommandSpec{
	{Name: "get", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdGet},
	{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdSet},
	{Name: "setnx", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdSetnx},
	{Name: "setex", Arity: 4, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdSetex},
	{Name: "psetex", Arity: 4, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdPsetex},
	{Name: "getdel", Arity: 2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdGetdel},
	{Name: "getex", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdGetex},
	{Name: "getset", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdGetset},
	{Name: "mget", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdMget},
	{Name: "mset", Arity: -3, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: -1, Step: 2, Handler: (*Server).cmdMset},
	{Name: "msetnx", Arity: -3, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: -1, Step: 2, Handler: (*Server).cmdMsetnx},
	{Name: "strlen", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdStrlen},
	{Name: "append", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdAppend},
	{Name: "getrange", Arity: 4, Flags: FlagReadonly, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdGetrange},
	{Name: "setrange", Arity: 4, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdSetrange},
	{Name: "incr", Arity: 2, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdIncr},
	{Name: "decr", Arity: 2, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdDecr},
	{Name: "incrby", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdIncrby},
	{Name: "decrby", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdDecrby},
	{Name: "incrbyfloat", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdIncrbyfloat},
	{Name: "del", Arity: -2, Flags: FlagWrite, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdDel},
	{Name: "unlink", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdUnlink},
	{Name: "exists", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdExists},
	{Name: "touch", Arity: -2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdTouch},
	{Name: "type", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdType},
	{Name: "keys", Arity: 2, Flags: FlagReadonly, Handler: (*Server).cmdKeys},
	{Name: "scan", Arity: -2, Flags: FlagReadonly, Handler: (*Server).cmdScan},
	{Name: "randomkey", Arity: 1, Flags: FlagReadonly, Handler: (*Server).cmdRandomkey},
	{Name: "rename", Arity: 3, Flags: FlagWrite, FirstKey: 1, LastKey: 2, Step: 1, Handler: (*Server).cmdRename},
	{Name: "renamenx", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 2, Step: 1, Handler: (*Server).cmdRenamenx},
	{Name: "copy", Arity: -3, Flags: FlagWrite | FlagDenyoom, FirstKey: 1, LastKey: 2, Step: 1, Handler: (*Server).cmdCopy},
	{Name: "move", Arity: 3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdMove},
	{Name: "dbsize", Arity: 1, Flags: FlagReadonly | FlagFast, Handler: (*Server).cmdDbsize},
	{Name: "flushdb", Arity: -1, Flags: FlagWrite, Handler: (*Server).cmdFlushdb},
	{Name: "flushall", Arity: -1, Flags: FlagWrite, Handler: (*Server).cmdFlushall},
	{Name: "expire", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdExpire},
	{Name: "pexpire", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdPexpire},
	{Name: "expireat", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdExpireat},
	{Name: "pexpireat", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdPexpireat},
	{Name: "ttl", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdTtl},
	{Name: "pttl", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdPttl},
	{Name: "expiretime", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdExpiretime},
	{Name: "pexpiretime", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdPexpiretime},
	{Name: "persist", Arity: 2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdPersist},
	{Name: "select", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, Handler: (*Server).cmdSelect},
	{Name: "swapdb", Arity: 3, Flags: FlagWrite | FlagFast, Handler: (*Server).cmdSwapdb},
	{Name: "ping", Arity: -1, Flags: FlagFast, Handler: (*Server).cmdPing},
	{Name: "echo", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, Handler: (*Server).cmdEcho},
	{Name: "quit", Arity: -1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, Handler: (*Server).cmdQuit},
	{Name: "reset", Arity: 1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, Handler: (*Server).cmdReset},
	{Name: "auth", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, Handler: (*Server).cmdAuth},
	{Name: "hello", Arity: -1, Flags: FlagNoscript | FlagLoading | FlagStale | FlagFast | FlagNoAuth | FlagAllowBusy, Handler: (*Server).cmdHello},
	{Name: "client", Arity: -2, Flags: 0, Subcommands: []*CommandSpec{
		{Name: "client|getname", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientGetname},
		{Name: "client|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdClientHelp},
		{Name: "client|info", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientInfo},
		{Name: "client|no-evict", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientNoEvict},
		{Name: "client|list", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientList},
		{Name: "client|kill", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientKill},
		{Name: "client|id", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientId},
		{Name: "client|setinfo", Arity: 4, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientSetinfo},
		{Name: "client|no-touch", Arity: 3, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientNoTouch},
		// Sent by redis-py 8 at connect; kvserver has no maintenance events to push, so it only acknowledges.
		{Name: "client|maint_notifications", Arity: -3, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientMaintNotifications},
		{Name: "client|setname", Arity: 3, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdClientSetname},
	}},
	{Name: "acl", Arity: -2, Flags: 0, Subcommands: []*CommandSpec{
		{Name: "acl|cat", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdACLCat},
		{Name: "acl|dryrun", Arity: -4, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdACLDryrun},
		{Name: "acl|genpass", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdACLGenpass},
		{Name: "acl|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdACLHelp},
		{Name: "acl|list", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdACLList},
		{Name: "acl|users", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdACLUsers},
		{Name: "acl|whoami", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdACLWhoami},
	}},
	{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdInfo},
	{Name: "config", Arity: -2, Flags: 0, Subcommands: []*CommandSpec{
		{Name: "config|resetstat", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdConfigResetstat},
		{Name: "config|rewrite", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdConfigRewrite},
		{Name: "config|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdConfigHelp},
		{Name: "config|get", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdConfigGet},
		{Name: "config|set", Arity: -4, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Handler: (*Server).cmdConfigSet},
	}},
	{Name: "command", Arity: -1, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommand, Subcommands: []*CommandSpec{
		{Name: "command|count", Arity: 2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommandCount},
		{Name: "command|docs", Arity: -2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommandDocs},
		{Name: "command|info", Arity: -2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommandInfo},
		{Name: "command|list", Arity: -2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommandList},
		{Name: "command|getkeys", Arity: -4, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommandGetkeys},
		{Name: "command|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: (*Server).cmdCommandHelp},
	}},
	{Name: "time", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: (*Server).cmdTime},
	{Name: "lastsave", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: (*Server).cmdLastsave},
	{Name: "save", Arity: 1, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading | FlagNoMulti, Handler: (*Server).cmdSave},
	{Name: "bgsave", Arity: -1, Flags: FlagAdmin | FlagNoscript | FlagNoAsyncLoading, Handler: (*Server).cmdBgsave},
	{Name: "debug", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, Protected: true, Handler: (*Server).cmdDebug},
	{Name: "shutdown", Arity: -1, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale | FlagNoMulti | FlagAllowBusy, Handler: (*Server).cmdShutdown},
	// Cluster mode (cluster.go): answered like a Redis without cluster
	// support unless Options.Cluster is set.
	{Name: "cluster", Arity: -2, Flags: 0, Subcommands: []*CommandSpec{
		{Name: "cluster|addslots", Arity: -3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|addslotsrange", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|bumpepoch", Arity: 2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|count-failure-reports", Arity: 3, Flags: FlagAdmin | FlagStale, Handler: clusterOnly((*Server).cmdClusterCountFailureReports)},
		{Name: "cluster|countkeysinslot", Arity: 3, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterCountkeysinslot)},
		{Name: "cluster|delslots", Arity: -3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|delslotsrange", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|failover", Arity: -2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|flushslots", Arity: 2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|forget", Arity: 3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|getkeysinslot", Arity: 4, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterGetkeysinslot)},
		{Name: "cluster|help", Arity: 2, Flags: FlagLoading | FlagStale, Handler: clusterOnly((*Server).cmdClusterHelp)},
		{Name: "cluster|info", Arity: 2, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterInfo)},
		{Name: "cluster|keyslot", Arity: 3, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterKeyslot)},
		{Name: "cluster|links", Arity: 2, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterLinks)},
		{Name: "cluster|meet", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|myid", Arity: 2, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterMyid)},
		{Name: "cluster|nodes", Arity: 2, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterNodes)},
		{Name: "cluster|replicas", Arity: 3, Flags: FlagAdmin | FlagStale, Handler: clusterOnly((*Server).cmdClusterReplicas)},
		{Name: "cluster|replicate", Arity: 3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|reset", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagStale, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|saveconfig", Arity: 2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterSaveconfig)},
		{Name: "cluster|set-config-epoch", Arity: 3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|setslot", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, Handler: clusterOnly((*Server).cmdClusterStatic)},
		{Name: "cluster|shards", Arity: 2, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterShards)},
		{Name: "cluster|slaves", Arity: 3, Flags: FlagAdmin | FlagStale, Handler: clusterOnly((*Server).cmdClusterReplicas)},
		{Name: "cluster|slots", Arity: 2, Flags: FlagStale, Handler: clusterOnly((*Server).cmdClusterSlots)},
	}},
	{Name: "readonly", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: clusterOnly((*Server).cmdClusterOK)},
	{Name: "readwrite", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, Handler: clusterOnly((*Server).cmdClusterOK)},
	{Name: "asking", Arity: 1, Flags: FlagFast, Handler: clusterOnly((*Server).cmdClusterOK)},
	// kvserver's KV-cache extensions (kvcache.go).
	{Name: "kvc.probe", Arity: -2, Flags: FlagReadonly | FlagFast | FlagMovablekeys, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdKvcProbe},
	{Name: "kvc.pin", Arity: -3, Flags: FlagWrite | FlagFast, FirstKey: 2, LastKey: -1, Step: 1, Handler: (*Server).cmdKvcPin},
	{Name: "kvc.unpin", Arity: -2, Flags: FlagWrite | FlagFast, FirstKey: 1, LastKey: -1, Step: 1, Handler: (*Server).cmdKvcUnpin},
	{Name: "kvc.info", Arity: 2, Flags: FlagReadonly | FlagFast, FirstKey: 1, LastKey: 1, Step: 1, Handler: (*Server).cmdKvcInfo},
}

// CommandTable indexes the command table by lower-case name.
type CommandTable struct {
	byName map[string]*CommandSpec
	all    []*CommandSpec
}

// NewCommandTable builds the lookup table from copies of specs: the table
// owns its specs (their subcommand index, renames), so tables built from
// the same specs, one per Server in a process, share no mutable state.
func NewCommandTable(specs []*CommandSpec) *CommandTable {
	t := &CommandTable{byName: make(map[string]*CommandSpec, len(specs))}
	for _, orig := range specs {
		spec := orig.clone()
		if len(spec.Subcommands) > 0 {
			spec.subs = make(map[string]*CommandSpec, len(spec.Subcommands))
			for _, sub := range spec.Subcommands {
				_, short, _ := strings.Cut(sub.Name, "|")
				spec.subs[short] = sub
			}
		}
		t.byName[spec.Name] = spec
		t.all = append(t.all, spec)
	}
	return t
}

// clone copies spec and its subcommands, deeply enough that nothing a
// CommandTable sets is shared with spec.
func (spec *CommandSpec) clone() *CommandSpec {
	c := *spec
	c.subs = nil
	if spec.Subcommands != nil {
		c.Subcommands = make([]*CommandSpec, len(spec.Subcommands))
		for i, sub := range spec.Subcommands {
			c.Subcommands[i] = sub.clone()
		}
	}
	return &c
}

// Lookup finds a command by name, case-insensitively.
func (t *CommandTable) Lookup(name []byte) *CommandSpec {
	return lookupFold(t.byName, name)
}

// lookupFold finds name in m (whose keys are lower case) without
// allocating: clients send upper-case names, which are lowered into a
// stack buffer.
func lookupFold(m map[string]*CommandSpec, name []byte) *CommandSpec {
	if spec, ok := m[string(name)]; ok {
		return spec
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(string(name))]
	}
	low := buf[:len(name)]
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return m[string(low)]
}

// Sub finds a subcommand of spec by name, case-insensitively.
func (spec *CommandSpec) Sub(name []byte) *CommandSpec {
	return lookupFold(spec.subs, name)
}

// All returns every top-level command.
func (t *CommandTable) All() []*CommandSpec { return t.all }
