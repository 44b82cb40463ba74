package commands

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// Key specs shared by the sorted-set rows.
var (
	zKeyPop      = []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}
	zKeysNumRead = []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: KeyNum(0, 1, 1)}}
	zKeysStore   = []KeySpec{
		{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)},
		{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(2), Find: KeyNum(0, 1, 1)},
	}
)

// zsetCommands are the sorted-set family's rows (Redis's t_zset.c). The
// blocking pops (BZPOPMIN, BZPOPMAX, BZMPOP) come with the blocking
// mechanism of the list family.
var zsetCommands = []*Spec{
	{Name: "zadd", Arity: -4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @sortedset @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdZadd},
	{Name: "zincrby", Arity: 4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @sortedset @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdZincrby},
	{Name: "zrem", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@write @sortedset @fast", KeySpecs: keyReadsDelete, Handler: cmdZrem},
	{Name: "zcard", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsRO, Handler: cmdZcard},
	{Name: "zscore", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsAccess, Handler: cmdZscore},
	{Name: "zmscore", Arity: -3, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsAccess, Handler: cmdZmscore},
	{Name: "zrank", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsAccess, Handler: cmdZrank},
	{Name: "zrevrank", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsAccess, Handler: cmdZrevrank},
	{Name: "zcount", Arity: 4, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsAccess, Handler: cmdZcount},
	{Name: "zlexcount", Arity: 4, Flags: FlagReadonly | FlagFast, ACL: "@read @sortedset @fast", KeySpecs: keyReadsAccess, Handler: cmdZlexcount},
	{Name: "zrange", Arity: -4, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrange},
	{Name: "zrangebyscore", Arity: -4, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrangebyscore},
	{Name: "zrevrangebyscore", Arity: -4, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrevrangebyscore},
	{Name: "zrangebylex", Arity: -4, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrangebylex},
	{Name: "zrevrangebylex", Arity: -4, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrevrangebylex},
	{Name: "zrevrange", Arity: -4, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrevrange},
	{Name: "zrangestore", Arity: -5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @sortedset @slow",
		KeySpecs: []KeySpec{
			{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)},
			{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)},
		}, Handler: cmdZrangestore},
	{Name: "zremrangebyrank", Arity: 4, Flags: FlagWrite, ACL: "@write @sortedset @slow", KeySpecs: keyReadsDelete, Handler: cmdZremrangebyrank},
	{Name: "zremrangebyscore", Arity: 4, Flags: FlagWrite, ACL: "@write @sortedset @slow", KeySpecs: keyReadsDelete, Handler: cmdZremrangebyscore},
	{Name: "zremrangebylex", Arity: 4, Flags: FlagWrite, ACL: "@write @sortedset @slow", KeySpecs: keyReadsDelete, Handler: cmdZremrangebylex},
	{Name: "zunion", Arity: -3, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: zKeysNumRead, Handler: cmdZunion},
	{Name: "zinter", Arity: -3, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: zKeysNumRead, Handler: cmdZinter},
	{Name: "zdiff", Arity: -3, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: zKeysNumRead, Handler: cmdZdiff},
	{Name: "zunionstore", Arity: -4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @sortedset @slow", KeySpecs: zKeysStore, Handler: cmdZunionstore},
	{Name: "zinterstore", Arity: -4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @sortedset @slow", KeySpecs: zKeysStore, Handler: cmdZinterstore},
	{Name: "zdiffstore", Arity: -4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @sortedset @slow", KeySpecs: zKeysStore, Handler: cmdZdiffstore},
	{Name: "zintercard", Arity: -3, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: zKeysNumRead, Handler: cmdZintercard},
	{Name: "zrandmember", Arity: -2, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZrandmember},
	{Name: "zpopmin", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @sortedset @fast", KeySpecs: zKeyPop, Handler: cmdZpopmin},
	{Name: "zpopmax", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @sortedset @fast", KeySpecs: zKeyPop, Handler: cmdZpopmax},
	{Name: "zmpop", Arity: -4, Flags: FlagWrite, ACL: "@write @sortedset @slow",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: KeyNum(0, 1, 1)}}, Handler: cmdZmpop},
	{Name: "zscan", Arity: -3, Flags: FlagReadonly, ACL: "@read @sortedset @slow", KeySpecs: keyReadsAccess, Handler: cmdZscan},
}

// zsetLimits are the settings that decide when a sorted set stops being a
// listpack.
func zsetLimits(x *Ctx) datatype.ZSetLimits {
	return datatype.ZSetLimits{
		MaxListpackEntries: int(x.Settings.Int("zset-max-listpack-entries")),
		MaxListpackValue:   int(x.Settings.Int("zset-max-listpack-value")),
	}
}

// readZSet looks key up as a sorted set; ok is false, with WRONGTYPE
// answered, when it holds another type. A missing key gives nil. read
// false is for a lookup that is followed by a change.
func readZSet(x *Ctx, tx *engine.Tx, key []byte, read bool) (*datatype.ZSet, bool) {
	return lookupObject[*datatype.ZSet](x, tx, key, datatype.KindZSet, read)
}

// readZSetOrReply is readZSet for a command with a fixed answer to a
// missing key (see lookupObjectOrReply).
func readZSetOrReply(x *Ctx, tx *engine.Tx, key []byte, read bool, missing missingKeyReply) (*datatype.ZSet, bool) {
	return lookupObjectOrReply[*datatype.ZSet](x, tx, key, datatype.KindZSet, read, missing)
}

// replyEntries answers entries as ZRANGE does: members only, or with
// their scores (flat in RESP2, one pair per member in RESP3).
func replyEntries(x *Ctx, entries []datatype.ZEntry, withScores bool) {
	resp3 := x.W.Proto() == 3
	if withScores && !resp3 {
		x.W.Array(2 * len(entries))
	} else {
		x.W.Array(len(entries))
	}
	for _, e := range entries {
		if withScores && resp3 {
			x.W.Array(2)
		}
		x.W.BulkString(e.Member)
		if withScores {
			x.W.Double(e.Score)
		}
	}
}

// zaddFlags are ZADD's options.
type zaddFlags struct{ nx, xx, gt, lt, ch, incr bool }

func cmdZadd(x *Ctx) { zaddGeneric(x, x.Args, false) }

func cmdZincrby(x *Ctx) { zaddGeneric(x, x.Args, true) }

// zaddGeneric is Redis's zaddGenericCommand: ZADD, and ZINCRBY (ZADD key
// INCR increment member); GEOADD calls it with the ZADD arguments it
// builds.
func zaddGeneric(x *Ctx, args [][]byte, incr bool) {
	f := zaddFlags{incr: incr}
	i := 2
options:
	for ; i < len(args); i++ {
		switch a := args[i]; {
		case equalFold(a, "nx"):
			f.nx = true
		case equalFold(a, "xx"):
			f.xx = true
		case equalFold(a, "ch"):
			f.ch = true
		case equalFold(a, "incr"):
			f.incr = true
		case equalFold(a, "gt"):
			f.gt = true
		case equalFold(a, "lt"):
			f.lt = true
		default:
			break options
		}
	}
	pairs := args[i:]
	switch {
	case len(pairs) == 0 || len(pairs)%2 != 0:
		x.W.Error(errSyntax)
		return
	case f.nx && f.xx:
		x.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	case (f.gt && f.nx) || (f.lt && f.nx) || (f.gt && f.lt):
		x.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case f.incr && len(pairs) > 2:
		x.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, len(pairs)/2)
	for j := range scores {
		s, ok := parseScore(pairs[2*j])
		if !ok {
			x.W.Error(errNotFloat)
			return
		}
		scores[j] = s
	}
	lim := zsetLimits(x)
	x.Update(func(tx *engine.Tx) {
		key := args[1]
		z, ok := readZSet(x, tx, key, false)
		if !ok {
			return
		}
		created := z == nil
		if created && f.xx {
			zaddReply(x, &f, 0, 0, false, 0)
			return
		}
		if created {
			z = datatype.NewZSet()
		}
		added, updated, processed := 0, 0, 0
		var score float64
		failed := false
		for j, s := range scores {
			out, newScore, nan := zsetAdd(z, pairs[2*j+1], s, &f, lim)
			if nan {
				failed = true
				break
			}
			switch out {
			case zaddAdded:
				added++
			case zaddUpdated:
				updated++
			}
			if out != zaddNop {
				processed++
				score = newScore
			}
		}
		if z.Len() > 0 && (added > 0 || updated > 0) {
			storeChanged(tx, key, z, created)
		}
		if failed {
			x.W.Error(errZNaN)
		} else {
			zaddReply(x, &f, added, updated, processed > 0, score)
		}
		if added > 0 || updated > 0 {
			event := "zadd"
			if f.incr {
				event = "zincr"
			}
			tx.Notify(notify.ZSet, event, key) // after the reply, as in Redis
		}
	})
}

func zaddReply(x *Ctx, f *zaddFlags, added, updated int, processed bool, score float64) {
	switch {
	case f.incr && processed:
		x.W.Double(score)
	case f.incr:
		x.W.Null()
	case f.ch:
		x.W.Int(int64(added + updated))
	default:
		x.W.Int(int64(added))
	}
}

// zaddOutcome is what zsetAdd did to one member.
type zaddOutcome int

const (
	zaddNop zaddOutcome = iota
	zaddAdded
	zaddUpdated
	// zaddSame: processed, but the score did not change.
	zaddSame
)

// zsetAdd is Redis's zsetAdd: it adds or updates member under ZADD's
// options and returns what it did, the member's new score, and whether
// the (incremented) score was NaN, in which case nothing changed. Only a
// member it adds is copied into a string of its own: an update looks the
// member up and moves it through a view of the argument.
func zsetAdd(z *datatype.ZSet, arg []byte, score float64, f *zaddFlags, lim datatype.ZSetLimits) (zaddOutcome, float64, bool) {
	if math.IsNaN(score) {
		return zaddNop, 0, true
	}
	member := datatype.View(arg)
	cur, exists := z.Score(member)
	if !exists {
		if f.xx {
			return zaddNop, 0, false
		}
		z.Add(string(arg), score, lim)
		return zaddAdded, score, false
	}
	if f.nx {
		return zaddNop, 0, false
	}
	if f.incr {
		score += cur
		if math.IsNaN(score) {
			return zaddNop, 0, true
		}
	}
	if (f.lt && score >= cur) || (f.gt && score <= cur) {
		return zaddNop, 0, false
	}
	if score == cur {
		return zaddSame, score, false
	}
	z.Update(member, cur, score)
	return zaddUpdated, score, false
}

func cmdZrem(x *Ctx) {
	removeMembers(x, datatype.KindZSet, notify.ZSet, "zrem", func(z *datatype.ZSet, m []byte) bool {
		return z.Delete(string(m))
	})
}

// viewZSet runs fn on the sorted set at x.Args[1], answering WRONGTYPE,
// or missing (when z is nil, fn must answer for a missing key).
func viewZSet(x *Ctx, fn func(z *datatype.ZSet)) {
	x.View(func(tx *engine.Tx) {
		if z, ok := readZSet(x, tx, x.Args[1], true); ok {
			fn(z)
		}
	})
}

func cmdZcard(x *Ctx) { replyLen(x, datatype.KindZSet) }

func cmdZscore(x *Ctx) {
	viewZSet(x, func(z *datatype.ZSet) {
		if z != nil {
			if s, found := z.Score(string(x.Args[2])); found {
				x.W.Double(s)
				return
			}
		}
		x.W.Null()
	})
}

func cmdZmscore(x *Ctx) {
	viewZSet(x, func(z *datatype.ZSet) {
		members := x.Args[2:]
		x.W.Array(len(members))
		for _, m := range members {
			if z != nil {
				if s, found := z.Score(string(m)); found {
					x.W.Double(s)
					continue
				}
			}
			x.W.Null()
		}
	})
}

func cmdZrank(x *Ctx) { zrankGeneric(x, false) }

func cmdZrevrank(x *Ctx) { zrankGeneric(x, true) }

func zrankGeneric(x *Ctx, rev bool) {
	viewZSet(x, func(z *datatype.ZSet) {
		if z != nil {
			if r, found := z.Rank(string(x.Args[2])); found {
				if rev {
					r = z.Len() - 1 - r
				}
				x.W.Int(int64(r))
				return
			}
		}
		x.W.Null()
	})
}

func cmdZcount(x *Ctx) {
	if r, ok := parseScoreRange(x, x.Args[2], x.Args[3]); ok {
		countInRange(x, r.below, r.notAbove)
	}
}

func cmdZlexcount(x *Ctx) {
	if r, ok := parseLexRange(x, x.Args[2], x.Args[3]); ok {
		countInRange(x, r.below, r.notAbove)
	}
}

// countInRange answers how many members of the set at x.Args[1] lie in
// the range given by its two predicates (ZCOUNT, ZLEXCOUNT).
func countInRange(x *Ctx, below, notAbove func(datatype.ZEntry) bool) {
	viewZSet(x, func(z *datatype.ZSet) {
		if z == nil {
			x.W.Int(0)
			return
		}
		lo, hi := ranksOf(z, below, notAbove)
		x.W.Int(int64(hi - lo))
	})
}

// zrangeType and zrangeDir are ZRANGE's BYSCORE/BYLEX and REV, fixed by
// the older commands (ZRANGEBYSCORE...) and chosen by options in ZRANGE
// and ZRANGESTORE.
type zrangeType int

const (
	zrangeAuto zrangeType = iota
	zrangeRank
	zrangeScore
	zrangeLex
)

type zrangeDir int

const (
	zrangeDirAuto zrangeDir = iota
	zrangeForward
	zrangeReverse
)

// zrangeRequest is a parsed ZRANGE-style command.
type zrangeRequest struct {
	kind          zrangeType
	rev           bool
	withScores    bool
	start, end    int64 // rank range
	offset, limit int64 // LIMIT, limit -1 for none
	score         scoreRange
	lex           lexRange
}

func cmdZrange(x *Ctx)           { zrangeGeneric(x, 1, false, zrangeAuto, zrangeDirAuto) }
func cmdZrangestore(x *Ctx)      { zrangeGeneric(x, 2, true, zrangeAuto, zrangeDirAuto) }
func cmdZrevrange(x *Ctx)        { zrangeGeneric(x, 1, false, zrangeRank, zrangeReverse) }
func cmdZrangebyscore(x *Ctx)    { zrangeGeneric(x, 1, false, zrangeScore, zrangeForward) }
func cmdZrevrangebyscore(x *Ctx) { zrangeGeneric(x, 1, false, zrangeScore, zrangeReverse) }
func cmdZrangebylex(x *Ctx)      { zrangeGeneric(x, 1, false, zrangeLex, zrangeForward) }
func cmdZrevrangebylex(x *Ctx)   { zrangeGeneric(x, 1, false, zrangeLex, zrangeReverse) }
func cmdZremrangebyrank(x *Ctx)  { zremrangeGeneric(x, zrangeRank) }
func cmdZremrangebyscore(x *Ctx) { zremrangeGeneric(x, zrangeScore) }
func cmdZremrangebylex(x *Ctx)   { zremrangeGeneric(x, zrangeLex) }

// parseZrange is the option and range parsing of Redis's
// zrangeGenericCommand, answering its errors itself. The source key is
// args[first], min and max follow it.
func parseZrange(x *Ctx, first int, store bool, kind zrangeType, dir zrangeDir) (zrangeRequest, bool) {
	args := x.Args
	req := zrangeRequest{limit: -1}
	minIdx, maxIdx := first+1, first+2
	for j := first + 3; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case !store && equalFold(a, "withscores"):
			req.withScores = true
		case equalFold(a, "limit") && left >= 2:
			var ok bool
			if req.offset, ok = intArg(x, j+1); !ok {
				return req, false
			}
			if req.limit, ok = intArg(x, j+2); !ok {
				return req, false
			}
			j += 2
		case dir == zrangeDirAuto && equalFold(a, "rev"):
			dir = zrangeReverse
		case kind == zrangeAuto && equalFold(a, "bylex"):
			kind = zrangeLex
		case kind == zrangeAuto && equalFold(a, "byscore"):
			kind = zrangeScore
		default:
			x.W.Error(errSyntax)
			return req, false
		}
	}
	if kind == zrangeAuto {
		kind = zrangeRank
	}
	req.kind, req.rev = kind, dir == zrangeReverse
	if req.limit != -1 && kind == zrangeRank {
		x.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return req, false
	}
	if req.withScores && kind == zrangeLex {
		x.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return req, false
	}
	if req.rev && kind != zrangeRank {
		minIdx, maxIdx = maxIdx, minIdx
	}
	var ok bool
	switch kind {
	case zrangeRank:
		if req.start, ok = intArg(x, minIdx); ok {
			req.end, ok = intArg(x, maxIdx)
		}
	case zrangeScore:
		req.score, ok = parseScoreRange(x, args[minIdx], args[maxIdx])
	case zrangeLex:
		req.lex, ok = parseLexRange(x, args[minIdx], args[maxIdx])
	}
	return req, ok
}

