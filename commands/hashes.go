package commands

import (
	"math"
	"math/big"
	"strconv"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/glob"
	"github.com/kvserver/kvserver/notify"
	"github.com/kvserver/kvserver/resp"
)

// hashCommands are the hash family's rows (Redis's t_hash.c).
var hashCommands = []*Spec{
	{Name: "hset", Arity: -4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHset},
	{Name: "hmset", Arity: -4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHmset},
	{Name: "hget", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHget},
	{Name: "hdel", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@write @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHdel},
	{Name: "hlen", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHlen},
	{Name: "hexists", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHexists},
	{Name: "hgetall", Arity: 2, Flags: FlagReadonly, ACL: "@read @hash @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHgetall},
	{Name: "hmget", Arity: -3, Flags: FlagReadonly | FlagFast, ACL: "@read @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHmget},
	{Name: "hkeys", Arity: 2, Flags: FlagReadonly, ACL: "@read @hash @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHkeys},
	{Name: "hvals", Arity: 2, Flags: FlagReadonly, ACL: "@read @hash @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHvals},
	{Name: "hincrby", Arity: 4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHincrby},
	{Name: "hincrbyfloat", Arity: 4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHincrbyfloat},
	{Name: "hsetnx", Arity: 4, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyInsert, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHsetnx},
	{Name: "hstrlen", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @hash @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHstrlen},
	{Name: "hrandfield", Arity: -2, Flags: FlagReadonly, ACL: "@read @hash @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHrandfield},
	{Name: "hscan", Arity: -3, Flags: FlagReadonly, ACL: "@read @hash @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdHscan},
}

// hashLimits are the settings that decide when a hash stops being a
// listpack.
func hashLimits(x *Ctx) datatype.HashLimits {
	return datatype.HashLimits{
		MaxListpackEntries: int(x.Settings.Int("hash-max-listpack-entries")),
		MaxListpackValue:   int(x.Settings.Int("hash-max-listpack-value")),
	}
}

// readHash looks key up as a hash for reading; ok is false, with the
// reply written, when it holds another type. A missing key gives nil.
func readHash(x *Ctx, tx *engine.Tx, key []byte) (*datatype.Hash, bool) {
	return lookupObject[*datatype.Hash](x, tx, key, datatype.KindHash, true)
}

// writeHash looks key up as a hash to change it, creating an empty one
// (not stored until the caller's SetObject) when missing; ok is false,
// with WRONGTYPE answered, when it holds another type.
func writeHash(x *Ctx, tx *engine.Tx, key []byte) (h *datatype.Hash, created, ok bool) {
	obj, err := tx.Object(key, datatype.KindHash, false)
	if err != nil {
		x.W.Error(err.Error())
		return nil, false, false
	}
	if obj == nil {
		return datatype.NewHash(), true, true
	}
	return obj.(*datatype.Hash), false, true
}

// updateHash runs fn in a write step on key's hash, an empty one (stored
// only by storeChanged) when missing; another type answers WRONGTYPE.
func updateHash(x *Ctx, key []byte, fn func(tx *engine.Tx, h *datatype.Hash, created bool)) {
	x.Update(func(tx *engine.Tx) {
		if h, created, ok := writeHash(x, tx, key); ok {
			fn(tx, h, created)
		}
	})
}

// storeChanged records the change of a collection obtained from a
// write lookup: a created one is stored, an existing one marked modified.
func storeChanged(tx *engine.Tx, key []byte, obj datatype.Object, created bool) {
	if created {
		tx.SetObject(key, obj, 0)
	} else {
		tx.Modified(key)
	}
}

// objectChanged records a change in place of the container under key
// and publishes event of class, then "del" when the change emptied it
// (which deletes it), in Redis's order.
func objectChanged(tx *engine.Tx, key []byte, obj datatype.Object, class notify.Class, event string) {
	emptied := obj.Len() == 0
	tx.Modified(key)
	tx.Notify(class, event, key)
	if emptied {
		tx.Notify(notify.Generic, "del", key)
	}
}

// replyValue writes a field or value that is a view into a hash. Bulk
// would reference a large one instead of copying it, but a hash changes in
// place once the engine lock is released.
func replyValue(w *resp.Writer, b []byte) { w.BulkCopy(b) }

func cmdHset(x *Ctx) { hsetGeneric(x, "hset") }

func cmdHmset(x *Ctx) { hsetGeneric(x, "hmset") }

// hsetGeneric implements HSET (the number of new fields) and HMSET (+OK).
func hsetGeneric(x *Ctx, name string) {
	args := x.Args
	if len(args)%2 != 0 {
		x.W.Error("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	lim := hashLimits(x)
	updateHash(x, args[1], func(tx *engine.Tx, h *datatype.Hash, created bool) {
		h.Fit(lim, args[2:]...)
		added := 0
		for i := 2; i < len(args); i += 2 {
			if h.Set(args[i], args[i+1], lim) {
				added++
			}
		}
		storeChanged(tx, args[1], h, created)
		if name == "hmset" {
			x.W.OK()
		} else {
			x.W.Int(int64(added))
		}
		tx.Notify(notify.Hash, "hset", args[1]) // after the reply, as in Redis
	})
}

func cmdHsetnx(x *Ctx) {
	args := x.Args
	lim := hashLimits(x)
	updateHash(x, args[1], func(tx *engine.Tx, h *datatype.Hash, created bool) {
		if _, found := h.Get(args[2]); found {
			x.W.Int(0)
			return
		}
		h.Set(args[2], args[3], lim)
		storeChanged(tx, args[1], h, created)
		x.W.Int(1)
		tx.Notify(notify.Hash, "hset", args[1])
	})
}

func cmdHget(x *Ctx) {
	args := x.Args
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, args[1])
		if !ok {
			return
		}
		replyField(x.W, h, args[2])
	})
}

// replyField writes field's value in h, or a null when h (nil for a
// missing key) has no such field.
func replyField(w *resp.Writer, h *datatype.Hash, field []byte) {
	if h != nil {
		if v, found := h.Get(field); found {
			replyValue(w, v)
			return
		}
	}
	w.Null()
}

func cmdHmget(x *Ctx) {
	args := x.Args
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, args[1])
		if !ok {
			return
		}
		x.W.Array(len(args) - 2)
		for _, f := range args[2:] {
			replyField(x.W, h, f)
		}
	})
}

func cmdHdel(x *Ctx) {
	removeMembers(x, datatype.KindHash, notify.Hash, "hdel", (*datatype.Hash).Delete)
}

func cmdHlen(x *Ctx) { replyLen(x, datatype.KindHash) }

func cmdHstrlen(x *Ctx) {
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, x.Args[1])
		if !ok {
			return
		}
		var v []byte
		if h != nil {
			v, _ = h.Get(x.Args[2])
		}
		x.W.Int(int64(len(v)))
	})
}

