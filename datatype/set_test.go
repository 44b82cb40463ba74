package datatype

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

var testSetLimits = SetLimits{MaxIntsetEntries: 16}

// members lists a set's members in Range order.
func setMembers(s *Set) []string {
	var out []string
	s.Range(func(m []byte) bool {
		out = append(out, string(m))
		return true
	})
	return out
}

// checkSet compares s with the model and checks the invariants: the
// encoding Redis would have, intset order, and MemSize equal to a fresh
// count of what the structure holds.
func checkSet(t *testing.T, s *Set, model map[string]bool, wantIntset bool) {
	t.Helper()
	if s.Len() != len(model) {
		t.Fatalf("Len = %d, model has %d", s.Len(), len(model))
	}
	got := setMembers(s)
	if len(got) != len(model) {
		t.Fatalf("Range gave %d members, model has %d", len(got), len(model))
	}
	for _, m := range got {
		if !model[m] {
			t.Fatalf("member %q not in the model", m)
		}
		if !s.Has([]byte(m)) {
			t.Fatalf("Has(%q) = false for a member", m)
		}
	}
	if s.IsIntset() != wantIntset {
		t.Fatalf("encoding %s, want intset=%v", s.Encoding(), wantIntset)
	}
	if s.IsIntset() && !slices.IsSortedFunc(got, func(a, b string) int {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		return cmp.Compare(x, y)
	}) {
		t.Fatalf("intset out of order: %v", got)
	}
	if want := recomputedMemSize(s); s.MemSize() != want {
		t.Fatalf("MemSize = %d, recomputed %d", s.MemSize(), want)
	}
}

// recomputedMemSize counts a set's memory from scratch.
func recomputedMemSize(s *Set) int64 {
	if s.table == nil {
		return objectOverhead + int64(cap(s.ints.data))
	}
	size := int64(objectOverhead + len(s.table.buckets)*sliceHeaderSize)
	n := 0
	for _, b := range s.table.buckets {
		size += int64(cap(b))
		for off := 0; off < len(b); n++ {
			_, off = memberAt(b, off)
		}
	}
	if n != s.table.n {
		return -1
	}
	return size
}

// TestSetFollowsModelUnderRandomOperations runs random adds and removes
// of integers, non-canonical integers and strings against a map, checking
// the encoding rules of Redis's setTypeAdd on the way: an intset while
// every member is a canonical integer and there are at most
// MaxIntsetEntries, a hashtable for good after.
func TestSetFollowsModelUnderRandomOperations(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		s := NewSet()
		model := map[string]bool{}
		intset := true
		strings := round%2 == 0
		for op := range 2000 {
			var m string
			switch r := rng.IntN(20); {
			case r == 0 && strings:
				m = "str" + strconv.Itoa(rng.IntN(50))
			case r == 1 && strings:
				m = "0" + strconv.Itoa(rng.IntN(10)) // not canonical: a string
			case r == 2:
				m = strconv.FormatInt(int64(rng.IntN(40)-20)*100000, 10) // 32 bits wide
			case r == 3:
				m = strconv.FormatInt(int64(rng.IntN(40)-20)*1e12, 10) // 64 bits wide
			default:
				m = strconv.Itoa(rng.IntN(40) - 20)
			}
			if rng.IntN(3) == 0 {
				if got, want := s.Remove([]byte(m)), model[m]; got != want {
					t.Fatalf("round %d op %d: Remove(%q) = %v, want %v", round, op, m, got, want)
				}
				delete(model, m)
			} else {
				if got, want := s.Add([]byte(m), testSetLimits), !model[m]; got != want {
					t.Fatalf("round %d op %d: Add(%q) = %v, want %v", round, op, m, got, want)
				}
				model[m] = true
				if _, ok := ParseInt64([]byte(m)); !ok || len(model) > testSetLimits.MaxIntsetEntries {
					intset = false
				}
			}
			checkSet(t, s, model, intset)
		}
	}
}