// rankRange turns ZRANGE-style start and end (negative from the end) into
// ranks [lo, hi) of a set of n members, as Redis sanitises them.
func rankRange(start, end int64, n int) (lo, hi int) {
	l := int64(n)
	if start < 0 {
		start += l
	}
	if end < 0 {
		end += l
	}
	start = max(start, 0)
	if start > end || start >= l {
		return 0, 0
	}
	end = min(end, l-1)
	return int(start), int(end) + 1
}

// collect returns the entries req selects from z, in reply order.
func (req *zrangeRequest) collect(z *datatype.ZSet) []datatype.ZEntry {
	var lo, hi int
	offset, limit := int64(0), int64(-1)
	switch req.kind {
	case zrangeRank:
		lo, hi = rankRange(req.start, req.end, z.Len())
	case zrangeScore:
		lo, hi = ranksOf(z, req.score.below, req.score.notAbove)
		offset, limit = req.offset, req.limit
	case zrangeLex:
		lo, hi = ranksOf(z, req.lex.below, req.lex.notAbove)
		offset, limit = req.offset, req.limit
	}
	// Redis skips offset entries one by one, so a negative offset walks
	// off the end: nothing is returned. A negative limit is no limit.
	if offset < 0 || offset >= int64(hi-lo) {
		return nil
	}
	n := int64(hi-lo) - offset
	if limit >= 0 {
		n = min(n, limit)
	}
	if n == 0 {
		return nil
	}
	out := make([]datatype.ZEntry, 0, n)
	from := lo + int(offset)
	switch {
	case req.rev && req.kind == zrangeRank: // the ranks count from the end
		from = z.Len() - 1 - lo
	case req.rev:
		from = hi - 1 - int(offset)
	}
	z.Range(from, req.rev, func(e datatype.ZEntry) bool {
		out = append(out, e)
		return int64(len(out)) < n
	})
	return out
}

