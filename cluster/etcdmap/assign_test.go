package etcdmap

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kvserver/kvserver/cluster"
)

// counts is the number of slots of each owner ("" included).
func counts(owner []string) map[string]int {
	c := map[string]int{}
	for _, id := range owner {
		c[id]++
	}
	return c
}

// checkBalanced fails unless every slot has one of members and the members'
// shares differ by at most one.
func checkBalanced(t *testing.T, next []string, members []string) {
	t.Helper()
	c := counts(next)
	if c[""] != 0 {
		t.Fatalf("%d slots left without an owner", c[""])
	}
	lo, hi := cluster.Slots, 0
	for _, id := range members {
		lo, hi = min(lo, c[id]), max(hi, c[id])
		delete(c, id)
	}
	if len(c) != 0 {
		t.Fatalf("slots assigned to non-members: %v", c)
	}
	if hi-lo > 1 {
		t.Fatalf("shares range from %d to %d slots, want at most one apart", lo, hi)
	}
}

// minMoves is the fewest slots any balanced assignment must move: those of
// non-members, plus what each member holds beyond the largest share it
// can get (the larger shares going to the largest holders).
func minMoves(owner []string, members []string) int {
	c := counts(owner)
	held := make([]int, 0, len(members))
	inMembers := map[string]bool{}
	for _, id := range members {
		held = append(held, c[id])
		inMembers[id] = true
	}
	moves := 0
	for id, n := range c {
		if !inMembers[id] && id != "" {
			moves += n
		}
	}
	moves += c[""]
	slices.Sort(held)
	slices.Reverse(held)
	base, extra := cluster.Slots/len(members), cluster.Slots%len(members)
	for i, n := range held {
		t := base
		if i < extra {
			t++
		}
		moves += max(0, n-t)
	}
	return moves
}

func nodeIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node%02d", i)
	}
	return out
}

func TestAssignFromNothingGivesContiguousEvenRanges(t *testing.T) {
	members := nodeIDs(3)
	next := Assign(nil, members)
	checkBalanced(t, next, members)
	// One run per node, in id order: the split redis-cli --cluster create makes.
	want := []struct {
		id         string
		start, end int
	}{{"node00", 0, 5461}, {"node01", 5462, 10922}, {"node02", 10923, 16383}}
	for _, w := range want {
		for s := w.start; s <= w.end; s++ {
			if next[s] != w.id {
				t.Fatalf("slot %d is %q's, want %q's (%d-%d)", s, next[s], w.id, w.start, w.end)
			}
		}
	}
}

func TestAssignJoinTakesAnEvenShareFromTheOthersOnly(t *testing.T) {
	three := Assign(nil, nodeIDs(3))
	four := Assign(three, nodeIDs(4))
	checkBalanced(t, four, nodeIDs(4))
	for s := range four {
		if four[s] != three[s] && four[s] != "node03" {
			t.Fatalf("slot %d moved from %s to %s: only the joining node may gain slots", s, three[s], four[s])
		}
	}
	if got := counts(four)["node03"]; got != cluster.Slots/4 {
		t.Fatalf("joining node got %d slots, want %d", got, cluster.Slots/4)
	}
	if got, want := Moved(three, four), minMoves(three, nodeIDs(4)); got != want {
		t.Fatalf("moved %d slots, want the minimum %d", got, want)
	}
}

func TestAssignDepartureSpreadsOnlyTheDepartedSlots(t *testing.T) {
	four := Assign(nil, nodeIDs(4))
	survivors := []string{"node00", "node01", "node03"}
	three := Assign(four, survivors)
	checkBalanced(t, three, survivors)
	for s := range three {
		if four[s] != "node02" && three[s] != four[s] {
			t.Fatalf("slot %d of surviving %s moved to %s", s, four[s], three[s])
		}
	}
	if got := Moved(four, three); got != counts(four)["node02"] {
		t.Fatalf("moved %d slots, want exactly the departed node's %d", got, counts(four)["node02"])
	}
}

func TestAssignIsIdempotentAndIgnoresMemberOrder(t *testing.T) {
	members := nodeIDs(5)
	first := Assign(nil, members)
	if again := Assign(first, members); Moved(first, again) != 0 {
		t.Fatalf("assigning a balanced map again moved %d slots", Moved(first, again))
	}
	shuffled := slices.Clone(members)
	slices.Reverse(shuffled)
	shuffled = append(shuffled, members[0]) // duplicates count once
	if other := Assign(nil, shuffled); Moved(first, other) != 0 {
		t.Fatalf("member order changed %d slots", Moved(first, other))
	}
}

func TestAssignWithoutMembersLeavesEverySlotUnowned(t *testing.T) {
	next := Assign(Assign(nil, nodeIDs(2)), nil)
	if c := counts(next); c[""] != cluster.Slots {
		t.Fatalf("owners without members: %v", c)
	}
}

// TestAssignMovesTheMinimum checks, over random current maps (unowned
// slots, departed owners, lopsided shares) and member sets, that the
// result is balanced, complete, and moves no more slots than any balanced
// assignment has to.
func TestAssignMovesTheMinimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pool := nodeIDs(12)
	for round := range 300 {
		owner := make([]string, cluster.Slots)
		holders := pool[:1+rng.IntN(len(pool))]
		for s := range owner {
			// Runs of slots, like real maps, with some unowned.
			if s == 0 || rng.IntN(200) == 0 {
				if rng.IntN(10) == 0 {
					owner[s] = ""
				} else {
					owner[s] = holders[rng.IntN(len(holders))]
				}
			} else {
				owner[s] = owner[s-1]
			}
		}
		members := slices.Clone(pool)
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		members = members[:1+rng.IntN(len(members))]
		next := Assign(owner, members)
		checkBalanced(t, next, members)
		if got, want := Moved(owner, next), minMoves(owner, members); got != want {
			t.Fatalf("round %d: moved %d slots, the minimum is %d", round, got, want)
		}
		if again := Assign(next, members); Moved(next, again) != 0 {
			t.Fatalf("round %d: a second pass moved %d slots", round, Moved(next, again))
		}
	}
}
