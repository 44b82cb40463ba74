package datatype

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
)

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestSetMemSizeMatchesTheHeap builds 100,000 members as 1,000 sets of
// 100 and as one set, of strings and of integers, and requires the sets'
// MemSize to be within a fifth of what the Go heap grew by: maxmemory
// is only a bound if MemSize counts what the structures really use.
func TestSetMemSizeMatchesTheHeap(t *testing.T) {
	lim := SetLimits{MaxIntsetEntries: 512}
	for _, tc := range []struct {
		name      string
		keys, per int
		member    func(i int) string
	}{
		{"strings, 1000 sets of 100", 1000, 100, func(i int) string { return fmt.Sprintf("member:%06d", i) }},
		{"strings, one set of 100000", 1, 100000, func(i int) string { return fmt.Sprintf("member:%06d", i) }},
		{"integers, 1000 intsets of 100", 1000, 100, strconv.Itoa},
		{"integers, one hashtable of 100000", 1, 100000, strconv.Itoa},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members := make([][]byte, tc.keys*tc.per)
			for i := range members {
				members[i] = []byte(tc.member(i))
			}
			before := heapInUse()
			sets := make([]*Set, tc.keys)
			for k := range sets {
				sets[k] = NewSetFor(members[k*tc.per])
				for j := range tc.per {
					sets[k].Add(members[k*tc.per+j], lim)
				}
			}
			grew := heapInUse() - before
			var size int64
			for _, s := range sets {
				size += s.MemSize()
			}
			runtime.KeepAlive(members)
			ratio := float64(size) / float64(grew)
			t.Logf("MemSize %d, heap grew %d (ratio %.2f), %.1f bytes per member", size, grew, ratio, float64(size)/float64(len(members)))
			if ratio < 0.8 || ratio > 1.2 {
				t.Errorf("MemSize %d is %.2f times the heap's growth %d", size, ratio, grew)
			}
		})
	}
}
