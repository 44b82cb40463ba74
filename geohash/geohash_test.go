package geohash

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestTrigonometryIsCorrectlyRounded checks sin, cos and asin against
// correctly rounded values (testdata/gen_trig.py, mpmath at 300 bits) and
// measures how often glibc, whose results Redis uses, agrees: glibc is
// within 0.55 ULP but not always correctly rounded.
func TestTrigonometryIsCorrectlyRounded(t *testing.T) {
	f, err := os.Open("testdata/trig.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fns := map[string]func(float64) float64{"sin": sin, "cos": cos, "asin": asin}
	dec := func(s string) float64 {
		b, err := hex.DecodeString(s)
		if err != nil || len(b) != 8 {
			t.Fatalf("bad hex %q", s)
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	n, glibcAgrees := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		x, want, glibc := dec(p[1]), dec(p[2]), dec(p[3])
		got := fns[p[0]](x)
		if got != want {
			t.Errorf("%s(%v) = %v, correctly rounded %v", p[0], x, got, want)
		}
		if got == glibc {
			glibcAgrees++
		}
		n++
	}
	if n < 4000 {
		t.Fatalf("read %d vectors", n)
	}
	if float64(glibcAgrees) < 0.995*float64(n) {
		t.Errorf("glibc agrees on %d of %d", glibcAgrees, n)
	}
	t.Logf("glibc agrees on %d of %d", glibcAgrees, n)
}

// TestPalermoAndCatania pins down the values Redis's documentation and a
// redis-server 7.0.15 give for its example.
func TestPalermoAndCatania(t *testing.T) {
	palermo, ok := Score(13.361389, 38.115556)
	if !ok || palermo != 3479099956230698 {
		t.Fatalf("Score(Palermo) = %d, %v", palermo, ok)
	}
	catania, _ := Score(15.087269, 37.502669)
	if catania != 3479447370796909 {
		t.Fatalf("Score(Catania) = %d", catania)
	}
	lon, lat, ok := Position(float64(palermo))
	if !ok || lon != 13.36138933897018433 || lat != 38.11555639549629859 {
		t.Errorf("Position(Palermo) = %.17f %.17f %v", lon, lat, ok)
	}
	if s, _ := String(float64(palermo)); s != "sqc8b49rny0" {
		t.Errorf("String(Palermo) = %q", s)
	}
	lon2, lat2, _ := Position(float64(catania))
	if d := strconv.FormatFloat(Distance(lon, lat, lon2, lat2)/1000, 'f', 4, 64); d != "166.2742" {
		t.Errorf("Distance = %s km", d)
	}
}

// TestEncodeDecodeRoundTrip: a position lies in the cell it encodes to,
// and the cell's centre is within half a cell of it.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		lon := LongMin + rng.Float64()*(LongMax-LongMin)
		lat := LatMin + rng.Float64()*(LatMax-LatMin)
		hash, ok := EncodeWGS84(lon, lat, StepMax)
		if !ok {
			t.Fatalf("Encode(%v, %v) failed", lon, lat)
		}
		area, _ := DecodeWGS84(hash)
		if lon < area.Longitude.Min || lon > area.Longitude.Max || lat < area.Latitude.Min || lat > area.Latitude.Max {
			t.Fatalf("(%v, %v) outside its cell %+v", lon, lat, area)
		}
		if deinterleave64(interleave64(uint32(hash.Bits), uint32(hash.Bits>>32))) != hash.Bits&0xffffffff|hash.Bits>>32<<32 {
			t.Fatalf("interleave does not invert for %x", hash.Bits)
		}
	}
	if _, ok := EncodeWGS84(0, 85.06, StepMax); ok {
		t.Error("latitude beyond the Mercator limit encoded")
	}
}

