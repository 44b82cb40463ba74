package geohash

import "math"

// EarthRadius is the radius of the sphere distances are measured on, in
// meters (Redis's EARTH_RADIUS_IN_METERS, the WGS-84 quadratic mean).
const EarthRadius = 6372797.560856

// mercatorMax bounds the radius search's precision estimate.
const mercatorMax = 20037726.37

// degRad and radDeg convert as Redis's deg_rad and rad_deg, with D_R
// computed in float64 as C computes M_PI / 180.0.
func degRad(ang float64) float64 { return ang * dR() }
func radDeg(ang float64) float64 { return ang / dR() }

func dR() float64 {
	pi := math.Pi
	return pi / 180.0
}

// Shape is the area a search covers (GeoShape): a circle of Radius, or a
// Width x Height box, around (Longitude, Latitude), the sizes in the
// search's unit and Conversion meters per unit.
type Shape struct {
	Box                 bool
	Longitude, Latitude float64
	Radius              float64
	Width, Height       float64
	Conversion          float64
	// Bounds are filled in by AreasByShape: the smallest and greatest
	// longitude and latitude of the area (min long, min lat, max long,
	// max lat).
	Bounds [4]float64
}

// EstimateStepsByRadius is the precision (bits per coordinate) whose
// cells a search of rangeMeters at latitude lat can be covered by, with
// the eight neighbours (geohashEstimateStepsByRadius).
func EstimateStepsByRadius(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2 // make sure the range is included in most of the base cases
	// Wider cells towards the poles.
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// boundingBox sets s.Bounds to the area's bounding box
// (geohashBoundingBox). The east-west extent is taken at the edge nearer
// the pole, where a degree of longitude is shortest.
func (s *Shape) boundingBox() {
	height, width := s.Radius, s.Radius
	if s.Box {
		height, width = s.Height/2, s.Width/2
	}
	height *= s.Conversion
	width *= s.Conversion
	latDelta := radDeg(height / EarthRadius)
	longDeltaTop := radDeg(width / EarthRadius / cos(degRad(s.Latitude+latDelta)))
	longDeltaBottom := radDeg(width / EarthRadius / cos(degRad(s.Latitude-latDelta)))
	if s.Latitude < 0 {
		s.Bounds[0] = s.Longitude - longDeltaBottom
		s.Bounds[2] = s.Longitude + longDeltaBottom
	} else {
		s.Bounds[0] = s.Longitude - longDeltaTop
		s.Bounds[2] = s.Longitude + longDeltaTop
	}
	s.Bounds[1] = s.Latitude - latDelta
	s.Bounds[3] = s.Latitude + latDelta
}

// Radius is the cells a search looks in (GeoHashRadius): the centre's
// cell and its neighbours, those that cannot hold a match zeroed.
type Radius struct {
	Hash      Bits
	Area      Area
	Neighbors Neighbors
}

// Cells returns the nine cells in the order Redis searches them: the
// centre, N, S, E, W, NE, NW, SE, SW.
func (r *Radius) Cells() [9]Bits {
	n := &r.Neighbors
	return [9]Bits{r.Hash, n.North, n.South, n.East, n.West,
		n.NorthEast, n.NorthWest, n.SouthEast, n.SouthWest}
}

// AreasByShape returns the cells that cover the shape, and fills in its
// Bounds (geohashCalculateAreasByShapeWGS84).
func AreasByShape(s *Shape) Radius {
	s.boundingBox()
	minLon, minLat, maxLon, maxLat := s.Bounds[0], s.Bounds[1], s.Bounds[2], s.Bounds[3]
	radiusMeters := s.Radius
	if s.Box {
		radiusMeters = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	}
	radiusMeters *= s.Conversion

	steps := EstimateStepsByRadius(radiusMeters, s.Latitude)
	longRange, latRange := CoordRange()
	locate := func() (Bits, Neighbors, Area) {
		hash, _ := Encode(longRange, latRange, s.Longitude, s.Latitude, steps)
		area, _ := Decode(longRange, latRange, hash)
		return hash, NeighborsOf(hash), area
	}
	hash, neighbors, area := locate()

	// When the area reaches beyond a neighbour, the cells are too small:
	// one step coarser.
	decrease := false
	north, _ := Decode(longRange, latRange, neighbors.North)
	south, _ := Decode(longRange, latRange, neighbors.South)
	east, _ := Decode(longRange, latRange, neighbors.East)
	west, _ := Decode(longRange, latRange, neighbors.West)
	if north.Latitude.Max < maxLat || south.Latitude.Min > minLat ||
		east.Longitude.Max < maxLon || west.Longitude.Min > minLon {
		decrease = true
	}
	if steps > 1 && decrease {
		steps--
		hash, neighbors, area = locate()
	}

	// Drop the neighbours the area does not reach.
	if steps >= 2 {
		if area.Latitude.Min < minLat {
			neighbors.South, neighbors.SouthWest, neighbors.SouthEast = Bits{}, Bits{}, Bits{}
		}
		if area.Latitude.Max > maxLat {
			neighbors.North, neighbors.NorthEast, neighbors.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Min < minLon {
			neighbors.West, neighbors.SouthWest, neighbors.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Max > maxLon {
			neighbors.East, neighbors.SouthEast, neighbors.NorthEast = Bits{}, Bits{}, Bits{}
		}
	}
	return Radius{Hash: hash, Area: area, Neighbors: neighbors}
}

// Distance is the great-circle distance in meters between two positions
// given in degrees, by the haversine formula (geohashGetDistance).
func Distance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	return haversine(true, lon1d, lat1d, lon2d, lat2d)
}

// haversine computes the formula with the correctly rounded functions
// (exact, glibc's results) or package math's (off by an ULP at times).
func haversine(exact bool, lon1d, lat1d, lon2d, lat2d float64) float64 {
	fsin, fcos, fasin := math.Sin, math.Cos, math.Asin
	if exact {
		fsin, fcos, fasin = sin, cos, asin
	}
	lat1r := degRad(lat1d)
	lon1r := degRad(lon1d)
	lat2r := degRad(lat2d)
	lon2r := degRad(lon2d)
	u := fsin((lat2r - lat1r) / 2)
	v := fsin((lon2r - lon1r) / 2)
	return 2.0 * EarthRadius *
		fasin(math.Sqrt(float64(u*u)+float64(float64(float64(fcos(lat1r)*fcos(lat2r))*v)*v)))
}

// clearlyBeyond reports whether a distance computed with package math is
// so far beyond limit that the exact one is too (or, arguments swapped,
// a limit so far beyond the estimate that the exact distance is within
// it): the functions' ULP errors move the distance by far less than a
// meter (asin's steepness near antipodes included) plus a millionth.
func clearlyBeyond(fast, limit float64) bool {
	return fast > limit+1+limit*1e-6
}

// DistanceIfInRadius returns the distance from (x1, y1) to (x2, y2) and
// whether it is at most radius meters
// (geohashGetDistanceIfInRadiusWGS84). Points clearly outside are
// rejected on package math's estimate, without the exact distance.
func DistanceIfInRadius(x1, y1, x2, y2, radius float64) (float64, bool) {
	if clearlyBeyond(haversine(false, x1, y1, x2, y2), radius) {
		return 0, false
	}
	d := Distance(x1, y1, x2, y2)
	return d, d <= radius
}

// DistanceIfInRectangle reports whether (x2, y2) lies in the widthM x
// heightM box centred on (x1, y1), measuring its east-west offset along
// its own parallel, and returns its distance from the centre
// (geohashGetDistanceIfInRectangle).
func DistanceIfInRectangle(widthM, heightM, x1, y1, x2, y2 float64) (float64, bool) {
	// Package math's estimates settle the test unless one is too near
	// its limit; the exact distances settle it then.
	inside := true
	for _, side := range [...]struct{ fast, limit float64 }{
		{haversine(false, x2, y2, x1, y2), widthM / 2},
		{haversine(false, x2, y2, x2, y1), heightM / 2},
	} {
		switch {
		case clearlyBeyond(side.fast, side.limit):
			return 0, false
		case clearlyBeyond(side.limit, side.fast):
		default:
			inside = false
		}
	}
	if !inside {
		lonDistance := Distance(x2, y2, x1, y2)
		latDistance := Distance(x2, y2, x2, y1)
		if lonDistance > widthM/2 || latDistance > heightM/2 {
			return 0, false
		}
	}
	return Distance(x1, y1, x2, y2), true
}
