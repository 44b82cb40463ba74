package commands

import (
	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// listCommands are the list family's rows (Redis's t_list.c); the blocking
// pops are in blocking.go.
var listCommands = []*Spec{
	{Name: "lpush", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyInsert)}, Handler: cmdLpush},
	{Name: "rpush", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyInsert)}, Handler: cmdRpush},
	{Name: "lpushx", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyInsert)}, Handler: cmdLpushx},
	{Name: "rpushx", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyInsert)}, Handler: cmdRpushx},
	{Name: "lpop", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyAccess|KeyDelete)}, Handler: cmdLpop},
	{Name: "rpop", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyAccess|KeyDelete)}, Handler: cmdRpop},
	{Name: "llen", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @list @fast",
		KeySpecs: []KeySpec{valueKey(1, KeyRO)}, Handler: cmdLlen},
	{Name: "lrange", Arity: 4, Flags: FlagReadonly, ACL: "@read @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRO|KeyAccess)}, Handler: cmdLrange},
	{Name: "lindex", Arity: 3, Flags: FlagReadonly, ACL: "@read @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRO|KeyAccess)}, Handler: cmdLindex},
	{Name: "lset", Arity: 4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyUpdate)}, Handler: cmdLset},
	{Name: "linsert", Arity: 5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyInsert)}, Handler: cmdLinsert},
	{Name: "lrem", Arity: 4, Flags: FlagWrite, ACL: "@write @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyDelete)}, Handler: cmdLrem},
	{Name: "ltrim", Arity: 4, Flags: FlagWrite, ACL: "@write @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRW|KeyDelete)}, Handler: cmdLtrim},
	{Name: "lpos", Arity: -3, Flags: FlagReadonly, ACL: "@read @list @slow",
		KeySpecs: []KeySpec{valueKey(1, KeyRO|KeyAccess)}, Handler: cmdLpos},
	{Name: "lmove", Arity: 5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @list @slow",
		KeySpecs: moveKeys, Handler: cmdLmove},
	{Name: "rpoplpush", Arity: 3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @list @slow",
		KeySpecs: moveKeys, Handler: cmdRpoplpush},
	{Name: "lmpop", Arity: -4, Flags: FlagWrite | FlagMovablekeys, ACL: "@write @list @slow",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: KeyNum(0, 1, 1)}},
		Handler:  cmdLmpop},
}

// moveKeys are the key specs of LMOVE and its kin: the source, then the
// destination.
var moveKeys = []KeySpec{valueKey(1, KeyRW|KeyAccess|KeyDelete), valueKey(2, KeyRW|KeyInsert)}

// listLimits is the setting that shapes a list's chunks.
func listLimits(x *Ctx) datatype.ListLimits {
	return datatype.ListLimits{MaxListpackSize: int(x.Settings.Int("list-max-listpack-size"))}
}

// lookupList looks key up as a list (for reading or to change in place);
// ok is false, with WRONGTYPE answered, when it holds another type. A
// missing key gives nil.
func lookupList(x *Ctx, tx *engine.Tx, key []byte, read bool) (l *datatype.List, ok bool) {
	return lookupObject[*datatype.List](x, tx, key, datatype.KindList, read)
}

// lookupListOrReply is lookupList for a command with a fixed answer to a
// missing key (see lookupObjectOrReply).
func lookupListOrReply(x *Ctx, tx *engine.Tx, key []byte, read bool, missing missingKeyReply) (*datatype.List, bool) {
	return lookupObjectOrReply[*datatype.List](x, tx, key, datatype.KindList, read, missing)
}

// listOf is key's list for a blocked client's retry: nil, without a
// reply, when the key is missing or holds another type.
func listOf(tx *engine.Tx, key []byte) *datatype.List {
	obj, err := tx.Object(key, datatype.KindList, false)
	if err != nil || obj == nil {
		return nil
	}
	return obj.(*datatype.List)
}

func cmdLpush(x *Ctx)  { pushGeneric(x, true, false) }
func cmdRpush(x *Ctx)  { pushGeneric(x, false, false) }
func cmdLpushx(x *Ctx) { pushGeneric(x, true, true) }
func cmdRpushx(x *Ctx) { pushGeneric(x, false, true) }

// pushGeneric is Redis's pushGenericCommand: LPUSH, RPUSH and, with xx,
// LPUSHX and RPUSHX, which do nothing to a missing key.
func pushGeneric(x *Ctx, front, xx bool) {
	args, lim := x.Args, listLimits(x)
	x.Update(func(tx *engine.Tx) {
		l, ok := lookupList(x, tx, args[1], false)
		if !ok {
			return
		}
		if l == nil && xx {
			x.W.Int(0)
			return
		}
		created := l == nil
		if created {
			l = datatype.NewList()
		}
		for _, v := range args[2:] {
			l.Push(v, front, lim)
		}
		storeChanged(tx, args[1], l, created)
		x.W.Int(int64(l.Len()))
		tx.Notify(notify.List, pushEvent(front), args[1])
	})
}