// zrangeGeneric is Redis's zrangeGenericCommand for ZRANGE, ZRANGESTORE
// and the older range commands. first is the index of the source key.
func zrangeGeneric(x *Ctx, first int, store bool, kind zrangeType, dir zrangeDir) {
	req, ok := parseZrange(x, first, store, kind, dir)
	if !ok {
		return
	}
	args := x.Args
	if !store {
		x.View(func(tx *engine.Tx) {
			z, ok := readZSet(x, tx, args[first], true)
			switch {
			case !ok:
			case z == nil:
				x.W.Array(0)
			default:
				replyEntries(x, req.collect(z), req.withScores)
			}
		})
		return
	}
	lim := zsetLimits(x)
	x.Update(func(tx *engine.Tx) {
		z, ok := readZSet(x, tx, args[first], true)
		if !ok {
			return
		}
		var entries []datatype.ZEntry
		if z != nil {
			entries = req.collect(z)
		}
		storeEntries(x, tx, args[1], entries, lim, "zrangestore")
	})
}

// storeEntries replaces dst with a sorted set of entries (deleting it when
// there are none) and answers their count, as the *STORE commands do,
// then publishes event (or "del" when it deleted dst).
func storeEntries(x *Ctx, tx *engine.Tx, dst []byte, entries []datatype.ZEntry, lim datatype.ZSetLimits, event string) {
	if len(entries) == 0 {
		x.W.Int(0)
		if tx.Delete(dst) {
			tx.Notify(notify.Generic, "del", dst)
		}
		return
	}
	maxLen := 0
	for _, e := range entries {
		maxLen = max(maxLen, len(e.Member))
	}
	z := datatype.NewZSetFor(len(entries), maxLen, lim)
	for _, e := range entries {
		z.Set(e.Member, e.Score, lim)
	}
	tx.SetObject(dst, z, 0)
	x.W.Int(int64(z.Len()))
	tx.Notify(notify.ZSet, event, dst)
}

