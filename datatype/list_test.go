package datatype

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
)

// checkList compares l with the model and checks its accounting.
func checkList(t *testing.T, step string, l *List, model [][]byte) {
	t.Helper()
	if l.Len() != len(model) {
		t.Fatalf("%s: Len %d, model %d", step, l.Len(), len(model))
	}
	i := 0
	l.Range(0, false, func(j int, v []byte) bool {
		if j != i || !bytes.Equal(v, model[i]) {
			t.Fatalf("%s: element %d (%d) is %q, model %q", step, i, j, v, model[i])
		}
		i++
		return true
	})
	if i != len(model) {
		t.Fatalf("%s: Range gave %d elements of %d", step, i, len(model))
	}
	var mem int64
	count := 0
	for _, c := range l.live() {
		if c.n() == 0 {
			t.Fatalf("%s: empty chunk kept", step)
		}
		if len(c.buf) >= PlainElementSize && c.n() != 1 {
			t.Fatalf("%s: a large element shares a chunk", step)
		}
		count += c.n()
		mem += c.size()
	}
	if mem != l.mem || count != l.n {
		t.Fatalf("%s: accounted %d bytes / %d elements, chunks hold %d / %d", step, l.mem, l.n, mem, count)
	}
}

func randomElement(rng *rand.Rand) []byte {
	switch rng.Intn(20) {
	case 0:
		return bytes.Repeat([]byte{'L'}, PlainElementSize+rng.Intn(100))
	case 1:
		return bytes.Repeat([]byte{'m'}, 1000+rng.Intn(3000))
	case 2:
		return nil
	}
	return []byte(fmt.Sprint(rng.Intn(10)))
}

func TestListMatchesASliceUnderRandomOperations(t *testing.T) {
	for _, lim := range []ListLimits{{MaxListpackSize: 3}, {MaxListpackSize: -1}, DefaultListLimits, {MaxListpackSize: 1}} {
		t.Run(fmt.Sprint(lim.MaxListpackSize), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(lim.MaxListpackSize)))
			l := NewList()
			var model [][]byte
			for step := 0; step < 6000; step++ {
				op := rng.Intn(11)
				name := fmt.Sprint("step ", step, " op ", op)
				switch {
				case op <= 1:
					v := randomElement(rng)
					l.Push(v, op == 0, lim)
					if op == 0 {
						model = append([][]byte{v}, model...)
					} else {
						model = append(model, v)
					}
				case op <= 3 && len(model) > 0:
					got := l.Pop(op == 2)
					want := model[0]
					if op == 2 {
						model = model[1:]
					} else {
						want = model[len(model)-1]
						model = model[:len(model)-1]
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s: popped %q, want %q", name, got, want)
					}
				case op == 4 && len(model) > 0:
					i := rng.Intn(len(model))
					if got := l.Index(i); !bytes.Equal(got, model[i]) {
						t.Fatalf("%s: Index(%d) %q, want %q", name, i, got, model[i])
					}
				case op == 5 && len(model) > 0:
					i, v := rng.Intn(len(model)), randomElement(rng)
					l.Set(i, v, lim)
					model[i] = v
				case op == 6:
					i, v := rng.Intn(len(model)+1), randomElement(rng)
					l.Insert(i, v, lim)
					model = append(model[:i], append([][]byte{v}, model[i:]...)...)
				case op == 7 && len(model) > 0:
					i := rng.Intn(len(model))
					l.RemoveAt(i)
					model = append(model[:i], model[i+1:]...)
				case op == 8:
					v, count := []byte(fmt.Sprint(rng.Intn(10))), rng.Intn(5)-2
					got := l.Remove(v, count)
					want := removeModel(&model, v, count)
					if got != want {
						t.Fatalf("%s: Remove(%q, %d) = %d, want %d", name, v, count, got, want)
					}
				case op == 9 && len(model) > 0 && rng.Intn(10) == 0:
					start := rng.Intn(len(model))
					stop := rng.Intn(len(model))
					l.Trim(start, stop)
					if start > stop {
						model = nil
					} else {
						model = append([][]byte(nil), model[start:stop+1]...)
					}
				case op == 10 && len(model) > 0:
					from := rng.Intn(len(model))
					i := from
					l.Range(from, true, func(j int, v []byte) bool {
						if j != i || !bytes.Equal(v, model[i]) {
							t.Fatalf("%s: reverse element %d is %q, want %q", name, j, v, model[i])
						}
						i--
						return i >= from-5
					})
				}
				checkList(t, name, l, model)
			}
		})
	}
}