// TestSetTableGrowsAndShrinks fills a hashtable far past several
// doublings and empties it again, checking the members and MemSize
// throughout.
func TestSetTableGrowsAndShrinks(t *testing.T) {
	s := NewSetFor([]byte("x"))
	model := map[string]bool{}
	for i := range 5000 {
		m := fmt.Sprintf("member-%d", i)
		s.Add([]byte(m), testSetLimits)
		model[m] = true
		if i%250 == 0 {
			checkSet(t, s, model, false)
		}
	}
	checkSet(t, s, model, false)
	grown := len(s.table.buckets)
	for i := range 4990 {
		m := fmt.Sprintf("member-%d", i)
		if !s.Remove([]byte(m)) {
			t.Fatalf("Remove(%q) = false", m)
		}
		delete(model, m)
	}
	checkSet(t, s, model, false)
	if len(s.table.buckets) >= grown/8 {
		t.Fatalf("%d buckets after removing most of %d members (had %d)", len(s.table.buckets), 5000, grown)
	}
}

// TestSetScanReturnsEveryStableMember pins SSCAN's guarantee: a member
// present from the first call to the last is returned at least once,
// while other members are added and removed and the table doubles and
// halves in between.
func TestSetScanReturnsEveryStableMember(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := NewSetFor([]byte("x"))
	stable := map[string]bool{}
	for i := range 300 {
		m := fmt.Sprintf("stable-%d", i)
		s.Add([]byte(m), testSetLimits)
		stable[m] = true
	}
	seen := map[string]bool{}
	cursor, calls := uint64(0), 0
	for {
		cursor = s.Scan(cursor, 5, func(m []byte) { seen[string(m)] = true })
		calls++
		// Churn: a burst of adds (the table grows) or removes (it shrinks).
		if calls%7 < 3 {
			for range 200 {
				s.Add([]byte(fmt.Sprintf("churn-%d", rng.IntN(5000))), testSetLimits)
			}
		} else {
			for range 200 {
				s.Remove([]byte(fmt.Sprintf("churn-%d", rng.IntN(5000))))
			}
		}
		if cursor == 0 {
			break
		}
		if calls > 100000 {
			t.Fatal("scan does not finish")
		}
	}
	for m := range stable {
		if !seen[m] {
			t.Fatalf("stable member %q never returned (%d calls)", m, calls)
		}
	}
}

// TestSetIntsetScanIsOneCall: an intset answers SSCAN whole, cursor 0.
func TestSetIntsetScanIsOneCall(t *testing.T) {
	s := NewSet()
	for _, m := range []string{"3", "-1", "2"} {
		s.Add([]byte(m), testSetLimits)
	}
	var got []string
	if next := s.Scan(77, 1, func(m []byte) { got = append(got, string(m)) }); next != 0 {
		t.Fatalf("next cursor %d, want 0", next)
	}
	if !slices.Equal(got, []string{"-1", "2", "3"}) {
		t.Fatalf("scan gave %v", got)
	}
}

// TestSetRandomCoversEveryMember: AppendRandom returns members only, and
// every member of a small set in a few thousand picks, in both encodings.
func TestSetRandomCoversEveryMember(t *testing.T) {
	for _, first := range []string{"1", "x"} {
		s := NewSetFor([]byte(first))
		want := map[string]bool{}
		for i := range 10 {
			m := first + strconv.Itoa(i)
			if first == "1" {
				m = strconv.Itoa(i)
			}
			s.Add([]byte(m), testSetLimits)
			want[m] = true
		}
		got := map[string]bool{}
		for range 5000 {
			m := string(s.AppendRandom(nil))
			if !want[m] {
				t.Fatalf("%s: random member %q not in the set", s.Encoding(), m)
			}
			got[m] = true
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d of %d members ever picked", s.Encoding(), len(got), len(want))
		}
	}
}

// TestSetEncodingRoundTrip decodes what AppendBinary wrote into an equal
// set of the same encoding, and Clone gives an independent copy.
func TestSetEncodingRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members []string
	}{
		{"empty intset", nil},
		{"intset extremes", []string{"-9223372036854775808", "9223372036854775807", "0", "-1", "1"}},
		{"hashtable", []string{"a", "", "1", "bb", string(make([]byte, 300))}},
		{"hashtable of integers", setRange(0, 40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSet()
			for _, m := range tc.members {
				s.Add([]byte(m), testSetLimits)
			}
			enc := s.AppendBinary([]byte("prefix"))
			obj, err := Decode(KindSet, enc[len("prefix"):])
			if err != nil {
				t.Fatal(err)
			}
			d := obj.(*Set)
			model := map[string]bool{}
			for _, m := range tc.members {
				model[m] = true
			}
			checkSet(t, d, model, s.IsIntset())
			c := s.Clone().(*Set)
			c.Add([]byte("new member"), testSetLimits)
			checkSet(t, s, model, s.IsIntset())
			if c.Len() != s.Len()+1 {
				t.Fatalf("clone has %d members, original %d", c.Len(), s.Len())
			}
		})
	}
}

