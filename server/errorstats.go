package server

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/resp"
)

// maxErrorPrefixes bounds the distinct error codes INFO errorstats tracks,
// like Redis's ERROR_STATS_NUMBER: past it, errors are only counted in
// total_error_replies.
const maxErrorPrefixes = 128

// errorStats counts error replies by their code (the first word after the
// '-'), for INFO errorstats and total_error_replies.
type errorStats struct {
	total  atomic.Int64
	mu     sync.Mutex
	counts map[string]int64
}

func (e *errorStats) add(prefix string) {
	e.total.Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = make(map[string]int64)
	}
	if _, ok := e.counts[prefix]; ok || len(e.counts) < maxErrorPrefixes {
		e.counts[prefix]++
	}
}

func (e *errorStats) reset() {
	e.total.Store(0)
	e.mu.Lock()
	e.counts = nil
	e.mu.Unlock()
}

// snapshot returns the counts sorted by code, the order of Redis's rax.
func (e *errorStats) snapshot() []commands.ErrorCount {
	e.mu.Lock()
	out := make([]commands.ErrorCount, 0, len(e.counts))
	for p, n := range e.counts {
		out = append(out, commands.ErrorCount{Code: p, Count: n})
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(a, b commands.ErrorCount) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// countErrorReply records in INFO errorstats the error, if any, that the
// command just dispatched replied with.
func (s *Server) countErrorReply(c *Client, m resp.ReplyMark) {
	if code, ok := c.w.ErrorCodeSince(m); ok {
		s.stats.errors.add(code)
	}
}
