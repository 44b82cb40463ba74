package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/glob"
)

// Access control: package acl's users applied to the command table, and
// the ACL command. A connection runs as one user (Client.user), the
// default user until AUTH or HELLO AUTH names another; dispatch checks
// every command against that user after the NOAUTH check, like Redis's
// processCommand.

const (
	errNoPermKey = "NOPERM this user has no permissions to access one of the keys used as arguments"
)

// newUsers builds the ACL catalog from specs, a command table's commands
// under their original names (ACL rules are not affected by
// rename-command, as in Redis), and the users from opts. The IDs are keyed
// by those specs, so specs must be the ones the server dispatches.
func newUsers(opts Options, specs []*commands.Spec) (*acl.Users, map[*commands.Spec]int, error) {
	var conv func(spec *commands.Spec) acl.Command
	conv = func(spec *commands.Spec) acl.Command {
		cmd := acl.Command{Name: spec.Name, Categories: spec.Categories()}
		for _, sub := range spec.Subcommands {
			cmd.Subcommands = append(cmd.Subcommands, conv(sub))
		}
		return cmd
	}
	cmds := make([]acl.Command, len(specs))
	for i, spec := range specs {
		cmds[i] = conv(spec)
	}
	cat := acl.NewCatalog(cmds, glob.Match)
	ids := make(map[*commands.Spec]int)
	var index func(spec *commands.Spec)
	index = func(spec *commands.Spec) {
		ids[spec], _ = cat.ID(spec.Name)
		for _, sub := range spec.Subcommands {
			index(sub)
		}
	}
	for _, spec := range specs {
		index(spec)
	}
	users, err := acl.NewUsers(cat, opts.RequirePass, opts.Users)
	if err != nil {
		return nil, nil, fmt.Errorf("ACL users: %w", err)
	}
	return users, ids, nil
}

// setDefaultAuth makes c the default user's, authenticated when that user
// needs no password (Redis's clientSetDefaultAuth).
func (s *Server) setDefaultAuth(c *Client) {
	def := s.users.Default()
	c.user.Store(def)
	c.authenticated = def.NoPass() && def.Enabled()
}

// authenticate runs AUTH or HELLO AUTH: on success c becomes the user's.
func (s *Server) authenticate(c *Client, user, pass []byte) bool {
	u := s.users.Authenticate(user, pass)
	if u == nil {
		return false
	}
	c.user.Store(u)
	c.authenticated = true
	return true
}

// aclDenial is what ACL check a command failed.
type aclDenial int

const (
	aclAllowed aclDenial = iota
	aclDeniedCommand
	aclDeniedKey
)

// aclCheck is Redis 7.0's ACLCheckAllUserCommandPerm: the command must be
// allowed, then every key argument must match one of the user's patterns.
// Commands that need no authentication (AUTH, HELLO, QUIT, RESET) are
// always allowed. keyArg is the offending key's argument index.
func (s *Server) aclCheck(u *acl.User, spec *commands.Spec, args [][]byte) (d aclDenial, keyArg int) {
	if u.Unrestricted() || spec.Flags&commands.FlagNoAuth != 0 {
		return aclAllowed, 0
	}
	if !u.CanRun(s.aclIDs[spec]) {
		return aclDeniedCommand, 0
	}
	if !u.AllKeys() {
		for _, i := range spec.Keys(args) {
			if !u.KeyAllowed(args[i]) {
				return aclDeniedKey, i
			}
		}
	}
	return aclAllowed, 0
}

// checkACL replies NOPERM, as Redis 7.0 words it, and returns false when
// c's user may not run the command.
func (s *Server) checkACL(c *Client, spec *commands.Spec, args [][]byte) bool {
	switch d, _ := s.aclCheck(c.user.Load(), spec, args); d {
	case aclDeniedCommand:
		c.w.Error("NOPERM this user has no permissions to run the '" + spec.Name + "' command")
		return false
	case aclDeniedKey:
		c.w.Error(errNoPermKey)
		return false
	}
	return true
}

// cmdACLWhoami replies with the connection's user name.
func (s *Server) cmdACLWhoami(c *Client, args [][]byte) {
	c.w.BulkString(c.user.Load().Name())
}

// cmdACLUsers lists the user names, sorted.
func (s *Server) cmdACLUsers(c *Client, args [][]byte) {
	users := s.users.List()
	c.w.Array(len(users))
	for _, u := range users {
		c.w.BulkString(u.Name())
	}
}

// cmdACLList lists the users in ACL LIST's config-file form (see
// acl.User.Describe for how the command rules may read differently).
func (s *Server) cmdACLList(c *Client, args [][]byte) {
	users := s.users.List()
	c.w.Array(len(users))
	for _, u := range users {
		c.w.BulkString(u.Describe())
	}
}

// cmdACLCat implements ACL CAT [category]: the category names, or the
// commands and subcommands of one category by their original full names,
// renamed and disabled ones included, as Redis 7.0 lists them.
func (s *Server) cmdACLCat(c *Client, args [][]byte) {
	switch len(args) {
	case 2:
		cats := acl.Categories()
		c.w.Array(len(cats))
		for _, cat := range cats {
			c.w.BulkString(cat)
		}
		return
	case 3:
	default:
		c.w.Error("ERR unknown subcommand or wrong number of arguments for 'CAT'. Try ACL HELP.")
		return
	}
	want := "@" + strings.ToLower(string(args[2]))
	if !isACLCategory(want[1:]) {
		c.w.Error("ERR Unknown category '" + string(args[2]) + "'")
		return
	}
	var names []string
	commands.Walk(s.table.Original(), func(spec *commands.Spec) {
		if spec.HasCategory(want) {
			names = append(names, spec.Name)
		}
	})
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
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
func (s *Server) cmdACLDryrun(c *Client, args [][]byte) {
	u := s.users.Lookup(string(args[2]))
	if u == nil {
		c.w.Error("ERR User '" + string(args[2]) + "' not found")
		return
	}
	cmd := args[3:]
	spec := s.table.Lookup(cmd[0])
	if spec != nil && spec.IsContainer() && len(cmd) > 1 {
		spec = spec.Sub(cmd[1])
	}
	if spec == nil {
		c.w.Error("ERR Command '" + string(cmd[0]) + "' not found")
		return
	}
	if !spec.CheckArity(len(cmd)) {
		c.w.Error("ERR wrong number of arguments for '" + spec.Name + "' command")
		return
	}
	switch d, i := s.aclCheck(u, spec, cmd); d {
	case aclDeniedCommand:
		c.w.BulkString("This user has no permissions to run the '" + spec.Name + "' command")
	case aclDeniedKey:
		c.w.BulkString("This user has no permissions to access the '" + string(cmd[i]) + "' key")
	default:
		c.w.OK()
	}
}

// cmdACLGenpass implements ACL GENPASS [bits]: a random password of bits
// bits (256 by default) in hex, rounded up to whole hex digits.
func (s *Server) cmdACLGenpass(c *Client, args [][]byte) {
	bits := int64(256)
	if len(args) > 3 {
		c.w.Error("ERR unknown subcommand or wrong number of arguments for 'GENPASS'. Try ACL HELP.")
		return
	}
	if len(args) == 3 {
		n, ok := parseInt64(args[2])
		if !ok {
			c.w.Error(errNotInteger)
			return
		}
		if n <= 0 || n > 4096 {
			c.w.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = n
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	rand.Read(buf)
	c.w.BulkString(hex.EncodeToString(buf)[:chars])
}

func (s *Server) cmdACLHelp(c *Client, args [][]byte) {
	writeHelp(c, "ACL",
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
