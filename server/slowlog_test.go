package server

import (
	"slices"
	"testing"

	"github.com/kvserver/kvserver/commands"
)

// TestSlowLogNewestFirst checks SLOWLOG GET's order and count: newest
// first, n of them, all for a negative n, after a reset none.
func TestSlowLogNewestFirst(t *testing.T) {
	var l slowLog
	for id := range int64(3) {
		l.entries = append(l.entries, commands.SlowLogEntry{ID: id})
	}
	ids := func(es []commands.SlowLogEntry) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for n, want := range map[int][]int64{-1: {2, 1, 0}, 0: nil, 2: {2, 1}, 10: {2, 1, 0}} {
		if got := ids(l.newest(n)); !slices.Equal(got, want) {
			t.Errorf("newest(%d) = %v, want %v", n, got, want)
		}
	}
	if l.len() != 3 {
		t.Errorf("len %d, want 3", l.len())
	}
	l.reset()
	if l.len() != 0 || len(l.newest(-1)) != 0 {
		t.Errorf("after reset: len %d", l.len())
	}
}
