package datatype

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/kvserver/kvserver/listpack"
)

// TestStreamAgainstModel runs random appends, deletes, trims and group
// operations on a Stream and on a plain sorted slice, checking after each
// step that ranges in both directions, Get, Len, the first and last
// entries agree, and that the encoding round-trips.
func TestStreamAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, seed))
		lim := StreamLimits{MaxNodeBytes: 300 + r.IntN(4000), MaxNodeEntries: 1 + r.IntN(20)}
		s := NewStream()
		var model []StreamEntry
		next := uint64(1)
		for op := 0; op < 600; op++ {
			switch k := r.IntN(10); {
			case k < 6:
				// IDs whose deltas in a node take each integer encoding:
				// small steps, jumps, large sequence numbers.
				id := StreamID{next, uint64(r.IntN(3))}
				if r.IntN(5) == 0 {
					id.Seq += uint64(r.IntN(1 << 20))
				}
				next += 1 + uint64(r.IntN(2))
				if r.IntN(8) == 0 {
					next += uint64(r.IntN(1 << (8 + 4*r.IntN(5))))
				}
				f := []string{"f", fmt.Sprint(r.IntN(1000))}
				if r.IntN(4) == 0 {
					f = append(f, "other", "x")
				}
				s.Append(id, f, lim)
				model = append(model, StreamEntry{id, f})
			case k < 8 && len(model) > 0:
				e := model[r.IntN(len(model))]
				if !s.Delete(e.ID) {
					t.Fatalf("seed %d: Delete(%v) found nothing", seed, e.ID)
				}
				model = slices.DeleteFunc(model, func(m StreamEntry) bool { return m.ID == e.ID })
			case k == 8:
				maxLen := int64(r.IntN(len(model) + 1))
				n := s.Trim(maxLen, StreamID{}, false, 0)
				if want := int64(len(model)) - maxLen; max(want, 0) != n {
					t.Fatalf("seed %d: exact trim removed %d, want %d", seed, n, want)
				}
				model = model[n:]
			default:
				if len(model) == 0 {
					continue
				}
				min := model[r.IntN(len(model))].ID
				n := s.Trim(-1, min, r.IntN(2) == 0, 0)
				model = model[n:]
			}
			checkStream(t, seed, s, model)
		}
	}
}

func checkStream(t *testing.T, seed uint64, s *Stream, model []StreamEntry) {
	t.Helper()
	if s.Len() != len(model) {
		t.Fatalf("seed %d: Len %d, model %d", seed, s.Len(), len(model))
	}
	var fwd, rev []StreamEntry
	s.Range(StreamID{}, MaxStreamID, false, func(e StreamEntry) bool { fwd = append(fwd, e); return true })
	s.Range(StreamID{}, MaxStreamID, true, func(e StreamEntry) bool { rev = append(rev, e); return true })
	slices.Reverse(rev)
	eq := func(a, b []StreamEntry) bool {
		return slices.EqualFunc(a, b, func(x, y StreamEntry) bool { return x.ID == y.ID && slices.Equal(x.Fields, y.Fields) })
	}
	if !eq(fwd, model) || !eq(rev, model) {
		t.Fatalf("seed %d: ranges differ from the model", seed)
	}
	if len(model) > 0 {
		mid := model[len(model)/2]
		if e, ok := s.Get(mid.ID); !ok || e.ID != mid.ID {
			t.Fatalf("seed %d: Get(%v) = %v, %v", seed, mid.ID, e, ok)
		}
		var sub []StreamEntry
		s.Range(mid.ID, MaxStreamID, true, func(e StreamEntry) bool { sub = append(sub, e); return true })
		if len(sub) != len(model)-len(model)/2 {
			t.Fatalf("seed %d: reverse range from the middle has %d entries", seed, len(sub))
		}
		if s.FirstID() != model[0].ID {
			t.Fatalf("seed %d: FirstID %v, want %v", seed, s.FirstID(), model[0].ID)
		}
	}
	enc := s.AppendBinary(nil)
	back, err := Decode(KindStream, enc)
	if err != nil {
		t.Fatalf("seed %d: decode: %v", seed, err)
	}
	if !bytes.Equal(back.AppendBinary(nil), enc) || back.MemSize() != s.MemSize() {
		t.Fatalf("seed %d: round trip changed the stream", seed)
	}
}

