package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/datatype"
)

// testStream builds a stream of n entries (some with the node's fields,
// some not, integer and text values) with two groups: one with consumers
// and pending entries at fixed times, one never read from.
func testStream(n int, lim datatype.StreamLimits) *datatype.Stream {
	s := datatype.NewStream()
	for i := 1; i <= n; i++ {
		f := []string{"temp", fmt.Sprint(i * 7), "name", "sensor " + strings.Repeat("x", i%30)}
		if i%5 == 0 {
			f = []string{"other", "-" + fmt.Sprint(i*100000)}
		}
		s.Append(datatype.StreamID{Ms: uint64(1000 + i/3), Seq: uint64(i % 3)}, f, lim)
	}
	g := s.CreateGroup("g", s.LastID, int64(n))
	alice, _ := g.AddConsumer("alice", 1700000000000)
	bob, _ := g.AddConsumer("7", 1700000000500)
	g.AddConsumer("idle", 1700000001000)
	i := 0
	s.Range(datatype.StreamID{}, datatype.MaxStreamID, false, func(e datatype.StreamEntry) bool {
		c := alice
		if i%2 == 1 {
			c = bob
		}
		p := g.Deliver(e.ID, c, 1700000002000+int64(i))
		p.DeliveryCount = int64(1 + i%4)
		i++
		return i < 7
	})
	s.CreateGroup("empty", datatype.StreamID{}, -1)
	return s
}

// streamState is what a stream shows: entries, counters, groups with
// their PEL and consumers.
func streamState(s *datatype.Stream) string {
	var b strings.Builder
	fmt.Fprintf(&b, "len %d last %v first %v maxdel %v added %d\n", s.Len(), s.LastID, s.FirstID(), s.MaxDeletedID, s.EntriesAdded)
	s.Range(datatype.StreamID{}, datatype.MaxStreamID, false, func(e datatype.StreamEntry) bool {
		fmt.Fprintf(&b, "%v %q\n", e.ID, e.Fields)
		return true
	})
	for _, g := range s.Groups() {
		fmt.Fprintf(&b, "group %q %v %d\n", g.Name, g.LastID, g.EntriesRead)
		for _, id := range g.PendingIDs() {
			p := g.PendingEntry(id)
			fmt.Fprintf(&b, " pel %v %q %d %d\n", id, p.Consumer.Name, p.DeliveryTime, p.DeliveryCount)
		}
		for _, c := range g.Consumers() {
			fmt.Fprintf(&b, " consumer %q %d %v\n", c.Name, c.SeenTime, c.Pending())
		}
	}
	return b.String()
}

// TestStreamDumpRestoreRoundTrip dumps streams of one and of many nodes,
// with groups, after deletions and trims, and checks that each restores
// to the same entries, counters, groups and nodes, and dumps again to
// the same bytes.
func TestStreamDumpRestoreRoundTrip(t *testing.T) {
	for name, build := range map[string]func() *datatype.Stream{
		"empty": datatype.NewStream,
		"one node": func() *datatype.Stream {
			return testStream(20, datatype.StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100})
		},
		"many nodes": func() *datatype.Stream {
			return testStream(500, datatype.StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100})
		},
		"deletes and trims": func() *datatype.Stream {
			s := testStream(300, datatype.StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 10})
			s.Trim(250, datatype.StreamID{}, false, 0)
			first, _ := s.First()
			s.Delete(first.ID)
			s.Delete(datatype.StreamID{Ms: 1050, Seq: 1})
			s.MaxDeletedID = datatype.StreamID{Ms: 1050, Seq: 1}
			return s
		},
		"all deleted": func() *datatype.Stream {
			s := testStream(3, datatype.StreamLimits{})
			s.Trim(0, datatype.StreamID{}, false, 0)
			return s
		},
	} {
		s := build()
		p, err := Dump(Value{Object: s})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		v, err := Restore(p, testLimits)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		back, ok := v.Object.(*datatype.Stream)
		if !ok {
			t.Fatalf("%s: restored a %T", name, v.Object)
		}
		if got, want := streamState(back), streamState(s); got != want {
			t.Errorf("%s: restored\n%s\nwant\n%s", name, got, want)
		}
		if back.Nodes() != s.Nodes() {
			t.Errorf("%s: %d nodes, want %d", name, back.Nodes(), s.Nodes())
		}
		if p2, _ := Dump(Value{Object: back}); !bytes.Equal(p2, p) {
			t.Errorf("%s: the restored stream dumps to other bytes", name)
		}
	}
}

