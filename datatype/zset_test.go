package datatype

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// zmodel is the obvious sorted set the tests compare ZSet with.
type zmodel map[string]float64

func (m zmodel) sorted() []ZEntry {
	out := make([]ZEntry, 0, len(m))
	for k, v := range m {
		out = append(out, ZEntry{k, v})
	}
	slices.SortFunc(out, func(a, b ZEntry) int {
		return cmp.Or(cmp.Compare(a.Score, b.Score), strings.Compare(a.Member, b.Member))
	})
	return out
}

func entriesOf(z *ZSet) []ZEntry {
	var out []ZEntry
	z.ForEach(func(e ZEntry) bool { out = append(out, e); return true })
	return out
}

// checkZSet verifies z's internal invariants: the byte count, and for the
// big form the tree's (checkZTree) and the member map.
func checkZSet(t *testing.T, z *ZSet) {
	t.Helper()
	var data int64
	z.ForEach(func(e ZEntry) bool { data += int64(len(e.Member)); return true })
	if data != z.data {
		t.Fatalf("data %d, members hold %d bytes", z.data, data)
	}
	if z.list == nil {
		return
	}
	entries := checkZTree(t, z.list)
	if len(z.scores) != len(entries) {
		t.Fatalf("map has %d members, tree %d", len(z.scores), len(entries))
	}
	for _, e := range entries {
		if s, ok := z.scores[e.Member]; !ok || s != e.Score {
			t.Fatalf("entry %q %v: map has %v %v", e.Member, e.Score, s, ok)
		}
	}
}

// checkZTree verifies a tree's invariants and returns its entries: every
// inner node's counts and last entries match its children, leaves are
// never empty (but an empty root) and all at one depth, the chain of
// leaves is the tree's order (from a first leaf with no previous one to a
// last with no next), entries are strictly ordered, and the
// length and node counts are right.
func checkZTree(t *testing.T, tr *ztree) []ZEntry {
	t.Helper()
	var leaves []*zleaf
	inners := 0
	var visit func(x *zinner, depth int) (int, ZEntry)
	visit = func(x *zinner, depth int) (int, ZEntry) {
		inners++
		if x.n < 1 || x.n > zInnerCap || (x != tr.root && x.n < 1) {
			t.Fatalf("inner node of %d children", x.n)
		}
		total := 0
		var last ZEntry
		for i := 0; i < x.n; i++ {
			var n int
			if depth == tr.height-1 {
				l := x.leaves[i]
				if x.inner[i] != nil || l == nil {
					t.Fatalf("depth %d child %d: not a leaf", depth, i)
				}
				if l.n < 1 || l.n > zLeafCap {
					t.Fatalf("leaf of %d entries", l.n)
				}
				leaves = append(leaves, l)
				n, last = l.n, ZEntry{Member: l.members[l.n-1], Score: l.scores[l.n-1]}
			} else {
				if x.leaves[i] != nil || x.inner[i] == nil {
					t.Fatalf("depth %d child %d: not an inner node", depth, i)
				}
				n, last = visit(x.inner[i], depth+1)
			}
			if x.counts[i] != n {
				t.Fatalf("depth %d child %d: count %d, holds %d", depth, i, x.counts[i], n)
			}
			if x.scores[i] != last.Score || x.members[i] != last.Member {
				t.Fatalf("depth %d child %d: last entry %q %v, holds %v", depth, i, x.members[i], x.scores[i], last)
			}
			total += n
		}
		for i := x.n; i < zInnerCap; i++ {
			if x.inner[i] != nil || x.leaves[i] != nil || x.members[i] != "" {
				t.Fatalf("depth %d: slot %d past the children is not clear", depth, i)
			}
		}
		return total, last
	}
	if tr.height == 0 {
		if tr.root != nil || tr.leaf == nil {
			t.Fatal("height 0 without a root leaf")
		}
		leaves = []*zleaf{tr.leaf}
	} else {
		if tr.leaf != nil || tr.root.n < 2 {
			t.Fatalf("root of %d children (leaf root %v)", tr.root.n, tr.leaf != nil)
		}
		visit(tr.root, 0)
	}
	if inners != tr.inners || len(leaves) != tr.leaves {
		t.Fatalf("counted %d inner nodes and %d leaves, tree says %d and %d", inners, len(leaves), tr.inners, tr.leaves)
	}
	var entries []ZEntry
	for i, l := range leaves {
		var prev, next *zleaf
		if i > 0 {
			prev = leaves[i-1]
		}
		if i+1 < len(leaves) {
			next = leaves[i+1]
		}
		if l.prev != prev || l.next != next {
			t.Fatalf("leaf %d: wrong links", i)
		}
		for j := 0; j < l.n; j++ {
			e := ZEntry{Member: l.members[j], Score: l.scores[j]}
			if len(entries) > 0 && !entries[len(entries)-1].less(e.Score, e.Member) {
				t.Fatalf("entry %d out of order", len(entries))
			}
			entries = append(entries, e)
		}
		for j := l.n; j < zLeafCap; j++ {
			if l.members[j] != "" {
				t.Fatalf("leaf %d: slot %d past the entries is not clear", i, j)
			}
		}
	}
	if len(entries) != tr.length {
		t.Fatalf("length %d, %d entries", tr.length, len(entries))
	}
	return entries
}