// TestNeighborsAreAdjacentCells: each neighbour's bounds touch the cell's
// on the right side, at every precision from 2, and east of the last column is
// the first (the antimeridian wraps).
func TestNeighborsAreAdjacentCells(t *testing.T) {
	for step := uint8(2); step <= StepMax; step++ { // one step has two rows: north wraps
		hash, _ := EncodeWGS84(12.5, 41.9, step)
		area, _ := DecodeWGS84(hash)
		n := NeighborsOf(hash)
		north, _ := DecodeWGS84(n.North)
		east, _ := DecodeWGS84(n.East)
		sw, _ := DecodeWGS84(n.SouthWest)
		if north.Latitude.Min != area.Latitude.Max || north.Longitude != area.Longitude {
			t.Errorf("step %d: north %+v of %+v", step, north, area)
		}
		if east.Longitude.Min != area.Longitude.Max || east.Latitude != area.Latitude {
			t.Errorf("step %d: east %+v of %+v", step, east, area)
		}
		if sw.Longitude.Max != area.Longitude.Min || sw.Latitude.Max != area.Latitude.Min {
			t.Errorf("step %d: south-west %+v of %+v", step, sw, area)
		}
	}
	last, _ := EncodeWGS84(179.9999, 0, 10)
	first, _ := EncodeWGS84(-179.9999, 0, 10)
	if NeighborsOf(last).East != first {
		t.Error("east of the last column is not the first")
	}
}

// TestScoreCastsLikeX86: scores that are no geohash decode as Redis's
// (uint64_t) cast makes them on x86-64.
func TestScoreCastsLikeX86(t *testing.T) {
	for _, c := range []struct {
		score float64
		want  uint64
	}{
		{3479099956230698, 3479099956230698},
		{0.5, 0},
		{-1, math.MaxUint64},
		{1e19, 10000000000000000000},
		{1e30, 0},
		{math.Inf(1), 0},
		{math.Inf(-1), 1 << 63},
		{math.NaN(), 1 << 63},
	} {
		if got := scoreBits(c.score); got != c.want {
			t.Errorf("scoreBits(%v) = %d, want %d", c.score, got, c.want)
		}
	}
	if HashInt(1e30) != math.MinInt64 || HashInt(-5.5) != -5 {
		t.Error("HashInt does not cast like C")
	}
}

// TestEstimateSteps follows the radius down to the finest cells.
func TestEstimateSteps(t *testing.T) {
	for _, c := range []struct {
		meters, lat float64
		want        uint8
	}{
		{0, 0, 26}, {1, 0, 24}, {1000, 0, 14}, {200000, 0, 6}, {200000, 70, 5}, {200000, 85, 4}, {5e7, 0, 1},
	} {
		if got := EstimateStepsByRadius(c.meters, c.lat); got != c.want {
			t.Errorf("EstimateStepsByRadius(%v, %v) = %d, want %d", c.meters, c.lat, got, c.want)
		}
	}
}

// TestQuickRejectionAgreesWithExactDistance: rejecting on package math's
// estimate never drops a point the exact distance keeps, for radii and
// boxes just around the distance, near and antipodal points included.
func TestQuickRejectionAgreesWithExactDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	coord := func() (float64, float64) {
		return LongMin + rng.Float64()*(LongMax-LongMin), LatMin + rng.Float64()*(LatMax-LatMin)
	}
	for i := range 20000 {
		x1, y1 := coord()
		x2, y2 := coord()
		if i%4 == 0 { // near the antipode, where asin is steepest
			x2, y2 = x1+180-rng.Float64()*1e-4, -y1+rng.Float64()*1e-4
			if x2 > LongMax {
				x2 -= 360
			}
		}
		d := Distance(x1, y1, x2, y2)
		for _, r := range []float64{d, math.Nextafter(d, 0), d * (1 - 1e-7), d * 0.5, d * 2} {
			got, in := DistanceIfInRadius(x1, y1, x2, y2, r)
			if in != (d <= r) || (in && got != d) {
				t.Fatalf("DistanceIfInRadius(%v, %v, %v, %v, %v) = %v, %v; exact %v", x1, y1, x2, y2, r, got, in, d)
			}
		}
		lon, lat := Distance(x2, y2, x1, y2), Distance(x2, y2, x2, y1)
		for _, f := range []float64{1, 1 - 1e-12, 1 + 1e-12, 0.3, 3} {
			w, h := 2*lon*f, 2*lat*f
			_, in := DistanceIfInRectangle(w, h, x1, y1, x2, y2)
			if in != (lon <= w/2 && lat <= h/2) {
				t.Fatalf("DistanceIfInRectangle(%v, %v, %v, %v, %v, %v) = %v", w, h, x1, y1, x2, y2, in)
			}
		}
	}
}
