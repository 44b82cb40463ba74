package commands

import (
	"math"
	"math/big"
	"time"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// KeyBlocking is what the blocking commands (BLPOP and its kin, BZPOPMIN
// and its kin; later XREAD) use to wait for keys: the server's registry
// of blocked clients, woken by the engine when a key they wait on is
// written.
type KeyBlocking interface {
	// BlockOnKeys waits for one of keys, in the connection's database, to be
	// served: each time a write touches one of them, serve runs under the
	// engine lock with that key, clients blocked on a key being tried in
	// the order they blocked, and returns true when it took what it
	// waited for (it must not write the reply; the caller does): then it
	// returns UnblockedReady. Otherwise it returns why the wait ended:
	// the timeout (0: none) passed, CLIENT UNBLOCK, or the connection
	// closed; it answers nothing itself. The client counts as blocked
	// meanwhile (Blocker: INFO, CLIENT LIST, CLIENT UNBLOCK). The caller
	// asks CanBlock first.
	BlockOnKeys(keys [][]byte, timeout time.Duration, serve func(tx *engine.Tx, key []byte) bool) Unblocked
	// CanBlock is false where a command must not block (inside
	// MULTI/EXEC or a script), which then answers as if it had timed out.
	CanBlock() bool
}

// blockingCommands are the blocking pops of lists and sorted sets
// (Redis's t_list.c, t_zset.c and blocked.c).
var blockingCommands = []*Spec{
	{Name: "blpop", Arity: -3, Flags: FlagWrite | FlagNoscript | FlagBlocking, ACL: "@write @list @slow @blocking",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(-2, 1, 0)}},
		Handler:  cmdBlpop},
	{Name: "brpop", Arity: -3, Flags: FlagWrite | FlagNoscript | FlagBlocking, ACL: "@write @list @slow @blocking",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(-2, 1, 0)}},
		Handler:  cmdBrpop},
	{Name: "blmove", Arity: 6, Flags: FlagWrite | FlagDenyoom | FlagNoscript | FlagBlocking, ACL: "@write @list @slow @blocking",
		KeySpecs: moveKeys, Handler: cmdBlmove},
	{Name: "brpoplpush", Arity: 4, Flags: FlagWrite | FlagDenyoom | FlagNoscript | FlagBlocking, ACL: "@write @list @slow @blocking",
		KeySpecs: moveKeys, Handler: cmdBrpoplpush},
	{Name: "blmpop", Arity: -5, Flags: FlagWrite | FlagBlocking | FlagMovablekeys, ACL: "@write @list @slow @blocking",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(2), Find: KeyNum(0, 1, 1)}},
		Handler:  cmdBlmpop},
	{Name: "bzpopmin", Arity: -3, Flags: FlagWrite | FlagNoscript | FlagFast | FlagBlocking, ACL: "@write @sortedset @fast @blocking",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(-2, 1, 0)}},
		Handler:  cmdBzpopmin},
	{Name: "bzpopmax", Arity: -3, Flags: FlagWrite | FlagNoscript | FlagFast | FlagBlocking, ACL: "@write @sortedset @fast @blocking",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(-2, 1, 0)}},
		Handler:  cmdBzpopmax},
	{Name: "bzmpop", Arity: -5, Flags: FlagWrite | FlagBlocking | FlagMovablekeys, ACL: "@write @sortedset @slow @blocking",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(2), Find: KeyNum(0, 1, 1)}},
		Handler:  cmdBzmpop},
}