func cmdHexists(x *Ctx) {
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, x.Args[1])
		if !ok {
			return
		}
		found := false
		if h != nil {
			_, found = h.Get(x.Args[2])
		}
		if found {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	})
}

// What HGETALL, HKEYS and HVALS return of each field (Redis's
// genericHgetallCommand flags).
const (
	hashFields = 1 << iota
	hashValues
)

func cmdHgetall(x *Ctx) { hgetallGeneric(x, hashFields|hashValues) }

func cmdHkeys(x *Ctx) { hgetallGeneric(x, hashFields) }

func cmdHvals(x *Ctx) { hgetallGeneric(x, hashValues) }

// hgetallGeneric replies with every field, value or both: a map for both
// (RESP3), an array otherwise.
func hgetallGeneric(x *Ctx, what int) {
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, x.Args[1])
		if !ok {
			return
		}
		n := 0
		if h != nil {
			n = h.Len()
		}
		if what == hashFields|hashValues {
			x.W.Map(n)
		} else {
			x.W.Array(n)
		}
		if h == nil {
			return
		}
		h.Range(func(f, v []byte) bool {
			if what&hashFields != 0 {
				replyValue(x.W, f)
			}
			if what&hashValues != 0 {
				replyValue(x.W, v)
			}
			return true
		})
	})
}