// compareWithModel checks every query of z against m.
func compareWithModel(t *testing.T, z *ZSet, m zmodel, rng *rand.Rand) {
	t.Helper()
	want := m.sorted()
	got := entriesOf(z)
	if z.Len() != len(want) || !slices.Equal(got, want) {
		t.Fatalf("entries\n got %v\nwant %v", got, want)
	}
	if len(want) == 0 {
		return
	}
	r := rng.IntN(len(want))
	if e := z.At(r); e != want[r] {
		t.Fatalf("At(%d) = %v, want %v", r, e, want[r])
	}
	if rank, ok := z.Rank(want[r].Member); !ok || rank != r {
		t.Fatalf("Rank(%q) = %d %v, want %d", want[r].Member, rank, ok, r)
	}
	if s, ok := z.Score(want[r].Member); !ok || s != want[r].Score {
		t.Fatalf("Score(%q) = %v %v", want[r].Member, s, ok)
	}
	threshold := want[rng.IntN(len(want))].Score
	below := func(e ZEntry) bool { return e.Score < threshold }
	n := 0
	for n < len(want) && below(want[n]) {
		n++
	}
	if c := z.CountWhile(below); c != n {
		t.Fatalf("CountWhile(< %v) = %d, want %d", threshold, c, n)
	}
	var rev []ZEntry
	z.Range(r, true, func(e ZEntry) bool { rev = append(rev, e); return len(rev) < 5 })
	for i, e := range rev {
		if e != want[r-i] {
			t.Fatalf("Range(%d, rev)[%d] = %v, want %v", r, i, e, want[r-i])
		}
	}
}

// TestZSetMatchesModel applies random adds, updates, deletions and rank
// deletions to ZSets with small limits (so they convert to skiplists
// midway) and compares every answer with a map-and-sort model.
func TestZSetMatchesModel(t *testing.T) {
	for _, lim := range []ZSetLimits{{16, 8}, {128, 64}, {0, 0}} {
		t.Run(fmt.Sprintf("limits %d %d", lim.MaxListpackEntries, lim.MaxListpackValue), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(lim.MaxListpackEntries)))
			z := NewZSet()
			m := zmodel{}
			for op := 0; op < 5000; op++ {
				member := fmt.Sprintf("m%d", rng.IntN(200))
				if rng.IntN(50) == 0 {
					member = strings.Repeat("x", rng.IntN(12))
				}
				score := float64(rng.IntN(40)) / 4
				switch k := rng.IntN(10); {
				case k < 6:
					_, had := m[member]
					if added := z.Set(member, score, lim); added == had {
						t.Fatalf("Set(%q) added=%v, model had it: %v", member, added, had)
					}
					m[member] = score
				case k < 9:
					_, had := m[member]
					if z.Delete(member) != had {
						t.Fatalf("Delete(%q) disagrees with the model", member)
					}
					delete(m, member)
				default:
					lo := rng.IntN(len(m) + 1)
					hi := lo + rng.IntN(4)
					want := m.sorted()
					for _, e := range want[lo:min(hi, len(want))] {
						delete(m, e.Member)
					}
					if n := z.DeleteRanks(lo, hi); n != min(hi, len(want))-lo {
						t.Fatalf("DeleteRanks(%d, %d) = %d", lo, hi, n)
					}
				}
				checkZSet(t, z)
				compareWithModel(t, z, m, rng)
				if op%500 == 0 {
					checkRoundTrip(t, z)
				}
			}
		})
	}
}

func checkRoundTrip(t *testing.T, z *ZSet) {
	t.Helper()
	enc := z.AppendBinary(nil)
	obj, err := Decode(KindZSet, enc)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	d := obj.(*ZSet)
	checkZSet(t, d)
	if !slices.Equal(entriesOf(d), entriesOf(z)) || d.Encoding() != z.Encoding() {
		t.Fatalf("round trip changed the set: %s %v, was %s %v", d.Encoding(), entriesOf(d), z.Encoding(), entriesOf(z))
	}
	if z.IsListpack() && (d.MemSize() > z.MemSize() || d.MemSize() < objectOverhead+int64(len(z.lp.buf))) {
		t.Fatalf("decoded MemSize %d, was %d with %d bytes of entries", d.MemSize(), z.MemSize(), len(z.lp.buf))
	}
	c := z.Clone().(*ZSet)
	checkZSet(t, c)
	if !slices.Equal(entriesOf(c), entriesOf(z)) || c.Encoding() != z.Encoding() {
		t.Fatal("clone differs")
	}
}

