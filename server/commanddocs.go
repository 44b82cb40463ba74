package server

import (
	"strings"

	"github.com/kvserver/kvserver/glob"
	"github.com/kvserver/kvserver/resp"
)

// COMMAND INFO and COMMAND DOCS replies. What Redis knows about a command
// beyond the command table (ACL categories, tips, key specs, the
// documentation) comes from a real redis-server: commanddocs_gen.go is
// generated from the COMMAND INFO and COMMAND DOCS replies of the Redis
// whose behaviour kvserver follows, for the commands of our table. The
// name, arity, flags and key positions are always rendered from our table
// (TestCommandTableMatchesRedis checks that the two agree), and
// subcommand lists from our table's subcommands, so the replies describe
// what kvserver implements. Commands Redis does not have get their data
// from kvserverCommandDocs below, or a minimal fallback derived from the
// table.
//
// To regenerate after adding commands to the table, start a redis-server
// (7.0.15, the version the replies are matched against byte for byte) and
// run go generate with its address:
//
//	redis-server --port 7788 --save '' --daemonize yes
//	go run ./server/internal/gencommands -addr 127.0.0.1:7788 -out server/commanddocs_gen.go
//
//go:generate go run ./internal/gencommands -addr 127.0.0.1:7788 -out commanddocs_gen.go

// commandDoc is what COMMAND INFO and COMMAND DOCS report about one
// command or subcommand beyond our table. Arity, Flags and the key
// positions are Redis's own values, kept only to check our table against.
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
	"client|setinfo": {
		Arity: 4, Flags: []string{"noscript", "loading", "stale"},
		ACLCategories: resp.SetOf(resp.Simple("@slow"), resp.Simple("@connection")),
		Tips:          resp.SetOf(),
		KeySpecs:      resp.SetOf(),
		Docs: resp.Map(
			resp.Bulk("summary"), resp.Bulk("Sets information specific to the client or connection."),
			resp.Bulk("since"), resp.Bulk("7.2.0"),
			resp.Bulk("group"), resp.Bulk("connection"),
			resp.Bulk("complexity"), resp.Bulk("O(1)"),
			resp.Bulk("arguments"), resp.Array(
				resp.Map(
					resp.Bulk("name"), resp.Bulk("attr"),
					resp.Bulk("type"), resp.Bulk("oneof"),
					resp.Bulk("arguments"), resp.Array(
						resp.Map(resp.Bulk("name"), resp.Bulk("libname"), resp.Bulk("type"), resp.Bulk("string"), resp.Bulk("token"), resp.Bulk("LIB-NAME")),
						resp.Map(resp.Bulk("name"), resp.Bulk("libver"), resp.Bulk("type"), resp.Bulk("string"), resp.Bulk("token"), resp.Bulk("LIB-VER")),
					),
				),
			),
		),
	},
	"client|no-touch": {
		Arity: 3, Flags: []string{"noscript", "loading", "stale"},
		ACLCategories: resp.SetOf(resp.Simple("@slow"), resp.Simple("@connection")),
		Tips:          resp.SetOf(),
		KeySpecs:      resp.SetOf(),
		Docs: resp.Map(
			resp.Bulk("summary"), resp.Bulk("Controls whether commands sent by the client affect the LRU/LFU of accessed keys."),
			resp.Bulk("since"), resp.Bulk("7.2.0"),
			resp.Bulk("group"), resp.Bulk("connection"),
			resp.Bulk("complexity"), resp.Bulk("O(1)"),
			resp.Bulk("arguments"), resp.Array(
				resp.Map(
					resp.Bulk("name"), resp.Bulk("enabled"),
					resp.Bulk("type"), resp.Bulk("oneof"),
					resp.Bulk("arguments"), resp.Array(
						resp.Map(resp.Bulk("name"), resp.Bulk("on"), resp.Bulk("type"), resp.Bulk("pure-token"), resp.Bulk("token"), resp.Bulk("ON")),
						resp.Map(resp.Bulk("name"), resp.Bulk("off"), resp.Bulk("type"), resp.Bulk("pure-token"), resp.Bulk("token"), resp.Bulk("OFF")),
					),
				),
			),
		),
	},
	"client|maint_notifications": {
		Arity: -3, Flags: []string{"noscript", "loading", "stale"},
		ACLCategories: resp.SetOf(resp.Simple("@slow"), resp.Simple("@connection")),
		Tips:          resp.SetOf(),
		KeySpecs:      resp.SetOf(),
		Docs: resp.Map(
			resp.Bulk("summary"), resp.Bulk("Enables or disables maintenance notifications for the current connection (kvserver accepts the request and sends none)."),
			resp.Bulk("since"), resp.Bulk("8.2.0"),
			resp.Bulk("group"), resp.Bulk("connection"),
			resp.Bulk("complexity"), resp.Bulk("O(1)"),
			resp.Bulk("arguments"), resp.Array(
				resp.Map(
					resp.Bulk("name"), resp.Bulk("enabled"),
					resp.Bulk("type"), resp.Bulk("oneof"),
					resp.Bulk("arguments"), resp.Array(
						resp.Map(resp.Bulk("name"), resp.Bulk("on"), resp.Bulk("type"), resp.Bulk("pure-token"), resp.Bulk("token"), resp.Bulk("ON")),
						resp.Map(resp.Bulk("name"), resp.Bulk("off"), resp.Bulk("type"), resp.Bulk("pure-token"), resp.Bulk("token"), resp.Bulk("OFF")),
					),
				),
				resp.Map(
					resp.Bulk("name"), resp.Bulk("option"),
					resp.Bulk("type"), resp.Bulk("string"),
					resp.Bulk("flags"), resp.SetOf(resp.Simple("optional"), resp.Simple("multiple")),
				),
			),
		),
	},
}

