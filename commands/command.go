package commands

import (
	"strings"

	"github.com/kvserver/kvserver/glob"
	"github.com/kvserver/kvserver/resp"
)

// The COMMAND family: COMMAND, COUNT, INFO, DOCS, LIST, GETKEYS. Name,
// arity, flags, key positions, ACL categories and key specs come from the
// command's Spec row; only the documentation (summary, since, group,
// complexity, arguments) and command tips come from elsewhere: for the
// commands Redis has, from commanddocs_gen.go, generated from the COMMAND
// DOCS and COMMAND INFO replies of the Redis whose behaviour kvserver
// follows and decoded on first use by redisCommandDocs
// (TestSpecRowsMatchRedis checks every row against the rest of that
// reply); for kvserver's own, from kvserverCommandDocs below.
//
// To regenerate after adding commands to the table, start a redis-server
// (7.0.15, the version the replies are matched against byte for byte) and
// run go generate with its address:
//
//	redis-server --port 7788 --save '' --daemonize yes
//	go run ./commands/internal/gencommands -addr 127.0.0.1:7788 -out commands/commanddocs_gen.go
//
//go:generate go run ./internal/gencommands -addr 127.0.0.1:7788 -out commanddocs_gen.go

// commandFamily are the COMMAND command's rows.
var commandFamily = []*Spec{
	{Name: "command", Arity: -1, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommand, Subcommands: []*Spec{
		{Name: "command|count", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandCount},
		{Name: "command|docs", Arity: -2, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandDocs},
		{Name: "command|info", Arity: -2, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandInfo},
		{Name: "command|list", Arity: -2, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandList},
		{Name: "command|getkeys", Arity: -4, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandGetkeys},
		{Name: "command|getkeysandflags", Arity: -4, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandGetkeysandflags},
		{Name: "command|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow @connection", Handler: cmdCommandHelp},
	}},
}

// commandDoc is what Redis reports about a command beyond our Spec row:
// its tips and documentation. The generated descriptions also keep
// Redis's own arity, flags, key positions, categories and key specs, only
// for TestSpecRowsMatchRedis to check our rows against.
type commandDoc struct {
	Arity                   int
	Flags                   []string
	FirstKey, LastKey, Step int
	// ACLCategories is a set of simple strings ("@read").
	ACLCategories resp.Value
	// Tips is a set of bulk strings ("request_policy:all_shards").
	Tips resp.Value
	// KeySpecs is the key specifications as Redis 7.0 encodes them.
	KeySpecs resp.Value
	// Docs is the COMMAND DOCS map without its "subcommands" entry.
	Docs resp.Value
}

// kvserverCommandDocs describes the commands and subcommands of our table
// that the generating Redis (7.0) lacks. CLIENT SETINFO and CLIENT
// NO-TOUCH follow Redis 7.2's definitions.
var kvserverCommandDocs = map[string]*commandDoc{
	"client|setinfo": connectionDoc("Sets information specific to the client or connection.", "7.2.0",
		oneofArg("attr",
			resp.Map(resp.Bulk("name"), resp.Bulk("libname"), resp.Bulk("type"), resp.Bulk("string"), resp.Bulk("token"), resp.Bulk("LIB-NAME")),
			resp.Map(resp.Bulk("name"), resp.Bulk("libver"), resp.Bulk("type"), resp.Bulk("string"), resp.Bulk("token"), resp.Bulk("LIB-VER")),
		),
	),
	"client|no-touch": connectionDoc("Controls whether commands sent by the client affect the LRU/LFU of accessed keys.", "7.2.0",
		onOffArg(),
	),
	"client|maint_notifications": connectionDoc("Enables or disables maintenance notifications for the current connection (kvserver accepts the request and sends none).", "8.2.0",
		onOffArg(),
		resp.Map(
			resp.Bulk("name"), resp.Bulk("option"),
			resp.Bulk("type"), resp.Bulk("string"),
			resp.Bulk("flags"), resp.SetOf(resp.Simple("optional"), resp.Simple("multiple")),
		),
	),
}

// connectionDoc describes an O(1) command of the connection group, without
// tips, introduced in Redis since, taking args.
func connectionDoc(summary, since string, args ...resp.Value) *commandDoc {
	return &commandDoc{
		Tips: resp.SetOf(),
		Docs: resp.Map(
			resp.Bulk("summary"), resp.Bulk(summary),
			resp.Bulk("since"), resp.Bulk(since),
			resp.Bulk("group"), resp.Bulk("connection"),
			resp.Bulk("complexity"), resp.Bulk("O(1)"),
			resp.Bulk("arguments"), resp.Array(args...),
		),
	}
}

