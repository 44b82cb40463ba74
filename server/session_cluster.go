package server

import (
	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/commands"
)

// The cluster family's view of the server (commands.Cluster).

var _ commands.Cluster = session{}

func (s session) SlotMap() *cluster.Map { return s.c.srv.slotMap.Load() }

func (s session) Membership() (commands.Membership, bool) {
	if f := s.c.srv.opts.ClusterMembership; f != nil {
		return f(), true
	}
	return commands.Membership{}, false
}
