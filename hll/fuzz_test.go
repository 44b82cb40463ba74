package hll

import (
	"bytes"
	"testing"
)

// FuzzDecode feeds arbitrary values, as a client could SET them, to every
// function that reads registers, and checks that none panics, that the
// ways of reading agree where Redis's agree, and that adding an element to
// a well-formed value keeps it well-formed with just that register raised.
func FuzzDecode(f *testing.F) {
	f.Add(New(), []byte("a"))
	f.Add(golden(f, "add-100.hll"), []byte("x"))
	f.Add(golden(f, "add-3000.hll"), []byte("y"))
	f.Fuzz(func(t *testing.T, v, ele []byte) {
		if !Valid(v) {
			return
		}
		regs := make([]byte, Registers)
		mergeErr := Merge(regs, v)
		dense, denseErr := ToDense(v)
		if (mergeErr == nil) != (denseErr == nil) {
			t.Fatalf("Merge: %v, ToDense: %v", mergeErr, denseErr)
		}
		if denseErr == nil {
			got := DenseRegisters(dense)
			for i := range got {
				if got[i] != int(regs[i]) {
					t.Fatalf("register %d: dense %d, merged %d", i, got[i], regs[i])
				}
			}
		}
		card, countErr := Count(v)
		if EncodingOf(v) == Sparse {
			Decode(v)
		}
		if countErr != nil {
			return
		}
		if mergeErr != nil || card != RawEstimate(regs) {
			t.Fatalf("Count = %d; merged registers give %d (%v)", card, RawEstimate(regs), mergeErr)
		}
		index, count := PatLen(ele)
		nv, changed, err := Add(append([]byte(nil), v...), ele, 3000)
		if err != nil || !Valid(nv) {
			t.Fatalf("Add to a well-formed value: %v, valid %v", err, Valid(nv))
		}
		after := make([]byte, Registers)
		if err := Merge(after, nv); err != nil {
			t.Fatal(err)
		}
		if _, err := Count(nv); err != nil {
			t.Fatal(err)
		}
		want := append([]byte(nil), regs...)
		want[index] = max(want[index], byte(count))
		if !bytes.Equal(after, want) || changed != (int(regs[index]) < count) {
			t.Fatalf("Add changed %v; registers differ from the old ones with %d raised to %d", changed, index, count)
		}
	})
}
