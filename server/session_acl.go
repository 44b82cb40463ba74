package server

import (
	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/config"
)

// The ACL family's view of the server's users (commands.Users).

var _ commands.Users = session{}

func (s session) All() []*acl.User        { return s.c.srv.users.List() }
func (s session) DefaultNoPass() bool     { return s.c.srv.users.Default().NoPass() }
func (s session) Exists(name string) bool { return s.c.srv.users.Lookup(name) != nil }

func (s session) Check(user string, spec *commands.Spec, args [][]byte) (commands.ACLDenial, int) {
	return s.c.srv.aclCheck(s.c.srv.users.Lookup(user), spec, args)
}

func (s session) User(name string) *acl.User { return s.c.srv.users.Lookup(name) }

func (s session) SetUser(name string, rules []string) error {
	if _, err := s.c.srv.users.SetUser(name, rules); err != nil {
		return err
	}
	s.c.srv.refreshClientUsers(s.c)
	return nil
}

func (s session) DeleteUsers(names []string) (int, error) {
	deleted, err := s.c.srv.users.Delete(names)
	if err != nil {
		return 0, err
	}
	s.c.srv.refreshClientUsers(s.c)
	return len(deleted), nil
}

func (s session) ACLLog(n int) []commands.ACLLogEntry { return s.c.srv.acllog.newest(n) }
func (s session) ResetACLLog()                        { s.c.srv.acllog.reset() }

// SaveUsers rewrites the config file, users included (rewriteSettings).
func (s session) SaveUsers() error {
	path := s.c.srv.options().ConfigFile
	if path == "" {
		return commands.ErrNoConfigFile
	}
	return s.c.srv.rewriteConfig(path)
}

// LoadUsers replaces the users with the config file's user lines.
func (s session) LoadUsers() error {
	srv := s.c.srv
	path := srv.options().ConfigFile
	if path == "" {
		return commands.ErrNoConfigFile
	}
	cfg, err := config.Load([]string{"--config", path}, nil)
	if err != nil {
		return err
	}
	if err := srv.users.Replace(srv.options().RequirePass, cfg.Users); err != nil {
		return err
	}
	srv.refreshClientUsers(s.c)
	return nil
}
