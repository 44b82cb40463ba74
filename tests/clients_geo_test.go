package tests

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestGoRedisGeo drives the geo family through go-redis v9 in RESP3
// (coordinates as doubles) and RESP2 (bulk strings), as a store locator
// would: GeoAdd, GeoPos, GeoDist, GeoHash, GeoSearchLocation and
// GeoSearchStore, GeoRadius. The answers are Redis's documented ones for
// its Sicily example.
func TestGoRedisGeo(t *testing.T) {
	t.Parallel()
	goRedisEachProto(t, 2, func(t *testing.T, ctx context.Context, rdb *redis.Client, proto int, must func(error)) {
		k := fmt.Sprintf("sicily%d", proto)
		n, err := rdb.GeoAdd(ctx, k,
			&redis.GeoLocation{Name: "Palermo", Longitude: 13.361389, Latitude: 38.115556},
			&redis.GeoLocation{Name: "Catania", Longitude: 15.087269, Latitude: 37.502669},
		).Result()
		must(err)
		if n != 2 {
			t.Fatalf("GeoAdd = %d, want 2", n)
		}
		if _, err := rdb.GeoAdd(ctx, k, &redis.GeoLocation{Name: "x", Longitude: 200, Latitude: 10}).Result(); err == nil ||
			err.Error() != "ERR invalid longitude,latitude pair 200.000000,10.000000" {
			t.Fatalf("GeoAdd out of range: %v", err)
		}

		pos, err := rdb.GeoPos(ctx, k, "Palermo", "nowhere").Result()
		must(err)
		if len(pos) != 2 || pos[0] == nil || pos[1] != nil ||
			pos[0].Longitude != 13.36138933897018433 || pos[0].Latitude != 38.11555639549629859 {
			t.Fatalf("GeoPos = %+v", pos)
		}
		d, err := rdb.GeoDist(ctx, k, "Palermo", "Catania", "km").Result()
		must(err)
		if d != 166.2742 {
			t.Fatalf("GeoDist = %v km", d)
		}
		h, err := rdb.GeoHash(ctx, k, "Palermo", "Catania").Result()
		must(err)
		if !slices.Equal(h, []string{"sqc8b49rny0", "sqdtr74hyu0"}) {
			t.Fatalf("GeoHash = %v", h)
		}

		locs, err := rdb.GeoSearchLocation(ctx, k, &redis.GeoSearchLocationQuery{
			GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 200, RadiusUnit: "km", Sort: "ASC"},
			WithCoord:      true, WithDist: true, WithHash: true,
		}).Result()
		must(err)
		if len(locs) != 2 || locs[0].Name != "Catania" || locs[0].Dist != 56.4413 || locs[0].GeoHash != 3479447370796909 ||
			locs[1].Name != "Palermo" || locs[1].Dist != 190.4424 || math.Abs(locs[1].Longitude-13.361389) > 1e-5 {
			t.Fatalf("GeoSearchLocation = %+v", locs)
		}
		names, err := rdb.GeoSearch(ctx, k, &redis.GeoSearchQuery{
			Member: "Palermo", BoxWidth: 400, BoxHeight: 400, BoxUnit: "km", Sort: "DESC", Count: 1,
		}).Result()
		must(err)
		if !slices.Equal(names, []string{"Catania"}) {
			t.Fatalf("GeoSearch BYBOX DESC COUNT 1 = %v", names)
		}
		stored, err := rdb.GeoSearchStore(ctx, k, k+"-near", &redis.GeoSearchStoreQuery{
			GeoSearchQuery: redis.GeoSearchQuery{Longitude: 15, Latitude: 37, Radius: 100, RadiusUnit: "km"},
			StoreDist:      true,
		}).Result()
		must(err)
		if stored != 1 {
			t.Fatalf("GeoSearchStore = %d", stored)
		}
		if z, err := rdb.ZRangeWithScores(ctx, k+"-near", 0, -1).Result(); err != nil || len(z) != 1 ||
			z[0].Member != "Catania" || math.Abs(z[0].Score-56.4413) > 1e-4 {
			t.Fatalf("stored distances %+v, %v", z, err)
		}
		radius, err := rdb.GeoRadius(ctx, k, 15, 37, &redis.GeoRadiusQuery{Radius: 200, Unit: "km", WithDist: true, Sort: "DESC"}).Result()
		must(err)
		if len(radius) != 2 || radius[0].Name != "Palermo" || radius[0].Dist != 190.4424 {
			t.Fatalf("GeoRadius = %+v", radius)
		}
	})
}

// goRedisEachProto runs fn against a fresh kvserver through go-redis, in
// RESP3 and then RESP2, each time with a new client of pool connections,
// a 30-second context and must, which fails the test on an error.
func goRedisEachProto(t *testing.T, pool int, fn func(t *testing.T, ctx context.Context, rdb *redis.Client, proto int, must func(error))) {
	t.Helper()
	s := startKVServer(t)
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rdb := newGoRedis(t, s.Addr, proto, pool)
			fn(t, ctx, rdb, proto, func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}