// docFor returns what is known about a command beyond the table, nil for
// a command nobody has described.
func docFor(name string) *commandDoc {
	if d := kvserverCommandDocs[name]; d != nil {
		return d
	}
	return redisCommandDocs[name]
}

// implicitACLCategories are the categories Redis derives from a command's
// flags (setImplicitACLCategories), for commands without a description.
func implicitACLCategories(f CommandFlags) resp.Value {
	var cats []resp.Value
	add := func(c string) { cats = append(cats, resp.Simple(c)) }
	if f&FlagWrite != 0 {
		add("@write")
	}
	if f&FlagReadonly != 0 {
		add("@read")
	}
	if f&FlagAdmin != 0 {
		add("@admin")
		add("@dangerous")
	}
	if f&FlagPubsub != 0 {
		add("@pubsub")
	}
	if f&FlagFast != 0 {
		add("@fast")
	}
	if f&FlagBlocking != 0 {
		add("@blocking")
	}
	if f&FlagFast == 0 {
		add("@slow")
	}
	return resp.SetOf(cats...)
}

// legacyKeySpec turns the table's key positions into a Redis key spec
// (index begin_search, range find_keys), for commands without a
// description.
func legacyKeySpec(spec *CommandSpec) resp.Value {
	if spec.FirstKey == 0 {
		return resp.SetOf()
	}
	last := spec.LastKey
	if last >= 0 {
		last -= spec.FirstKey
	}
	var flags []resp.Value
	switch {
	case spec.Flags&FlagWrite != 0:
		flags = []resp.Value{resp.Simple("RW"), resp.Simple("update")}
	case spec.Flags&FlagReadonly != 0:
		flags = []resp.Value{resp.Simple("RO"), resp.Simple("access")}
	}
	return resp.SetOf(resp.Map(
		resp.Bulk("flags"), resp.SetOf(flags...),
		resp.Bulk("begin_search"), resp.Map(resp.Bulk("type"), resp.Bulk("index"), resp.Bulk("spec"), resp.Map(resp.Bulk("index"), resp.Int(int64(spec.FirstKey)))),
		resp.Bulk("find_keys"), resp.Map(resp.Bulk("type"), resp.Bulk("range"), resp.Bulk("spec"), resp.Map(
			resp.Bulk("lastkey"), resp.Int(int64(last)),
			resp.Bulk("keystep"), resp.Int(int64(spec.Step)),
			resp.Bulk("limit"), resp.Int(0),
		)),
	))
}

// commandInfo renders one COMMAND INFO entry: name, arity, flags and key
// positions from our table, categories, tips and key specs from the
// description, then our subcommands (Redis 7.0 writes an empty set, not an
// empty array, when there are none).
func commandInfo(spec *CommandSpec) resp.Value {
	flagNames := spec.Flags.Names()
	flags := make([]resp.Value, len(flagNames))
	for i, n := range flagNames {
		flags[i] = resp.Simple(n)
	}
	acl, tips, keySpecs := implicitACLCategories(spec.Flags), resp.SetOf(), legacyKeySpec(spec)
	if d := docFor(spec.Name); d != nil {
		acl, tips, keySpecs = d.ACLCategories, d.Tips, d.KeySpecs
	}
	subs := resp.SetOf()
	if len(spec.Subcommands) > 0 {
		elems := make([]resp.Value, len(spec.Subcommands))
		for i, sub := range spec.Subcommands {
			elems[i] = commandInfo(sub)
		}
		subs = resp.Array(elems...)
	}
	return resp.Array(
		resp.Bulk(spec.Name),
		resp.Int(int64(spec.Arity)),
		resp.SetOf(flags...),
		resp.Int(int64(spec.FirstKey)),
		resp.Int(int64(spec.LastKey)),
		resp.Int(int64(spec.Step)),
		acl,
		tips,
		keySpecs,
		subs,
	)
}