// zremrangeEvents are the keyspace events of ZREMRANGEBY*, by range type.
var zremrangeEvents = [...]string{
	zrangeRank:  "zremrangebyrank",
	zrangeScore: "zremrangebyscore",
	zrangeLex:   "zremrangebylex",
}

// zremrangeGeneric is Redis's zremrangeGenericCommand.
func zremrangeGeneric(x *Ctx, kind zrangeType) {
	args := x.Args
	var start, end int64
	var score scoreRange
	var lex lexRange
	ok := true
	switch kind {
	case zrangeRank:
		if start, ok = intArg(x, 2); ok {
			end, ok = intArg(x, 3)
		}
	case zrangeScore:
		score, ok = parseScoreRange(x, args[2], args[3])
	case zrangeLex:
		lex, ok = parseLexRange(x, args[2], args[3])
	}
	if !ok {
		return
	}
	x.Update(func(tx *engine.Tx) {
		z, ok := readZSetOrReply(x, tx, args[1], false, replyZero)
		if !ok {
			return
		}
		var lo, hi int
		switch kind {
		case zrangeRank:
			lo, hi = rankRange(start, end, z.Len())
		case zrangeScore:
			lo, hi = ranksOf(z, score.below, score.notAbove)
		case zrangeLex:
			lo, hi = ranksOf(z, lex.below, lex.notAbove)
		}
		n := z.DeleteRanks(lo, hi)
		if n > 0 {
			objectChanged(tx, args[1], z, notify.ZSet, zremrangeEvents[kind])
		}
		x.W.Int(int64(n))
	})
}