func cmdLpop(x *Ctx) { popGeneric(x, "lpop", true) }
func cmdRpop(x *Ctx) { popGeneric(x, "rpop", false) }

// pushEvent and popEvent name the keyspace events of a push or a pop at
// one end of a list.
func pushEvent(front bool) string {
	if front {
		return "lpush"
	}
	return "rpush"
}

func popEvent(front bool) string {
	if front {
		return "lpop"
	}
	return "rpop"
}

// listPopped records elements popped from l, the list under key, as
// Redis's listElementsRemoved: the pop's event, then "del" when it emptied
// the list.
func listPopped(tx *engine.Tx, key []byte, l *datatype.List, front bool) {
	objectChanged(tx, key, l, notify.List, popEvent(front))
}

// popGeneric is Redis's popGenericCommand: LPOP and RPOP, with an
// optional count.
func popGeneric(x *Ctx, name string, front bool) {
	args := x.Args
	if len(args) > 3 {
		x.W.Error("ERR wrong number of arguments for '" + name + "' command")
		return
	}
	count, ok := optionalCount(x)
	if !ok {
		return
	}
	x.Update(func(tx *engine.Tx) {
		l, ok := lookupList(x, tx, args[1], false)
		switch {
		case !ok:
		case l == nil && count >= 0:
			x.W.NullArray()
		case l == nil:
			x.W.Null()
		case count == 0:
			x.W.Array(0)
		case count < 0:
			x.W.Bulk(l.Pop(front))
			listPopped(tx, args[1], l, front)
		default:
			popRange(x, l, int(min(count, int64(l.Len()))), front)
			listPopped(tx, args[1], l, front)
		}
	})
}

// popRange pops n elements from one end and answers them as an array.
func popRange(x *Ctx, l *datatype.List, n int, front bool) {
	x.W.Array(n)
	for i := 0; i < n; i++ {
		x.W.Bulk(l.Pop(front))
	}
}

func cmdLlen(x *Ctx) { replyLen(x, datatype.KindList) }

func listLen(l *datatype.List) int {
	if l == nil {
		return 0
	}
	return l.Len()
}

// listRange turns LRANGE/LTRIM's start and stop (negative from the end)
// into indexes of a list of n elements; start > stop means none.
func listRange(start, stop int64, n int) (int, int) {
	if start < 0 {
		start += int64(n)
	}
	if stop < 0 {
		stop += int64(n)
	}
	if start < 0 {
		start = 0
	}
	if start >= int64(n) || start > stop {
		return 1, 0
	}
	if stop >= int64(n) {
		stop = int64(n) - 1
	}
	return int(start), int(stop)
}

// rangeArgs parses LRANGE's and LTRIM's start and stop.
func rangeArgs(x *Ctx) (start, stop int64, ok bool) {
	if start, ok = intArg(x, 2); ok {
		stop, ok = intArg(x, 3)
	}
	return start, stop, ok
}

func cmdLrange(x *Ctx) {
	args := x.Args
	start, stop, ok := rangeArgs(x)
	if !ok {
		return
	}
	x.View(func(tx *engine.Tx) {
		l, ok := lookupList(x, tx, args[1], true)
		if !ok {
			return
		}
		from, to := listRange(start, stop, listLen(l))
		if from > to {
			x.W.Array(0)
			return
		}
		x.W.Array(to - from + 1)
		l.Range(from, false, func(i int, v []byte) bool {
			x.W.Bulk(v)
			return i < to
		})
	})
}

// listIndex turns an index (negative from the end) into one of a list of
// n elements; false when out of range.
func listIndex(i int64, n int) (int, bool) {
	if i < 0 {
		i += int64(n)
	}
	return int(i), i >= 0 && i < int64(n)
}

func cmdLindex(x *Ctx) {
	args := x.Args
	x.View(func(tx *engine.Tx) {
		l, ok := lookupListOrReply(x, tx, args[1], true, replyNull)
		if !ok {
			return
		}
		idx, ok := intArg(x, 2)
		if !ok {
			return
		}
		if i, in := listIndex(idx, l.Len()); in {
			x.W.Bulk(l.Index(i))
		} else {
			x.W.Null()
		}
	})
}