// oneofArg is a COMMAND DOCS argument named name that takes one of choices.
func oneofArg(name string, choices ...resp.Value) resp.Value {
	return resp.Map(
		resp.Bulk("name"), resp.Bulk(name),
		resp.Bulk("type"), resp.Bulk("oneof"),
		resp.Bulk("arguments"), resp.Array(choices...),
	)
}

// onOffArg is the "enabled" argument of CLIENT NO-TOUCH and CLIENT
// MAINT_NOTIFICATIONS: the pure token ON or OFF.
func onOffArg() resp.Value {
	return oneofArg("enabled",
		resp.Map(resp.Bulk("name"), resp.Bulk("on"), resp.Bulk("type"), resp.Bulk("pure-token"), resp.Bulk("token"), resp.Bulk("ON")),
		resp.Map(resp.Bulk("name"), resp.Bulk("off"), resp.Bulk("type"), resp.Bulk("pure-token"), resp.Bulk("token"), resp.Bulk("OFF")),
	)
}

// docFor returns what is known about a command beyond its row, nil for a
// command nobody has described.
func docFor(name string) *commandDoc {
	if d := kvserverCommandDocs[name]; d != nil {
		return d
	}
	return redisCommandDocs()[name]
}

// keySpecsValue renders the key specs the way Redis 7.0's COMMAND INFO
// does (addReplyCommandKeySpecs).
func keySpecsValue(specs []KeySpec) resp.Value {
	out := make([]resp.Value, len(specs))
	for i := range specs {
		ks := &specs[i]
		var elems []resp.Value
		if ks.Notes != "" {
			elems = append(elems, resp.Bulk("notes"), resp.Bulk(ks.Notes))
		}
		elems = append(elems, resp.Bulk("flags"), simpleSet(ks.Flags.Names()))
		var begin, find resp.Value
		if ks.Begin.Unknown {
			unknown := resp.Map(resp.Bulk("type"), resp.Bulk("unknown"), resp.Bulk("spec"), resp.Map())
			elems = append(elems, resp.Bulk("begin_search"), unknown, resp.Bulk("find_keys"), unknown)
			out[i] = resp.Map(elems...)
			continue
		}
		if ks.Begin.Keyword != "" {
			begin = resp.Map(resp.Bulk("type"), resp.Bulk("keyword"), resp.Bulk("spec"), resp.Map(
				resp.Bulk("keyword"), resp.Bulk(ks.Begin.Keyword),
				resp.Bulk("startfrom"), resp.Int(int64(ks.Begin.StartFrom))))
		} else {
			begin = resp.Map(resp.Bulk("type"), resp.Bulk("index"), resp.Bulk("spec"), resp.Map(
				resp.Bulk("index"), resp.Int(int64(ks.Begin.Index))))
		}
		if f := ks.Find; f.KeyNum {
			find = resp.Map(resp.Bulk("type"), resp.Bulk("keynum"), resp.Bulk("spec"), resp.Map(
				resp.Bulk("keynumidx"), resp.Int(int64(f.KeyNumIdx)),
				resp.Bulk("firstkey"), resp.Int(int64(f.FirstKey)),
				resp.Bulk("keystep"), resp.Int(int64(f.KeyStep))))
		} else {
			find = resp.Map(resp.Bulk("type"), resp.Bulk("range"), resp.Bulk("spec"), resp.Map(
				resp.Bulk("lastkey"), resp.Int(int64(f.LastKey)),
				resp.Bulk("keystep"), resp.Int(int64(f.KeyStep)),
				resp.Bulk("limit"), resp.Int(int64(f.Limit))))
		}
		elems = append(elems, resp.Bulk("begin_search"), begin, resp.Bulk("find_keys"), find)
		out[i] = resp.Map(elems...)
	}
	return resp.SetOf(out...)
}

// simpleSet is a set of simple strings.
func simpleSet(names []string) resp.Value {
	elems := make([]resp.Value, len(names))
	for i, n := range names {
		elems[i] = resp.Simple(n)
	}
	return resp.SetOf(elems...)
}