// TestRestoreRedisStreams restores streams that redis-server 7.0 dumped
// (the FuzzRestore seeds named redis_stream_*) and dumps them back to
// Redis's bytes, deleted entries included.
func TestRestoreRedisStreams(t *testing.T) {
	for _, tc := range []struct {
		seed string
		want string // the restored state, when given
	}{
		// XADD s 1-1 a 1, 2-1 a 2, 3-1 a 3; XDEL s 2-1
		{"redis_stream_xdel", "len 2 last 3-1 first 1-1 maxdel 2-1 added 3\n1-1 [\"a\" \"1\"]\n3-1 [\"a\" \"3\"]\n"},
		// 11 entries, 4 to a node, XTRIM MAXLEN 6: a node gone, one
		// entry of the next deleted.
		{"redis_stream_nodes", ""},
		// Two groups, one with a consumer that has two entries pending,
		// one with an idle consumer.
		{"redis_stream_groups", ""},
		// XGROUP CREATE MKSTREAM: no entries, one group.
		{"redis_stream_empty", "len 0 last 0-0 first 0-0 maxdel 0-0 added 0\ngroup \"g\" 0-0 -1\n"},
	} {
		body := readSeed(t, tc.seed)
		v, err := Restore(AppendFooter(append([]byte(nil), body...)), testLimits)
		if err != nil {
			t.Fatalf("%s: %v", tc.seed, err)
		}
		if got := streamState(v.Object.(*datatype.Stream)); tc.want != "" && got != tc.want {
			t.Errorf("%s: restored\n%s\nwant\n%s", tc.seed, got, tc.want)
		}
		p, err := Dump(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p[:len(p)-10], body) {
			t.Errorf("%s: dumps back as\n%x\nnot as Redis\n%x", tc.seed, p[:len(p)-10], body)
		}
	}
}

// streamBody builds a stream payload's body from node listpacks and
// what follows them, for payloads Redis would never write.
func streamBody(nodes [][]byte, masters []datatype.StreamID, meta []uint64, groups ...[]byte) []byte {
	b := []byte{typeStreamListpacks2}
	b = appendLen(b, uint64(len(nodes)))
	for i, lp := range nodes {
		b = appendString(b, appendRawID(nil, masters[i]))
		b = appendString(b, lp)
	}
	for _, v := range meta {
		b = appendLen(b, v)
	}
	b = appendLen(b, uint64(len(groups)))
	for _, g := range groups {
		b = append(b, g...)
	}
	return b
}

