package tests

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestDifferentialGeo runs the geo family against redis-server: GEOADD's
// options and coordinate errors, GEOPOS's cell centres, GEOHASH's strings,
// GEODIST in every unit, and GEOSEARCH, GEOSEARCHSTORE and the GEORADIUS
// commands with every option, over real places (Sicily), random points in
// both sorted-set encodings, the Mercator limits near the poles and the
// antimeridian, in RESP2 and RESP3.
func TestDifferentialGeo(t *testing.T) {
	t.Parallel()
	runDifferential(t, geoScripts())
}

// sicily is GEOADD of Redis's documentation example plus a few more
// towns of the island.
func sicily(key string) step {
	return do("GEOADD", key,
		"13.361389", "38.115556", "Palermo",
		"15.087269", "37.502669", "Catania",
		"13.583333", "37.316667", "Agrigento",
		"15.554167", "38.193611", "Messina",
		"15.2864", "37.0755", "Siracusa",
		"12.4387", "37.7994", "Marsala",
		"14.2681", "37.4900", "Caltanissetta")
}

// randomPoints is GEOADD key with n random members p0..p(n-1), the
// positions drawn from rng within lon and lat bounds, printed with up to
// 8 decimals like real data.
func randomPoints(rng *rand.Rand, key string, n int, lonMin, lonMax, latMin, latMax float64) step {
	cmd := []string{"GEOADD", key}
	for i := 0; i < n; i++ {
		lon := lonMin + rng.Float64()*(lonMax-lonMin)
		lat := latMin + rng.Float64()*(latMax-latMin)
		cmd = append(cmd, strconv.FormatFloat(lon, 'f', 8, 64), strconv.FormatFloat(lat, 'f', 8, 64), fmt.Sprintf("p%d", i))
	}
	return do(cmd...)
}

// ties is GEOADD key of n members named prefix0.. at one position, whose
// distances from any centre are equal: the order a search with COUNT
// leaves them in is pqsort's, and without COUNT a stable sort's.
func ties(key, prefix string, lon, lat float64, n int) step {
	cmd := []string{"GEOADD", key}
	for i := n - 1; i >= 0; i-- {
		cmd = append(cmd, strconv.FormatFloat(lon, 'f', -1, 64), strconv.FormatFloat(lat, 'f', -1, 64), fmt.Sprintf("%s%02d", prefix, i))
	}
	return do(cmd...)
}

