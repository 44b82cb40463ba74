package commands

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPqsortSortsTheRequestedPrefix: after pqsort(s, 0, k-1) the first k
// elements are the k smallest in order, and the slice is a permutation of
// the input, for sizes across the insertion-sort, median-of-three and
// ninther thresholds and with many equal keys.
func TestPqsortSortsTheRequestedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 2, 6, 7, 8, 40, 41, 100, 1000} {
		for _, distinct := range []int{2, 10, 1 << 30} {
			s := make([]int, n)
			for i := range s {
				s[i] = rng.IntN(distinct)
			}
			sorted := slices.Clone(s)
			slices.Sort(sorted)
			for _, k := range []int{1, n / 2, n} {
				if k == 0 {
					continue
				}
				got := slices.Clone(s)
				pqsort(got, cmp.Compare[int], 0, k-1)
				if !slices.Equal(got[:k], sorted[:k]) {
					t.Fatalf("n=%d k=%d: prefix %v, want %v", n, k, got[:k], sorted[:k])
				}
				slices.Sort(got)
				if !slices.Equal(got, sorted) {
					t.Fatalf("n=%d k=%d: not a permutation", n, k)
				}
			}
		}
	}
}
