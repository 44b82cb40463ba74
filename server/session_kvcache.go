package server

import (
	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/commands"
)

// The kvcache family's view of the server (commands.KVCache).

var _ commands.KVCache = session{}

func (s session) SlotMap() *cluster.Map { return s.c.srv.slotMap.Load() }
func (s session) MaxLeaseMs() int64     { return s.c.srv.options().MaxLeaseMs }
func (s session) MaxPinSeconds() int64  { return s.c.srv.options().MaxPinSeconds }
