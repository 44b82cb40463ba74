package server

import "github.com/kvserver/kvserver/commands"

// The kvcache family's view of the server (commands.KVCache). Its SlotMap
// is the cluster family's (session_cluster.go).

var _ commands.KVCache = session{}

func (s session) MaxLeaseMs() int64    { return s.c.srv.settings.Int("max-lease-ms") }
func (s session) MaxPinSeconds() int64 { return s.c.srv.settings.Int("max-pin-seconds") }
