package server

import (
	"strings"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/glob"
)

// The server's settings as CONFIG sees them (commands.Config), over
// configParams (server.go).

var _ commands.Config = session{}

// Params looks up CONFIG GET's patterns. Like Redis, a pattern without glob
// characters is looked up directly and answered under the name as
// written; a glob matches names case-insensitively; each parameter is
// reported once.
func (s session) Params(patterns [][]byte) []commands.ConfigPair {
	srv := s.c.srv
	var out []commands.ConfigPair
	seen := make(map[string]bool)
	for _, a := range patterns {
		pattern := string(a)
		if !strings.ContainsAny(pattern, "[*?") {
			p := lookupConfigParam(pattern)
			if p != nil && !seen[p.name] {
				seen[p.name] = true
				out = append(out, commands.ConfigPair{Name: pattern, Value: p.get(srv)})
			}
			continue
		}
		for i := range configParams {
			p := &configParams[i]
			if !seen[p.name] && glob.MatchFold(a, []byte(p.name)) {
				seen[p.name] = true
				out = append(out, commands.ConfigPair{Name: p.name, Value: p.get(srv)})
			}
			// Redis lists an alias that matches too (its dict order decides
			// whether before or after the name; kvserver always lists both).
			if p.alias != "" && !seen[p.alias] && glob.MatchFold(a, []byte(p.alias)) {
				seen[p.alias] = true
				out = append(out, commands.ConfigPair{Name: p.alias, Value: p.get(srv)})
			}
		}
	}
	return out
}

// SetParams applies CONFIG SET's parameter, value pairs atomically, in Redis
// 7's order: unknown, immutable and duplicate parameters are found first,
// then every value is validated, and only then are they all applied.
func (s session) SetParams(pairs [][]byte) string {
	srv := s.c.srv
	n := len(pairs) / 2
	params := make([]*configParam, n)
	for i := range n {
		arg := string(pairs[2*i])
		p := lookupConfigParam(arg)
		switch {
		case p == nil:
			return "ERR Unknown option or number of arguments for CONFIG SET - '" + arg + "'"
		case p.set == nil:
			return configSetError(arg, "can't set immutable config")
		}
		for _, prev := range params[:i] {
			if prev == p {
				return configSetError(arg, "duplicate parameter")
			}
		}
		params[i] = p
	}
	applies := make([]func(), n)
	for i, p := range params {
		apply, reason := p.set(srv, string(pairs[1+2*i]))
		if reason != "" {
			return configSetError(p.name, reason)
		}
		applies[i] = apply
	}
	for _, apply := range applies {
		apply()
	}
	return ""
}

// Rewrite writes the settings in effect to the config file
// (rewriteConfig).
func (s session) Rewrite() (string, error) {
	path := s.c.srv.options().ConfigFile
	if path == "" {
		return "", nil
	}
	return path, s.c.srv.rewriteConfig(path)
}

// ResetStat zeroes the counters INFO reports, like Redis's
// resetServerStats and resetCommandTableStats: engine hits, misses,
// expiries and evictions, the connection, command, traffic and error
// counters, each command's statistics, and the memory peak.
func (s session) ResetStat() {
	srv := s.c.srv
	srv.eng.ResetStats()
	srv.cmdStats.Reset()
	st := &srv.stats
	st.connectionsReceived.Store(0)
	st.rejectedConnections.Store(0)
	st.commandsProcessed.Store(0)
	st.netInput.Store(0)
	st.netOutput.Store(0)
	st.memPeak.Store(0)
	st.errors.reset()
}