func removeModel(model *[][]byte, v []byte, count int) int {
	m := *model
	removed := 0
	if count >= 0 {
		var out [][]byte
		for _, e := range m {
			if bytes.Equal(e, v) && (count == 0 || removed < count) {
				removed++
				continue
			}
			out = append(out, e)
		}
		*model = out
		return removed
	}
	var out [][]byte
	for i := len(m) - 1; i >= 0; i-- {
		if bytes.Equal(m[i], v) && removed < -count {
			removed++
			continue
		}
		out = append([][]byte{m[i]}, out...)
	}
	*model = out
	return removed
}

func TestListRoundTripsThroughItsEncodingAndClone(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	l := NewList()
	var model [][]byte
	for i := 0; i < 20000; i++ {
		v := randomElement(rng)
		l.Push(v, i%3 == 0, DefaultListLimits)
		if i%3 == 0 {
			model = append([][]byte{v}, model...)
		} else {
			model = append(model, v)
		}
	}
	obj, err := Decode(KindList, l.AppendBinary(nil))
	if err != nil {
		t.Fatal(err)
	}
	checkList(t, "decoded", obj.(*List), model)
	c := l.Clone().(*List)
	checkList(t, "clone", c, model)
	c.Pop(true)
	checkList(t, "original after the clone changed", l, model)
	if l.Encoding() != "quicklist" || l.Kind() != KindList {
		t.Fatalf("encoding %q kind %v", l.Encoding(), l.Kind())
	}
}

func TestListIsCompactPerElement(t *testing.T) {
	l := NewList()
	const n = 100000
	for i := 0; i < n; i++ {
		l.Push([]byte(fmt.Sprintf("v%07d", i)), false, DefaultListLimits)
	}
	// 8 bytes of data each: Redis's quicklist needs about 10.
	if per := float64(l.MemSize()) / n; per > 16 {
		t.Fatalf("%.1f bytes per 8-byte element", per)
	}
	if got := l.Index(n / 2); string(got) != fmt.Sprintf("v%07d", n/2) {
		t.Fatalf("Index: %q", got)
	}
}

func TestDecodeListRejectsDamage(t *testing.T) {
	for _, b := range [][]byte{nil, {0}, {2, 1, 'a'}, {1, 5, 'a'}, {1, 1, 'a', 'b'}, {0xff, 0xff, 0xff}} {
		if _, err := Decode(KindList, b); err == nil {
			t.Errorf("%x decoded", b)
		}
	}
}

func FuzzDecodeList(f *testing.F) {
	l := NewList()
	for _, v := range []string{"a", "", "hello", "123"} {
		l.Push([]byte(v), false, DefaultListLimits)
	}
	f.Add(l.AppendBinary(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := Decode(KindList, b)
		if err != nil {
			return
		}
		// Varints need not be minimal, so compare a second round trip.
		again := obj.AppendBinary(nil)
		obj2, err := Decode(KindList, again)
		if err != nil {
			t.Fatalf("re-encoding %x does not decode: %v", again, err)
		}
		if third := obj2.AppendBinary(nil); !bytes.Equal(third, again) {
			t.Fatalf("re-encoded %x as %x", again, third)
		}
		if obj.Len() == 0 || obj.MemSize() <= 0 {
			t.Fatalf("decoded %d elements, %d bytes", obj.Len(), obj.MemSize())
		}
	})
}

func TestListMemSizeMatchesTheHeap(t *testing.T) {
	for _, layout := range []struct{ keys, per int }{{1000, 100}, {1, 100000}} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep := make([]*List, 0, layout.keys)
		var sum int64
		for k := 0; k < layout.keys; k++ {
			l := NewList()
			for j := 0; j < layout.per; j++ {
				l.Push([]byte(fmt.Sprintf("member:%06d", k*layout.per+j)), j%3 == 0, DefaultListLimits)
			}
			sum += l.MemSize()
			keep = append(keep, l)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc) - int64(cap(keep))*8
		runtime.KeepAlive(keep)
		ratio := float64(sum) / float64(heap)
		t.Logf("%d lists of %d: MemSize %d, heap %d (%.2fx)", layout.keys, layout.per, sum, heap, ratio)
		if ratio < 0.8 || ratio > 1.2 {
			t.Errorf("%d lists of %d: MemSize %d bytes, heap grew %d (%.2fx)", layout.keys, layout.per, sum, heap, ratio)
		}
	}
}