// zsetOp is ZUNION, ZINTER or ZDIFF.
type zsetOp int

const (
	opUnion zsetOp = iota
	opInter
	opDiff
)

// aggregate is ZUNION/ZINTER's AGGREGATE.
type aggregate int

const (
	aggSum aggregate = iota
	aggMin
	aggMax
)

// apply is Redis's zunionInterAggregate.
func (a aggregate) apply(target, v float64) float64 {
	switch a {
	case aggMin: // NaN never wins, as with C's comparisons
		if v < target {
			return v
		}
		return target
	case aggMax:
		if v > target {
			return v
		}
		return target
	}
	target += v
	if math.IsNaN(target) { // inf + -inf counts as 0
		return 0
	}
	return target
}

// zsetSource is one input of ZUNION/ZINTER/ZDIFF: a sorted set, or
// nothing for a missing key.
type zsetSource struct {
	z      *datatype.ZSet
	weight float64
}

func (s *zsetSource) len() int {
	if s.z == nil {
		return 0
	}
	return s.z.Len()
}

// lookupSource reads an input key of ZUNION/ZINTER/ZDIFF; ok is false,
// with WRONGTYPE answered, for a key that is neither a sorted set nor a
// set.
//
// HOOK(sets): Redis also accepts a set here, each member with score 1.
// The set family is being built beside this one; when it lands, a
// datatype.KindSet key must become a source here (its members, score 1)
// instead of the WRONGTYPE tx.Object answers for it today.
func lookupSource(x *Ctx, tx *engine.Tx, key []byte) (zsetSource, bool) {
	z, ok := readZSet(x, tx, key, true)
	return zsetSource{z: z, weight: 1}, ok
}

func cmdZunion(x *Ctx)      { zsetOpGeneric(x, false, 1, opUnion, false) }
func cmdZinter(x *Ctx)      { zsetOpGeneric(x, false, 1, opInter, false) }
func cmdZdiff(x *Ctx)       { zsetOpGeneric(x, false, 1, opDiff, false) }
func cmdZunionstore(x *Ctx) { zsetOpGeneric(x, true, 2, opUnion, false) }
func cmdZinterstore(x *Ctx) { zsetOpGeneric(x, true, 2, opInter, false) }
func cmdZdiffstore(x *Ctx)  { zsetOpGeneric(x, true, 2, opDiff, false) }
func cmdZintercard(x *Ctx)  { zsetOpGeneric(x, false, 1, opInter, true) }

// zsetOpOptions are the options after the keys of ZUNION and friends.
type zsetOpOptions struct {
	weights    []float64
	agg        aggregate
	withScores bool
	limit      int64
}

