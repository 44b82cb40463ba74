package hll

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The files in testdata/redis were written by redis-server 7.0.15 (GET of
// the key) after the commands their names describe, over the elements
// "e0", "e1", ... added 1000 at a time.

func golden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "redis", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// addElements adds prefix0..prefix(n-1) to v, as PFADD does (one
// invalidation of the cache at the end when anything changed).
func addElements(t testing.TB, v []byte, prefix string, n int, sparseMax int64) []byte {
	t.Helper()
	changed := false
	for i := range n {
		var c bool
		var err error
		if v, c, err = Add(v, fmt.Appendf(nil, "%s%d", prefix, i), sparseMax); err != nil {
			t.Fatalf("add %s%d: %v", prefix, i, err)
		}
		changed = changed || c
	}
	if changed {
		InvalidateCache(v)
	}
	return v
}

func TestAddBuildsRedisBytes(t *testing.T) {
	for _, tc := range []struct {
		n         int
		sparseMax int64
		file      string
		enc       Encoding
		card      uint64
	}{
		{1, 3000, "add-1", Sparse, 1},
		{100, 3000, "add-100", Sparse, 100},
		{1000, 3000, "add-1000", Sparse, 1008},
		{3000, 3000, "add-3000", Dense, 2979},
		{50000, 3000, "add-50000", Dense, 49978},
		{200, 200, "add-200-max200", Dense, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			v := addElements(t, New(), "e", tc.n, tc.sparseMax)
			if want := golden(t, tc.file+".hll"); !bytes.Equal(v, want) {
				t.Fatalf("%d elements: %d bytes differ from Redis's %d", tc.n, len(v), len(want))
			}
			if !Valid(v) || EncodingOf(v) != tc.enc {
				t.Fatalf("encoding %d, want %d", EncodingOf(v), tc.enc)
			}
			if tc.card == 0 {
				return
			}
			card, err := Count(v)
			if err != nil || card != tc.card {
				t.Fatalf("Count = %d, %v; want %d", card, err, tc.card)
			}
			SetCachedCardinality(v, card)
			if want := golden(t, tc.file+"-counted.hll"); !bytes.Equal(v, want) {
				t.Fatal("value with the cached cardinality differs from Redis's")
			}
			if c, ok := CachedCardinality(v); !ok || c != tc.card {
				t.Fatalf("cache = %d, %v", c, ok)
			}
		})
	}
}

func TestSparseAndDenseAgree(t *testing.T) {
	sparse := golden(t, "add-1000.hll")
	dense, err := ToDense(ownedCopy(sparse))
	if err != nil {
		t.Fatal(err)
	}
	if len(dense) != DenseSize || EncodingOf(dense) != Dense || !bytes.Equal(dense[8:16], sparse[8:16]) {
		t.Fatal("ToDense lost the header")
	}
	a, _ := Count(sparse)
	b, _ := Count(dense)
	if a != b {
		t.Fatalf("sparse counts %d, dense %d", a, b)
	}
	r1, r2 := make([]byte, Registers), make([]byte, Registers)
	if Merge(r1, sparse) != nil || Merge(r2, dense) != nil || !bytes.Equal(r1, r2) {
		t.Fatal("registers differ between encodings")
	}
}

func ownedCopy(v []byte) []byte { return append([]byte(nil), v...) }

