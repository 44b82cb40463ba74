package rdb

import (
	"bytes"
	"math/rand"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/datatype"
)

var testLimits = Limits{Hash: datatype.HashLimits{MaxListpackEntries: 128, MaxListpackValue: 64},
	ZSet: datatype.ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}, Set: datatype.SetLimits{MaxIntsetEntries: 512}}

func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 500; i++ {
		n := 21 + rng.Intn(5000)
		in := make([]byte, n)
		alphabet := 1 + rng.Intn(255)
		for j := range in {
			in[j] = byte(rng.Intn(alphabet))
		}
		c := lzfCompress(in, n-4)
		if c == nil {
			continue
		}
		out, err := lzfDecompress(c, n)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %d bytes (alphabet %d): %v", n, alphabet, err)
		}
	}
}

func TestDumpRestoreRoundTrip(t *testing.T) {
	for _, s := range []string{"", "0", "-1", "300", "99999", "2147483648", "x", strings.Repeat("ab", 1000)} {
		p, err := Dump(Value{String: []byte(s)})
		if err != nil {
			t.Fatal(err)
		}
		v, err := Restore(p, testLimits)
		if err != nil || string(v.String) != s || v.Object != nil {
			t.Fatalf("%q came back as %q %v", s, v.String, err)
		}
	}
	for _, n := range []int{1, 100, 1000} {
		h := datatype.NewHash()
		for i := 0; i < n; i++ {
			h.Set([]byte(strings.Repeat("f", i%7)+string(rune('a'+i%26))+strings.Repeat("1", i/26)), []byte(strings.Repeat("v", i%70)), testLimits.Hash)
		}
		p, err := Dump(Value{Object: h})
		if err != nil {
			t.Fatal(err)
		}
		v, err := Restore(p, testLimits)
		if err != nil {
			t.Fatal(err)
		}
		back := v.Object.(*datatype.Hash)
		if back.Len() != h.Len() || back.Encoding() != h.Encoding() {
			t.Fatalf("%d fields came back as %d (%s, was %s)", h.Len(), back.Len(), back.Encoding(), h.Encoding())
		}
		h.Range(func(f, val []byte) bool {
			if got, ok := back.Get(f); !ok || string(got) != string(val) {
				t.Fatalf("field %q = %q %v, want %q", f, got, ok, val)
			}
			return true
		})
	}
}

// FuzzRestore feeds arbitrary payloads (with a valid footer, so that the
// decoders are reached) to Restore: it must fail cleanly or decode.
func FuzzRestore(f *testing.F) {
	for _, s := range []string{"", "12", strings.Repeat("abc", 30)} {
		p, _ := Dump(Value{String: []byte(s)})
		f.Add(p[:len(p)-10])
	}
	h := datatype.NewHash()
	h.Set([]byte("a"), []byte("1"), testLimits.Hash)
	h.Set([]byte("b"), []byte("text"), testLimits.Hash)
	p, _ := Dump(Value{Object: h})
	f.Add(p[:len(p)-10])
	for _, entries := range []int{128, 1} { // a listpack, then a skiplist
		z := datatype.NewZSet()
		lim := datatype.ZSetLimits{MaxListpackEntries: entries, MaxListpackValue: 64}
		z.Set("a", 1.5, lim)
		z.Set("b", -2, lim)
		p, _ := Dump(Value{Object: z})
		f.Add(p[:len(p)-10])
	}
	l := datatype.NewList()
	for _, v := range []string{"a", "12", "some text"} {
		l.Push([]byte(v), false, datatype.DefaultListLimits)
	}
	if p, err := Dump(Value{Object: l}); err == nil {
		f.Add(p[:len(p)-10])
	}
	for _, n := range []int{0, 3, 300} {
		p, _ := Dump(Value{Object: testStream(n, datatype.StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100})})
		f.Add(p[:len(p)-10])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := Restore(AppendFooter(append([]byte(nil), body...)), testLimits)
		if err == nil && v.Object != nil && v.Object.Len() == 0 && v.Object.Kind() != datatype.KindStream {
			t.Fatal("restored an empty collection") // only a stream may be empty
		}
		if s, ok := v.Object.(*datatype.Stream); ok {
			// What RESTORE accepted dumps and restores to the same stream.
			p, err := Dump(v)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Restore(p, testLimits)
			if err != nil {
				t.Fatalf("a restored stream's dump does not restore: %v", err)
			}
			if got, want := streamState(back.Object.(*datatype.Stream)), streamState(s); got != want {
				t.Fatalf("dumped and restored again:\n%s\nwas\n%s", got, want)
			}
		}
	})
}
