package server

import (
	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/commands"
)

// The ACL family's view of the server's users (commands.Users).

var _ commands.Users = session{}

func (s session) All() []*acl.User        { return s.c.srv.users.List() }
func (s session) DefaultNoPass() bool     { return s.c.srv.users.Default().NoPass() }
func (s session) Exists(name string) bool { return s.c.srv.users.Lookup(name) != nil }

func (s session) Check(user string, spec *commands.Spec, args [][]byte) (commands.ACLDenial, int) {
	return s.c.srv.aclCheck(s.c.srv.users.Lookup(user), spec, args)
}
