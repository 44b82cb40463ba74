package server

import (
	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/commands"
)

// The cluster family's view of the server (commands.Cluster).

var _ commands.Cluster = session{}

func (s session) SlotMap() *cluster.Map { return s.c.srv.slotMap.Load() }
