package commands

import (
	"crypto/rand"
	"encoding/hex"
	"strings"

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
		"DRYRUN <username> <command> [<arg> ...]",
		"    Returns whether the user can execute the given command without executing the command.",
		"GENPASS [<bits>]",
		"    Generate a secure 256-bit user password. The optional `bits` argument can",
		"    be used to specify a different size.",
		"LIST",
		"    Show users details in config file format.",
		"USERS",
		"    List all the registered usernames.",
		"WHOAMI",
		"    Return the current connection username.",
	)
}