// geoQueries are searches around (lon, lat) of key with several radii,
// boxes and option sets, by GEOSEARCH and GEORADIUS. With fullDist the
// distances GEOSEARCHSTORE STOREDIST stores are compared to the last bit
// (17 digits); otherwise only the order they give: glibc's sin, cos and
// asin are not always correctly rounded, package geohash's are, so over
// hundreds of distances one may differ in its last bit (see package
// geohash). Replies with distances (four decimals) are always exact.
func geoQueries(key, lon, lat string, fullDist bool) []step {
	stored := []string{"ZRANGE", "dst", "0", "-1"}
	if fullDist {
		stored = append(stored, "WITHSCORES")
	}
	var steps []step
	for _, r := range []string{"0", "1", "50", "200", "1000", "5000", "20000"} {
		steps = append(steps,
			do("GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "km"),
			do("GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "km", "ASC", "WITHDIST", "WITHCOORD", "WITHHASH"),
			do("GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "mi", "DESC", "COUNT", "5", "WITHDIST"),
			do("GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "km", "COUNT", "3", "ANY"),
			do("GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYBOX", r, r, "km", "WITHDIST", "WITHCOORD"),
			do("GEOSEARCH", key, "FROMLONLAT", lon, lat, "BYBOX", r+"000", "100", "m", "ASC", "COUNT", "7"),
			do("GEORADIUS", key, lon, lat, r, "km", "WITHDIST", "ASC"),
			do("GEORADIUS_RO", key, lon, lat, r, "ft", "COUNT", "4", "DESC", "WITHHASH"),
			do("GEOSEARCHSTORE", "dst", key, "FROMLONLAT", lon, lat, "BYRADIUS", r, "km", "STOREDIST"),
			do(stored...),
			do("GEORADIUS", key, lon, lat, r, "km", "STORE", "dst2", "COUNT", "10"),
			do("ZRANGE", "dst2", "0", "-1", "WITHSCORES"),
		)
	}
	return steps
}

func geoScripts() []script {
	rng := rand.New(rand.NewPCG(15, 2026))
	world := randomPoints(rng, "w", 400, -180, 180, -85.05112878, 85.05112878)
	italy := randomPoints(rng, "it", 100, 6.6, 18.5, 36.6, 47.1) // a listpack
	north := randomPoints(rng, "n", 200, -180, 180, 70, 85.05112878)
	south := randomPoints(rng, "s", 200, -180, 180, -85.05112878, -70)
	date := randomPoints(rng, "d", 150, 170, 180, -30, 30)
	dateWest := randomPoints(rng, "d", 150, -180, -170, -30, 30)

	return []script{
		{"arity", arity(
			line("GEOADD", "g", "1", "2"), line("GEODIST", "g", "a"), line("GEOHASH"), line("GEOPOS"),
			line("GEOSEARCH", "g", "FROMLONLAT", "1", "2", "BYRADIUS"),
			line("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "1", "2", "BYRADIUS"),
			line("GEORADIUS", "g", "1", "2", "3"), line("GEORADIUS_RO", "g", "1", "2", "3"),
			line("GEORADIUSBYMEMBER", "g", "a", "3"), line("GEORADIUSBYMEMBER_RO", "g", "a", "3"),
		)},
		{"keys", seq(
			do("COMMAND", "GETKEYS", "GEORADIUS", "s", "1", "2", "3", "km"),
			do("COMMAND", "GETKEYS", "GEORADIUS", "s", "1", "2", "3", "km", "STORE", "d1"),
			do("COMMAND", "GETKEYS", "GEORADIUS", "s", "1", "2", "3", "km", "STOREDIST", "d2", "ASC"),
			do("COMMAND", "GETKEYS", "GEORADIUS", "s", "1", "2", "3", "km", "store", "d1", "storedist", "d2"),
			do("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "s", "m", "3", "km", "COUNT", "1", "STORE", "d1"),
			do("COMMAND", "GETKEYS", "GEORADIUS_RO", "s", "1", "2", "3", "km"),
			do("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"),
			do("COMMAND", "GETKEYS", "GEOSEARCH", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"),
			do("COMMAND", "GETKEYS", "GEOADD", "s", "1", "2", "m"),
			do("COMMAND", "GETKEYS", "GEODIST", "s", "a", "b"),
		)},
		{"geoadd options and errors", seq(
			do("GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"),
			do("GEOADD", "g", "13.361389", "38.115556", "Palermo"),
			do("GEOADD", "g", "CH", "13.361389", "38.115556", "Palermo", "13.4", "38.1", "x"),
			do("GEOADD", "g", "XX", "CH", "13.5", "38.1", "Palermo", "1", "1", "y"),
			do("GEOADD", "g", "NX", "CH", "14", "38.1", "Palermo", "2", "2", "z"),
			do("GEOADD", "g", "nx", "xx", "1", "2", "a"),
			do("GEOADD", "g", "XX", "1", "2", "newkey-not-added"),
			do("GEOADD", "nokey", "XX", "1", "2", "a"),
			do("EXISTS", "nokey"),
			do("GEOADD", "g", "1", "2"),
			do("GEOADD", "g", "1", "2", "a", "3"),
			do("GEOADD", "g", "GT", "1", "2", "a"),
			do("GEOADD", "g", "ch", "ch", "nx"),
			do("GEOADD", "g", "x", "2", "a"),
			do("GEOADD", "g", "1", "nan", "a"),
			do("GEOADD", "g", " 1", "2", "a"),
			do("GEOADD", "g", "181", "2", "a"),
			do("GEOADD", "g", "-180.0001", "2", "a"),
			do("GEOADD", "g", "1", "85.05112879", "a"),
			do("GEOADD", "g", "1", "-90", "a"),
			do("GEOADD", "g", "200", "100", "a", "x", "y", "b"),
			do("GEOADD", "g", "1", "2", "ok", "500", "2", "bad"),
			do("ZCARD", "g"),
			do("GEOADD", "g", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "0", "0", "origin", "-0", "-0", "negzero"),
			do("GEOADD", "g", "1e1", "0x10", "hex", "+1.5", ".5", "forms"),
			do("ZRANGE", "g", "0", "-1", "WITHSCORES"),
			do("GEOPOS", "g", "ne", "sw", "origin", "negzero", "hex", "forms", "Palermo", "nosuch"),
			do("GEOHASH", "g", "ne", "sw", "origin", "negzero", "hex", "forms", "Palermo", "nosuch"),
			do("SET", "str", "x"),
			do("GEOADD", "str", "1", "2", "a"),
			do("GEOADD", "str", "1", "200", "a"),
			do("OBJECT", "ENCODING", "g"),
		)},
		{"geopos geohash geodist", seq(
			sicily("s"),
			do("GEOPOS", "s", "Palermo", "Catania", "Agrigento", "Messina", "Siracusa", "Marsala", "Caltanissetta", "x"),
			do("GEOPOS", "s"),
			do("GEOPOS", "nokey", "a", "b"),
			do("GEOPOS", "nokey"),
			do("GEOHASH", "s", "Palermo", "Catania", "Agrigento", "Messina", "Siracusa", "Marsala", "Caltanissetta", "x"),
			do("GEOHASH", "s"),
			do("GEOHASH", "nokey", "a"),
			do("GEODIST", "s", "Palermo", "Catania"),
			do("GEODIST", "s", "Palermo", "Catania", "m"),
			do("GEODIST", "s", "Palermo", "Catania", "KM"),
			do("GEODIST", "s", "Palermo", "Catania", "mi"),
			do("GEODIST", "s", "Palermo", "Catania", "Ft"),
			do("GEODIST", "s", "Palermo", "Palermo"),
			do("GEODIST", "s", "Palermo", "x"),
			do("GEODIST", "s", "x", "Palermo", "km"),
			do("GEODIST", "s", "Palermo", "Catania", "yd"),
			do("GEODIST", "s", "Palermo", "Catania", "km", "extra"),
			do("GEODIST", "nokey", "a", "b"),
			do("GEODIST", "nokey", "a", "b", "parsecs"),
			do("SET", "str", "x"),
			do("GEODIST", "str", "a", "b"),
			do("GEODIST", "str", "a", "b", "parsecs"),
			do("GEOPOS", "str", "a"),
			do("GEOHASH", "str", "a"),
		)},
		{"non-geo scores", seq(
			do("ZADD", "z", "-1", "neg", "1e19", "big", "1e30", "huge", "inf", "pinf", "-inf", "ninf",
				"4503599627370496", "bit52", "9007199254740992", "bit53", "0.5", "half", "-9.3e18", "minneg"),
			do("GEOPOS", "z", "neg", "big", "huge", "pinf", "ninf", "bit52", "bit53", "half", "minneg"),
			do("GEOHASH", "z", "neg", "big", "huge", "pinf", "ninf", "bit52", "bit53", "half", "minneg"),
			do("GEODIST", "z", "neg", "big"),
			do("GEODIST", "z", "pinf", "bit53", "km"),
			do("GEOSEARCH", "z", "FROMMEMBER", "half", "BYRADIUS", "20000", "km", "WITHHASH", "WITHCOORD", "WITHDIST"),
		)},
		{"search options and errors", seq(
			sicily("s"),
			do("GEOSEARCH", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"),
			do("GEOSEARCH", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "ASC", "WITHCOORD", "WITHDIST", "WITHHASH"),
			do("GEOSEARCH", "s", "frommember", "Palermo", "bybox", "400", "400", "km", "desc", "withdist"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "100", "km", "COUNT", "1"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "COUNT", "2", "ANY"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "ANY", "COUNT", "2", "DESC"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "ANY"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "COUNT", "0"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "COUNT", "-1"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "COUNT", "x"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "COUNT"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "STORE", "x"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "300", "km", "STOREDIST"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "-1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "x", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "yd"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYBOX", "1", "-1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYBOX", "x", "1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYBOX", "1", "x", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYBOX", "1", "1", "yd"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYBOX", "1", "1"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "FROMMEMBER", "Palermo", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "s", "FROMMEMBER", "Palermo", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "s", "FROMMEMBER", "nosuch", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "200", "37", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "x", "37", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "s", "BYRADIUS", "1", "km", "ASC", "WITHDIST"),
			do("GeoSearch", "s", "FROMLONLAT", "15", "37", "WITHDIST", "ASC"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "bogus"),
			do("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "nokey", "FROMMEMBER", "a", "BYRADIUS", "1", "yd"),
			do("GEOSEARCH", "nokey", "FROMMEMBER", "a"),
			do("GEOSEARCH", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
			do("GEOSEARCH", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "inf", "km", "ASC", "WITHDIST"),
			do("GEOSEARCH", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1e300", "mi", "DESC"),
			do("GEOSEARCH", "s", "FROMLONLAT", "0", "0", "BYBOX", "inf", "inf", "m", "ASC"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYBOX", "1e9", "1e9", "km", "WITHCOORD"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "0", "m", "WITHHASH"),
			do("GEOSEARCH", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "0", "m", "WITHHASH"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "400", "km", "COUNT", "9223372036854775807", "ANY"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "400", "km", "COUNT", "9223372036854775808"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "400", "km", "COUNT", "3", "COUNT", "1", "ASC", "DESC"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "BYRADIUS", "400", "km", "BYRADIUS", "300", "km", "WITHDIST"),
			do("GEOSEARCH", "s", "FROMLONLAT", "15", "37", "FROMLONLAT", "13", "38", "BYRADIUS", "300", "km", "WITHDIST"),
			do("GEOSEARCH", "s", "FROMLONLAT", "180", "85.05112878", "BYRADIUS", "5000", "km", "WITHDIST"),
			do("GEOSEARCH", "s", "FROMLONLAT", "-180", "-85.05112878", "BYBOX", "40000", "40000", "km", "WITHDIST"),
			do("GEOSEARCHSTORE", "dst", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"),
			do("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
			do("GEOSEARCHSTORE", "dst", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "STOREDIST", "DESC", "COUNT", "2"),
			do("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
			do("GEOSEARCHSTORE", "dst", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "WITHDIST"),
			do("GEOSEARCHSTORE", "dst", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km", "STORE", "x"),
			do("GEOSEARCHSTORE", "dst", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"),
			do("EXISTS", "dst"),
			do("GEOSEARCHSTORE", "dst", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"),
			do("GEOSEARCHSTORE", "dst", "nokey", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"),
			do("EXISTS", "dst"),
			do("SET", "str", "x"),
			do("GEOSEARCH", "str", "FROMMEMBER", "a", "BYRADIUS", "1", "km"),
			do("GEOSEARCHSTORE", "dst", "str", "FROMMEMBER", "a", "BYRADIUS", "1", "km"),
			do("GEOSEARCHSTORE", "str", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km"),
			do("TYPE", "str"),
		)},
		{"georadius", seq(
			sicily("s"),
			do("GEORADIUS", "s", "15", "37", "200", "km"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "WITHDIST", "WITHCOORD", "WITHHASH", "ASC"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "COUNT", "2", "DESC"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "COUNT", "2", "ANY"),
			do("GEORADIUS", "s", "15", "37", "-200", "km"),
			do("GEORADIUS", "s", "15", "37", "200", "yd"),
			do("GEORADIUS", "s", "15", "370", "200", "km"),
			do("GEORADIUS", "s", "15", "37", "x", "km"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "STORE", "dst"),
			do("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "STOREDIST", "dst", "ASC", "COUNT", "3"),
			do("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "STORE", "dst", "STOREDIST", "dst2"),
			do("ZRANGE", "dst2", "0", "-1", "WITHSCORES"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "STORE", "dst", "WITHDIST"),
			do("GEORADIUS", "s", "15", "37", "200", "km", "STORE"),
			do("GEORADIUS", "s", "0", "0", "1", "km", "STORE", "dst"),
			do("EXISTS", "dst"),
			do("GEORADIUS", "nokey", "15", "37", "200", "km", "STORE", "dst2"),
			do("EXISTS", "dst2"),
			do("GEORADIUS", "nokey", "15", "37", "200", "km"),
			do("GEORADIUS_RO", "s", "15", "37", "200", "km", "WITHDIST", "ASC"),
			do("GEORADIUS_RO", "s", "15", "37", "200", "km", "STORE", "dst"),
			do("GEORADIUS_RO", "s", "15", "37", "200", "km", "STOREDIST", "dst"),
			do("GEORADIUSBYMEMBER", "s", "Palermo", "200", "km", "WITHDIST", "WITHCOORD", "ASC"),
			do("GEORADIUSBYMEMBER", "s", "Palermo", "200", "km", "STORE", "dst"),
			do("ZRANGE", "dst", "0", "-1", "WITHSCORES"),
			do("GEORADIUSBYMEMBER", "s", "nosuch", "200", "km"),
			do("GEORADIUSBYMEMBER", "s", "Palermo", "-1", "km"),
			do("GEORADIUSBYMEMBER", "nokey", "Palermo", "200", "km"),
			do("GEORADIUSBYMEMBER", "nokey", "Palermo", "200", "km", "STORE", "dst"),
			do("GEORADIUSBYMEMBER", "nokey", "Palermo", "200", "km", "bogus"),
			do("EXISTS", "dst"),
			do("GEORADIUSBYMEMBER_RO", "s", "Palermo", "200", "km", "DESC", "WITHHASH"),
			do("GEORADIUSBYMEMBER_RO", "s", "Palermo", "200", "km", "STORE", "dst"),
			do("SET", "str", "x"),
			do("GEORADIUS", "str", "15", "37", "200", "km"),
			do("GEORADIUSBYMEMBER", "str", "a", "200", "km"),
		)},
		{"equal distances", seq(sicily("s"), ties("s", "Palermo2", 13.361389, 38.115556, 60), ties("s", "ring", 14.5, 37.6, 45),
			geoQueries("s", "13.361389", "38.115556", true), geoQueries("s", "14.5", "37.6", true))},
		{"keyspace events", []step{
			onOther(sicily("s")),
			onOther(do("CONFIG", "SET", "notify-keyspace-events", "KEA")),
			do("PSUBSCRIBE", "__key*__:*"),
			onOther(do("GEOADD", "s", "13.361389", "38.115556", "Palermo")),
			quiet(),
			onOther(do("GEOADD", "s", "CH", "13", "38", "Palermo", "13.1", "38.1", "new")),
			listen(2),
			onOther(do("GEOSEARCHSTORE", "dst", "s", "FROMMEMBER", "Palermo", "BYRADIUS", "200", "km")),
			listen(2),
			onOther(do("GEORADIUS", "s", "15", "37", "200", "km", "STOREDIST", "dst")),
			listen(2),
			onOther(do("GEOSEARCHSTORE", "dst", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")),
			listen(2),
			onOther(do("GEOSEARCHSTORE", "dst", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")),
			onOther(do("GEORADIUS", "nokey", "0", "0", "1", "km", "STORE", "dst")),
			onOther(do("GEOSEARCH", "s", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km")),
			quiet(),
			onOther(do("SET", "dst", "x")),
			listen(2),
			onOther(do("GEORADIUSBYMEMBER", "nokey", "a", "1", "km", "STORE", "dst")),
			listen(2),
			onOther(do("CONFIG", "SET", "notify-keyspace-events", "")),
			do("PUNSUBSCRIBE"),
		}},
		{"sicily everywhere", seq(sicily("s"), geoQueries("s", "14.5", "37.6", true))},
		{"random world", seq(world, do("OBJECT", "ENCODING", "w"),
			geoQueries("w", "0", "0", false), geoQueries("w", "-73.9857", "40.7484", false), geoQueries("w", "139.6917", "35.6895", false),
			do("GEOSEARCH", "w", "FROMMEMBER", "p7", "BYBOX", "3000", "1500", "km", "ASC", "WITHCOORD"),
			do("GEOHASH", "w", "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"),
			do("GEOPOS", "w", "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"),
			do("GEODIST", "w", "p0", "p1", "km"), do("GEODIST", "w", "p2", "p3", "mi"))},
		{"random italy", seq(italy, do("OBJECT", "ENCODING", "it"), sicily("it"),
			geoQueries("it", "12.4964", "41.9028", false), geoQueries("it", "9.19", "45.4642", false))},
		{"poles", seq(north, south, sicily("n"),
			geoQueries("n", "0", "85.05112878", false), geoQueries("n", "100", "80", false), geoQueries("s", "-45", "-85", false),
			geoQueries("s", "179.9", "-75", false))},
		{"antimeridian", seq(date, dateWest,
			geoQueries("d", "180", "0", false), geoQueries("d", "-180", "10", false), geoQueries("d", "179.99", "-5", false),
			do("GEOSEARCH", "d", "FROMLONLAT", "-179.999", "0", "BYBOX", "500", "5000", "km", "ASC", "WITHDIST"))},
	}
}
