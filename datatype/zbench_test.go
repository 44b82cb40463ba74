package datatype

import (
	"strconv"
	"testing"
)

// BenchmarkZSetSetSkiplist is ZADD's structure cost on a skiplist of up
// to 100k members (redis-benchmark's ZADD: random members, random scores).
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
