package datatype

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every kind's decoder: each must
// either fail with ErrCorrupt or build a value whose encoding decodes
// again to the same encoding (the disk tier's checksum stops most damage
// before this point; this is the line behind it). Seeds are in
// testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	lim := ZSetLimits{MaxListpackEntries: 2, MaxListpackValue: 64}
	z := NewZSet()
	z.Set("a", 1.5, lim)
	z.Set("b", -2, lim)
	f.Add(uint8(KindZSet), z.AppendBinary(nil))
	z.Set("c", 3, lim) // now a skiplist
	f.Add(uint8(KindZSet), z.AppendBinary(nil))
	h := NewHash()
	h.Set([]byte("f"), []byte("v"), HashLimits{MaxListpackEntries: 8, MaxListpackValue: 8})
	f.Add(uint8(KindHash), h.AppendBinary(nil))
	f.Add(uint8(KindStream), seedStream().AppendBinary(nil))
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		obj, err := Decode(Kind(kind), b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if obj.Kind() != Kind(kind) || obj.MemSize() <= 0 || obj.Len() < 0 {
			t.Fatalf("decoded %v, Len %d, MemSize %d", obj.Kind(), obj.Len(), obj.MemSize())
		}
		enc := obj.AppendBinary(nil)
		again, err := Decode(Kind(kind), enc)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", enc, err)
		}
		if !bytes.Equal(again.AppendBinary(nil), enc) {
			t.Fatal("encoding changed on a second round trip")
		}
		if zs, ok := obj.(*ZSet); ok {
			zs.ForEach(func(e ZEntry) bool {
				if r, found := zs.Rank(e.Member); !found || zs.At(r) != e {
					t.Fatalf("member %q not found at its rank", e.Member)
				}
				return true
			})
		}
	})
}

// seedStream is a small stream with a deleted entry, two nodes, a group
// with two consumers and pending entries.
func seedStream() *Stream {
	s := NewStream()
	lim := StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 2}
	for i := uint64(1); i <= 3; i++ {
		s.Append(StreamID{i, i}, []string{"f", "v", "n", "12"}, lim)
	}
	s.Delete(StreamID{2, 2})
	s.MaxDeletedID = StreamID{2, 2}
	g := s.CreateGroup("g", StreamID{3, 3}, 3)
	a, _ := g.AddConsumer("alice", 1700000000000)
	b, _ := g.AddConsumer("bob", 1700000000001)
	g.Deliver(StreamID{1, 1}, a, 1700000000002)
	g.Deliver(StreamID{3, 3}, b, 1700000000003)
	s.CreateGroup("empty", StreamID{}, -1)
	return s
}