// TestStreamNodesFollowRedis pins the node boundaries approximate
// trimming depends on: 100 entries a node by default, deleted ones
// counted, and the byte limit.
func TestStreamNodesFollowRedis(t *testing.T) {
	s := NewStream()
	lim := StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100}
	for i := 1; i <= 250; i++ {
		s.Append(StreamID{uint64(i), 0}, []string{"f", "v"}, lim)
	}
	if s.Nodes() != 3 {
		t.Fatalf("250 small entries in %d nodes, want 3", s.Nodes())
	}
	if n := s.Trim(120, StreamID{}, true, 0); n != 100 || s.Len() != 150 {
		t.Fatalf("MAXLEN ~ 120 removed %d, left %d; want 100 and 150", n, s.Len())
	}
	s.Delete(StreamID{250, 0})
	s.Append(StreamID{251, 0}, []string{"f", "v"}, lim)
	if s.Nodes() != 2 { // the last node holds 50 entries, one deleted: room left
		t.Fatalf("%d nodes", s.Nodes())
	}
	big := NewStream()
	for i := 1; i <= 10; i++ {
		big.Append(StreamID{uint64(i), 0}, []string{"f", string(bytes.Repeat([]byte{'x'}, 1000))}, lim)
	}
	if big.Nodes() != 3 { // as redis-server 7.0.15 splits them
		t.Fatalf("ten 1 KB entries in %d nodes, want 3", big.Nodes())
	}
}

// TestStreamGroupsRoundTrip checks that groups, consumers and the PEL
// survive the encoding and Clone, and that acknowledging and deleting
// consumers keep both PEL views consistent.
func TestStreamGroupsRoundTrip(t *testing.T) {
	s := NewStream()
	lim := StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100}
	for i := 1; i <= 10; i++ {
		s.Append(StreamID{uint64(i), 0}, []string{"f", "v"}, lim)
	}
	g := s.CreateGroup("g", StreamID{5, 0}, 5)
	if s.CreateGroup("g", StreamID{}, -1) != nil {
		t.Fatal("a second group of the same name was created")
	}
	s.CreateGroup("a", StreamID{}, -1)
	alice, _ := g.AddConsumer("alice", 100)
	bob, _ := g.AddConsumer("bob", 200)
	for i := 1; i <= 6; i++ {
		c := alice
		if i%2 == 0 {
			c = bob
		}
		g.Deliver(StreamID{uint64(i), 0}, c, int64(1000+i))
	}
	g.Assign(g.PendingEntry(StreamID{1, 0}), bob)
	if !g.Ack(StreamID{2, 0}) || g.Ack(StreamID{2, 0}) {
		t.Fatal("Ack of a pending entry, twice")
	}
	for _, obj := range []Object{s.Clone(), mustDecode(t, s.AppendBinary(nil))} {
		c := obj.(*Stream)
		if !bytes.Equal(c.AppendBinary(nil), s.AppendBinary(nil)) {
			t.Fatal("copy encodes differently")
		}
		cg := c.Group("g")
		if cg == nil || cg.PendingCount() != 5 || len(cg.Consumer("bob").Pending()) != 3 || cg.PendingEntry(StreamID{1, 0}).Consumer != cg.Consumer("bob") {
			t.Fatalf("copied group wrong: %+v", cg)
		}
		if n := cg.DeleteConsumer("bob"); n != 3 || cg.PendingCount() != 2 {
			t.Fatalf("DeleteConsumer = %d, PEL %d", n, cg.PendingCount())
		}
	}
	if g.PendingCount() != 5 {
		t.Fatal("changing a copy changed the original")
	}
	if names := []string{s.Groups()[0].Name, s.Groups()[1].Name}; names[0] != "a" || names[1] != "g" {
		t.Fatalf("groups not by name: %v", names)
	}
}

