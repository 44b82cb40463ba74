package commands

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/kvserver/kvserver/acl"
)

// The ACL family: the ACL command's subcommands. The checks dispatch runs
// before every command stay in package server; ACL DRYRUN runs the same
// check through Users.

// aclCommands are the ACL family's rows.
var aclCommands = []*Spec{
	{Name: "acl", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "acl|cat", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow", Handler: cmdACLCat},
		{Name: "acl|dryrun", Arity: -4, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLDryrun},
		{Name: "acl|genpass", Arity: -2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow", Handler: cmdACLGenpass},
		{Name: "acl|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: cmdACLHelp},
		{Name: "acl|list", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLList},
		{Name: "acl|users", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLUsers},
		{Name: "acl|setuser", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLSetuser},
		{Name: "acl|deluser", Arity: -3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLDeluser},
		{Name: "acl|getuser", Arity: 3, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLGetuser},
		{Name: "acl|log", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLLog},
		{Name: "acl|save", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLSave},
		{Name: "acl|load", Arity: 2, Flags: FlagAdmin | FlagNoscript | FlagLoading | FlagStale, ACL: "@admin @slow @dangerous", Handler: cmdACLLoad},
		{Name: "acl|whoami", Arity: 2, Flags: FlagNoscript | FlagLoading | FlagStale, ACL: "@slow", Handler: cmdACLWhoami},
	}},
}

// Users is the server's ACL users, as the ACL command, AUTH and CLIENT KILL
// see them.
type Users interface {
	// All returns the users, sorted by name.
	All() []*acl.User
	// Exists reports whether a user of that name exists.
	Exists(name string) bool
	// DefaultNoPass reports whether the default user needs no password.
	DefaultNoPass() bool
	// Check runs dispatch's ACL check of the command spec with args for
	// the named user, which must exist; keyArg is the denied key's
	// argument index when the denial is ACLDeniedKey.
	Check(user string, spec *Spec, args [][]byte) (d ACLDenial, keyArg int)
	// User returns the named user, or nil.
	User(name string) *acl.User
	// SetUser applies rules to the named user, creating it; connections
	// running as it get the new rules at once.
	SetUser(name string, rules []string) error
	// DeleteUsers deletes the named users, closing their connections,
	// and returns how many existed (acl.ErrDefaultUser for default).
	DeleteUsers(names []string) (int, error)
	// ACLLog returns up to n entries of the ACL log, newest first.
	ACLLog(n int) []ACLLogEntry
	// ResetACLLog empties the ACL log.
	ResetACLLog()
	// SaveUsers writes the users to the config file (ErrNoConfigFile
	// without one); LoadUsers replaces them with the file's.
	SaveUsers() error
	LoadUsers() error
}

// ErrNoConfigFile is SaveUsers' and LoadUsers' error when the server was
// started without a config file: Redis's reply when it has no ACL file.
var ErrNoConfigFile = errors.New("ERR This Redis instance is not configured to use an ACL file. " +
	"You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE " +
	"(assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")

// ACLLogEntry is one ACL LOG entry: Count similar denials, the newest at
// Created, of Reason ("command", "key", "channel" or "auth") in Context
// ("toplevel", "multi", "lua") for Object (the command, key, channel, or
// the AUTH/HELLO command name) by Username, from the client Client
// describes.
type ACLLogEntry struct {
	Count                             int64
	Reason, Context, Object, Username string
	Created                           time.Time
	Client                            ClientInfo
}

// ACLDenial is what ACL check a command failed.
type ACLDenial int

// The outcomes of an ACL check.
const (
	ACLAllowed ACLDenial = iota
	ACLDeniedCommand
	ACLDeniedKey
)

// cmdACLWhoami replies with the connection's user name.
func cmdACLWhoami(x *Ctx) {
	x.W.BulkString(x.Session.UserName())
}

// cmdACLUsers lists the user names, sorted.
func cmdACLUsers(x *Ctx) {
	users := x.Users.All()
	x.W.Array(len(users))
	for _, u := range users {
		x.W.BulkString(u.Name())
	}
}

// cmdACLList lists the users in ACL LIST's config-file form (see
// acl.User.Describe for how the command rules may read differently).
func cmdACLList(x *Ctx) {
	users := x.Users.All()
	x.W.Array(len(users))
	for _, u := range users {
		x.W.BulkString(u.Describe())
	}
}

// cmdACLCat implements ACL CAT [category]: the category names, or the
// commands and subcommands of one category by their original full names,
// renamed and disabled ones included, as Redis 7.0 lists them.
func cmdACLCat(x *Ctx) {
	args := x.Args
	switch len(args) {
	case 2:
		cats := acl.Categories()
		x.W.Array(len(cats))
		for _, cat := range cats {
			x.W.BulkString(cat)
		}
		return
	case 3:
	default:
		x.W.Error("ERR unknown subcommand or wrong number of arguments for 'CAT'. Try ACL HELP.")
		return
	}
	want := "@" + strings.ToLower(string(args[2]))
	if !isACLCategory(want[1:]) {
		x.W.Error("ERR Unknown category '" + string(args[2]) + "'")
		return
	}
	var names []string
	Walk(x.Commands.Original(), func(spec *Spec) {
		if spec.HasCategory(want) {
			names = append(names, spec.Name)
		}
	})
	x.W.Array(len(names))
	for _, n := range names {
		x.W.BulkString(n)
	}
}

func isACLCategory(name string) bool {
	for _, c := range acl.Categories() {
		if c == name {
			return true
		}
	}
	return false
}

// cmdACLDryrun implements ACL DRYRUN user command [arg ...]: +OK when the
// user may run it, otherwise the reason as a bulk string, in Redis 7.0's
// verbose words.
func cmdACLDryrun(x *Ctx) {
	user := string(x.Args[2])
	if !x.Users.Exists(user) {
		x.W.Error("ERR User '" + user + "' not found")
		return
	}
	cmd := x.Args[3:]
	spec := x.Commands.Lookup(cmd[0])
	if spec != nil && spec.IsContainer() && len(cmd) > 1 {
		spec = spec.Sub(cmd[1])
	}
	if spec == nil {
		x.W.Error("ERR Command '" + string(cmd[0]) + "' not found")
		return
	}
	if !spec.CheckArity(len(cmd)) {
		x.W.Error("ERR wrong number of arguments for '" + spec.Name + "' command")
		return
	}
	switch d, i := x.Users.Check(user, spec, cmd); d {
	case ACLDeniedCommand:
		x.W.BulkString("This user has no permissions to run the '" + spec.Name + "' command")
	case ACLDeniedKey:
		x.W.BulkString("This user has no permissions to access the '" + string(cmd[i]) + "' key")
	default:
		x.W.OK()
	}
}

// cmdACLGenpass implements ACL GENPASS [bits]: a random password of bits
// bits (256 by default) in hex, rounded up to whole hex digits.
func cmdACLGenpass(x *Ctx) {
	args := x.Args
	bits := int64(256)
	if len(args) > 3 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for 'GENPASS'. Try ACL HELP.")
		return
	}
	if len(args) == 3 {
		n, ok := intArg(x, 2)
		if !ok {
			return
		}
		if n <= 0 || n > 4096 {
			x.W.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = n
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	x.W.BulkString(hex.EncodeToString(buf)[:chars])
}

func cmdACLHelp(x *Ctx) {
	writeHelp(x, "ACL",
		"CAT [<category>]",
		"    List all commands that belong to <category>, or all command categories",
		"    when no category is specified.",
		"DELUSER <username> [<username> ...]",
		"    Delete a list of users.",
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GETUSER <username>",
		"    Get the user's details.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"LOAD",
		"    Reload users from the ACL file.",
		"LOG [<count> | RESET]",
		"    Show the ACL log entries.",
		"SAVE",
		"    Save the current config to the ACL file.",
		"SETUSER <username> <attribute> [<attribute> ...]",
		"    Create or modify a user with the specified attributes.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	)
}

// cmdACLSetuser implements ACL SETUSER name [rule ...].
func cmdACLSetuser(x *Ctx) {
	rules := make([]string, 0, len(x.Args)-3)
	for _, r := range x.Args[3:] {
		rules = append(rules, string(r))
	}
	if err := x.Users.SetUser(string(x.Args[2]), rules); err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.W.OK()
}

// cmdACLDeluser implements ACL DELUSER name [name ...]: the number of users
// deleted.
func cmdACLDeluser(x *Ctx) {
	names := make([]string, 0, len(x.Args)-2)
	for _, n := range x.Args[2:] {
		names = append(names, string(n))
	}
	n, err := x.Users.DeleteUsers(names)
	if err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.W.Int(int64(n))
}

// cmdACLGetuser implements ACL GETUSER name: Redis 7.0's map of flags,
// passwords, commands, keys, channels and (always empty here) selectors.
func cmdACLGetuser(x *Ctx) {
	u := x.Users.User(string(x.Args[2]))
	if u == nil {
		x.W.Null()
		return
	}
	x.W.Map(6)
	x.W.BulkString("flags")
	flags := u.Flags()
	x.W.Set(len(flags))
	for _, f := range flags {
		x.W.BulkString(f)
	}
	x.W.BulkString("passwords")
	hashes := u.PasswordHashes()
	x.W.Array(len(hashes))
	for _, h := range hashes {
		x.W.BulkString(h)
	}
	x.W.BulkString("commands")
	x.W.BulkString(u.CommandRules())
	x.W.BulkString("keys")
	x.W.BulkString(u.KeyRules())
	x.W.BulkString("channels")
	x.W.BulkString(u.ChannelRules())
	x.W.BulkString("selectors")
	x.W.Array(0)
}

// aclLogDefault is how many entries ACL LOG shows without a count.
const aclLogDefault = 10

// cmdACLLog implements ACL LOG [count | RESET].
func cmdACLLog(x *Ctx) {
	n := int64(aclLogDefault)
	switch {
	case len(x.Args) > 3:
		x.W.Error("ERR unknown subcommand or wrong number of arguments for 'LOG'. Try ACL HELP.")
		return
	case len(x.Args) == 3 && equalFold(x.Args[2], "reset"):
		x.Users.ResetACLLog()
		x.W.OK()
		return
	case len(x.Args) == 3:
		v, ok := ParseInt64(x.Args[2])
		if !ok {
			x.W.Error(errNotInteger)
			return
		}
		n = max(v, 0)
	}
	entries := x.Users.ACLLog(int(min(n, 1<<20)))
	now := time.Now()
	x.W.Array(len(entries))
	var line strings.Builder
	for _, e := range entries {
		x.W.Map(7)
		x.W.BulkString("count")
		x.W.Int(e.Count)
		for _, kv := range [...][2]string{{"reason", e.Reason}, {"context", e.Context}, {"object", e.Object}, {"username", e.Username}} {
			x.W.BulkString(kv[0])
			x.W.BulkString(kv[1])
		}
		x.W.BulkString("age-seconds")
		x.W.Double(float64(now.Sub(e.Created).Milliseconds()) / 1000)
		x.W.BulkString("client-info")
		line.Reset()
		appendClientLine(&line, &e.Client)
		x.W.BulkString(line.String())
	}
}

// cmdACLSave implements ACL SAVE: the users go to the config file, which
// is rewritten as CONFIG REWRITE does.
func cmdACLSave(x *Ctx) { aclFileReply(x, x.Users.SaveUsers(), "saving") }

// cmdACLLoad implements ACL LOAD: the users become the config file's.
func cmdACLLoad(x *Ctx) { aclFileReply(x, x.Users.LoadUsers(), "loading") }

func aclFileReply(x *Ctx, err error, doing string) {
	switch {
	case errors.Is(err, ErrNoConfigFile):
		x.W.Error(err.Error())
	case err != nil && doing == "saving":
		x.Log.Error("ACL SAVE", "err", err)
		x.W.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
	case err != nil:
		x.W.Error("ERR Error loading ACLs, user data was not modified: " + err.Error())
	default:
		x.W.OK()
	}
}