// mergeLikeRedis is PFMERGE dest src...: the union written into dest
// (dense when a source is).
func mergeLikeRedis(t *testing.T, dest []byte, srcs ...[]byte) []byte {
	regs := make([]byte, Registers)
	useDense := false
	for _, s := range append([][]byte{dest}, srcs...) {
		if err := Merge(regs, s); err != nil {
			t.Fatal(err)
		}
		useDense = useDense || EncodingOf(s) == Dense
	}
	if useDense {
		var err error
		if dest, err = ToDense(dest); err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range regs {
		if r != 0 {
			dest = Set(dest, i, int(r), 3000)
		}
	}
	InvalidateCache(dest)
	return dest
}

func TestMergeBuildsRedisBytes(t *testing.T) {
	b := addElements(t, New(), "b", 300, 3000)
	if got := mergeLikeRedis(t, New(), golden(t, "add-100-counted.hll"), b); !bytes.Equal(got, golden(t, "merge-sparse.hll")) {
		t.Fatal("PFMERGE of two sparse values differs from Redis's")
	}
	if got := mergeLikeRedis(t, New(), b, golden(t, "add-50000-counted.hll")); !bytes.Equal(got, golden(t, "merge-dense.hll")) {
		t.Fatal("PFMERGE with a dense source differs from Redis's")
	}
	regs := make([]byte, Registers)
	for _, v := range [][]byte{golden(t, "add-1000.hll"), b, golden(t, "add-50000.hll")} {
		if err := Merge(regs, v); err != nil {
			t.Fatal(err)
		}
	}
	if got := RawEstimate(regs); got != 50379 {
		t.Fatalf("union estimate %d, Redis says 50379", got)
	}
}

func TestValidRejectsWhatRedisRejects(t *testing.T) {
	dense := golden(t, "add-3000.hll")
	for _, tc := range []struct {
		name string
		v    []byte
		ok   bool
	}{
		{"empty", nil, false},
		{"short header", []byte("HYLL\x01\x00\x00"), false},
		{"bad magic", append([]byte("HYLX"), dense[4:]...), false},
		{"unknown encoding", append([]byte("HYLL\x02"), dense[5:]...), false},
		{"dense one byte short", dense[:len(dense)-1], false},
		{"dense", dense, true},
		{"sparse header only", []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"), true},
		{"new", New(), true},
	} {
		if got := Valid(tc.v); got != tc.ok {
			t.Errorf("%s: Valid = %v", tc.name, got)
		}
	}
}

func TestCorruptSparseIsInvalid(t *testing.T) {
	hdr := []byte("HYLL\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80")
	for _, tc := range []struct {
		name string
		ops  []byte
	}{
		{"too few registers", []byte{0x7f, 0xfe}},        // XZERO:16383
		{"too many registers", []byte{0x7f, 0xff, 0x00}}, // XZERO:16384 ZERO:1
		{"VAL past the end", []byte{0x7f, 0xfe, 0x83}},   // XZERO:16383 VAL:1,4
		{"XZERO cut off", []byte{0x7f}},
		{"VAL after the last register", []byte{0x7f, 0xff, 0x80}}, // XZERO:16384 VAL:1,1                  // reads a zero second byte
		{"no opcodes", nil},
	} {
		v := append(ownedCopy(hdr), tc.ops...)
		if _, err := Count(v); err != ErrInvalid {
			t.Errorf("%s: Count err = %v", tc.name, err)
		}
		if err := Merge(make([]byte, Registers), v); err != ErrInvalid {
			t.Errorf("%s: Merge err = %v", tc.name, err)
		}
		if _, err := ToDense(v); err != ErrInvalid {
			t.Errorf("%s: ToDense err = %v", tc.name, err)
		}
	}
}

func TestDecodeListsOpcodes(t *testing.T) {
	v := New()
	for _, e := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		v, _, _ = Add(v, []byte(e), 3000)
	}
	// PFDEBUG DECODE after PFADD h a b c d e f g in redis-server 7.0.15.
	const want = "Z:1646 v:1,1 Z:5645 v:1,1 Z:1085 v:2,1 z:57 v:1,1 Z:4274 v:2,1 Z:2445 v:1,1 Z:622 v:1,1 Z:603"
	if got := Decode(v); got != want {
		t.Fatalf("Decode = %q\nwant     %q", got, want)
	}
	if got := Decode(New()); got != "Z:16384" {
		t.Fatalf("Decode(New()) = %q", got)
	}
}

func TestDenseRegistersRoundTrip(t *testing.T) {
	regs := make([]byte, DenseSize-HeaderSize)
	for i := range Registers {
		denseSetRegister(regs, i, (i*7+3)%(RegisterMax+1))
	}
	for i := range Registers {
		if got, want := denseGet(regs, i), (i*7+3)%(RegisterMax+1); got != want {
			t.Fatalf("register %d = %d, want %d", i, got, want)
		}
	}
}

func TestSparsePromotion(t *testing.T) {
	// A register above 32 does not fit a VAL opcode: the value turns
	// dense, keeping its other registers.
	v := addElements(t, New(), "e", 100, 3000)
	before := make([]byte, Registers)
	if err := Merge(before, v); err != nil {
		t.Fatal(err)
	}
	const index = 77
	nv, changed, err := sparseSet(ownedCopy(v), index, 33, 3000)
	if err != nil || !changed || EncodingOf(nv) != Dense {
		t.Fatalf("changed %v, err %v, encoding %d", changed, err, EncodingOf(nv))
	}
	after := make([]byte, Registers)
	if err := Merge(after, nv); err != nil {
		t.Fatal(err)
	}
	before[index] = 33
	if !bytes.Equal(before, after) {
		t.Fatal("promotion lost registers")
	}

	// A split that would pass hll-sparse-max-bytes turns it dense too;
	// one that fits keeps it sparse.
	if nv, _, _ := sparseSet(ownedCopy(v), 5000, 1, int64(len(v))); EncodingOf(nv) != Dense {
		t.Fatal("a value growing past the maximum stayed sparse")
	}
	if nv, _, _ := sparseSet(ownedCopy(v), 5000, 1, int64(len(v))+3); EncodingOf(nv) != Sparse {
		t.Fatal("a value within the maximum turned dense")
	}
}

func TestSelfTestPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("adds ten million elements")
	}
	if err := SelfTest(t.Context(), 3000); err != nil {
		t.Fatal(err)
	}
}