func cmdHincrby(x *Ctx) {
	args := x.Args
	incr, ok := intArg(x, 3)
	if !ok {
		return
	}
	lim := hashLimits(x)
	updateHash(x, args[1], func(tx *engine.Tx, h *datatype.Hash, created bool) {
		var cur int64
		if v, found := h.Get(args[2]); found {
			n, isInt := ParseInt64(v)
			if !isInt {
				x.W.Error("ERR hash value is not an integer")
				return
			}
			cur = n
		}
		if addOverflows(cur, incr) {
			x.W.Error(errOverflow)
			return
		}
		cur += incr
		h.Set(args[2], strconv.AppendInt(nil, cur, 10), lim)
		storeChanged(tx, args[1], h, created)
		x.W.Int(cur)
		tx.Notify(notify.Hash, "hincrby", args[1])
	})
}

func cmdHincrbyfloat(x *Ctx) {
	args := x.Args
	incr, ok := parseLongDouble(args[3])
	if !ok {
		x.W.Error(errNotFloat)
		return
	}
	if incr.IsInf() {
		x.W.Error("ERR value is NaN or Infinity")
		return
	}
	lim := hashLimits(x)
	updateHash(x, args[1], func(tx *engine.Tx, h *datatype.Hash, created bool) {
		cur := new(big.Float).SetPrec(longDoublePrec)
		if v, found := h.Get(args[2]); found {
			f, isFloat := parseLongDouble(v)
			if !isFloat {
				x.W.Error("ERR hash value is not a float")
				return
			}
			cur = f
		}
		sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven)
		if cur.IsInf() {
			x.W.Error(errNaNInf)
			return
		}
		if sum.Add(cur, incr); sum.MantExp(nil) > maxLongDoubleExp {
			x.W.Error(errNaNInf)
			return
		}
		out := formatLongDouble(sum)
		h.Set(args[2], []byte(out), lim)
		storeChanged(tx, args[1], h, created)
		x.W.BulkString(out)
		tx.Notify(notify.Hash, "hincrbyfloat", args[1])
	})
}

// maxRandomReply bounds the reply of a random pick with repetition: a huge
// negative count asks for a reply no client can hold, which Redis builds
// until its memory runs out, under its one thread. kvserver writes up to
// this much (a million fields with values of 30 bytes) and then closes
// the connection after what it wrote, as an output buffer limit does,
// holding the engine lock for a bounded time.
const maxRandomReply = 64 << 20

// randomReplyFull reports whether a reply of random picks with repetition
// (HRANDFIELD, SRANDMEMBER with a negative count) has passed
// maxRandomReply after picked picks, checked every 1024 of them; if so it
// has the connection closed after what was written, and the caller stops.
func randomReplyFull(x *Ctx, picked int) bool {
	if picked%1024 != 0 || x.W.Pending() <= maxRandomReply {
		return false
	}
	x.Session.CloseAfterReply()
	return true
}

// cmdHrandfield follows Redis's hrandfieldCommand: without a count, one
// field or a null; with one, an array (pairs in RESP3 WITHVALUES) of
// distinct fields for a positive count (the whole hash, in its order,
// once count reaches its size) or of count independent picks for a
// negative one.
func cmdHrandfield(x *Ctx) {
	args := x.Args
	if len(args) == 2 {
		x.View(func(tx *engine.Tx) {
			h, ok := readHash(x, tx, args[1])
			switch {
			case !ok:
			case h == nil:
				x.W.Null()
			default:
				h.Random(1, false, func(f, _ []byte) bool {
					replyValue(x.W, f)
					return true
				})
			}
		})
		return
	}
	n, ok := randCountArg(x)
	if !ok {
		return
	}
	withValues := false
	if len(args) > 4 || (len(args) == 4 && !equalFold(args[3], "withvalues")) {
		x.W.Error(errSyntax)
		return
	}
	withValues = len(args) == 4
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, args[1])
		if !ok {
			return
		}
		if h == nil || n == 0 {
			x.W.Array(0)
			return
		}
		distinct, count := n > 0, n
		if !distinct {
			count = -n
		}
		if distinct && count >= int64(h.Len()) {
			count = int64(h.Len())
		}
		pairs := withValues && x.W.Proto() > 2
		if withValues && !pairs {
			x.W.Array(int(2 * count))
		} else {
			x.W.Array(int(count))
		}
		emit := func(f, v []byte) {
			if pairs {
				x.W.Array(2)
			}
			replyValue(x.W, f)
			if withValues {
				replyValue(x.W, v)
			}
		}
		if distinct && count == int64(h.Len()) {
			h.Range(func(f, v []byte) bool { emit(f, v); return true })
			return
		}
		picked := 0
		h.Random(int(min(count, math.MaxInt)), distinct && count > 1, func(f, v []byte) bool {
			emit(f, v)
			picked++
			return !randomReplyFull(x, picked)
		})
	})
}

