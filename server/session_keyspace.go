package server

import "github.com/kvserver/kvserver/commands"

// The keyspace family's view of the server (commands.KeyspaceConfig).

var _ commands.KeyspaceConfig = session{}

func (s session) ClusterEnabled() bool { return s.c.srv.ClusterEnabled() }
func (s session) ExistsLeaseMs() int64 { return s.c.srv.settings.Int("exists-lease-ms") }