// TestRestoreRefusesBrokenStreams: payloads that Redis refuses or that
// kvserver cannot hold (its entries must be in order and before the last
// ID, every pending entry must have a consumer) fail with ErrData.
func TestRestoreRefusesBrokenStreams(t *testing.T) {
	one := datatype.StreamID{Ms: 1, Seq: 1}
	var lp []byte
	oneEntry := datatype.NewStream()
	oneEntry.Append(one, []string{"a", "1"}, datatype.StreamLimits{})
	oneEntry.ForEachNode(func(n datatype.StreamNode) bool {
		lp = n.Listpack
		return false
	})
	meta := []uint64{1, 1, 1, 1, 1, 0, 0, 1} // length, last, first, max deleted, added
	group := func(pel, consumerPEL []datatype.StreamID) []byte {
		g := appendString(nil, []byte("g"))
		g = append(g, 0, 0, 0) // last ID 0-0, 0 read
		g = appendLen(g, uint64(len(pel)))
		for _, id := range pel {
			g = append(appendRawID(g, id), 1, 0, 0, 0, 0, 0, 0, 0, 1)
		}
		g = append(appendString(appendLen(g, 1), []byte("c")), 0, 0, 0, 0, 0, 0, 0, 0)
		g = appendLen(g, uint64(len(consumerPEL)))
		for _, id := range consumerPEL {
			g = appendRawID(g, id)
		}
		return g
	}
	ok := streamBody([][]byte{lp}, []datatype.StreamID{one}, meta, group([]datatype.StreamID{one}, []datatype.StreamID{one}))
	if _, err := Restore(AppendFooter(ok), testLimits); err != nil {
		t.Fatalf("the well-formed payload: %v", err)
	}
	badLP := append([]byte(nil), lp...)
	badLP[len(badLP)-3] = 9 // the entry's element count
	deletedLP := append([]byte(nil), lp...)
	deletedLP[6] = 0 // the master entry counts no live entry
	for name, body := range map[string][]byte{
		"length off":              streamBody([][]byte{lp}, []datatype.StreamID{one}, []uint64{2, 1, 1, 1, 1, 0, 0, 1}),
		"entry after the last ID": streamBody([][]byte{lp}, []datatype.StreamID{one}, []uint64{1, 1, 0, 1, 1, 0, 0, 1}),
		"nodes out of order":      streamBody([][]byte{lp, lp}, []datatype.StreamID{one, one}, []uint64{2, 1, 1, 1, 1, 0, 0, 2}),
		"short node key":          append([]byte{typeStreamListpacks2, 1, 15}, ok[19:]...),
		"bad entry count":         streamBody([][]byte{badLP}, []datatype.StreamID{one}, meta),
		"live count off":          streamBody([][]byte{deletedLP}, []datatype.StreamID{one}, meta),
		"pending without consumer": streamBody([][]byte{lp}, []datatype.StreamID{one}, meta,
			group([]datatype.StreamID{one}, nil)),
		"consumer entry not pending": streamBody([][]byte{lp}, []datatype.StreamID{one}, meta,
			group(nil, []datatype.StreamID{one})),
		"duplicate group": streamBody([][]byte{lp}, []datatype.StreamID{one}, meta, group(nil, nil), group(nil, nil)),
		"truncated":       ok[:len(ok)-3],
	} {
		if _, err := Restore(AppendFooter(append([]byte(nil), body...)), testLimits); !errors.Is(err, ErrData) {
			t.Errorf("%s: err %v, want ErrData", name, err)
		}
	}
}

// readSeed reads a FuzzRestore seed: a payload's body.
func readSeed(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzRestore", name))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 2)
	lit := strings.TrimSpace(lines[1])
	body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")"))
	if err != nil {
		t.Fatalf("seed %s: %v", name, err)
	}
	return []byte(body)
}

// TestRestoreRedis6Stream restores RDB_TYPE_STREAM_LISTPACKS, which has
// no first or deleted IDs, no entries added and no groups' read
// counters: as Redis 7.0 loads it, entries added is the length and each
// group's counter is estimated.
func TestRestoreRedis6Stream(t *testing.T) {
	s := datatype.NewStream()
	for i := uint64(1); i <= 3; i++ {
		s.Append(datatype.StreamID{Ms: i}, []string{"f", "v"}, datatype.StreamLimits{})
	}
	b := []byte{typeStreamListpacks}
	b = appendLen(b, 1)
	s.ForEachNode(func(n datatype.StreamNode) bool {
		b = appendString(b, appendRawID(nil, n.Master))
		b = appendString(b, n.Listpack)
		return true
	})
	b = append(b, 3, 3, 0) // length, last ID
	b = appendLen(b, 2)
	for _, g := range []struct {
		name string
		last byte
	}{{"at-first", 1}, {"at-last", 3}} {
		b = appendString(b, []byte(g.name))
		b = append(b, g.last, 0, 0, 0) // last delivered ID, empty PEL, no consumers
	}
	v, err := Restore(AppendFooter(b), testLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := "len 3 last 3-0 first 1-0 maxdel 0-0 added 3\n" +
		"1-0 [\"f\" \"v\"]\n2-0 [\"f\" \"v\"]\n3-0 [\"f\" \"v\"]\n" +
		"group \"at-first\" 1-0 1\ngroup \"at-last\" 3-0 3\n"
	if got := streamState(v.Object.(*datatype.Stream)); got != want {
		t.Fatalf("restored\n%s\nwant\n%s", got, want)
	}
}
