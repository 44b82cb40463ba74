package commands

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/geohash"
)

// geoSet is a sorted set of n random positions over Europe.
func geoSet(n int) *datatype.ZSet {
	rng := rand.New(rand.NewPCG(1, 1))
	z := datatype.NewZSet()
	lim := datatype.ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	for i := range n {
		score, _ := geohash.Score(-10+rng.Float64()*40, 35+rng.Float64()*25)
		z.Set(fmt.Sprintf("m%d", i), float64(score), lim)
	}
	return z
}

// BenchmarkGeoSearch is the work of GEOSEARCH FROMLONLAT 10 48 over
// 20000 members, without the reply: the cells, the candidates and their
// distances, the sort.
func BenchmarkGeoSearch(b *testing.B) {
	z := geoSet(20000)
	for _, c := range []struct {
		name string
		q    geoQuery
	}{
		{"radius-50km", geoQuery{shape: geohash.Shape{Longitude: 10, Latitude: 48, Radius: 50, Conversion: 1000}, sort: geoSortAsc}},
		{"radius-500km", geoQuery{shape: geohash.Shape{Longitude: 10, Latitude: 48, Radius: 500, Conversion: 1000}, sort: geoSortAsc}},
		{"box-800x300km", geoQuery{shape: geohash.Shape{Box: true, Longitude: 10, Latitude: 48, Width: 800, Height: 300, Conversion: 1000}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n := 0
			for i := 0; i < b.N; i++ {
				q := c.q
				n = len(geoSearchPoints(z, &q))
			}
			b.ReportMetric(float64(n), "results")
		})
	}
}