// commandInfo renders one COMMAND INFO entry from the row, with Redis's
// tips, then the subcommands (Redis 7.0 writes an empty set, not an empty
// array, when there are none).
func commandInfo(spec *Spec) resp.Value {
	tips := resp.SetOf()
	if d := docFor(spec.Name); d != nil {
		tips = d.Tips
	}
	subs := resp.SetOf()
	if len(spec.Subcommands) > 0 {
		elems := make([]resp.Value, len(spec.Subcommands))
		for i, sub := range spec.Subcommands {
			elems[i] = commandInfo(sub)
		}
		subs = resp.Array(elems...)
	}
	first, last, step := spec.LegacyKeyRange()
	return resp.Array(
		resp.Bulk(spec.Name),
		resp.Int(int64(spec.Arity)),
		simpleSet(spec.Flags.Names()),
		resp.Int(int64(first)),
		resp.Int(int64(last)),
		resp.Int(int64(step)),
		simpleSet(spec.Categories()),
		tips,
		keySpecsValue(spec.KeySpecs),
		subs,
	)
}

// commandDocs renders one COMMAND DOCS entry: the description's map, with
// our subcommands' docs added under "subcommands".
func commandDocs(spec *Spec) resp.Value {
	var elems []resp.Value
	if d := docFor(spec.Name); d != nil {
		elems = append(elems, d.Docs.Elems...)
	} else {
		elems = append(elems, resp.Bulk("group"), resp.Bulk("generic"))
	}
	if len(spec.Subcommands) > 0 {
		subs := make([]resp.Value, 0, 2*len(spec.Subcommands))
		for _, sub := range spec.Subcommands {
			subs = append(subs, resp.Bulk(sub.Name), commandDocs(sub))
		}
		elems = append(elems, resp.Bulk("subcommands"), resp.Map(subs...))
	}
	return resp.Map(elems...)
}

// cmdCommand implements COMMAND without a subcommand: every command's info.
func cmdCommand(x *Ctx) {
	all := x.Commands.All()
	x.W.Array(len(all))
	for _, spec := range all {
		x.W.WriteValue(commandInfo(spec))
	}
}

func cmdCommandCount(x *Ctx) { x.W.Int(int64(len(x.Commands.All()))) }