func mustDecode(t *testing.T, b []byte) Object {
	t.Helper()
	obj, err := Decode(KindStream, b)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestStreamEmptyIsKept: Redis keeps an empty stream, so the engine must
// not delete one (Empty).
func TestStreamEmptyIsKept(t *testing.T) {
	s := NewStream()
	if Empty(s) || !Empty(NewHash()) {
		t.Fatal("Empty must spare streams only")
	}
}

// TestStreamMemSizeMatchesTheHeap: MemSize of 1000 streams of 100 small
// entries (built as XADD builds them) is within 20% of what the heap
// holds.
func TestStreamMemSizeMatchesTheHeap(t *testing.T) {
	lim := StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100}
	sum, heap := heapOf(1000, func(k int) Object {
		s := NewStream()
		for j := 0; j < 100; j++ {
			s.Append(StreamID{uint64(j + 1), 0}, PackFields([][]byte{[]byte("field"), []byte(fmt.Sprintf("value:%06d", k*100+j))}), lim)
		}
		return s
	})
	if ratio := float64(sum) / float64(heap); ratio < 0.8 || ratio > 1.2 {
		t.Errorf("MemSize %d bytes, heap grew %d (%.2fx)", sum, heap, ratio)
	}
	t.Logf("%.1f heap bytes per entry", float64(heap)/100000)
}

