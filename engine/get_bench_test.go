package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkGetRandomKey is a GET of a random key among n of 4 KiB, as
// redis-benchmark's `-t get -r 100000` does, through the engine alone: the
// key's lookup and its LRU upkeep, mostly cache misses once the keyspace
// outgrows the caches.
//
//	go test ./engine -run '^$' -bench GetRandomKey
func BenchmarkGetRandomKey(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			e := New(Options{})
			keys := make([][]byte, n)
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "key:%012d", i)
				set(e, 0, string(keys[i]), make([]byte, 4096), 0)
			}
			order := make([]int, 1<<16)
			for i := range order {
				order[i] = rand.IntN(n)
			}
			b.ResetTimer()
			for i := range b.N {
				e.View(0, func(tx *Tx) {
					if _, ok := tx.Get(keys[order[i&(len(order)-1)]]); !ok {
						b.Fatal("key missing")
					}
				})
			}
		})
	}
}