// cmdCommandInfo implements COMMAND INFO [name ...]; an unknown name gets a
// null entry.
func cmdCommandInfo(x *Ctx) {
	if len(x.Args) == 2 {
		cmdCommand(x)
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, name := range x.Args[2:] {
		if spec := x.Commands.LookupFullName(name); spec != nil {
			x.W.WriteValue(commandInfo(spec))
		} else {
			x.W.Null()
		}
	}
}

// cmdCommandDocs implements COMMAND DOCS [name ...]: a map from full name
// to docs; unknown names are left out.
func cmdCommandDocs(x *Ctx) {
	var specs []*Spec
	if len(x.Args) == 2 {
		specs = x.Commands.All()
	} else {
		for _, name := range x.Args[2:] {
			if spec := x.Commands.LookupFullName(name); spec != nil {
				specs = append(specs, spec)
			}
		}
	}
	x.W.Map(len(specs))
	for _, spec := range specs {
		x.W.BulkString(spec.Name)
		x.W.WriteValue(commandDocs(spec))
	}
}

// cmdCommandList implements COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p]:
// full names of commands and subcommands, filtered like Redis.
func cmdCommandList(x *Ctx) {
	args := x.Args
	keep := func(*Spec) bool { return true }
	for i := 2; i < len(args); i += 3 {
		if !equalFold(args[i], "filterby") || len(args)-1-i != 2 {
			x.W.Error(errSyntax)
			return
		}
		typ, arg := args[i+1], args[i+2]
		switch {
		case equalFold(typ, "module"):
			keep = func(*Spec) bool { return false } // kvserver loads no modules
		case equalFold(typ, "aclcat"):
			cat := "@" + strings.ToLower(string(arg))
			keep = func(spec *Spec) bool { return spec.HasCategory(cat) }
		case equalFold(typ, "pattern"):
			pattern := arg
			keep = func(spec *Spec) bool { return glob.MatchFold(pattern, []byte(spec.Name)) }
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	var names []string
	Walk(x.Commands.All(), func(spec *Spec) {
		if keep(spec) {
			names = append(names, spec.Name)
		}
	})
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

// cmdCommandGetkeys implements COMMAND GETKEYS command [arg ...] from the
// command's key specs, with Redis's errors.
func cmdCommandGetkeys(x *Ctx) {
	_, keys, ok := commandKeys(x)
	if !ok {
		return
	}
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.Bulk(x.Args[2+k])
	}
}

// cmdCommandGetkeysandflags implements COMMAND GETKEYSANDFLAGS: each key
// with the flags of the key spec that found it.
func cmdCommandGetkeysandflags(x *Ctx) {
	spec, keys, ok := commandKeys(x)
	if !ok {
		return
	}
	cmd := x.Args[2:]
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.Array(2)
		x.W.Bulk(cmd[k])
		names := keyFlagsAt(spec, cmd, k).Names()
		x.W.Set(len(names))
		for _, n := range names {
			x.W.Simple(n)
		}
	}
}

// variableKeyFlags resolve the flags of a key spec marked
// variable_flags from the arguments, as Redis's getkeys procs do for
// COMMAND GETKEYSANDFLAGS.
var variableKeyFlags = map[string]func(cmd [][]byte) KeyFlags{
	"set": setKeyFlags,
}

// getKeysFlags give the flags of the keys a GetKeys function finds, as
// the getkeys procs of Redis that set them do (sortGetKeys).
var getKeysFlags = map[string]func(cmd [][]byte, k int) KeyFlags{
	"sort":    sortKeyFlags,
	"sort_ro": sortKeyFlags,
	"migrate": func([][]byte, int) KeyFlags { return KeyRW | KeyAccess | KeyDelete },
}

// keyFlagsAt is the flags of the first key spec of spec that finds
// argument k of cmd (none for keys a GetKeys function finds).
func keyFlagsAt(spec *Spec, cmd [][]byte, k int) KeyFlags {
	if spec.GetKeys != nil {
		if resolve := getKeysFlags[spec.Name]; resolve != nil {
			return resolve(cmd, k)
		}
		return 0
	}
	for i := range spec.KeySpecs {
		ks := &spec.KeySpecs[i]
		for _, j := range ks.appendKeys(nil, cmd) {
			if j != k {
				continue
			}
			if resolve := variableKeyFlags[spec.Name]; resolve != nil && ks.Flags&KeyVariableFlags != 0 {
				return resolve(cmd)
			}
			return ks.Flags
		}
	}
	return 0
}

// commandKeys finds the keys of the command line after COMMAND GETKEYS or
// GETKEYSANDFLAGS, replying Redis's error when it cannot.
func commandKeys(x *Ctx) (*Spec, []int, bool) {
	cmd := x.Args[2:]
	spec := x.Commands.Lookup(cmd[0])
	if spec != nil && spec.IsContainer() && len(cmd) > 1 {
		spec = spec.Sub(cmd[1])
	}
	switch {
	case spec == nil:
		x.W.Error("ERR Invalid command specified")
		return nil, nil, false
	case len(spec.KeySpecs) == 0 && spec.GetKeys == nil:
		x.W.Error("ERR The command has no key arguments")
		return nil, nil, false
	case !spec.CheckArity(len(cmd)):
		x.W.Error("ERR Invalid number of arguments specified for command")
		return nil, nil, false
	}
	keys := spec.Keys(cmd)
	if len(keys) == 0 && spec.Flags&FlagNoMandatoryKeys == 0 {
		x.W.Error("ERR Invalid arguments specified for command")
		return nil, nil, false
	}
	return spec, keys, true
}

// writeHelp writes a HELP reply in Redis's layout.
func writeHelp(x *Ctx, cmd string, lines ...string) {
	x.W.Array(len(lines) + 3)
	x.W.Simple(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		x.W.Simple(l)
	}
	x.W.Simple("HELP")
	x.W.Simple("    Prints this help.")
}

func cmdCommandHelp(x *Ctx) {
	writeHelp(x, "COMMAND",
		"(no subcommand)",
		"    Return details about all Redis commands.",
		"COUNT",
		"    Return the total number of commands in this Redis server.",
		"LIST",
		"    Return a list of all commands in this Redis server.",
		"INFO [<command-name> ...]",
		"    Return details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"DOCS [<command-name> ...]",
		"    Return documentation details about multiple Redis commands.",
		"    If no command names are given, documentation details for all",
		"    commands are returned.",
		"GETKEYS <full-command>",
		"    Return the keys from a full Redis command.",
		"GETKEYSANDFLAGS <full-command>",
		"    Return the keys and the access flags from a full Redis command.",
	)
}

// RedisHas reports whether the Redis that commanddocs_gen.go was generated
// from has the command or subcommand of this full name: its COMMAND INFO
// and COMMAND DOCS replies are then Redis's, byte for byte. It looks at the
// generated data without decoding it.
func RedisHas(name string) bool {
	_, ok := redisCommandDocsRESP[name]
	return ok
}