// TestZSetConversionFollowsRedis pins when a listpack becomes a skiplist
// (one member past the entry limit, or a member longer than the value
// limit) and that it stays one when it shrinks.
func TestZSetConversionFollowsRedis(t *testing.T) {
	lim := ZSetLimits{MaxListpackEntries: 3, MaxListpackValue: 4}
	z := NewZSet()
	for i, m := range []string{"a", "b", "c"} {
		z.Set(m, float64(i), lim)
	}
	if z.Encoding() != "listpack" {
		t.Fatalf("3 members: %s", z.Encoding())
	}
	z.Set("a", 10, lim) // an update never converts
	if z.Encoding() != "listpack" {
		t.Fatal("update converted")
	}
	z.Set("d", 3, lim)
	if z.Encoding() != "skiplist" {
		t.Fatalf("4 members: %s", z.Encoding())
	}
	z.Delete("d")
	z.Delete("c")
	if z.Encoding() != "skiplist" {
		t.Fatal("a skiplist went back by itself")
	}
	z = NewZSet()
	z.Set("long!", 1, lim)
	if z.Encoding() != "skiplist" {
		t.Fatal("a 5-byte member stayed in a listpack with a 4-byte limit")
	}
	if NewZSetFor(4, 1, lim).Encoding() != "skiplist" || NewZSetFor(3, 4, lim).Encoding() != "listpack" {
		t.Fatal("NewZSetFor picks the wrong form")
	}
}

// TestZSetListpackNegativeZero pins that a listpack keeps -0 as 0, like
// Redis's listpack (which stores it as the integer 0).
func TestZSetListpackNegativeZero(t *testing.T) {
	z := NewZSet()
	z.Set("a", math.Copysign(0, -1), ZSetLimits{128, 64})
	if s, _ := z.Score("a"); math.Signbit(s) {
		t.Fatal("listpack kept -0")
	}
}

// TestZSetMemSizeGrowsWithContent checks that MemSize follows the members
// it holds, in both forms, and is back where it started when they go.
func TestZSetMemSizeGrowsWithContent(t *testing.T) {
	for _, lim := range []ZSetLimits{{1 << 20, 1 << 20}, {0, 0}} {
		z := NewZSetFor(0, 0, lim)
		empty := z.MemSize()
		for i := 0; i < 1000; i++ {
			z.Set(fmt.Sprintf("member-%04d", i), float64(i), lim)
		}
		full := z.MemSize()
		if per := (full - empty) / 1000; per < 11+8 || per > 300 {
			t.Errorf("%s: %d bytes per 11-byte member", z.Encoding(), per)
		}
		for i := 0; i < 1000; i++ {
			z.Delete(fmt.Sprintf("member-%04d", i))
		}
		if z.IsListpack() {
			continue // the slice keeps its capacity, as a listpack would not shrink either
		}
		if z.MemSize() > empty+2048 {
			t.Errorf("skiplist: %d bytes after deleting everything, %d empty", z.MemSize(), empty)
		}
	}
}

