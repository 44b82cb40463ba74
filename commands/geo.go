package commands

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/geohash"
	"github.com/kvserver/kvserver/notify"
)

// geoRadiusStore is GEORADIUS's and GEORADIUSBYMEMBER's key specs: the
// source, and the keys after STORE and STOREDIST, searched for from
// argument startFrom.
func geoRadiusStore(startFrom int) []KeySpec {
	return []KeySpec{
		{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)},
		{Flags: KeyOW | KeyUpdate, Begin: Keyword("STORE", startFrom), Find: Range(0, 1, 0)},
		{Flags: KeyOW | KeyUpdate, Begin: Keyword("STOREDIST", startFrom), Find: Range(0, 1, 0)},
	}
}

// geoCommands are the geo family's rows (Redis's geo.c). A geo set is a
// sorted set whose scores are 52-bit geohashes (package geohash).
var geoCommands = []*Spec{
	{Name: "geoadd", Arity: -5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @geo @slow",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGeoadd},
	{Name: "geodist", Arity: -4, Flags: FlagReadonly, ACL: "@read @geo @slow", KeySpecs: keyReadsAccess, Handler: cmdGeodist},
	{Name: "geohash", Arity: -2, Flags: FlagReadonly, ACL: "@read @geo @slow", KeySpecs: keyReadsAccess, Handler: cmdGeohash},
	{Name: "geopos", Arity: -2, Flags: FlagReadonly, ACL: "@read @geo @slow", KeySpecs: keyReadsAccess, Handler: cmdGeopos},
	{Name: "geosearch", Arity: -7, Flags: FlagReadonly, ACL: "@read @geo @slow", KeySpecs: keyReadsAccess, Handler: cmdGeosearch},
	{Name: "geosearchstore", Arity: -8, Flags: FlagWrite | FlagDenyoom, ACL: "@write @geo @slow",
		KeySpecs: []KeySpec{
			{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)},
			{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)},
		}, Handler: cmdGeosearchstore},
	{Name: "georadius", Arity: -6, Flags: FlagWrite | FlagDenyoom, ACL: "@write @geo @slow",
		KeySpecs: geoRadiusStore(6), Handler: cmdGeoradius},
	{Name: "georadius_ro", Arity: -6, Flags: FlagReadonly, ACL: "@read @geo @slow", KeySpecs: keyReadsAccess, Handler: cmdGeoradiusRO},
	{Name: "georadiusbymember", Arity: -5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @geo @slow",
		KeySpecs: geoRadiusStore(5), Handler: cmdGeoradiusbymember},
	{Name: "georadiusbymember_ro", Arity: -5, Flags: FlagReadonly, ACL: "@read @geo @slow", KeySpecs: keyReadsAccess, Handler: cmdGeoradiusbymemberRO},
}