func cmdLset(x *Ctx) {
	args, lim := x.Args, listLimits(x)
	x.Update(func(tx *engine.Tx) {
		l, ok := lookupListOrReply(x, tx, args[1], false, replyNoKey)
		if !ok {
			return
		}
		idx, ok := intArg(x, 2)
		if !ok {
			return
		}
		i, in := listIndex(idx, l.Len())
		if !in {
			x.W.Error("ERR index out of range")
			return
		}
		l.Set(i, args[3], lim)
		x.W.OK()
		objectChanged(tx, args[1], l, notify.List, "lset")
	})
}

func cmdLinsert(x *Ctx) {
	args, lim := x.Args, listLimits(x)
	var after bool
	switch {
	case equalFold(args[2], "after"):
		after = true
	case equalFold(args[2], "before"):
	default:
		x.W.Error(errSyntax)
		return
	}
	x.Update(func(tx *engine.Tx) {
		l, ok := lookupListOrReply(x, tx, args[1], false, replyZero)
		if !ok {
			return
		}
		at := -1
		l.Range(0, false, func(i int, v []byte) bool {
			if string(v) == string(args[3]) {
				at = i
				return false
			}
			return true
		})
		if at < 0 {
			x.W.Int(-1)
			return
		}
		if after {
			at++
		}
		l.Insert(at, args[4], lim)
		objectChanged(tx, args[1], l, notify.List, "linsert")
		x.W.Int(int64(l.Len()))
	})
}

func cmdLrem(x *Ctx) {
	args := x.Args
	count, ok := intArg(x, 2)
	if !ok {
		return
	}
	x.Update(func(tx *engine.Tx) {
		l, ok := lookupListOrReply(x, tx, args[1], false, replyZero)
		if !ok {
			return
		}
		n := int64(l.Len())
		removed := l.Remove(args[3], int(max(min(count, n), -n)))
		if removed > 0 {
			objectChanged(tx, args[1], l, notify.List, "lrem")
		}
		x.W.Int(int64(removed))
	})
}

func cmdLtrim(x *Ctx) {
	args := x.Args
	start, stop, ok := rangeArgs(x)
	if !ok {
		return
	}
	x.Update(func(tx *engine.Tx) {
		l, ok := lookupList(x, tx, args[1], false)
		if !ok {
			return
		}
		if l != nil {
			from, to := listRange(start, stop, l.Len())
			l.Trim(from, to)
			objectChanged(tx, args[1], l, notify.List, "ltrim")
		}
		x.W.OK()
	})
}

// lposOptions are LPOS's RANK, COUNT and MAXLEN (count -1: not given).
type lposOptions struct {
	rank, count, maxlen int64
}

