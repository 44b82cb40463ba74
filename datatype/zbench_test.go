package datatype

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// BenchmarkZSetSetSkiplist is ZADD's structure cost on the big form
// (OBJECT ENCODING skiplist) of up to 100k members (redis-benchmark's
// ZADD: random members, random scores).
func BenchmarkZSetSetSkiplist(b *testing.B) {
	lim := ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	z := NewZSet()
	members := make([]string, 100000)
	for i := range members {
		members[i] = "element:" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		j := (i * 7919) % len(members)
		z.Set(members[j], float64((i*31)%1000), lim)
	}
}

// BenchmarkZSetSetListpack is ZADD's structure cost on a listpack of 100
// members.
func BenchmarkZSetSetListpack(b *testing.B) {
	lim := ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	z := NewZSet()
	members := make([]string, 100)
	for i := range members {
		members[i] = "element:" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		z.Set(members[i%100], float64((i*31)%1000), lim)
	}
}

// BenchmarkZSetRedisBenchmarkZADD is the structure's share of kvbench
// types' ZADD (redis-benchmark -t zadd -r 100000 -n 50000): random
// members "element:<12 digits>" of 100000 with random scores, looked up
// and then added or updated as ZADD does, the set starting again from
// empty every 50000 commands as kvbench flushes between rounds (ZROUND=N
// for another round, 300000 for a set as big as a long redis-benchmark
// run leaves).
func BenchmarkZSetRedisBenchmarkZADD(b *testing.B) {
	lim := ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	r := rand.New(rand.NewPCG(1, 2))
	round := 50000
	if s := os.Getenv("ZROUND"); s != "" {
		round, _ = strconv.Atoi(s)
	}
	members := make([]string, round)
	scores := make([]float64, round)
	for i := range members {
		members[i] = fmt.Sprintf("element:%012d", r.IntN(100000))
		scores[i] = float64(r.IntN(100000))
	}
	z := NewZSet()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		j := i % round
		if j == 0 {
			z = NewZSet()
		}
		// As ZADD does: a view of the argument for the lookup and an
		// update, a string of its own for a member it adds.
		arg := []byte(members[j])
		if old, ok := z.Score(View(arg)); ok {
			z.Update(View(arg), old, scores[j])
		} else {
			z.Add(string(arg), scores[j], lim)
		}
	}
}

// BenchmarkSetRedisBenchmarkSADD is the structure's share of kvbench
// types' SADD (redis-benchmark -t sadd -r 100000 -n 50000): random
// members "element:<12 digits>" of 100000, the set starting again from
// empty every 50000 commands as kvbench flushes between rounds.
func BenchmarkSetRedisBenchmarkSADD(b *testing.B) {
	lim := SetLimits{MaxIntsetEntries: 512}
	r := rand.New(rand.NewPCG(1, 2))
	round := 50000
	if s := os.Getenv("ZROUND"); s != "" {
		round, _ = strconv.Atoi(s)
	}
	members := make([][]byte, round)
	for i := range members {
		members[i] = fmt.Appendf(nil, "element:%012d", r.IntN(100000))
	}
	s := NewSetFor(members[0])
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		j := i % round
		if j == 0 {
			s = NewSetFor(members[0])
		}
		s.Add(members[j], lim)
	}
}

// BenchmarkZSetUpdateLarge moves random members of a 1,000,000-member
// sorted set to random scores, as ZADD on a large set does: the nodes are
// far more than the caches hold, so the cost is the cache lines a search
// touches (a server's network work evicts a smaller set's nodes too).
func BenchmarkZSetUpdateLarge(b *testing.B) {
	lim := ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	r := rand.New(rand.NewPCG(3, 4))
	const n = 1000000
	members := make([]string, n)
	z := NewZSet()
	for i := range members {
		members[i] = fmt.Sprintf("element:%012d", i)
		z.Add(members[i], float64(r.IntN(n)), lim)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := members[r.IntN(n)]
		old, _ := z.Score(m)
		z.Update(m, old, float64(r.IntN(n)))
	}
}
