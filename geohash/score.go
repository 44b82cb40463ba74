package geohash

// Score is the sorted-set score of a position: its cell at StepMax,
// aligned to 52 bits, as GEOADD stores it. ok is false outside the
// Mercator limits.
func Score(longitude, latitude float64) (score uint64, ok bool) {
	hash, ok := EncodeWGS84(longitude, latitude, StepMax)
	if !ok {
		return 0, false
	}
	return Align52(hash), true
}

// scoreBits converts a score to the integer Redis's decodeGeohash gets
// from its (uint64_t) cast, as gcc compiles it for x86-64: below 2^63 a
// signed truncation (so a negative score wraps, and NaN, -inf or anything
// below -2^63 gives the "integer indefinite" 2^63); from 2^63 the same
// truncation of score-2^63 with the top bit flipped (so 2^64 and beyond,
// +inf included, give 0).
func scoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	if score >= two63 {
		return cvttsd2si(score-two63) ^ (1 << 63)
	}
	return cvttsd2si(score)
}

// cvttsd2si is x86-64's truncating float to int64 conversion, which gives
// 2^63 for NaN and what does not fit.
func cvttsd2si(f float64) uint64 {
	const two63 = 9223372036854775808.0
	if f >= -two63 && f < two63 {
		return uint64(int64(f))
	}
	return 1 << 63
}

// Position decodes a score into the centre of its cell (Redis's
// decodeGeohash): the position GEOPOS reports.
func Position(score float64) (longitude, latitude float64, ok bool) {
	return DecodeToLongLat(Bits{Bits: scoreBits(score), Step: StepMax})
}

// HashInt is a score as WITHHASH reports it: a C cast to long long,
// which gives the minimum int64 for what does not fit.
func HashInt(score float64) int64 {
	return int64(cvttsd2si(score))
}

// geoAlphabet is the standard geohash base32 alphabet.
const geoAlphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// String is the 11-character standard geohash of a score, as GEOHASH
// answers it: the cell's centre re-encoded over latitudes -90..90 (the
// standard range, where scores use the Mercator one), 52 bits in ten
// characters and a final '0'. ok is false for a score that does not
// decode.
func String(score float64) (string, bool) {
	longitude, latitude, ok := Position(score)
	if !ok {
		return "", false
	}
	hash, _ := Encode(Range{-180, 180}, Range{-90, 90}, longitude, latitude, 26)
	var buf [11]byte
	for i := range buf {
		idx := 0
		if i < 10 {
			idx = int(hash.Bits>>(52-(uint(i)+1)*5)) & 0x1f
		}
		buf[i] = geoAlphabet[idx]
	}
	return string(buf[:]), true
}