// parseZsetOpOptions parses the options from args[j] on, as Redis's
// zunionInterDiffGenericCommand does after reading the keys.
func parseZsetOpOptions(x *Ctx, j, numKeys int, store bool, op zsetOp, cardOnly bool) (zsetOpOptions, bool) {
	args := x.Args
	var o zsetOpOptions
	for j < len(args) {
		remaining := len(args) - j
		switch a := args[j]; {
		case op != opDiff && !cardOnly && remaining >= numKeys+1 && equalFold(a, "weights"):
			j++
			o.weights = make([]float64, numKeys)
			for i := range o.weights {
				w, ok := parseScore(args[j])
				if !ok {
					x.W.Error("ERR weight value is not a float")
					return o, false
				}
				o.weights[i] = w
				j++
			}
		case op != opDiff && !cardOnly && remaining >= 2 && equalFold(a, "aggregate"):
			switch b := args[j+1]; {
			case equalFold(b, "sum"):
				o.agg = aggSum
			case equalFold(b, "min"):
				o.agg = aggMin
			case equalFold(b, "max"):
				o.agg = aggMax
			default:
				x.W.Error(errSyntax)
				return o, false
			}
			j += 2
		case !store && !cardOnly && equalFold(a, "withscores"):
			o.withScores = true
			j++
		case cardOnly && remaining >= 2 && equalFold(a, "limit"):
			n, ok := ParseInt64(args[j+1])
			switch {
			case !ok:
				x.W.Error("ERR LIMIT can't be negative")
				return o, false
			case n < 0:
				x.W.Error("ERR LIMIT can't be negative")
				return o, false
			}
			o.limit = n
			j += 2
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// zsetOpStoreEvents are the keyspace events of ZUNIONSTORE, ZINTERSTORE
// and ZDIFFSTORE.
var zsetOpStoreEvents = [...]string{opUnion: "zunionstore", opInter: "zinterstore", opDiff: "zdiffstore"}

// zsetOpGeneric is Redis's zunionInterDiffGenericCommand: ZUNION, ZINTER,
// ZDIFF, their *STORE forms (store: the destination is args[1]) and
// ZINTERCARD (cardOnly). numKeysIdx is the index of numkeys.
func zsetOpGeneric(x *Ctx, store bool, numKeysIdx int, op zsetOp, cardOnly bool) {
	args := x.Args
	n, ok := intArg(x, numKeysIdx)
	if !ok {
		return
	}
	if n < 1 {
		x.W.Error("ERR at least 1 input key is needed for '" + string(lowerASCII(args[0])) + "' command")
		return
	}
	if n > int64(len(args)-numKeysIdx-1) {
		x.W.Error(errSyntax)
		return
	}
	numKeys := int(n)
	keys := args[numKeysIdx+1 : numKeysIdx+1+numKeys]
	lim := zsetLimits(x)
	run := x.View
	if store {
		run = x.Update
	}
	run(func(tx *engine.Tx) {
		srcs := make([]zsetSource, numKeys)
		for i, k := range keys {
			if srcs[i], ok = lookupSource(x, tx, k); !ok {
				return
			}
		}
		opts, ok := parseZsetOpOptions(x, numKeysIdx+1+numKeys, numKeys, store, op, cardOnly)
		if !ok {
			return
		}
		for i := range srcs {
			if opts.weights != nil {
				srcs[i].weight = opts.weights[i]
			}
		}
		if op != opDiff {
			slices.SortStableFunc(srcs, func(a, b zsetSource) int { return a.len() - b.len() })
		}
		if cardOnly {
			x.W.Int(interCard(srcs, opts.limit))
			return
		}
		var result []datatype.ZEntry
		switch op {
		case opUnion:
			result = zunion(srcs, opts.agg)
		case opInter:
			result = zinter(srcs, opts.agg)
		case opDiff:
			result = zdiff(srcs)
		}
		sortEntries(result)
		if store {
			storeEntries(x, tx, args[1], result, lim, zsetOpStoreEvents[op])
			return
		}
		replyEntries(x, result, opts.withScores)
	})
}

// lowerASCII returns b in lower case (Redis's command fullname).
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// weighted is a source score times its weight, NaN (0 * inf) counting as
// 0 as in Redis.
func weighted(score, weight float64) float64 {
	v := score * weight
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func zunion(srcs []zsetSource, agg aggregate) []datatype.ZEntry {
	// Sized for the largest source (srcs is sorted by size): growing a map
	// of millions of members rehashes it again and again, under the engine
	// lock (a fifth of ZUNIONSTORE's time on two 2M-member sets).
	largest := srcs[len(srcs)-1].len()
	order := make([]string, 0, largest)
	acc := make(map[string]float64, largest)
	for i := range srcs {
		s := &srcs[i]
		if s.z == nil {
			continue
		}
		s.z.ForEach(func(e datatype.ZEntry) bool {
			v := weighted(e.Score, s.weight)
			if cur, ok := acc[e.Member]; ok {
				acc[e.Member] = agg.apply(cur, v)
			} else {
				acc[e.Member] = v
				order = append(order, e.Member)
			}
			return true
		})
	}
	out := make([]datatype.ZEntry, 0, len(order))
	for _, m := range order {
		out = append(out, datatype.ZEntry{Member: m, Score: acc[m]})
	}
	return out
}

func zinter(srcs []zsetSource, agg aggregate) []datatype.ZEntry {
	var out []datatype.ZEntry
	if srcs[0].len() == 0 {
		return nil
	}
	srcs[0].z.ForEach(func(e datatype.ZEntry) bool {
		score := weighted(e.Score, srcs[0].weight)
		for j := 1; j < len(srcs); j++ {
			v, ok := srcs[j].z.Score(e.Member)
			if !ok {
				return true
			}
			score = agg.apply(score, v*srcs[j].weight)
		}
		out = append(out, datatype.ZEntry{Member: e.Member, Score: score})
		return true
	})
	return out
}

// interCard is ZINTERCARD: the size of the intersection, stopping at
// limit (0 for none).
func interCard(srcs []zsetSource, limit int64) int64 {
	var n int64
	if srcs[0].len() == 0 {
		return 0
	}
	srcs[0].z.ForEach(func(e datatype.ZEntry) bool {
		for j := 1; j < len(srcs); j++ {
			if _, ok := srcs[j].z.Score(e.Member); !ok {
				return true
			}
		}
		n++
		return limit == 0 || n < limit
	})
	return n
}

func zdiff(srcs []zsetSource) []datatype.ZEntry {
	var out []datatype.ZEntry
	if srcs[0].len() == 0 {
		return nil
	}
	srcs[0].z.ForEach(func(e datatype.ZEntry) bool {
		for j := 1; j < len(srcs); j++ {
			if srcs[j].z == nil {
				continue
			}
			if _, ok := srcs[j].z.Score(e.Member); ok {
				return true
			}
		}
		out = append(out, e)
		return true
	})
	return out
}

// sortEntries orders entries as a sorted set does.
func sortEntries(es []datatype.ZEntry) {
	slices.SortFunc(es, func(a, b datatype.ZEntry) int {
		return cmp.Or(cmp.Compare(a.Score, b.Score), strings.Compare(a.Member, b.Member))
	})
}

func cmdZrandmember(x *Ctx) {
	args := x.Args
	if len(args) == 2 {
		viewZSet(x, func(z *datatype.ZSet) {
			if z == nil {
				x.W.Null()
				return
			}
			x.W.BulkString(z.At(rand.IntN(z.Len())).Member)
		})
		return
	}
	n, ok := randCountArg(x)
	if !ok {
		return
	}
	switch {
	case len(args) > 4 || (len(args) == 4 && !equalFold(args[3], "withscores")):
		x.W.Error(errSyntax)
		return
	}
	withScores := len(args) == 4
	if withScores && (n < -math.MaxInt64/2 || n > math.MaxInt64/2) {
		x.W.Error("ERR value is out of range")
		return
	}
	viewZSet(x, func(z *datatype.ZSet) {
		if z == nil || n == 0 {
			x.W.Array(0)
			return
		}
		if n < -maxRandomPicks {
			x.W.Error("ERR value is out of range")
			return
		}
		replyEntries(x, randomEntries(z, n), withScores)
	})
}

// maxRandomPicks bounds ZRANDMEMBER's negative count. Redis 7.0 bounds it
// only with WITHSCORES (LONG_MAX/2) and then streams a reply that can
// exhaust its memory; kvserver builds the reply under the engine lock, so
// it answers Redis's out-of-range error past 16M picks (a reply of
// hundreds of MiB) instead.
const maxRandomPicks = 1 << 24

// randomEntries is ZRANDMEMBER's choice: n distinct members (all of them
// when n >= Len) for n > 0, -n members that may repeat for n < 0.
func randomEntries(z *datatype.ZSet, n int64) []datatype.ZEntry {
	size := z.Len()
	if n < 0 {
		out := make([]datatype.ZEntry, -n)
		for i := range out {
			out[i] = z.At(rand.IntN(size))
		}
		return out
	}
	if n >= int64(size) {
		out := make([]datatype.ZEntry, 0, size)
		z.ForEach(func(e datatype.ZEntry) bool { out = append(out, e); return true })
		return out
	}
	out := make([]datatype.ZEntry, 0, n)
	if n*3 < int64(size) { // few of many: draw ranks until n distinct
		picked := make(map[int]bool, n)
		for int64(len(out)) < n {
			if r := rand.IntN(size); !picked[r] {
				picked[r] = true
				out = append(out, z.At(r))
			}
		}
		return out
	}
	for _, r := range rand.Perm(size)[:n] {
		out = append(out, z.At(r))
	}
	return out
}

func cmdZpopmin(x *Ctx) { zpopCommand(x, false) }

func cmdZpopmax(x *Ctx) { zpopCommand(x, true) }

// zpopCommand is Redis's zpopMinMaxCommand.
func zpopCommand(x *Ctx, maxSide bool) {
	args := x.Args
	if len(args) > 3 {
		x.W.Error(errSyntax)
		return
	}
	count, ok := optionalCount(x)
	if !ok {
		return
	}
	nested := x.W.Proto() == 3 && count != -1
	zpopGeneric(x, args[1:2], maxSide, false, count, nested, false)
}

// zpopGeneric is Redis's genericZpopCommand: it pops up to count members
// from the first non-empty key (count -1: one, a flat reply), with the
// key's name first when emitKey.
func zpopGeneric(x *Ctx, keys [][]byte, maxSide, emitKey bool, count int64, nested, nilWhenEmpty bool) {
	x.Update(func(tx *engine.Tx) {
		key, z, ok := firstZSet(x, tx, keys)
		switch {
		case !ok:
		case z == nil && nilWhenEmpty:
			x.W.NullArray()
		case z == nil || count == 0:
			x.W.Array(0)
		default:
			zpopReply(x, tx, key, z, maxSide, count, emitKey, nested)
		}
	})
}

// firstZSet finds the first of keys that holds a sorted set; ok is false,
// with WRONGTYPE answered, when a key before it holds another type.
func firstZSet(x *Ctx, tx *engine.Tx, keys [][]byte) (key []byte, z *datatype.ZSet, ok bool) {
	for _, k := range keys {
		if z, ok = readZSet(x, tx, k, false); !ok || z != nil {
			return k, z, ok
		}
	}
	return nil, nil, true
}

// zsetOf is key's sorted set for a blocked client's retry: nil, without a
// reply, when the key is missing or holds another type.
func zsetOf(tx *engine.Tx, key []byte) *datatype.ZSet {
	obj, err := tx.Object(key, datatype.KindZSet, false)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*datatype.ZSet)
}

// zpopReply pops up to count members (-1: one) of z, the non-empty sorted
// set under key, and answers them, with genericZpopCommand's events where
// it raises them: the pop's after the reply's header, "del" (when z is
// emptied) after the reply.
func zpopReply(x *Ctx, tx *engine.Tx, key []byte, z *datatype.ZSet, maxSide bool, count int64, emitKey, nested bool) {
	entries := zpopEntries(z, maxSide, count)
	replyZpop(x, key, entries, emitKey, nested, func() { tx.Notify(notify.ZSet, zpopEvent(maxSide), key) })
	zsetPopped(tx, key, z)
}

// zpopEntries pops up to count members (-1: one) of the non-empty z from
// its low end or, when maxSide, its high end.
func zpopEntries(z *datatype.ZSet, maxSide bool, count int64) []datatype.ZEntry {
	n := 1
	if count > 0 {
		n = int(min(count, int64(z.Len())))
	}
	entries := make([]datatype.ZEntry, n)
	for i := range entries {
		r := 0
		if maxSide {
			r = z.Len() - 1
		}
		entries[i] = z.At(r)
		z.DeleteRanks(r, r+1)
	}
	return entries
}

// zpopEvent is the keyspace event of a pop from one end of a sorted set.
func zpopEvent(maxSide bool) string {
	if maxSide {
		return "zpopmax"
	}
	return "zpopmin"
}

// zsetPopped records pops from z, the sorted set under key, publishing
// "del" when they emptied it (which deletes it).
func zsetPopped(tx *engine.Tx, key []byte, z *datatype.ZSet) {
	emptied := z.Len() == 0
	tx.Modified(key)
	if emptied {
		tx.Notify(notify.Generic, "del", key)
	}
}

// replyZpop answers popped entries in the four shapes of
// genericZpopCommand: flat or nested pairs, with or without the key.
// afterHeader runs once the array headers are written.
func replyZpop(x *Ctx, key []byte, entries []datatype.ZEntry, emitKey, nested bool, afterHeader func()) {
	n := len(entries)
	switch {
	case !nested && !emitKey:
		x.W.Array(2 * n)
	case nested && !emitKey:
		x.W.Array(n)
	case !nested && emitKey:
		x.W.Array(2*n + 1)
		x.W.Bulk(key)
	default:
		x.W.Array(2)
		x.W.Bulk(key)
		x.W.Array(n)
	}
	afterHeader()
	for _, e := range entries {
		if nested {
			x.W.Array(2)
		}
		x.W.BulkString(e.Member)
		x.W.Double(e.Score)
	}
}

// zmpopArgs are ZMPOP's and BZMPOP's parsed arguments.
type zmpopArgs struct {
	keys    [][]byte
	maxSide bool
	count   int64
}

// parseZmpop parses ZMPOP's and BZMPOP's arguments from argument i (see
// parseMultiPop).
func parseZmpop(x *Ctx, i int) (zmpopArgs, bool) {
	keys, maxSide, count, ok := parseMultiPop(x, i, "min", "max")
	return zmpopArgs{keys: keys, maxSide: maxSide, count: count}, ok
}

// cmdZmpop is ZMPOP numkeys key [key ...] MIN|MAX [COUNT count].
func cmdZmpop(x *Ctx) {
	a, ok := parseZmpop(x, 1)
	if !ok {
		return
	}
	zpopGeneric(x, a.keys, a.maxSide, true, a.count, true, true)
}

// cmdZscan is ZSCAN key cursor [MATCH pattern] [COUNT count]. A listpack
// set is answered whole with cursor 0, as Redis does; a skiplist one is
// walked in the order of a hash of its members, the cursor being the next
// hash value, so that members present for the whole scan are all returned.
func cmdZscan(x *Ctx) {
	scanCollection(x, datatype.KindZSet, func(z *datatype.ZSet, cursor uint64, o *collectionScan) {
		var found []datatype.ZEntry
		next := uint64(0)
		if z.IsListpack() {
			z.ForEach(func(e datatype.ZEntry) bool { found = append(found, e); return true })
		} else {
			found, next = scanByHash(z, cursor, int64(o.count))
		}
		out := found[:0]
		for _, e := range found {
			if o.match([]byte(e.Member)) {
				out = append(out, e)
			}
		}
		writeScanCursor(x, next)
		x.W.Array(2 * len(out))
		for _, e := range out {
			x.W.BulkString(e.Member)
			x.W.BulkString(formatScore(e.Score, z.IsListpack()))
		}
	})
}

// scanByHash returns the members of z whose hash is at least cursor,
// lowest hashes first: count of them, or a 32nd of the set when that is
// more (each call walks the whole set, so a full scan takes at most about
// 32 calls), and all members sharing the last hash; and the cursor that
// continues after them (0 at the end). COUNT is a hint in Redis too.
func scanByHash(z *datatype.ZSet, cursor uint64, count int64) ([]datatype.ZEntry, uint64) {
	count = max(count, int64(z.Len()/32))
	type hashed struct {
		h uint64
		e datatype.ZEntry
	}
	var cand []hashed
	z.ForEach(func(e datatype.ZEntry) bool {
		if h := memberHash(e.Member); h >= cursor {
			cand = append(cand, hashed{h, e})
		}
		return true
	})
	slices.SortFunc(cand, func(a, b hashed) int { return cmp.Compare(a.h, b.h) })
	n := int(min(count, int64(len(cand))))
	for n < len(cand) && n > 0 && cand[n].h == cand[n-1].h {
		n++
	}
	out := make([]datatype.ZEntry, n)
	for i := range out {
		out[i] = cand[i].e
	}
	if n == len(cand) || cand[n-1].h == math.MaxUint64 {
		return out, 0
	}
	return out, cand[n-1].h + 1
}

// memberHash is FNV-1a, fixed so that cursors stay valid across restarts;
// 0 is never returned, so that cursor 0 always means "from the start".
func memberHash(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return max(h, 1)
}
