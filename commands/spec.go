package commands

import (
	"strings"
)

// Protection names the setting that guards a protected command (Redis's
// CMD_PROTECTED): "no", "yes" or "local" says who may run it.
type Protection uint8

// The protections: none, enable-debug-command (DEBUG) and
// enable-module-command (MODULE LOAD, LOADEX and UNLOAD).
const (
	Unprotected Protection = iota
	ProtectedByDebug
	ProtectedByModule
)

// Setting is the name of the setting that guards the command.
func (p Protection) Setting() string {
	switch p {
	case ProtectedByDebug:
		return "enable-debug-command"
	case ProtectedByModule:
		return "enable-module-command"
	}
	return ""
}

// Refusal is Redis 7.0's error for a client the setting does not allow.
func (p Protection) Refusal() string {
	cmd := "DEBUG"
	if p == ProtectedByModule {
		cmd = "MODULE"
	}
	return "ERR " + cmd + " command not allowed. If the " + p.Setting() + ` option is set to "local", ` +
		"you can run it from a local connection, otherwise you need to set this option in the configuration file, " +
		"and then restart the server."
}

// Flags are a command's properties, as Redis's COMMAND INFO names them.
type Flags uint32

// Command flags, in the order Redis lists them in COMMAND INFO.
const (
	FlagWrite Flags = 1 << iota
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
func (f Flags) Names() []string { return bitNames(f, flagNames[:]) }

// bitNames lists names[i] for each bit i set in f, in order.
func bitNames[F KeyFlags | Flags](f F, names []string) []string {
	var out []string
	for i, n := range names {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Handler executes a command whose arity, authentication, ACL, cluster
// slot and memory the dispatcher has already checked. x.Args[0] is the
// command name (for a subcommand, x.Args[1] is the subcommand name).
type Handler func(x *Ctx)

// Routing says which keys decide where a command runs in cluster mode.
type Routing uint8

const (
	// RouteAllKeys: every key must hash to one slot (else CROSSSLOT), and
	// that slot's owner runs the command. Redis's rule.
	RouteAllKeys Routing = iota
	// RouteFirstKey: the first key alone picks the node; the others may
	// live anywhere (KVC.PROBE walks a chain of chunks whose hashes
	// scatter over the slots and stops at the first one this node lacks).
	RouteFirstKey
)

// Spec is one row of the command table: everything kvserver knows about a
// command or subcommand.
type Spec struct {
	// Name is the lower-case name; subcommands are "parent|sub".
	Name string
	// Arity is the exact argument count including the name, or -N for
	// at least N.
	Arity int
	// Flags are the command's properties. FlagMovablekeys is derived from
	// the key specs (as Redis does) and need not be written.
	Flags Flags
	// ACL is the command's ACL categories, space-separated, as COMMAND
	// INFO lists them ("@read @string @fast"); empty means the ones Redis
	// derives from the flags.
	ACL string
	// KeySpecs locate the key arguments and say what the command does to
	// each (Redis 7 key specifications).
	KeySpecs []KeySpec
	// GetKeys, when set, finds the key arguments instead of KeySpecs, for
	// commands whose keys no key spec can describe (Redis's getkeys_proc).
	// It returns argument indexes.
	GetKeys func(args [][]byte) []int
	// Routing picks the keys that route the command in cluster mode.
	Routing Routing
	// Handler runs the command; nil for a container of subcommands.
	Handler Handler
	// Subcommands of a container command such as CLIENT.
	Subcommands []*Spec
	// Exclusive: the handler runs with no other client's command beside
	// it, as EXEC's does (scripts: EVAL, FCALL).
	Exclusive bool
	// MayReplicate is Redis's CMD_MAY_REPLICATE, which COMMAND INFO does
	// not show: a command without the write flag that may still change
	// data (PFCOUNT caches its count in the value), so CLIENT PAUSE WRITE
	// holds it.
	MayReplicate bool
	// Protected is Redis's CMD_PROTECTED: the setting that says who may
	// run the command (DEBUG: enable-debug-command; MODULE LOAD, LOADEX
	// and UNLOAD: enable-module-command).
	Protected Protection

	// ID is the row's index among its table's commands and subcommands
	// (Table.NumIDs), as Redis's redisCommand.id: per-command state lives
	// in slices indexed by it instead of maps keyed by name.
	ID int

	subs map[string]*Spec
	// firstKey, lastKey and step are the legacy key range COMMAND INFO
	// reports, derived from the key specs.
	firstKey, lastKey, step int
	categories              []string
	// valueRun is ValueKeys's allocation-free answer, when it has one.
	valueRun *keyRun
}

// CheckArity reports whether argc arguments fit the arity.
func (s *Spec) CheckArity(argc int) bool {
	if s.Arity >= 0 {
		return argc == s.Arity
	}
	return argc >= -s.Arity
}

// TouchesData reports whether the command reads or writes the keyspace:
// it has keys, or is flagged write or readonly (FLUSHALL, DBSIZE, SCAN...).
// Package server runs such handlers under the lock that keeps EXEC
// atomic; the others (WAIT, CLIENT, CONFIG...) run beside an EXEC, so that
// one that blocks (WAIT) never holds it up.
func (s *Spec) TouchesData() bool {
	return len(s.KeySpecs) > 0 || s.GetKeys != nil || s.Flags&(FlagWrite|FlagReadonly) != 0
}

// IsContainer reports whether s has subcommands that dispatch looks up.
func (s *Spec) IsContainer() bool { return s.subs != nil }

// Sub finds a subcommand of s by name, case-insensitively.
func (s *Spec) Sub(name []byte) *Spec {
	return lookupFold(s.subs, name)
}

// Categories are the command's ACL categories ("@read").
func (s *Spec) Categories() []string { return s.categories }

// HasCategory reports whether the command is in the ACL category cat
// ("@read").
func (s *Spec) HasCategory(cat string) bool {
	for _, c := range s.categories {
		if c == cat {
			return true
		}
	}
	return false
}

// LegacyKeyRange is the first key, last key and step COMMAND INFO reports,
// derived from the key specs like Redis's populateCommandLegacyRangeSpec.
func (s *Spec) LegacyKeyRange() (first, last, step int) {
	return s.firstKey, s.lastKey, s.step
}

// clone copies s and its subcommands, deeply enough that nothing a Table
// sets is shared with s.
func (s *Spec) clone() *Spec {
	c := *s
	c.subs = nil
	if s.Subcommands != nil {
		c.Subcommands = make([]*Spec, len(s.Subcommands))
		for i, sub := range s.Subcommands {
			c.Subcommands[i] = sub.clone()
		}
	}
	return &c
}

// finish derives what the row leaves implicit: the legacy key range, the
// movablekeys flag, the categories, and the subcommand index.
func (s *Spec) finish() {
	var movable bool
	s.firstKey, s.lastKey, s.step, movable = deriveKeyRange(s.KeySpecs)
	if s.GetKeys != nil || movable {
		s.Flags |= FlagMovablekeys
	}
	s.valueRun = valueRunOf(s.KeySpecs)
	if s.ACL != "" {
		s.categories = strings.Fields(s.ACL)
	} else {
		s.categories = implicitCategories(s.Flags)
	}
	if len(s.Subcommands) > 0 {
		s.subs = make(map[string]*Spec, len(s.Subcommands))
		for _, sub := range s.Subcommands {
			sub.finish()
			_, short, _ := strings.Cut(sub.Name, "|")
			s.subs[short] = sub
		}
	}
}

// implicitCategories are the categories Redis derives from a command's
// flags (setImplicitACLCategories) for a command without its own.
func implicitCategories(f Flags) []string {
	var cats []string
	if f&FlagWrite != 0 {
		cats = append(cats, "@write")
	}
	if f&FlagReadonly != 0 {
		cats = append(cats, "@read")
	}
	if f&FlagAdmin != 0 {
		cats = append(cats, "@admin", "@dangerous")
	}
	if f&FlagPubsub != 0 {
		cats = append(cats, "@pubsub")
	}
	if f&FlagFast != 0 {
		cats = append(cats, "@fast")
	}
	if f&FlagBlocking != 0 {
		cats = append(cats, "@blocking")
	}
	if f&FlagFast == 0 {
		cats = append(cats, "@slow")
	}
	return cats
}
