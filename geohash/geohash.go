package geohash

// The coordinate limits of a stored position (EPSG:900913 / Web Mercator),
// Redis's GEO_LONG_MIN..GEO_LAT_MAX.
const (
	LongMin = -180.0
	LongMax = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878
)

// StepMax is the precision of a stored position: 26 bits per coordinate,
// 52 in all (GEO_STEP_MAX).
const StepMax = 26

// Bits is a cell: its interleaved coordinate bits and how many bits per
// coordinate (GeoHashBits). The zero value is "no cell".
type Bits struct {
	Bits uint64
	Step uint8
}

// IsZero reports whether b is no cell (HASHISZERO).
func (b Bits) IsZero() bool { return b.Bits == 0 && b.Step == 0 }

// Range is one coordinate's interval.
type Range struct{ Min, Max float64 }

// isZero is RANGEISZERO.
func (r Range) isZero() bool { return r.Max == 0 && r.Min == 0 }

// Area is a cell with its bounds (GeoHashArea).
type Area struct {
	Hash      Bits
	Longitude Range
	Latitude  Range
}

// Neighbors are the eight cells around one (GeoHashNeighbors).
type Neighbors struct {
	North, East, West, South                   Bits
	NorthEast, SouthEast, NorthWest, SouthWest Bits
}

// CoordRange returns the ranges positions are encoded in
// (geohashGetCoordRange): all longitudes, the Mercator latitudes.
func CoordRange() (long, lat Range) {
	return Range{LongMin, LongMax}, Range{LatMin, LatMax}
}

// interleave64 spreads the low 32 bits of x over the even bit positions
// and those of y over the odd ones.
func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333,
		0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | (x << s[i])) & b[i]
		y = (y | (y << s[i])) & b[i]
	}
	return x | (y << 1)
}

// deinterleave64 undoes interleave64: the even bits in the low 32 bits of
// the result, the odd ones in the high 32.
func deinterleave64(interleaved uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333,
		0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF,
		0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x, y := interleaved, interleaved>>1
	for i := range 6 {
		x = (x | (x >> s[i])) & b[i]
		y = (y | (y >> s[i])) & b[i]
	}
	return x | (y << 32)
}

// Encode returns the cell of step bits per coordinate that holds the
// position within the given ranges (geohashEncode); ok is false for a
// position outside the Mercator limits or the ranges, or a bad step.
func Encode(longRange, latRange Range, longitude, latitude float64, step uint8) (Bits, bool) {
	if step > 32 || step == 0 || latRange.isZero() || longRange.isZero() {
		return Bits{}, false
	}
	if longitude > LongMax || longitude < LongMin || latitude > LatMax || latitude < LatMin {
		return Bits{}, false
	}
	if latitude < latRange.Min || latitude > latRange.Max ||
		longitude < longRange.Min || longitude > longRange.Max {
		return Bits{Step: step}, false
	}
	latOffset := (latitude - latRange.Min) / (latRange.Max - latRange.Min)
	longOffset := (longitude - longRange.Min) / (longRange.Max - longRange.Min)
	latOffset *= float64(uint64(1) << step)
	longOffset *= float64(uint64(1) << step)
	return Bits{Bits: interleave64(uint32(latOffset), uint32(longOffset)), Step: step}, true
}

// EncodeWGS84 is Encode over CoordRange (geohashEncodeWGS84).
func EncodeWGS84(longitude, latitude float64, step uint8) (Bits, bool) {
	long, lat := CoordRange()
	return Encode(long, lat, longitude, latitude, step)
}

// Decode returns the bounds of a cell within the given ranges
// (geohashDecode); ok is false for no cell.
func Decode(longRange, latRange Range, hash Bits) (Area, bool) {
	if hash.IsZero() || latRange.isZero() || longRange.isZero() {
		return Area{}, false
	}
	sep := deinterleave64(hash.Bits) // [LAT][LONG]
	latScale := latRange.Max - latRange.Min
	longScale := longRange.Max - longRange.Min
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	cells := float64(uint64(1) << hash.Step)
	return Area{
		Hash: hash,
		Latitude: Range{
			Min: latRange.Min + float64(float64(ilato)*1.0/cells)*latScale,
			Max: latRange.Min + float64(float64(ilato+1)*1.0/cells)*latScale,
		},
		Longitude: Range{
			Min: longRange.Min + float64(float64(ilono)*1.0/cells)*longScale,
			Max: longRange.Min + float64(float64(ilono+1)*1.0/cells)*longScale,
		},
	}, true
}

// DecodeWGS84 is Decode over CoordRange.
func DecodeWGS84(hash Bits) (Area, bool) {
	long, lat := CoordRange()
	return Decode(long, lat, hash)
}

// Center returns the centre of an area, clamped to the Mercator limits
// (geohashDecodeAreaToLongLat).
func (a *Area) Center() (longitude, latitude float64) {
	longitude = (a.Longitude.Min + a.Longitude.Max) / 2
	longitude = min(max(longitude, LongMin), LongMax)
	latitude = (a.Latitude.Min + a.Latitude.Max) / 2
	latitude = min(max(latitude, LatMin), LatMax)
	return longitude, latitude
}

// DecodeToLongLat returns the centre of a cell (geohashDecodeToLongLatWGS84).
func DecodeToLongLat(hash Bits) (longitude, latitude float64, ok bool) {
	area, ok := DecodeWGS84(hash)
	if !ok {
		return 0, 0, false
	}
	longitude, latitude = area.Center()
	return longitude, latitude, true
}

// move moves a cell d (-1, 0, 1) cells along one coordinate, wrapping
// around (geohash_move_x, geohash_move_y): the coordinate's bits are
// those of mask, the other's those of ^mask.
func move(hash *Bits, d int, mask uint64) {
	if d == 0 {
		return
	}
	shift := 64 - uint(hash.Step)*2
	c := hash.Bits & mask
	other := hash.Bits &^ mask
	zz := ^mask >> shift
	if d > 0 {
		c += zz + 1
	} else {
		c |= zz
		c -= zz + 1
	}
	c &= mask >> shift
	hash.Bits = c | other
}

// The bits of each coordinate in a cell: longitude (x) in the odd
// positions, latitude (y) in the even ones.
const (
	xBits = 0xaaaaaaaaaaaaaaaa
	yBits = 0x5555555555555555
)

// NeighborsOf returns the eight cells around hash (geohashNeighbors).
func NeighborsOf(hash Bits) Neighbors {
	at := func(dx, dy int) Bits {
		b := hash
		move(&b, dx, xBits)
		move(&b, dy, yBits)
		return b
	}
	return Neighbors{
		East: at(1, 0), West: at(-1, 0), South: at(0, -1), North: at(0, 1),
		NorthWest: at(-1, 1), NorthEast: at(1, 1),
		SouthEast: at(1, -1), SouthWest: at(-1, -1),
	}
}

// Align52 shifts a cell's bits to the 52-bit score scale
// (geohashAlign52Bits).
func Align52(hash Bits) uint64 {
	return hash.Bits << (52 - uint(hash.Step)*2)
}
