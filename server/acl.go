package server

import (
	"fmt"

	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/glob"
)

// Access control: package acl's users applied to the command table (the
// ACL command itself is in package commands, acl.go). A connection runs
// as one user (Client.user), the default user until AUTH or HELLO AUTH
// names another; dispatch checks every command against that user after
// the NOAUTH check, like Redis's processCommand.

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
		object := ""
		if args := c.currentArgs(); len(args) > 0 {
			object = string(args[0])
		}
		s.logACLDenial(c, "auth", object, string(user), "")
		return false
	}
	c.user.Store(u)
	c.authenticated = true
	return true
}

// aclCheck is Redis 7.0's ACLCheckAllUserCommandPerm: the command must be
// allowed, then every key argument must match one of the user's patterns.
// Commands that need no authentication (AUTH, HELLO, QUIT, RESET) are
// always allowed. keyArg is the offending key's argument index.
func (s *Server) aclCheck(u *acl.User, spec *commands.Spec, args [][]byte) (d commands.ACLDenial, keyArg int) {
	if u.Unrestricted() || spec.Flags&commands.FlagNoAuth != 0 {
		return commands.ACLAllowed, 0
	}
	if !u.CanRun(s.aclIDs[spec]) {
		return commands.ACLDeniedCommand, 0
	}
	if !u.AllKeys() {
		var buf [16]int
		for _, i := range spec.AppendAccessKeys(buf[:0], args) {
			if !u.KeyAllowed(args[i]) {
				return commands.ACLDeniedKey, i
			}
		}
	}
	return commands.ACLAllowed, 0
}

// aclError is the NOPERM error, as Redis 7.0 words it, when c's user may
// not run the command; "" when it may.
func (s *Server) aclError(c *Client, spec *commands.Spec, args [][]byte) string {
	u := c.user.Load()
	switch d, i := s.aclCheck(u, spec, args); d {
	case commands.ACLDeniedCommand:
		s.logACLDenial(c, "command", spec.Name, u.Name(), spec.Name)
		return "NOPERM this user has no permissions to run the '" + spec.Name + "' command"
	case commands.ACLDeniedKey:
		s.logACLDenial(c, "key", string(args[i]), u.Name(), spec.Name)
		return errNoPermKey
	}
	return ""
}

// refreshClientUsers gives every connection the current version of its
// user after ACL SETUSER, DELUSER or LOAD, as Redis's connections share
// the user object those change; a connection whose user is gone is closed
// (self, which ran the command, after its reply).
func (s *Server) refreshClientUsers(self *Client) {
	s.forEachClient(func(c *Client) {
		old := c.user.Load()
		switch cur := s.users.Lookup(old.Name()); {
		case cur == nil && c == self:
			c.closeAfterReply = true
		case cur == nil:
			c.kill()
		case cur != old:
			c.user.Store(cur)
		}
	})
}