func setRange(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

// TestSetDecodeRejectsDamage: truncations, a descending intset, a
// duplicate member, an unknown encoding and trailing bytes are ErrCorrupt.
func TestSetDecodeRejectsDamage(t *testing.T) {
	s := NewSetFor([]byte("a"))
	for _, m := range []string{"a", "b", "c"} {
		s.Add([]byte(m), testSetLimits)
	}
	good := s.AppendBinary(nil)
	cases := map[string][]byte{
		"descending intset": {0, 2, 4, 1}, // 2, then 2 + (-1)
		"repeated integer":  {0, 2, 4, 0}, // 2, then 2 + 0
		"duplicate member":  {1, 2, 1, 'a', 1, 'a'},
		"unknown encoding":  {7, 0},
		"trailing bytes":    append(slices.Clone(good), 0),
		"huge count":        {1, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	for i := range len(good) {
		cases[fmt.Sprintf("truncated at %d", i)] = good[:i]
	}
	for name, b := range cases {
		if _, err := Decode(KindSet, b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode = %v, want ErrCorrupt", name, err)
		}
	}
}

// FuzzDecodeSet: Decode never panics, refuses damage with an error, and
// whatever it accepts encodes back to a set with the same members and
// encoding, whose MemSize matches its contents.
func FuzzDecodeSet(f *testing.F) {
	for _, members := range [][]string{nil, {"1", "-5", "300"}, {"a", "b", "1"}} {
		s := NewSet()
		for _, m := range members {
			s.Add([]byte(m), testSetLimits)
		}
		f.Add(s.AppendBinary(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		obj, err := Decode(KindSet, b)
		if err != nil {
			return
		}
		s := obj.(*Set)
		again, err := Decode(KindSet, s.AppendBinary(nil))
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		a, c := setMembers(s), setMembers(again.(*Set))
		slices.Sort(a)
		slices.Sort(c)
		if !slices.Equal(a, c) || s.Encoding() != again.Encoding() {
			t.Fatalf("round trip changed the set: %q (%s) vs %q (%s)", a, s.Encoding(), c, again.Encoding())
		}
		if want := recomputedMemSize(s); s.MemSize() != want {
			t.Fatalf("MemSize = %d, recomputed %d", s.MemSize(), want)
		}
	})
}

// TestIntsetBlobRoundTripAndDamage: IntsetBlob is Redis's layout (width,
// count, members), SetFromIntsetBlob reads it back and refuses a bad
// width, a count that does not match, an empty or unordered intset.
func TestIntsetBlobRoundTripAndDamage(t *testing.T) {
	s := NewSet()
	for _, m := range []string{"5", "-70000", "3"} {
		s.Add([]byte(m), testSetLimits)
	}
	blob := s.IntsetBlob()
	want := []byte{4, 0, 0, 0, 3, 0, 0, 0, 0x90, 0xee, 0xfe, 0xff, 3, 0, 0, 0, 5, 0, 0, 0}
	if !slices.Equal(blob, want) {
		t.Fatalf("IntsetBlob = % x, want % x", blob, want)
	}
	back, err := SetFromIntsetBlob(blob, testSetLimits)
	if err != nil || !slices.Equal(setMembers(back), []string{"-70000", "3", "5"}) || !back.IsIntset() {
		t.Fatalf("SetFromIntsetBlob = %v, %v", back, err)
	}
	if big, err := SetFromIntsetBlob(blob, SetLimits{MaxIntsetEntries: 2}); err != nil || big.IsIntset() {
		t.Fatalf("past the limit: %v, %v", big, err)
	}
	for name, b := range map[string][]byte{
		"short":         blob[:7],
		"bad width":     append([]byte{3}, blob[1:]...),
		"count too big": append(append([]byte(nil), blob[:4]...), append([]byte{4, 0, 0, 0}, blob[8:]...)...),
		"empty":         {2, 0, 0, 0, 0, 0, 0, 0},
		"unordered":     {2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 3, 0},
		"repeated":      {2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 5, 0},
	} {
		if _, err := SetFromIntsetBlob(b, testSetLimits); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
	if NewSetFor([]byte("x")).IntsetBlob() != nil {
		t.Error("a hashtable has an intset blob")
	}
}
