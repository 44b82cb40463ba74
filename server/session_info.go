package server

import (
	"path/filepath"
	"time"

	"github.com/kvserver/kvserver/commands"
)

// The server's counters as INFO, SAVE and LASTSAVE see them
// (commands.Stats).

var _ commands.Stats = session{}

// Started is when the server was created.
func (s session) Started() time.Time { return s.c.srv.started }

// Settings are the options INFO reports, the config file's path made
// absolute.
func (s session) Settings() commands.InfoSettings {
	opts := s.c.srv.options()
	cfg := opts.ConfigFile
	if cfg != "" {
		if abs, err := filepath.Abs(cfg); err == nil {
			cfg = abs
		}
	}
	return commands.InfoSettings{
		Port:          opts.Port,
		ConfigFile:    cfg,
		MaxClients:    opts.MaxClients,
		ExistsLeaseMs: s.c.srv.settings.Int("exists-lease-ms"),
		MaxPinSeconds: s.c.srv.settings.Int("max-pin-seconds"),
		MaxLeaseMs:    s.c.srv.settings.Int("max-lease-ms"),
		KVQuant:       opts.KVQuant,

		LatencyTracking:    s.c.srv.latencyTracking.Load(),
		LatencyPercentiles: s.c.srv.latencyPercentiles(),
	}
}

// ConnectedClients is the number of registered clients.
func (s session) ConnectedClients() int { return s.c.srv.clientCount() }

// Counters reads the server's counters.
func (s session) Counters() commands.Counters {
	st := &s.c.srv.stats
	return commands.Counters{
		ConnectionsReceived: st.connectionsReceived.Load(),
		RejectedConnections: st.rejectedConnections.Load(),
		CommandsProcessed:   st.commandsProcessed.Load(),
		NetInputBytes:       st.netInput.Load(),
		NetOutputBytes:      st.netOutput.Load(),
		EvictedClients:      st.evictedClients.Load(),
		ErrorReplies:        st.errors.total.Load(),
	}
}

// UsedMemory is the engine's accounted memory and the highest observed,
// which it moves along.
func (s session) UsedMemory() (used, peak int64) {
	srv := s.c.srv
	used = srv.eng.Stats().UsedMemory
	for {
		peak = srv.stats.memPeak.Load()
		if used <= peak || srv.stats.memPeak.CompareAndSwap(peak, used) {
			return used, max(peak, used)
		}
	}
}

// ClientMemory is what clients hold of the budget (budget.go).
func (s session) ClientMemory() int64 { return s.c.srv.bulks.inUse() }

// Errors are INFO errorstats' counts.
func (s session) Errors() []commands.ErrorCount { return s.c.srv.stats.errors.snapshot() }

// LastSave is the unix time of the last save, the start until one runs.
func (s session) LastSave() int64 { return s.c.srv.stats.lastSave.Load() }

// Saved records a save at unix time t.
func (s session) Saved(t int64) { s.c.srv.stats.lastSave.Store(t) }
