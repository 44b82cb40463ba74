package server

import (
	"github.com/kvserver/kvserver/cmdstats"
	"github.com/kvserver/kvserver/commands"
)

// commandSource gives the command metrics the server's command statistics
// (metrics.CommandSource).
type commandSource struct{ s *Server }

// Commands implements metrics.CommandSource.
func (src commandSource) Commands(fn func(name string, st *cmdstats.Command)) {
	s := src.s
	for id := range s.table.NumIDs() {
		fn(s.table.ByID(id).Name, s.cmdStats.At(id))
	}
	fn("unknown", s.cmdStats.At(s.unknownCommandID()))
}

// CommandLatency implements commands.Stats.
func (s session) CommandLatency(spec *commands.Spec) *cmdstats.Histogram {
	if st := s.c.srv.cmdStats.At(spec.ID); st != nil {
		return st.Latency()
	}
	return nil
}

// CommandStats implements commands.Stats: every command that ran or was
// refused, in table order (Redis prints its command dictionary's order).
func (s session) CommandStats() []commands.CommandStat {
	srv := s.c.srv
	var out []commands.CommandStat
	for id := range srv.table.NumIDs() {
		st := srv.cmdStats.At(id)
		n := st.Read()
		if n.Calls == 0 && n.Rejected == 0 && n.Failed == 0 {
			continue
		}
		out = append(out, commands.CommandStat{Name: srv.table.ByID(id).Name, Counts: n, Latency: st.Latency()})
	}
	return out
}