// collectionScan is what HSCAN (and the other collections' SCANs) parse
// after the cursor: Redis's scanGenericCommand options.
type collectionScan struct {
	count   int
	pattern []byte
	// err is the error reply the options earn; Redis reports it only
	// once the key is found to hold a collection of the right type.
	err string
}

// parseCollectionScan parses the options from args[from] on.
func parseCollectionScan(args [][]byte, from int) collectionScan {
	o := collectionScan{count: 10}
	for i := from; i < len(args); i += 2 {
		switch {
		case i+1 >= len(args):
			o.err = errSyntax
		case equalFold(args[i], "count"):
			n, ok := ParseInt64(args[i+1])
			switch {
			case !ok:
				o.err = errNotInteger
			case n < 1:
				o.err = errSyntax
			default:
				o.count = int(min(n, math.MaxInt32))
				continue
			}
		case equalFold(args[i], "match"):
			o.pattern = args[i+1]
			if len(o.pattern) == 1 && o.pattern[0] == '*' {
				o.pattern = nil
			}
			continue
		default:
			o.err = errSyntax
		}
		return o
	}
	return o
}

// match reports whether a scanned element passes MATCH.
func (o *collectionScan) match(b []byte) bool { return o.pattern == nil || glob.Match(o.pattern, b) }

// scanCollection is what HSCAN, SSCAN and ZSCAN share (Redis's
// scanGenericCommand on a key): the cursor, checked first, key's value of
// kind (WRONGTYPE, or shared.emptyscan when it is missing), then the
// MATCH/COUNT options' error; scan answers with the scanned elements.
func scanCollection[T datatype.Object](x *Ctx, kind datatype.Kind, scan func(c T, cursor uint64, opts *collectionScan)) {
	args := x.Args
	cursor, ok := parseCursor(args[2])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	opts := parseCollectionScan(args, 3)
	x.View(func(tx *engine.Tx) {
		c, ok := lookupObjectOrReply[T](x, tx, args[1], kind, true, replyEmptyScan)
		if !ok {
			return
		}
		if opts.err != "" {
			x.W.Error(opts.err)
			return
		}
		scan(c, cursor, &opts)
	})
}

// emptyScanReply is Redis's shared.emptyscan, in both protocols.
var emptyScanReply = []byte("*2\r\n$1\r\n0\r\n*0\r\n")

// replyEmptyScan answers a scan of a missing key.
var replyEmptyScan missingKeyReply = func(w *resp.Writer) { w.Raw(emptyScanReply) }

// writeScanCursor writes the head of a scan's reply: a pair whose first
// element is the cursor that continues the scan.
func writeScanCursor(x *Ctx, next uint64) {
	x.W.Array(2)
	x.W.BulkString(strconv.FormatUint(next, 10))
}

func cmdHscan(x *Ctx) {
	scanCollection(x, datatype.KindHash, func(h *datatype.Hash, cursor uint64, opts *collectionScan) {
		var found [][]byte
		// Redis counts a field and its value as two of COUNT's elements.
		next := h.Scan(cursor, (opts.count+1)/2, func(f, v []byte) {
			if opts.match(f) {
				found = append(found, f, v)
			}
		})
		writeScanCursor(x, next)
		x.W.Array(len(found))
		for _, b := range found {
			replyValue(x.W, b)
		}
	})
}