// geoCoordinates parses a longitude and a latitude argument like Redis's
// extractLongLatOrReply, answering its errors.
func geoCoordinates(x *Ctx, lon, lat []byte) (float64, float64, bool) {
	var xy [2]float64
	for i, b := range [][]byte{lon, lat} {
		f, ok := parseScore(b)
		if !ok {
			x.W.Error(errNotFloat)
			return 0, 0, false
		}
		xy[i] = f
	}
	if xy[0] < geohash.LongMin || xy[0] > geohash.LongMax || xy[1] < geohash.LatMin || xy[1] > geohash.LatMax {
		x.W.Error(fmt.Sprintf("ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]))
		return 0, 0, false
	}
	return xy[0], xy[1], true
}

// geoUnit returns how many meters one unit is (extractUnitOrReply).
func geoUnit(x *Ctx, unit []byte) (float64, bool) {
	switch {
	case equalFold(unit, "m"):
		return 1, true
	case equalFold(unit, "km"):
		return 1000, true
	case equalFold(unit, "ft"):
		return 0.3048, true
	case equalFold(unit, "mi"):
		return 1609.34, true
	}
	x.W.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// geoLength parses a radius, width or height (getDoubleFromObjectOrReply
// with msg), answering "ERR msg" when it is not a number.
func geoLength(x *Ctx, b []byte, msg string) (float64, bool) {
	f, ok := parseScore(b)
	if !ok {
		x.W.Error("ERR " + msg)
	}
	return f, ok
}

// geoDistance formats a distance as Redis's addReplyDoubleDistance does.
func geoDistance(x *Ctx, d float64) {
	x.W.BulkString(strconv.FormatFloat(d, 'f', 4, 64))
}

// geoCoordinate writes a coordinate as Redis's addReplyHumanLongDouble:
// "%.17Lf" without trailing zeros, a bulk string in RESP2 and a double
// (the same digits) in RESP3.
func geoCoordinate(x *Ctx, f float64) {
	s := formatLongDouble(new(big.Float).SetFloat64(f))
	if x.W.Proto() == 3 {
		x.W.Raw([]byte("," + s + "\r\n"))
		return
	}
	x.W.BulkString(s)
}

// cmdGeoadd is Redis's geoaddCommand: the positions become geohash scores
// and ZADD (with the same NX, XX and CH) stores them.
func cmdGeoadd(x *Ctx) {
	args := x.Args
	longIdx := 2
	nx, xx := false, false
options:
	for ; longIdx < len(args); longIdx++ {
		switch a := args[longIdx]; {
		case equalFold(a, "nx"):
			nx = true
		case equalFold(a, "xx"):
			xx = true
		case equalFold(a, "ch"):
		default:
			break options
		}
	}
	if (len(args)-longIdx)%3 != 0 || (xx && nx) {
		x.W.Error(errSyntax)
		return
	}
	zadd := make([][]byte, 0, longIdx+(len(args)-longIdx)/3*2)
	zadd = append(zadd, []byte("zadd"))
	zadd = append(zadd, args[1:longIdx]...)
	for i := longIdx; i < len(args); i += 3 {
		lon, lat, ok := geoCoordinates(x, args[i], args[i+1])
		if !ok {
			return
		}
		score, _ := geohash.Score(lon, lat)
		zadd = append(zadd, strconv.AppendUint(nil, score, 10), args[i+2])
	}
	zaddGeneric(x, zadd, false)
}

// cmdGeodist is Redis's geodistCommand.
func cmdGeodist(x *Ctx) {
	args := x.Args
	toMeter := 1.0
	switch {
	case len(args) == 5:
		var ok bool
		if toMeter, ok = geoUnit(x, args[4]); !ok {
			return
		}
	case len(args) > 5:
		x.W.Error(errSyntax)
		return
	}
	viewZSet(x, func(z *datatype.ZSet) {
		if z == nil {
			x.W.Null()
			return
		}
		s1, ok1 := z.Score(string(args[2]))
		s2, ok2 := z.Score(string(args[3]))
		if !ok1 || !ok2 {
			x.W.Null()
			return
		}
		lon1, lat1, ok1 := geohash.Position(s1)
		lon2, lat2, ok2 := geohash.Position(s2)
		if !ok1 || !ok2 {
			x.W.Null()
			return
		}
		geoDistance(x, geohash.Distance(lon1, lat1, lon2, lat2)/toMeter)
	})
}

// cmdGeohash is Redis's geohashCommand.
func cmdGeohash(x *Ctx) {
	geoEachMember(x, x.W.Null, func(score float64) bool {
		s, ok := geohash.String(score)
		if ok {
			x.W.BulkString(s)
		}
		return ok
	})
}

// cmdGeopos is Redis's geoposCommand.
func cmdGeopos(x *Ctx) {
	geoEachMember(x, x.W.NullArray, func(score float64) bool {
		lon, lat, ok := geohash.Position(score)
		if ok {
			x.W.Array(2)
			geoCoordinate(x, lon)
			geoCoordinate(x, lat)
		}
		return ok
	})
}

// geoEachMember answers an array with one reply per member argument of
// the set at x.Args[1]: reply's for those found (when it can decode the
// score), missing's for the others.
func geoEachMember(x *Ctx, missing func(), reply func(score float64) bool) {
	viewZSet(x, func(z *datatype.ZSet) {
		members := x.Args[2:]
		x.W.Array(len(members))
		for _, m := range members {
			if z != nil {
				if score, found := z.Score(string(m)); found && reply(score) {
					continue
				}
			}
			missing()
		}
	})
}

// geoSearchFlags are georadiusGeneric's flags: which command it runs.
type geoSearchFlags int

const (
	radiusCoords   geoSearchFlags = 1 << iota // around coordinates
	radiusMember                              // around a member
	radiusNoStore                             // no STORE/STOREDIST
	geoSearch                                 // GEOSEARCH's arguments
	geoSearchStore                            // GEOSEARCHSTORE: STOREDIST only
)

func cmdGeoradius(x *Ctx)   { georadiusGeneric(x, 1, radiusCoords) }
func cmdGeoradiusRO(x *Ctx) { georadiusGeneric(x, 1, radiusCoords|radiusNoStore) }
func cmdGeoradiusbymember(x *Ctx) {
	georadiusGeneric(x, 1, radiusMember)
}
func cmdGeoradiusbymemberRO(x *Ctx) {
	georadiusGeneric(x, 1, radiusMember|radiusNoStore)
}
func cmdGeosearch(x *Ctx)      { georadiusGeneric(x, 1, geoSearch) }
func cmdGeosearchstore(x *Ctx) { georadiusGeneric(x, 2, geoSearch|geoSearchStore) }

// geoSort is the order of a search's results.
type geoSort int

const (
	geoSortNone geoSort = iota
	geoSortAsc
	geoSortDesc
)

// geoQuery is a parsed search: the shape, what to reply and where to
// store.
type geoQuery struct {
	shape                          geohash.Shape
	withDist, withHash, withCoords bool
	sort                           geoSort
	any                            bool
	count                          int64
	storeKey                       []byte
	storeDist                      bool
}

// mayStore reports whether a search could write: GEOSEARCHSTORE, or a
// GEORADIUS with a STORE or STOREDIST argument. Such a search runs as an
// engine update, the others as a view.
func mayStore(args [][]byte, flags geoSearchFlags) bool {
	if flags&geoSearchStore != 0 {
		return true
	}
	if flags&(radiusNoStore|geoSearch) != 0 {
		return false
	}
	return slices.ContainsFunc(args, func(a []byte) bool {
		return equalFold(a, "store") || equalFold(a, "storedist")
	})
}

// georadiusGeneric is Redis's georadiusGeneric: GEORADIUS,
// GEORADIUSBYMEMBER (and their _RO forms), GEOSEARCH and GEOSEARCHSTORE.
// srcIdx is the source key's argument.
func georadiusGeneric(x *Ctx, srcIdx int, flags geoSearchFlags) {
	run := func(tx *engine.Tx) {
		z, ok := readZSet(x, tx, x.Args[srcIdx], true)
		if !ok {
			return
		}
		q, ok := parseGeoQuery(x, z, flags)
		if !ok {
			return
		}
		var points []geoPoint
		if z != nil {
			points = geoSearchPoints(z, &q)
		}
		switch {
		case len(points) > 0:
		case q.storeKey != nil:
			if tx.Delete(q.storeKey) {
				tx.Notify(notify.Generic, "del", q.storeKey)
			}
			x.W.Int(0)
			return
		default:
			x.W.Array(0)
			return
		}
		for i := range points {
			points[i].dist /= q.shape.Conversion
		}
		if q.storeKey == nil {
			replyGeoPoints(x, &q, points)
			return
		}
		entries := make([]datatype.ZEntry, len(points))
		for i, p := range points {
			score := p.score
			if q.storeDist {
				score = p.dist
			}
			entries[i] = datatype.ZEntry{Member: p.member, Score: score}
		}
		event := "georadiusstore"
		if flags&geoSearch != 0 {
			event = "geosearchstore"
		}
		storeEntries(x, tx, q.storeKey, entries, zsetLimits(x), event)
	}
	if mayStore(x.Args, flags) {
		x.Update(run)
	} else {
		x.View(run)
	}
}

// parseGeoQuery parses a search's arguments in Redis's order, answering
// its errors. z is the source set (nil when missing), which FROMMEMBER
// and GEORADIUSBYMEMBER look the centre up in.
func parseGeoQuery(x *Ctx, z *datatype.ZSet, flags geoSearchFlags) (geoQuery, bool) {
	args := x.Args
	var q geoQuery
	s := &q.shape
	var baseArgs int
	switch {
	case flags&radiusCoords != 0:
		baseArgs = 6
		lon, lat, ok := geoCoordinates(x, args[2], args[3])
		if !ok {
			return q, false
		}
		s.Longitude, s.Latitude = lon, lat
		if !geoRadiusArgs(x, s, args[4:6]) {
			return q, false
		}
	case flags&radiusMember != 0 && z == nil:
		// Parse the options anyway: STORE decides the reply.
		baseArgs = 5
	case flags&radiusMember != 0:
		baseArgs = 5
		if !geoMemberCenter(x, z, s, args[2]) || !geoRadiusArgs(x, s, args[3:5]) {
			return q, false
		}
	default: // GEOSEARCH, GEOSEARCHSTORE
		baseArgs = 2
		if flags&geoSearchStore != 0 {
			baseArgs = 3
			q.storeKey = args[1]
		}
	}

	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	search := flags&geoSearch != 0
	canStore := flags&(radiusNoStore|geoSearch) == 0
	opts := args[baseArgs:]
	for i := 0; i < len(opts); i++ {
		a, left := opts[i], len(opts)-i-1
		switch {
		case equalFold(a, "withdist"):
			q.withDist = true
		case equalFold(a, "withhash"):
			q.withHash = true
		case equalFold(a, "withcoord"):
			q.withCoords = true
		case equalFold(a, "any"):
			q.any = true
		case equalFold(a, "asc"):
			q.sort = geoSortAsc
		case equalFold(a, "desc"):
			q.sort = geoSortDesc
		case equalFold(a, "count") && left >= 1:
			n, ok := ParseInt64(opts[i+1])
			if !ok {
				x.W.Error(errNotInteger)
				return q, false
			}
			if n <= 0 {
				x.W.Error("ERR COUNT must be > 0")
				return q, false
			}
			q.count = n
			i++
		case equalFold(a, "store") && left >= 1 && canStore:
			q.storeKey, q.storeDist = opts[i+1], false
			i++
		case equalFold(a, "storedist") && left >= 1 && canStore:
			q.storeKey, q.storeDist = opts[i+1], true
			i++
		case equalFold(a, "storedist") && flags&geoSearchStore != 0:
			q.storeDist = true
		case equalFold(a, "frommember") && left >= 1 && search && !fromLoc:
			// A missing source is reported once the arguments parse.
			if z != nil && !geoMemberCenter(x, z, s, opts[i+1]) {
				return q, false
			}
			fromMember = true
			i++
		case equalFold(a, "fromlonlat") && left >= 2 && search && !fromMember:
			lon, lat, ok := geoCoordinates(x, opts[i+1], opts[i+2])
			if !ok {
				return q, false
			}
			s.Longitude, s.Latitude = lon, lat
			fromLoc = true
			i += 2
		case equalFold(a, "byradius") && left >= 2 && search && !byBox:
			if !geoRadiusArgs(x, s, opts[i+1:i+3]) {
				return q, false
			}
			byRadius = true
			i += 2
		case equalFold(a, "bybox") && left >= 3 && search && !byRadius:
			if !geoBoxArgs(x, s, opts[i+1:i+4]) {
				return q, false
			}
			byBox = true
			i += 3
		default:
			x.W.Error(errSyntax)
			return q, false
		}
	}

	switch {
	case q.storeKey != nil && (q.withDist || q.withHash || q.withCoords):
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		x.W.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return q, false
	case search && !fromMember && !fromLoc:
		x.W.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + string(args[0]))
		return q, false
	case search && !byRadius && !byBox:
		x.W.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + string(args[0]))
		return q, false
	case q.any && q.count == 0:
		x.W.Error("ERR the ANY argument requires COUNT argument")
		return q, false
	}
	// COUNT needs an order to pick the nearest, unless ANY is given.
	if q.count != 0 && q.sort == geoSortNone && !q.any {
		q.sort = geoSortAsc
	}
	return q, true
}

// geoMemberCenter centres s on member's position (longLatFromMember).
func geoMemberCenter(x *Ctx, z *datatype.ZSet, s *geohash.Shape, member []byte) bool {
	if score, found := z.Score(string(member)); found {
		if lon, lat, ok := geohash.Position(score); ok {
			s.Longitude, s.Latitude = lon, lat
			return true
		}
	}
	x.W.Error("ERR could not decode requested zset member")
	return false
}

// geoRadiusArgs parses "radius unit" into a circle
// (extractDistanceOrReply).
func geoRadiusArgs(x *Ctx, s *geohash.Shape, args [][]byte) bool {
	r, ok := geoLength(x, args[0], "need numeric radius")
	if !ok {
		return false
	}
	if r < 0 {
		x.W.Error("ERR radius cannot be negative")
		return false
	}
	conv, ok := geoUnit(x, args[1])
	if !ok {
		return false
	}
	s.Box, s.Radius, s.Conversion = false, r, conv
	return true
}

// geoBoxArgs parses "width height unit" into a box (extractBoxOrReply).
func geoBoxArgs(x *Ctx, s *geohash.Shape, args [][]byte) bool {
	w, ok := geoLength(x, args[0], "need numeric width")
	if !ok {
		return false
	}
	h, ok := geoLength(x, args[1], "need numeric height")
	if !ok {
		return false
	}
	if h < 0 || w < 0 {
		x.W.Error("ERR height or width cannot be negative")
		return false
	}
	conv, ok := geoUnit(x, args[2])
	if !ok {
		return false
	}
	s.Box, s.Width, s.Height, s.Conversion = true, w, h, conv
	return true
}

// geoPoint is one search result (Redis's geoPoint).
type geoPoint struct {
	longitude, latitude float64
	dist                float64
	score               float64
	member              string
}

// geoSearchPoints finds the members in q's shape, in Redis's order: cell
// by cell (membersOfAllNeighbors), by score within a cell, then sorted by
// distance when asked, cut to COUNT.
func geoSearchPoints(z *datatype.ZSet, q *geoQuery) []geoPoint {
	radius := geohash.AreasByShape(&q.shape)
	limit := 0
	if q.any {
		limit = int(q.count)
	}
	var points []geoPoint
	cells := radius.Cells()
	lastProcessed := 0
	for i, cell := range cells {
		if cell.IsZero() {
			continue
		}
		// A huge radius can make neighbours coincide: skip a cell equal
		// to the last one searched.
		if lastProcessed != 0 && cell == cells[lastProcessed] {
			continue
		}
		if len(points) > 0 && limit > 0 && len(points) >= limit {
			break
		}
		points = geoPointsInCell(z, cell, &q.shape, points, limit)
		lastProcessed = i
	}

	returned := len(points)
	if q.count != 0 && int64(returned) > q.count {
		returned = int(q.count)
	}
	if q.sort != geoSortNone {
		cmp := func(a, b geoPoint) int { return cmpDist(a.dist, b.dist) }
		if q.sort == geoSortDesc {
			cmp = func(a, b geoPoint) int { return -cmpDist(a.dist, b.dist) }
		}
		// Redis sorts everything with the C library's qsort (glibc's is a
		// stable merge sort) and only the first COUNT with pqsort.
		if returned == len(points) {
			slices.SortStableFunc(points, cmp)
		} else {
			pqsort(points, cmp, 0, returned-1)
		}
	}
	return points[:returned]
}

// cmpDist is Redis's sort_gp_asc.
func cmpDist(a, b float64) int {
	switch {
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return -1
}

// geoPointsInCell appends the members whose scores fall in cell and that
// lie in the shape (membersOfGeoHashBox, geoGetPointsInRange), stopping
// once there are limit points (0: no limit).
func geoPointsInCell(z *datatype.ZSet, cell geohash.Bits, s *geohash.Shape, points []geoPoint, limit int) []geoPoint {
	min := float64(geohash.Align52(cell))
	cell.Bits++
	max := float64(geohash.Align52(cell))
	from := z.CountWhile(func(e datatype.ZEntry) bool { return e.Score < min })
	z.Range(from, false, func(e datatype.ZEntry) bool {
		if !(e.Score < max) {
			return false
		}
		if p, ok := geoPointInShape(s, e); ok {
			points = append(points, p)
		}
		return !(len(points) > 0 && limit > 0 && len(points) >= limit)
	})
	return points
}

// geoPointInShape decodes an entry and reports whether it lies in the
// shape (geoAppendIfWithinShape).
func geoPointInShape(s *geohash.Shape, e datatype.ZEntry) (geoPoint, bool) {
	lon, lat, ok := geohash.Position(e.Score)
	if !ok {
		return geoPoint{}, false
	}
	var dist float64
	if s.Box {
		dist, ok = geohash.DistanceIfInRectangle(s.Width*s.Conversion, s.Height*s.Conversion,
			s.Longitude, s.Latitude, lon, lat)
	} else {
		dist, ok = geohash.DistanceIfInRadius(s.Longitude, s.Latitude, lon, lat, s.Radius*s.Conversion)
	}
	if !ok {
		return geoPoint{}, false
	}
	return geoPoint{longitude: lon, latitude: lat, dist: dist, score: e.Score, member: e.Member}, true
}

// replyGeoPoints answers a search's results: members alone, or each with
// the options asked for, in the order distance, hash, coordinates.
func replyGeoPoints(x *Ctx, q *geoQuery, points []geoPoint) {
	options := 0
	for _, on := range []bool{q.withDist, q.withCoords, q.withHash} {
		if on {
			options++
		}
	}
	x.W.Array(len(points))
	for _, p := range points {
		if options > 0 {
			x.W.Array(options + 1)
		}
		x.W.BulkString(p.member)
		if q.withDist {
			geoDistance(x, p.dist)
		}
		if q.withHash {
			x.W.Int(geohash.HashInt(p.score))
		}
		if q.withCoords {
			x.W.Array(2)
			geoCoordinate(x, p.longitude)
			geoCoordinate(x, p.latitude)
		}
	}
}
