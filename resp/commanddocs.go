package resp

import (
	"strings"
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
//	go run ./resp/internal/gencommands -addr 127.0.0.1:7788 -out resp/commanddocs_gen.go
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
	ACLCategories Value
	// Tips is a set of bulk strings ("request_policy:all_shards").
	Tips Value
	// KeySpecs is the key specifications as Redis 7.0 encodes them.
	KeySpecs Value
	// Docs is the COMMAND DOCS map without its "subcommands" entry.
	Docs Value
}

// kvserverCommandDocs describes the commands and subcommands of our table
// that the generating Redis (7.0) lacks. CLIENT SETINFO and CLIENT
// NO-TOUCH follow Redis 7.2's definitions.
var kvserverCommandDocs = map[string]*commandDoc{
	"client|setinfo": {
		Arity: 4, Flags: []string{"noscript", "loading", "stale"},
		ACLCategories: SetOf(Simple("@slow"), Simple("@connection")),
		Tips:          SetOf(),
		KeySpecs:      SetOf(),
		Docs: Map(
			Bulk("summary"), Bulk("Sets information specific to the client or connection."),
			Bulk("since"), Bulk("7.2.0"),
			Bulk("group"), Bulk("connection"),
			Bulk("complexity"), Bulk("O(1)"),
			Bulk("arguments"), Array(
				Map(
					Bulk("name"), Bulk("attr"),
					Bulk("type"), Bulk("oneof"),
					Bulk("arguments"), Array(
						Map(Bulk("name"), Bulk("libname"), Bulk("type"), Bulk("string"), Bulk("token"), Bulk("LIB-NAME")),
						Map(Bulk("name"), Bulk("libver"), Bulk("type"), Bulk("string"), Bulk("token"), Bulk("LIB-VER")),
					),
				),
			),
		),
	},
	"client|no-touch": {
		Arity: 3, Flags: []string{"noscript", "loading", "stale"},
		ACLCategories: SetOf(Simple("@slow"), Simple("@connection")),
		Tips:          SetOf(),
		KeySpecs:      SetOf(),
		Docs: Map(
			Bulk("summary"), Bulk("Controls whether commands sent by the client affect the LRU/LFU of accessed keys."),
			Bulk("since"), Bulk("7.2.0"),
			Bulk("group"), Bulk("connection"),
			Bulk("complexity"), Bulk("O(1)"),
			Bulk("arguments"), Array(
				Map(
					Bulk("name"), Bulk("enabled"),
					Bulk("type"), Bulk("oneof"),
					Bulk("arguments"), Array(
						Map(Bulk("name"), Bulk("on"), Bulk("type"), Bulk("pure-token"), Bulk("token"), Bulk("ON")),
						Map(Bulk("name"), Bulk("off"), Bulk("type"), Bulk("pure-token"), Bulk("token"), Bulk("OFF")),
					),
				),
			),
		),
	},
	"client|maint_notifications": {
		Arity: -3, Flags: []string{"noscript", "loading", "stale"},
		ACLCategories: SetOf(Simple("@slow"), Simple("@connection")),
		Tips:          SetOf(),
		KeySpecs:      SetOf(),
		Docs: Map(
			Bulk("summary"), Bulk("Enables or disables maintenance notifications for the current connection (kvserver accepts the request and sends none)."),
			Bulk("since"), Bulk("8.2.0"),
			Bulk("group"), Bulk("connection"),
			Bulk("complexity"), Bulk("O(1)"),
			Bulk("arguments"), Array(
				Map(
					Bulk("name"), Bulk("enabled"),
					Bulk("type"), Bulk("oneof"),
					Bulk("arguments"), Array(
						Map(Bulk("name"), Bulk("on"), Bulk("type"), Bulk("pure-token"), Bulk("token"), Bulk("ON")),
						Map(Bulk("name"), Bulk("off"), Bulk("type"), Bulk("pure-token"), Bulk("token"), Bulk("OFF")),
					),
				),
				Map(
					Bulk("name"), Bulk("option"),
					Bulk("type"), Bulk("string"),
					Bulk("flags"), SetOf(Simple("optional"), Simple("multiple")),
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
func implicitACLCategories(f CommandFlags) Value {
	var cats []Value
	add := func(c string) { cats = append(cats, Simple(c)) }
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
	return SetOf(cats...)
}

// legacyKeySpec turns the table's key positions into a Redis key spec
// (index begin_search, range find_keys), for commands without a
// description.
func legacyKeySpec(spec *CommandSpec) Value {
	if spec.FirstKey == 0 {
		return SetOf()
	}
	last := spec.LastKey
	if last >= 0 {
		last -= spec.FirstKey
	}
	var flags []Value
	switch {
	case spec.Flags&FlagWrite != 0:
		flags = []Value{Simple("RW"), Simple("update")}
	case spec.Flags&FlagReadonly != 0:
		flags = []Value{Simple("RO"), Simple("access")}
	}
	return SetOf(Map(
		Bulk("flags"), SetOf(flags...),
		Bulk("begin_search"), Map(Bulk("type"), Bulk("index"), Bulk("spec"), Map(Bulk("index"), Int(int64(spec.FirstKey)))),
		Bulk("find_keys"), Map(Bulk("type"), Bulk("range"), Bulk("spec"), Map(
			Bulk("lastkey"), Int(int64(last)),
			Bulk("keystep"), Int(int64(spec.Step)),
			Bulk("limit"), Int(0),
		)),
	))
}

// commandInfo renders one COMMAND INFO entry: name, arity, flags and key
// positions from our table, categories, tips and key specs from the
// description, then our subcommands (Redis 7.0 writes an empty set, not an
// empty array, when there are none).
func commandInfo(spec *CommandSpec) Value {
	flagNames := spec.Flags.Names()
	flags := make([]Value, len(flagNames))
	for i, n := range flagNames {
		flags[i] = Simple(n)
	}
	acl, tips, keySpecs := implicitACLCategories(spec.Flags), SetOf(), legacyKeySpec(spec)
	if d := docFor(spec.Name); d != nil {
		acl, tips, keySpecs = d.ACLCategories, d.Tips, d.KeySpecs
	}
	subs := SetOf()
	if len(spec.Subcommands) > 0 {
		elems := make([]Value, len(spec.Subcommands))
		for i, sub := range spec.Subcommands {
			elems[i] = commandInfo(sub)
		}
		subs = Array(elems...)
	}
	return Array(
		Bulk(spec.Name),
		Int(int64(spec.Arity)),
		SetOf(flags...),
		Int(int64(spec.FirstKey)),
		Int(int64(spec.LastKey)),
		Int(int64(spec.Step)),
		acl,
		tips,
		keySpecs,
		subs,
	)
}

// commandDocs renders one COMMAND DOCS entry: the description's map, with
// our subcommands' docs added under "subcommands".
func commandDocs(spec *CommandSpec) Value {
	var elems []Value
	if d := docFor(spec.Name); d != nil {
		elems = append(elems, d.Docs.Elems...)
	} else {
		elems = append(elems, Bulk("group"), Bulk("generic"))
	}
	if len(spec.Subcommands) > 0 {
		subs := make([]Value, 0, 2*len(spec.Subcommands))
		for _, sub := range spec.Subcommands {
			subs = append(subs, Bulk(sub.Name), commandDocs(sub))
		}
		elems = append(elems, Bulk("subcommands"), Map(subs...))
	}
	return Map(elems...)
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
			keep = func(spec *CommandSpec) bool { return globMatchFold(pattern, []byte(spec.Name)) }
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