// heapOf builds n objects with build and returns the sum of their
// MemSize and how much the live heap grew holding them.
func heapOf(n int, build func(k int) Object) (sum, heap int64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := make([]Object, 0, n)
	for k := 0; k < n; k++ {
		obj := build(k)
		sum += obj.MemSize()
		keep = append(keep, obj)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap = int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(cap(keep))*16
	runtime.KeepAlive(keep)
	return sum, heap
}

// TestStreamDecodesTheEncodingBeforeListpacks decodes a stream as
// kvserver wrote it to the disk tier before its nodes were listpacks
// (per node the master ID, deleted count, size, master fields and live
// entries): the entries, counters and group come back, the nodes become
// listpacks, and it encodes in the listpack form.
func TestStreamDecodesTheEncodingBeforeListpacks(t *testing.T) {
	var b []byte
	id := func(ms, seq uint64) { b = appendUvarint(appendUvarint(b, ms), seq) }
	id(9, 0)                // last ID
	id(2, 0)                // greatest deleted ID
	b = appendUvarint(b, 4) // entries added
	b = appendUvarint(b, 2) // nodes
	for _, n := range []struct {
		master  uint64
		entries [][]string // ms, then fields
	}{
		{1, [][]string{{"1", "a", "x"}, {"3", "a", "y", "b", "z"}}},
		{9, [][]string{{"9", "a", "12"}}},
	} {
		id(n.master, 0)
		b = appendUvarint(b, 1)  // deleted
		b = appendUvarint(b, 50) // bytes
		b = appendUvarint(b, 1)
		b = appendString(b, "a")
		b = appendUvarint(b, uint64(len(n.entries)))
		for _, e := range n.entries {
			ms, _ := strconv.ParseUint(e[0], 10, 64)
			id(ms, 0)
			b = appendUvarint(b, uint64(len(e)-1))
			for _, f := range e[1:] {
				b = appendString(b, f)
			}
		}
	}
	b = appendUvarint(b, 1) // one group, one consumer, one pending entry
	b = appendString(b, "g")
	id(3, 0)
	b = appendUvarint(b, 3)
	b = appendUvarint(b, 1)
	b = appendString(b, "c")
	b = appendUvarint(b, 1700000000000)
	b = appendUvarint(b, 1)
	id(3, 0)
	b = appendUvarint(b, 1700000000001)
	b = appendUvarint(b, 2)
	b = appendUvarint(b, 0)
	obj, err := Decode(KindStream, b)
	if err != nil {
		t.Fatal(err)
	}
	s := obj.(*Stream)
	var got []string
	s.Range(StreamID{}, MaxStreamID, false, func(e StreamEntry) bool {
		got = append(got, fmt.Sprint(e.ID, e.Fields))
		return true
	})
	want := []string{"1-0 [a x]", "3-0 [a y b z]", "9-0 [a 12]"}
	if !slices.Equal(got, want) || s.Nodes() != 2 || s.LastID != (StreamID{9, 0}) || s.MaxDeletedID != (StreamID{2, 0}) || s.EntriesAdded != 4 {
		t.Fatalf("decoded %v in %d nodes (last %v, deleted %v, added %d), want %v in 2", got, s.Nodes(), s.LastID, s.MaxDeletedID, s.EntriesAdded, want)
	}
	g := s.Group("g")
	if g == nil || g.EntriesRead != 2 || g.PendingCount() != 1 || g.PendingEntry(StreamID{3, 0}).DeliveryCount != 2 {
		t.Fatalf("group %+v", g)
	}
	enc := s.AppendBinary(nil)
	if !bytes.HasPrefix(enc, streamFormatListpacks) {
		t.Fatalf("encodes as %x", enc[:4])
	}
	if back, err := Decode(KindStream, enc); err != nil || !bytes.Equal(back.AppendBinary(nil), enc) {
		t.Fatalf("the listpack form does not round-trip: %v", err)
	}
}

// TestStreamViewsReadInPlace pins down what the read commands rely on:
// reading entries in place (RangeView both ways, View, FirstView,
// LastView, Each) allocates nothing, and gives what Get copies out,
// integers as their text, for entries with the master's fields and
// with their own, around deleted ones.
func TestStreamViewsReadInPlace(t *testing.T) {
	s := NewStream()
	lim := StreamLimits{MaxNodeBytes: 512, MaxNodeEntries: 16}
	for i := range 200 {
		fields := []string{"name", "n" + strconv.Itoa(i), "count", strconv.Itoa(i * 1000003), "neg", "-" + strconv.Itoa(i)}
		if i%7 == 0 {
			fields = append(fields, "extra", "0x"+strconv.Itoa(i))
		}
		s.Append(StreamID{Ms: uint64(i + 1)}, fields, lim)
	}
	for i := 3; i < 200; i += 5 {
		s.Delete(StreamID{Ms: uint64(i + 1)})
	}
	text := func(v StreamEntryView) []string {
		var out []string
		v.Each(func(e listpack.Elem) { out = append(out, e.String()) })
		return out
	}
	seen := 0
	for _, rev := range []bool{false, true} {
		s.RangeView(StreamID{}, MaxStreamID, rev, func(v StreamEntryView) bool {
			e, ok := s.Get(v.ID)
			if !ok || !slices.Equal(text(v), e.Fields) || v.Len() != len(e.Fields) {
				t.Fatalf("entry %v read in place as %q, copied as %q (found %v)", v.ID, text(v), e.Fields, ok)
			}
			seen++
			return true
		})
	}
	if seen != 2*s.Len() {
		t.Fatalf("ranges saw %d entries, want %d", seen, 2*s.Len())
	}
	sum := 0
	allocs := testing.AllocsPerRun(20, func() {
		for _, rev := range []bool{false, true} {
			s.RangeView(StreamID{Ms: 20}, StreamID{Ms: 180}, rev, func(v StreamEntryView) bool {
				v.Each(func(e listpack.Elem) { sum += len(e.Str) + int(e.Int) })
				return true
			})
		}
		for _, id := range []StreamID{{Ms: 57}, {Ms: 58}} {
			if v, ok := s.View(id); ok {
				sum += v.Len()
			}
		}
		first, _ := s.FirstView()
		last, _ := s.LastView()
		sum += first.Len() + last.Len()
	})
	if allocs != 0 {
		t.Fatalf("reading in place allocated %v times a run, want 0", allocs)
	}
}