// commandDocs renders one COMMAND DOCS entry: the description's map, with
// our subcommands' docs added under "subcommands".
func commandDocs(spec *CommandSpec) resp.Value {
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

// lookupFullName finds a command by its full name ("get", "client|list"),
// case-insensitively, like Redis's lookupCommandBySds.
func (s *Server) lookupFullName(name []byte) *CommandSpec {
	parts := strings.Split(string(name), "|")
	if len(parts) > 2 {
		return nil
	}
	spec := s.table.Lookup([]byte(parts[0]))
	if spec == nil || len(parts) == 1 {
		return spec
	}
	if spec.subs == nil {
		return nil
	}
	return spec.Sub([]byte(parts[1]))
}

// cmdCommand implements COMMAND without a subcommand: every command's info.
func (s *Server) cmdCommand(c *Client, args [][]byte) {
	all := s.table.All()
	c.w.Array(len(all))
	for _, spec := range all {
		c.w.WriteValue(commandInfo(spec))
	}
}

func (s *Server) cmdCommandCount(c *Client, args [][]byte) { c.w.Int(int64(len(s.table.All()))) }

// cmdCommandInfo implements COMMAND INFO [name ...]; an unknown name gets a
// null entry.
func (s *Server) cmdCommandInfo(c *Client, args [][]byte) {
	if len(args) == 2 {
		s.cmdCommand(c, args)
		return
	}
	c.w.Array(len(args) - 2)
	for _, name := range args[2:] {
		if spec := s.lookupFullName(name); spec != nil {
			c.w.WriteValue(commandInfo(spec))
		} else {
			c.w.Null()
		}
	}
}

// cmdCommandDocs implements COMMAND DOCS [name ...]: a map from full name
// to docs; unknown names are left out.
func (s *Server) cmdCommandDocs(c *Client, args [][]byte) {
	var specs []*CommandSpec
	if len(args) == 2 {
		specs = s.table.All()
	} else {
		for _, name := range args[2:] {
			if spec := s.lookupFullName(name); spec != nil {
				specs = append(specs, spec)
			}
		}
	}
	c.w.Map(len(specs))
	for _, spec := range specs {
		c.w.BulkString(spec.Name)
		c.w.WriteValue(commandDocs(spec))
	}
}

// cmdCommandList implements COMMAND LIST [FILTERBY MODULE m|ACLCAT c|PATTERN p]:
// full names of commands and subcommands, filtered like Redis.
func (s *Server) cmdCommandList(c *Client, args [][]byte) {
	keep := func(*CommandSpec) bool { return true }
	for i := 2; i < len(args); i += 3 {
		if !equalFold(args[i], "filterby") || len(args)-1-i != 2 {
			c.w.Error(errSyntax)
			return
		}
		typ, arg := args[i+1], args[i+2]
		switch {
		case equalFold(typ, "module"):
			keep = func(*CommandSpec) bool { return false } // kvserver loads no modules
		case equalFold(typ, "aclcat"):
			cat := "@" + strings.ToLower(string(arg))
			keep = func(spec *CommandSpec) bool {
				acl := implicitACLCategories(spec.Flags)
				if d := docFor(spec.Name); d != nil {
					acl = d.ACLCategories
				}
				for _, e := range acl.Elems {
					if e.Str == cat {
						return true
					}
				}
				return false
			}
		case equalFold(typ, "pattern"):
			pattern := arg
			keep = func(spec *CommandSpec) bool { return glob.MatchFold(pattern, []byte(spec.Name)) }
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	var names []string
	var walk func(specs []*CommandSpec)
	walk = func(specs []*CommandSpec) {
		for _, spec := range specs {
			if keep(spec) {
				names = append(names, spec.Name)
			}
			walk(spec.Subcommands)
		}
	}
	walk(s.table.All())
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

// cmdCommandGetkeys implements COMMAND GETKEYS command [arg ...] from the
// table's key positions, with Redis's errors.
func (s *Server) cmdCommandGetkeys(c *Client, args [][]byte) {
	cmd := args[2:]
	spec := s.table.Lookup(cmd[0])
	if spec != nil && spec.subs != nil && len(cmd) > 1 {
		spec = spec.Sub(cmd[1])
	}
	switch {
	case spec == nil:
		c.w.Error("ERR Invalid command specified")
		return
	case spec.FirstKey == 0:
		c.w.Error("ERR The command has no key arguments")
		return
	case !spec.checkArity(len(cmd)):
		c.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	last := spec.LastKey
	if last < 0 {
		last += len(cmd)
	}
	var keys [][]byte
	for i := spec.FirstKey; i <= last && i < len(cmd); i += spec.Step {
		keys = append(keys, cmd[i])
	}
	if len(keys) == 0 {
		if spec.Flags&FlagNoMandatoryKeys != 0 {
			c.w.Array(0)
			return
		}
		c.w.Error("ERR Invalid arguments specified for command")
		return
	}
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.Bulk(k)
	}
}

func (s *Server) cmdCommandHelp(c *Client, args [][]byte) {
	writeHelp(c, "COMMAND",
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
	)
}
