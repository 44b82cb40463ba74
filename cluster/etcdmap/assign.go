package etcdmap

import (
	"cmp"
	"slices"

	"github.com/kvserver/kvserver/cluster"
)

// Assign is the reconciler's slot assignment: given the current owner of
// each slot (owner[s] is a node id, "" for none; len(owner) is
// cluster.Slots, or 0 before the first map) and the nodes that should serve, it returns the next
// owners. Every slot goes to a member, each member gets cluster.Slots/n
// slots or one more, and no slot moves unless it must:
//
//   - a slot stays with its owner while that owner is a member and is
//     under its target;
//   - the one-more targets go to the members holding the most slots, so
//     the fewest slots leave their owner;
//   - freed slots (a departed owner's, or a member's beyond its target)
//     go, in slot order, to the members below target, sorted by id, each
//     filled before the next, which keeps their ranges contiguous.
//
// A join therefore takes an even share from the others and nothing else
// moves; a departure spreads the departed node's slots and nothing else
// moves. Assign is deterministic and idempotent: the same input gives the
// same map, and assigning a result again changes nothing. With no members
// every slot is left without an owner.
func Assign(owner []string, members []string) []string {
	next := make([]string, cluster.Slots)
	members = slices.Clone(members)
	slices.Sort(members)
	members = slices.Compact(members)
	if len(members) == 0 {
		return next
	}
	held := make(map[string]int, len(members))
	for _, id := range members {
		held[id] = 0
	}
	for _, id := range owner {
		if _, ok := held[id]; ok {
			held[id]++
		}
	}
	// Targets: the remainder's extra slots to the members holding most.
	byHeld := slices.Clone(members)
	slices.SortStableFunc(byHeld, func(a, b string) int { return cmp.Compare(held[b], held[a]) })
	target := make(map[string]int, len(members))
	base, extra := cluster.Slots/len(members), cluster.Slots%len(members)
	for i, id := range byHeld {
		target[id] = base
		if i < extra {
			target[id]++
		}
	}
	kept := make(map[string]int, len(members))
	for s, id := range owner {
		if _, ok := target[id]; ok && kept[id] < target[id] {
			next[s] = id
			kept[id]++
		}
	}
	// Hand out the free slots in slot order.
	m := 0
	for s := range next {
		if next[s] != "" {
			continue
		}
		for kept[members[m]] >= target[members[m]] {
			m++
		}
		next[s] = members[m]
		kept[members[m]]++
	}
	return next
}

// Moved counts the slots whose owner differs between two assignments.
func Moved(before, after []string) int {
	n := 0
	for s := range after {
		if before[s] != after[s] {
			n++
		}
	}
	return n
}
