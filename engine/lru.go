package engine

import (
	"encoding/binary"
	"strings"

	"github.com/kvserver/kvserver/grouping"
)

// group is the unit of eviction, demotion and promotion: the keys of one
// database that differ only in a trailing kv_bytes/metadata suffix (see
// grouping.Of), so a chunk's data and metadata always share a fate.
type group struct {
	name  string
	ks    *keyspace
	items []*item
	// resident counts the items whose value is in memory; a group with
	// any is on the memory LRU list, otherwise on the disk list.
	resident int
	// demoting is set while the demoter writes the group without the lock.
	demoting bool
	// dirtySince is when the group last became dirty (unix ms): the
	// write-behind pass persists it maxDirtyAge later, so that a chunk's
	// data and metadata, written together, reach the disk together, and a
	// key rewritten without pause still reaches it (see writeBehind).
	dirtySince int64
	// leaseUntil and pinUntil (unix ms) protect the group from being
	// dropped from the server until then; it may still move between
	// tiers. A lease is short (a probe or EXISTS hit promising a GET), a
	// pin is long (a hot prefix such as a system prompt).
	leaseUntil, pinUntil int64
	// lmcache is set when the name has the shape of LMCache's chunk keys
	// (grouping.IsChunk): only those get chunk events (events.go).
	lmcache bool
	// evicting is set while the group is evicted, so that its keys'
	// removal is not also reported as a deletion.
	evicting bool
	// pushedAt is the list's push count when the group was last put at
	// its front (lruList.touch).
	pushedAt   uint64
	list       *lruList
	prev, next *group
}

// groupName returns the name of key's group, a copy that does not keep the
// key's memory alive.
func groupName(key string) string {
	return strings.Clone(grouping.Name(key))
}

func (g *group) remove(it *item) {
	for i, x := range g.items {
		if x == it {
			g.items[i] = g.items[len(g.items)-1]
			g.items[len(g.items)-1] = nil
			g.items = g.items[:len(g.items)-1]
			return
		}
	}
}

// lruList is an intrusive doubly linked list of groups, most recently used
// at the front. The zero value is an empty list.
type lruList struct {
	head, tail *group
	n          int
	// pushes counts pushFront calls: a group pushed k pushes ago has at
	// most k groups in front of it.
	pushes uint64
}

// lruExactBelow is the list length under which touch always moves a group
// to the front: the order is then exact LRU.
const lruExactBelow = 1024

// touch marks g as just used: it moves g to the front of l unless g is
// already in l's front three quarters, so that a read of a recently used
// group writes nothing and touches no neighbour's memory (two cache
// misses per GET on a large keyspace otherwise). The order stays exact
// where eviction looks, the back quarter: a group is only demoted or
// evicted after at least 3n/4 other groups were pushed in front of it
// since it was last moved, and a group used while in the back quarter
// moves to the front, as a segmented LRU (Linux's active and inactive
// lists, memcached's) promotes. Under uniform reads one read in four moves
// its group (1 - the front's share). Redis's own LRU is coarser: a
// one-second clock and five sampled keys.
func (l *lruList) touch(g *group) {
	if g.list == l && l.inFront(g.pushedAt) {
		return
	}
	l.moveToFront(g)
}

// inFront reports whether a group of l that was last pushed at push count
// pushedAt (or later) is in l's front three quarters, where touch leaves
// it: fewer groups than that were pushed since, so fewer are in front.
func (l *lruList) inFront(pushedAt uint64) bool {
	return l.n >= lruExactBelow && l.pushes-pushedAt < uint64(l.n-l.n/4)
}

func (l *lruList) pushFront(g *group) {
	g.list = l
	g.pushedAt = l.pushes
	l.pushes++
	g.prev = nil
	g.next = l.head
	if l.head != nil {
		l.head.prev = g
	}
	l.head = g
	if l.tail == nil {
		l.tail = g
	}
	l.n++
}

func (l *lruList) remove(g *group) {
	if g.list != l {
		return
	}
	if g.prev != nil {
		g.prev.next = g.next
	} else {
		l.head = g.next
	}
	if g.next != nil {
		g.next.prev = g.prev
	} else {
		l.tail = g.prev
	}
	g.prev, g.next, g.list = nil, nil, nil
	l.n--
}

// moveToFront puts g at the front of l, taking it off any other list.
func (l *lruList) moveToFront(g *group) {
	if g.list == l && l.head == g {
		return
	}
	if g.list != nil {
		g.list.remove(g)
	}
	l.pushFront(g)
}

// incompletePair reports whether g is an LMCache chunk with only one of its
// two keys: a kv_bytes key without its metadata key, or the reverse. Only
// chunks count (a group named like LMCache's chunk keys, or whose metadata
// value parses as LMCache metadata): an ordinary key such as
// "user:1:metadata" or "blobkv_bytes" is whole by itself.
func (g *group) incompletePair() bool {
	if !g.isChunk() {
		return false
	}
	var data, meta bool
	for _, it := range g.items {
		switch {
		case grouping.IsData(it.key) && it.key != g.name:
			data = true
		case grouping.IsMetadata(it.key) && it.key != g.name:
			meta = true
		}
	}
	return data != meta
}

// hasChunkMetadata reports whether one of g's keys holds a value that
// parses as LMCache metadata.
func (g *group) hasChunkMetadata() bool {
	for _, it := range g.items {
		if it.chunk != nil {
			return true
		}
	}
	return false
}

// halfPrecisionChunk reports whether g's metadata key (when in memory)
// describes fp16 or bf16 data: LMCache's 28-byte metadata holds the dtype
// as the third little-endian int32 (2 fp16, 3 bf16). Such data compresses
// far better as byte planes (disktier.RecordMeta.Shuffle).
func (g *group) halfPrecisionChunk() bool {
	for _, it := range g.items {
		if grouping.IsMetadata(it.key) && it.resident && len(it.value) == 28 {
			dtype := binary.LittleEndian.Uint32(it.value[8:12])
			return dtype == 2 || dtype == 3
		}
	}
	return false
}

// protected reports whether g may not be dropped from the server at now.
func (g *group) protected(now int64) bool {
	return g.leaseUntil > now || g.pinUntil > now
}
