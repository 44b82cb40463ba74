package geohash

import "testing"

// BenchmarkDistance is one haversine distance, the cost of each candidate
// a search examines.
func BenchmarkDistance(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Distance(13.361389, 38.115556, 15.087269+float64(i&7)*1e-3, 37.502669)
	}
}