// TestDecodeZSetRefusesDamage checks that damaged encodings fail with
// ErrCorrupt instead of building a broken set.
func TestDecodeZSetRefusesDamage(t *testing.T) {
	z := NewZSet()
	lim := ZSetLimits{128, 64}
	z.Set("a", 1, lim)
	z.Set("b", 2, lim)
	good := z.AppendBinary(nil)
	nan := slices.Clone(good)
	copy(nan[len(nan)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	dup := appendString(appendUvarint(appendUvarint(nil, 0), 2), "a")
	dup = append(dup, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f)
	dup = appendString(dup, "a")
	dup = append(dup, 0, 0, 0, 0, 0, 0, 0, 0x40)
	for name, b := range map[string][]byte{
		"truncated": good[:len(good)-1], "trailing": append(slices.Clone(good), 0), "NaN": nan,
		"duplicate member": dup, "bad encoding": append([]byte{7}, good[1:]...),
		"out of order": append(append(appendUvarint(appendUvarint(nil, 1), 2), good[2+10:]...), good[2:2+10]...),
		"huge count":   {0, 0xff, 0xff, 0x03},
	} {
		if _, err := Decode(KindZSet, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// TestZSetMemSizeMatchesTheHeap checks MemSize against what Go's heap
// really grows by for 100k members in 1000 sets, in each form: within
// 20%, so that --maxmemory bounds the process.
func TestZSetMemSizeMatchesTheHeap(t *testing.T) {
	for _, lim := range []ZSetLimits{{0, 0}, {128, 64}} {
		var enc string
		sum, heap := heapOf(1000, func(k int) Object {
			z := NewZSet()
			for j := 0; j < 100; j++ {
				z.Set(fmt.Sprintf("member:%06d", k*100+j), float64(k*100+j)*1.5, lim)
			}
			enc = z.Encoding()
			return z
		})
		if ratio := float64(sum) / float64(heap); ratio < 0.8 || ratio > 1.2 {
			t.Errorf("%s: MemSize %d bytes, heap grew %d (%.2fx)", enc, sum, heap, ratio)
		}
	}
}

// TestZSetTreeMatchesModelAtDepth drives the big form through trees of
// three inner levels: random adds and score updates (ties included) to
// 60k members, then random deletions, updates and rank deletions down to
// empty, then members added in order (which must fill the leaves) and
// popped from the front; the invariants and the model are checked along
// the way.
func TestZSetTreeMatchesModelAtDepth(t *testing.T) {
	lim := ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	rng := rand.New(rand.NewPCG(7, 11))
	z := NewZSet()
	m := zmodel{}
	check := func(what string) {
		t.Helper()
		checkZSet(t, z)
		compareWithModel(t, z, m, rng)
		if testing.Verbose() {
			t.Logf("%s: %d members, height %d, %d leaves, %d inner nodes", what, z.Len(), z.list.height, z.list.leaves, z.list.inners)
		}
	}
	maxHeight := 0
	for op := 1; op <= 90000; op++ {
		member := fmt.Sprintf("member:%d", rng.IntN(80000))
		score := float64(rng.IntN(1000))
		_, had := m[member]
		if added := z.Set(member, score, lim); added == had {
			t.Fatalf("Set(%q) added=%v, model had it: %v", member, added, had)
		}
		m[member] = score
		if z.list != nil {
			maxHeight = max(maxHeight, z.list.height)
		}
		if op%15000 == 0 {
			check("growing")
		}
	}
	if maxHeight < 3 {
		t.Fatalf("the tree reached height %d, want 3", maxHeight)
	}
	for op := 1; len(m) > 0; op++ {
		switch k := rng.IntN(10); {
		case k < 6:
			e := z.At(rng.IntN(z.Len()))
			if !z.Delete(e.Member) {
				t.Fatalf("Delete(%q) of a member", e.Member)
			}
			delete(m, e.Member)
		case k < 8:
			e := z.At(rng.IntN(z.Len()))
			score := e.Score + float64(rng.IntN(3)-1)*float64(rng.IntN(5))
			z.Update(e.Member, e.Score, score)
			m[e.Member] = score
		default:
			lo := rng.IntN(len(m))
			hi := lo + rng.IntN(300)
			want := m.sorted()
			for _, e := range want[lo:min(hi, len(want))] {
				delete(m, e.Member)
			}
			if n := z.DeleteRanks(lo, hi); n != min(hi, len(want))-lo {
				t.Fatalf("DeleteRanks(%d, %d) = %d", lo, hi, n)
			}
		}
		if op%5000 == 0 || len(m) < 50 {
			check("shrinking")
		}
	}
	check("empty")
	for i := range 50000 {
		member := fmt.Sprintf("in-order:%08d", i)
		z.Add(member, 5, lim)
		m[member] = 5
	}
	check("in order")
	if full := (50000 + zLeafCap - 1) / zLeafCap; z.list.leaves > full+1 {
		t.Fatalf("50000 members added in order take %d leaves, %d when full", z.list.leaves, full)
	}
	for z.Len() > 0 {
		e := z.At(0)
		z.DeleteRanks(0, 1)
		delete(m, e.Member)
		if z.Len()%7000 == 0 {
			check("popping")
		}
	}
	check("popped")
}

// TestZSetUpdateThroughAViewKeepsItsOwnKey updates big sets' scores
// through views of a buffer that is then overwritten, as ZADD and ZINCRBY
// update through views of the request: the set must go on finding the
// member, in place in its leaf or moved elsewhere.
func TestZSetUpdateThroughAViewKeepsItsOwnKey(t *testing.T) {
	lim := ZSetLimits{MaxListpackEntries: 4, MaxListpackValue: 64}
	for _, newScore := range []float64{2.5, 1000} { // stays in place, moves
		z := NewZSet()
		for i := range 200 {
			z.Add(fmt.Sprintf("m%03d", i), float64(i), lim)
		}
		buf := []byte("m002")
		z.Update(View(buf), 2, newScore)
		copy(buf, "zzzz")
		if s, ok := z.Score("m002"); !ok || s != newScore {
			t.Fatalf("new score %v: Score(m002) = %v %v after the view's buffer changed", newScore, s, ok)
		}
		checkZSet(t, z)
	}
}