// timeoutArg parses a blocking command's timeout in seconds, a float, the
// way Redis's getTimeoutFromObjectOrReply does: the milliseconds are
// rounded up (so 0.0001 waits 1 ms, -0.0001 forever), 0 waits forever, and a value whose milliseconds do not fit
// in a long long (inf, 1e400) is reported as negative, as the C cast
// makes it. The wait is capped at what a time.Duration holds (292 years).
func timeoutArg(x *Ctx, i int) (time.Duration, bool) {
	f, ok := parseLongDouble(x.Args[i])
	if !ok {
		x.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	ms := new(big.Float).Mul(f, big.NewFloat(1000))
	if ms.IsInf() || ms.Cmp(big.NewFloat(math.MaxInt64)) >= 0 || ms.Sign() < 0 && ms.Cmp(big.NewFloat(-1)) <= 0 {
		x.W.Error("ERR timeout is negative")
		return 0, false
	}
	n, acc := ms.Int64()
	if acc == big.Below {
		n++ // rounded up: a timeout under a millisecond still expires
	}
	if n > math.MaxInt64/int64(time.Millisecond) {
		n = math.MaxInt64 / int64(time.Millisecond)
	}
	return time.Duration(n) * time.Millisecond, true
}

func cmdBlpop(x *Ctx) { blockingPop(x, true) }
func cmdBrpop(x *Ctx) { blockingPop(x, false) }

// blockingPop is Redis's blockingPopGenericCommand: BLPOP and BRPOP pop
// from the first non-empty list of their keys, or block until a push
// makes one non-empty, and answer [key, element].
func blockingPop(x *Ctx, front bool) {
	args := x.Args
	keys := args[1 : len(args)-1]
	timeout, ok := timeoutArg(x, len(args)-1)
	if !ok {
		return
	}
	var key, val []byte
	done := false
	x.Update(func(tx *engine.Tx) {
		for _, k := range keys {
			l, ok := lookupList(x, tx, k, false)
			if !ok {
				done = true
				return
			}
			if l != nil {
				key, val, done = k, l.Pop(front), true
				replyKeyValue(x, key, val)
				listPopped(tx, k, l, front)
				return
			}
		}
	})
	if done {
		return
	}
	blockThenAnswer(x, keys, timeout, func(tx *engine.Tx, k []byte) bool {
		l := listOf(tx, k)
		if l == nil {
			return false
		}
		key, val = append([]byte(nil), k...), l.Pop(front)
		listPopped(tx, k, l, front)
		return true
	}, func() { replyKeyValue(x, key, val) })
}

// blockThenAnswer blocks on keys until serve takes what it waits for,
// then answers with served. A client that may not block, or whose wait
// ends unserved, gets a null array (or Redis's UNBLOCKED error).
func blockThenAnswer(x *Ctx, keys [][]byte, timeout time.Duration, serve func(tx *engine.Tx, key []byte) bool, served func()) {
	if !x.KeyBlocking.CanBlock() {
		x.W.NullArray()
		return
	}
	if why := x.KeyBlocking.BlockOnKeys(keys, timeout, serve); why == UnblockedReady {
		served()
	} else {
		replyUnserved(x, why, x.W.NullArray)
	}
}

// replyUnserved answers a blocking command whose wait ended without
// what it waited for: null (timeout, CLIENT UNBLOCK TIMEOUT), Redis's
// UNBLOCKED error, or nothing for a closed connection.
func replyUnserved(x *Ctx, why Unblocked, null func()) {
	switch why {
	case UnblockedError:
		x.W.Error(errUnblocked)
	case UnblockedTimeout:
		null()
	}
}

func replyKeyValue(x *Ctx, key, val []byte) {
	x.W.Array(2)
	x.W.Bulk(key)
	x.W.Bulk(val)
}

func cmdBlmove(x *Ctx) {
	from, ok1 := parseEnd(x.Args[3])
	to, ok2 := parseEnd(x.Args[4])
	if !ok1 || !ok2 {
		x.W.Error(errSyntax)
		return
	}
	blmoveGeneric(x, from, to, 5)
}

func cmdBrpoplpush(x *Ctx) { blmoveGeneric(x, false, true, 3) }

// blmoveGeneric is Redis's blmoveGenericCommand: LMOVE when the source
// has elements, else block until it has, then move one. A destination of
// another type answers WRONGTYPE, also to a client it unblocks.
func blmoveGeneric(x *Ctx, from, to bool, timeoutArgIdx int) {
	args, lim := x.Args, listLimits(x)
	timeout, ok := timeoutArg(x, timeoutArgIdx)
	if !ok {
		return
	}
	done := false
	x.Update(func(tx *engine.Tx) {
		src, ok := lookupList(x, tx, args[1], false)
		if !ok || src == nil {
			done = !ok
			return
		}
		done = true
		if _, err := moveElement(tx, src, args[1], args[2], from, to, lim, x.W.Bulk); err != nil {
			x.W.Error(err.Error())
		}
	})
	if done {
		return
	}
	if !x.KeyBlocking.CanBlock() {
		x.W.Null()
		return
	}
	src, dst := append([]byte(nil), args[1]...), append([]byte(nil), args[2]...)
	var val []byte
	var moveErr error
	why := x.KeyBlocking.BlockOnKeys(args[1:2], timeout, func(tx *engine.Tx, _ []byte) bool {
		l := listOf(tx, src)
		if l == nil {
			return false
		}
		val, moveErr = moveElement(tx, l, src, dst, from, to, lim, nil)
		return true
	})
	switch {
	case why != UnblockedReady:
		// Redis 7.0 answers a null array here, unlike the null of MULTI.
		replyUnserved(x, why, x.W.NullArray)
	case moveErr != nil:
		x.W.Error(moveErr.Error())
	default:
		x.W.Bulk(val)
	}
}

func cmdBlmpop(x *Ctx) {
	// Redis 7.0 checks the timeout after the other arguments here.
	a, ok := parseMpop(x, 2)
	if !ok {
		return
	}
	timeout, ok := timeoutArg(x, 1)
	if !ok {
		return
	}
	done := false
	x.Update(func(tx *engine.Tx) {
		for _, k := range a.keys {
			l, ok := lookupList(x, tx, k, false)
			if !ok {
				done = true
				return
			}
			if l != nil {
				done = true
				replyMpop(x, k, popMany(l, a))
				listPopped(tx, k, l, a.front)
				return
			}
		}
	})
	if done {
		return
	}
	var key []byte
	var vals [][]byte
	blockThenAnswer(x, a.keys, timeout, func(tx *engine.Tx, k []byte) bool {
		l := listOf(tx, k)
		if l == nil {
			return false
		}
		key, vals = append([]byte(nil), k...), popMany(l, a)
		listPopped(tx, k, l, a.front)
		return true
	}, func() { replyMpop(x, key, vals) })
}

func cmdBzpopmin(x *Ctx) { bzpopGeneric(x, false) }
func cmdBzpopmax(x *Ctx) { bzpopGeneric(x, true) }

// bzpopGeneric is BZPOPMIN and BZPOPMAX: key [key ...] timeout, answered
// [key, member, score].
func bzpopGeneric(x *Ctx, maxSide bool) {
	args := x.Args
	timeout, ok := timeoutArg(x, len(args)-1)
	if !ok {
		return
	}
	blockingZpop(x, args[1:len(args)-1], maxSide, -1, false, timeout)
}

func cmdBzmpop(x *Ctx) {
	// As BLMPOP, the timeout is checked after the other arguments.
	a, ok := parseZmpop(x, 2)
	if !ok {
		return
	}
	timeout, ok := timeoutArg(x, 1)
	if !ok {
		return
	}
	blockingZpop(x, a.keys, a.maxSide, a.count, true, timeout)
}

// blockingZpop is Redis's blockingGenericZpopCommand: ZPOPMIN/ZPOPMAX
// (count -1: one member) of the first non-empty sorted set of keys, or
// block until a write makes one non-empty. The reply carries the key
// first, with nested pairs for BZMPOP.
func blockingZpop(x *Ctx, keys [][]byte, maxSide bool, count int64, nested bool, timeout time.Duration) {
	done := false
	x.Update(func(tx *engine.Tx) {
		key, z, ok := firstZSet(x, tx, keys)
		done = !ok || z != nil
		if z != nil {
			zpopReply(x, tx, key, z, maxSide, count, true, nested)
		}
	})
	if done {
		return
	}
	var key []byte
	var entries []datatype.ZEntry
	blockThenAnswer(x, keys, timeout, func(tx *engine.Tx, k []byte) bool {
		z := zsetOf(tx, k)
		if z == nil {
			return false
		}
		key, entries = append([]byte(nil), k...), zpopEntries(z, maxSide, count)
		tx.Notify(notify.ZSet, zpopEvent(maxSide), k)
		zsetPopped(tx, k, z)
		return true
	}, func() { replyZpop(x, key, entries, true, nested, func() {}) })
}
