package server

import "github.com/kvserver/kvserver/commands"

// The HyperLogLog family's view of the server (commands.HyperLogLog).

var _ commands.HyperLogLog = session{}

func (s session) HLLSparseMaxBytes() int64 { return s.c.srv.settings.Int("hll-sparse-max-bytes") }
