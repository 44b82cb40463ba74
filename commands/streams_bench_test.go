package commands

import (
	"io"
	"strconv"
	"testing"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/resp"
)

// benchStream is a stream of n entries as a producer writes them: the
// same three fields each time (Redis's SAMEFIELDS case), a short
// string, an integer and a 40-byte payload; every tenth entry has a
// fourth field, so its fields are written out.
func benchStream(n int) *datatype.Stream {
	s := datatype.NewStream()
	payload := "0123456789abcdefghij0123456789abcdefghij"
	for i := range n {
		fields := []string{"user", "user-" + strconv.Itoa(i%97), "score", strconv.Itoa(i * 7), "payload", payload}
		if i%10 == 9 {
			fields = append(fields, "retry", "1")
		}
		s.Append(datatype.StreamID{Ms: uint64(1000 + i)}, fields, datatype.StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100})
	}
	return s
}

// BenchmarkStreamReads measures the stream read paths of XRANGE,
// XREVRANGE, XREAD, XREADGROUP (new entries and history), XCLAIM and
// XINFO STREAM FULL on a 1000-entry stream, 100 entries a reply (one
// for the one-ID lookups), reply written to a resp.Writer. It compiles
// against main's commands package too, for before/after figures.
func BenchmarkStreamReads(b *testing.B) {
	eng := engine.New(engine.Options{})
	key := []byte("s")
	s := benchStream(1000)
	eng.Update(0, func(tx *engine.Tx) { tx.SetObject(key, s, 0) })
	w := resp.NewWriter(io.Discard)
	x := &Ctx{W: w}
	mid := datatype.StreamID{Ms: 1400}
	after, _ := mid.Next()
	run := func(name string, fn func()) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				fn()
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	run("XRANGE-100", func() { writeEntries(x, s, after, datatype.MaxStreamID, 100, false) })
	run("XREVRANGE-100", func() { writeEntries(x, s, datatype.StreamID{}, mid, 100, true) })
	run("XREAD-100", func() {
		eng.View(0, func(tx *engine.Tx) {
			a := &xreadArgs{count: 100, keys: [][]byte{key}}
			serveXread(x, tx, a, []*datatype.Stream{s}, []*datatype.StreamGroup{nil}, []datatype.StreamID{mid})
		})
	})
	run("XREADGROUP-new-100", func() {
		eng.Update(0, func(tx *engine.Tx) {
			s.CreateGroup("g", mid, -1)
			a := &xreadArgs{group: []byte("g"), consumer: []byte("c"), count: 100, keys: [][]byte{key}}
			serveXread(x, tx, a, []*datatype.Stream{s}, []*datatype.StreamGroup{s.Group("g")}, []datatype.StreamID{maxID})
			s.DestroyGroup("g")
		})
	})
	eng.Update(0, func(tx *engine.Tx) {
		s.CreateGroup("h", mid, -1)
		a := &xreadArgs{group: []byte("h"), consumer: []byte("c"), count: 100, keys: [][]byte{key}}
		serveXread(x, tx, a, []*datatype.Stream{s}, []*datatype.StreamGroup{s.Group("h")}, []datatype.StreamID{maxID})
	})
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	run("XREADGROUP-history-100", func() {
		eng.Update(0, func(tx *engine.Tx) {
			a := &xreadArgs{group: []byte("h"), consumer: []byte("c"), count: 100, keys: [][]byte{key}}
			serveXread(x, tx, a, []*datatype.Stream{s}, []*datatype.StreamGroup{s.Group("h")}, []datatype.StreamID{{}})
		})
	})
	run("XCLAIM-lookup-1", func() {
		if e, ok := s.View(datatype.StreamID{Ms: 1457}); ok {
			writeEntry(x, e)
		}
	})
	run("XINFO-FULL-100", func() {
		x.Args = [][]byte{[]byte("XINFO"), []byte("STREAM"), key, []byte("FULL"), []byte("COUNT"), []byte("100")}
		xinfoStream(x, s)
	})
}