// parseLpos parses LPOS's options in Redis's order and with its errors.
func parseLpos(x *Ctx) (lposOptions, bool) {
	o := lposOptions{rank: 1, count: -1}
	args := x.Args
	for i := 3; i < len(args); i += 2 {
		if i+1 >= len(args) {
			x.W.Error(errSyntax)
			return o, false
		}
		n, ok := ParseInt64(args[i+1])
		switch {
		case equalFold(args[i], "rank"):
			if !ok {
				x.W.Error(errNotInteger)
				return o, false
			}
			if n == 0 {
				x.W.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... " +
					"or use negative to start from the end of the list")
				return o, false
			}
			o.rank = n
		case equalFold(args[i], "count"):
			if !ok || n < 0 {
				x.W.Error("ERR COUNT can't be negative")
				return o, false
			}
			o.count = n
		case equalFold(args[i], "maxlen"):
			if !ok || n < 0 {
				x.W.Error("ERR MAXLEN can't be negative")
				return o, false
			}
			o.maxlen = n
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

func cmdLpos(x *Ctx) {
	args := x.Args
	o, ok := parseLpos(x)
	if !ok {
		return
	}
	x.View(func(tx *engine.Tx) {
		l, ok := lookupList(x, tx, args[1], true)
		switch {
		case !ok:
			return
		case l == nil && o.count >= 0:
			x.W.Array(0)
			return
		case l == nil:
			x.W.Null()
			return
		}
		var found []int64
		want := o.count
		if want < 0 {
			want = 1
		}
		skip := o.rank - 1
		from, reverse := 0, o.rank < 0
		if reverse {
			// -LONG_MIN stays negative in Redis: the first match counts.
			from, skip = l.Len()-1, -o.rank-1
			if o.rank == -1<<63 {
				skip = 0
			}
		}
		var seen int64
		l.Range(from, reverse, func(i int, v []byte) bool {
			if o.maxlen != 0 && seen >= o.maxlen {
				return false
			}
			seen++
			if string(v) != string(args[2]) {
				return true
			}
			if skip > 0 {
				skip--
				return true
			}
			found = append(found, int64(i))
			return want == 0 || int64(len(found)) < want
		})
		if o.count < 0 {
			if len(found) == 0 {
				x.W.Null()
			} else {
				x.W.Int(found[0])
			}
			return
		}
		x.W.Array(len(found))
		for _, i := range found {
			x.W.Int(i)
		}
	})
}

// parseEnd parses LEFT or RIGHT: true for LEFT (the head).
func parseEnd(arg []byte) (front, ok bool) {
	switch {
	case equalFold(arg, "left"):
		return true, true
	case equalFold(arg, "right"):
		return false, true
	}
	return false, false
}

func cmdLmove(x *Ctx) {
	from, ok1 := parseEnd(x.Args[3])
	to, ok2 := parseEnd(x.Args[4])
	if !ok1 || !ok2 {
		x.W.Error(errSyntax)
		return
	}
	lmoveGeneric(x, from, to)
}

func cmdRpoplpush(x *Ctx) { lmoveGeneric(x, false, true) }

// lmoveGeneric is Redis's lmoveGenericCommand: pop from the source's end
// from, push at the destination's end to, answer the element.
func lmoveGeneric(x *Ctx, from, to bool) {
	args, lim := x.Args, listLimits(x)
	x.Update(func(tx *engine.Tx) {
		src, ok := lookupListOrReply(x, tx, args[1], false, replyNull)
		if !ok {
			return
		}
		if _, ok := lookupList(x, tx, args[2], false); !ok {
			return
		}
		if _, err := moveElement(tx, src, args[1], args[2], from, to, lim, x.W.Bulk); err != nil {
			x.W.Error(err.Error())
		}
	})
}

// moveElement pops from src (the list under srcKey) and pushes onto the
// list under dstKey, created if missing; ErrWrongType, with nothing
// moved, when dstKey holds another type. The two keys may be one (a
// rotation, which never empties the list). The events are Redis's
// lmoveGenericCommand's: the push on the destination, then the pop on the
// source and "del" when that emptied it; reply, when not nil, answers the
// element between the two, where Redis does.
func moveElement(tx *engine.Tx, src *datatype.List, srcKey, dstKey []byte, from, to bool, lim datatype.ListLimits, reply func([]byte)) ([]byte, error) {
	obj, err := tx.Object(dstKey, datatype.KindList, false)
	if err != nil {
		return nil, err
	}
	v := src.Pop(from)
	created := obj == nil
	var dst *datatype.List
	if created {
		dst = datatype.NewList()
	} else {
		dst = obj.(*datatype.List)
	}
	dst.Push(v, to, lim)
	storeChanged(tx, dstKey, dst, created)
	tx.Notify(notify.List, pushEvent(to), dstKey)
	if reply != nil {
		reply(v)
	}
	listPopped(tx, srcKey, src, from)
	return v, nil
}

// mpopArgs are LMPOP's and BLMPOP's parsed arguments: the keys, the end
// and the count (1 when not given).
type mpopArgs struct {
	keys  [][]byte
	front bool
	count int64
}

// parseMpop parses LMPOP's and BLMPOP's arguments from argument i (see
// parseMultiPop).
func parseMpop(x *Ctx, i int) (mpopArgs, bool) {
	keys, right, count, ok := parseMultiPop(x, i, "left", "right")
	return mpopArgs{keys: keys, front: !right, count: count}, ok
}

func cmdLmpop(x *Ctx) {
	a, ok := parseMpop(x, 1)
	if !ok {
		return
	}
	x.Update(func(tx *engine.Tx) {
		for _, k := range a.keys {
			l, ok := lookupList(x, tx, k, false)
			if !ok {
				return
			}
			if l != nil {
				replyMpop(x, k, popMany(l, a))
				listPopped(tx, k, l, a.front)
				return
			}
		}
		x.W.NullArray()
	})
}

// popMany pops up to a.count elements of l; the caller records the change
// (listPopped) after its reply, as Redis does.
func popMany(l *datatype.List, a mpopArgs) [][]byte {
	n := int(min(a.count, int64(l.Len())))
	out := make([][]byte, n)
	for i := range out {
		out[i] = l.Pop(a.front)
	}
	return out
}

// replyMpop answers LMPOP's [key, [element ...]].
func replyMpop(x *Ctx, key []byte, vals [][]byte) {
	x.W.Array(2)
	x.W.Bulk(key)
	x.W.Array(len(vals))
	for _, v := range vals {
		x.W.Bulk(v)
	}
}
