package commands

import (
	"math/rand/v2"
	"slices"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// setCommands are the set family's rows (Redis's t_set.c).
var setCommands = []*Spec{
	{Name: "sadd", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @set @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyInsert, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSadd},
	{Name: "srem", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@write @set @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSrem},
	{Name: "smembers", Arity: 2, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSinter},
	{Name: "sismember", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @set @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSismember},
	{Name: "smismember", Arity: -3, Flags: FlagReadonly | FlagFast, ACL: "@read @set @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSmismember},
	{Name: "scard", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @set @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdScard},
	{Name: "spop", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @set @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSpop},
	{Name: "srandmember", Arity: -2, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSrandmember},
	{Name: "smove", Arity: 4, Flags: FlagWrite | FlagFast, ACL: "@write @set @fast",
		KeySpecs: []KeySpec{
			{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)},
			{Flags: KeyRW | KeyInsert, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdSmove},
	{Name: "sinter", Arity: -2, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdSinter},
	{Name: "sintercard", Arity: -3, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: KeyNum(0, 1, 1)}}, Handler: cmdSintercard},
	{Name: "sinterstore", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @set @slow",
		KeySpecs: storeKeySpecs(KeyRW | KeyUpdate), Handler: cmdSinterstore},
	{Name: "sunion", Arity: -2, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdSunion},
	{Name: "sunionstore", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @set @slow",
		KeySpecs: storeKeySpecs(KeyOW | KeyUpdate), Handler: cmdSunionstore},
	{Name: "sdiff", Arity: -2, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdSdiff},
	{Name: "sdiffstore", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @set @slow",
		KeySpecs: storeKeySpecs(KeyOW | KeyUpdate), Handler: cmdSdiffstore},
	{Name: "sscan", Arity: -3, Flags: FlagReadonly, ACL: "@read @set @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSscan},
}

// storeKeySpecs are the key specs of the *STORE commands: the destination
// (its old value is replaced unread), then the source sets.
func storeKeySpecs(dst KeyFlags) []KeySpec {
	return []KeySpec{
		{Flags: dst, Begin: Index(1), Find: Range(0, 1, 0)},
		{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(2), Find: Range(-1, 1, 0)},
	}
}

// setLimits is the setting that decides when a set of integers stops
// being an intset.
func setLimits(x *Ctx) datatype.SetLimits {
	return datatype.SetLimits{MaxIntsetEntries: int(x.Settings.Int("set-max-intset-entries"))}
}

// lookupSet looks key up as a set: nil when missing; ok is false, with
// WRONGTYPE answered, when it holds another type. read counts a keyspace
// hit or miss (Redis's lookupKeyRead against lookupKeyWrite).
func lookupSet(x *Ctx, tx *engine.Tx, key []byte, read bool) (*datatype.Set, bool) {
	return lookupObject[*datatype.Set](x, tx, key, datatype.KindSet, read)
}

// memberList collects members in one buffer (Range's slices are only
// valid during the call).
type memberList struct {
	buf  []byte
	ends []int
}

func (l *memberList) add(m []byte) {
	l.buf = append(l.buf, m...)
	l.ends = append(l.ends, len(l.buf))
}

func (l *memberList) len() int { return len(l.ends) }

func (l *memberList) at(i int) []byte {
	start := 0
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.buf[start:l.ends[i]]
}

// write answers the members as an array (or a RESP3 set).
func (l *memberList) write(x *Ctx, asSet bool) {
	if asSet {
		x.W.Set(l.len())
	} else {
		x.W.Array(l.len())
	}
	for i := range l.ends {
		replyValue(x.W, l.at(i))
	}
}

// writeSet answers every member of s, in its iteration order.
func writeSet(x *Ctx, s *datatype.Set) {
	x.W.Set(s.Len())
	s.Range(func(m []byte) bool {
		replyValue(x.W, m)
		return true
	})
}

// setChanged records a change in place of the set under key and publishes
// event, then "del" when the change emptied the set (which deletes it), in
// Redis's order.
func setChanged(tx *engine.Tx, key []byte, s *datatype.Set, event string) {
	objectChanged(tx, key, s, notify.Set, event)
}

func cmdSadd(x *Ctx) {
	args := x.Args
	lim := setLimits(x)
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, args[1], false)
		if !ok {
			return
		}
		created := s == nil
		if created {
			s = datatype.NewSetFor(args[2])
		}
		added := 0
		for _, m := range args[2:] {
			if s.Add(m, lim) {
				added++
			}
		}
		if created {
			tx.SetObject(args[1], s, 0)
		} else if added > 0 {
			tx.Modified(args[1])
		}
		if added > 0 {
			tx.Notify(notify.Set, "sadd", args[1])
		}
		x.W.Int(int64(added))
	})
}

func cmdSrem(x *Ctx) {
	removeMembers(x, datatype.KindSet, notify.Set, "srem", (*datatype.Set).Remove)
}

func cmdSismember(x *Ctx) {
	x.View(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, x.Args[1], true)
		if ok {
			x.W.Int(boolInt(s != nil && s.Has(x.Args[2])))
		}
	})
}

func cmdSmismember(x *Ctx) {
	members := x.Args[2:]
	x.View(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, x.Args[1], true)
		if !ok {
			return
		}
		x.W.Array(len(members))
		for _, m := range members {
			x.W.Int(boolInt(s != nil && s.Has(m)))
		}
	})
}

func cmdScard(x *Ctx) { replyLen(x, datatype.KindSet) }

func cmdSpop(x *Ctx) {
	args := x.Args
	switch {
	case len(args) == 3:
		spopWithCount(x)
		return
	case len(args) > 3:
		x.W.Error(errSyntax)
		return
	}
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, args[1], false)
		switch {
		case !ok:
		case s == nil:
			x.W.Null()
		default:
			m := s.AppendRandom(nil)
			s.Remove(m)
			setChanged(tx, args[1], s, "spop")
			x.W.Bulk(m)
		}
	})
}

// spopMoveStrategyMul is Redis's SPOP_MOVE_STRATEGY_MUL: when fewer than
// count/5 members would remain, SPOP picks the ones that stay instead.
const spopMoveStrategyMul = 5

// spopWithCount is Redis's spopWithCountCommand, with its three cases.
func spopWithCount(x *Ctx) {
	args := x.Args
	n, ok := positiveArg(x, 2)
	if !ok {
		return
	}
	count := uint64(n)
	lim := setLimits(x)
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, args[1], false)
		switch {
		case !ok:
			return
		case s == nil || count == 0:
			x.W.Set(0)
			return
		}
		size := uint64(s.Len())
		// Case 1: the whole set, answered as SUNION of it answers.
		if count >= size {
			writeSet(x, unionDiff([]*datatype.Set{s}, false, lim))
			tx.Delete(args[1])
			tx.Notify(notify.Set, "spop", args[1])
			tx.Notify(notify.Generic, "del", args[1])
			return
		}
		x.W.Set(int(count))
		remaining := size - count
		var buf []byte
		if remaining*spopMoveStrategyMul > count {
			// Case 2: few members asked for: pop them one by one.
			for range count {
				buf = s.AppendRandom(buf[:0])
				replyValue(x.W, buf)
				s.Remove(buf)
			}
		} else {
			// Case 3: most of the set: move the members that remain to a
			// new set (made as SADD would make it, so it may be an intset
			// again) and answer what is left in the old one.
			var kept *datatype.Set
			for range remaining {
				buf = s.AppendRandom(buf[:0])
				if kept == nil {
					kept = datatype.NewSetFor(buf)
				}
				kept.Add(buf, lim)
				s.Remove(buf)
			}
			s.Range(func(m []byte) bool {
				replyValue(x.W, m)
				return true
			})
			*s = *kept
		}
		setChanged(tx, args[1], s, "spop")
	})
}

// srandmemberSubStrategyMul is Redis's SRANDMEMBER_SUB_STRATEGY_MUL: when
// count is more than a third of the set, SRANDMEMBER removes random
// members from a copy instead of picking them.
const srandmemberSubStrategyMul = 3

func cmdSrandmember(x *Ctx) {
	args := x.Args
	switch {
	case len(args) == 3:
		srandmemberWithCount(x)
		return
	case len(args) > 3:
		x.W.Error(errSyntax)
		return
	}
	x.View(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, args[1], true)
		switch {
		case !ok:
		case s == nil:
			x.W.Null()
		default:
			x.W.Bulk(s.AppendRandom(nil))
		}
	})
}

// srandmemberWithCount is Redis's srandmemberWithCountCommand, with its
// four cases.
func srandmemberWithCount(x *Ctx) {
	args := x.Args
	n, ok := randCountArg(x)
	if !ok {
		return
	}
	unique, count := n >= 0, uint64(n)
	if !unique {
		count = uint64(-n)
	}
	x.View(func(tx *engine.Tx) {
		s, ok := lookupSet(x, tx, args[1], true)
		switch {
		case !ok:
			return
		case s == nil || count == 0:
			x.W.Array(0)
			return
		}
		size := uint64(s.Len())
		switch {
		case !unique || count == 1:
			// Case 1: repeats allowed: count independent picks.
			x.W.Array(int(count))
			// A huge count is cut at maxRandomReply, as HRANDFIELD's.
			var buf []byte
			for picked := 1; uint64(picked) <= count; picked++ {
				buf = s.AppendRandom(buf[:0])
				replyValue(x.W, buf)
				if randomReplyFull(x, picked) {
					return
				}
			}
		case count >= size:
			// Case 2: the whole set.
			x.W.Array(int(size))
			s.Range(func(m []byte) bool {
				replyValue(x.W, m)
				return true
			})
		case count*srandmemberSubStrategyMul > size:
			// Case 3: copy the set and drop random members from the copy.
			var all memberList
			s.Range(func(m []byte) bool { all.add(m); return true })
			order := make([]int, all.len())
			for i := range order {
				order[i] = i
			}
			for len(order) > int(count) {
				i := rand.IntN(len(order))
				order[i] = order[len(order)-1]
				order = order[:len(order)-1]
			}
			x.W.Array(len(order))
			for _, i := range order {
				replyValue(x.W, all.at(i))
			}
		default:
			// Case 4: pick random members until count distinct ones.
			var picked memberList
			seen := make(map[string]struct{}, count)
			var buf []byte
			for uint64(picked.len()) < count {
				buf = s.AppendRandom(buf[:0])
				if _, dup := seen[string(buf)]; !dup {
					seen[string(buf)] = struct{}{}
					picked.add(buf)
				}
			}
			picked.write(x, false)
		}
	})
}

func cmdSmove(x *Ctx) {
	args := x.Args
	srcKey, dstKey, member := args[1], args[2], args[3]
	lim := setLimits(x)
	x.Update(func(tx *engine.Tx) {
		src, srcOK := lookupSet(x, tx, srcKey, false)
		if !srcOK {
			return
		}
		if src == nil {
			x.W.Int(0)
			return
		}
		dst, ok := lookupSet(x, tx, dstKey, false)
		if !ok {
			return
		}
		if src == dst {
			x.W.Int(boolInt(src.Has(member)))
			return
		}
		if !src.Remove(member) {
			x.W.Int(0)
			return
		}
		setChanged(tx, srcKey, src, "srem")
		if dst == nil {
			dst = datatype.NewSetFor(member)
			dst.Add(member, lim)
			tx.SetObject(dstKey, dst, 0)
			tx.Notify(notify.Set, "sadd", dstKey)
		} else if dst.Add(member, lim) {
			tx.Modified(dstKey)
			tx.Notify(notify.Set, "sadd", dstKey)
		}
		x.W.Int(1)
	})
}

// lookupSets looks every key up as a set (nil for a missing one); ok is
// false, with WRONGTYPE answered, when one holds another type, whatever
// comes before it.
func lookupSets(x *Ctx, tx *engine.Tx, keys [][]byte, read bool) (sets []*datatype.Set, missing int, ok bool) {
	sets = make([]*datatype.Set, len(keys))
	for i, k := range keys {
		s, ok := lookupSet(x, tx, k, read)
		if !ok {
			return nil, 0, false
		}
		if s == nil {
			missing++
		}
		sets[i] = s
	}
	return sets, missing, true
}

func cmdSinter(x *Ctx) {
	x.View(func(tx *engine.Tx) { sinter(x, tx, x.Args[1:], nil, false, 0) })
}

func cmdSinterstore(x *Ctx) {
	x.Update(func(tx *engine.Tx) { sinter(x, tx, x.Args[2:], x.Args[1], false, 0) })
}

func cmdSintercard(x *Ctx) {
	args := x.Args
	const errNumkeys = "ERR numkeys should be greater than 0"
	numkeys, ok := ParseInt64(args[1])
	switch {
	case !ok || numkeys < 1:
		x.W.Error(errNumkeys)
		return
	case numkeys > int64(len(args)-2):
		x.W.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	limit := int64(0)
	for i := 2 + int(numkeys); i < len(args); i++ {
		if !equalFold(args[i], "limit") || i == len(args)-1 {
			x.W.Error(errSyntax)
			return
		}
		i++
		n, ok := ParseInt64(args[i])
		if !ok || n < 0 {
			x.W.Error("ERR LIMIT can't be negative")
			return
		}
		limit = n
	}
	x.View(func(tx *engine.Tx) { sinter(x, tx, args[2:2+numkeys], nil, true, limit) })
}

// sinter is Redis's sinterGenericCommand: SINTER and SMEMBERS answer the
// intersection, SINTERSTORE stores it under dst, SINTERCARD (cardOnly)
// counts it up to limit (0: no limit). It walks the smallest set (the
// first of the smallest, as Redis's sort keeps equal ones in order), so an
// intset there gives ascending order.
func sinter(x *Ctx, tx *engine.Tx, keys [][]byte, dst []byte, cardOnly bool, limit int64) {
	sets, missing, ok := lookupSets(x, tx, keys, dst == nil)
	if !ok {
		return
	}
	var result *datatype.Set
	if dst != nil {
		result = datatype.NewSet()
	}
	var out memberList
	if missing == 0 {
		slices.SortStableFunc(sets, func(a, b *datatype.Set) int { return a.Len() - b.Len() })
		lim := setLimits(x)
		card := int64(0)
		sets[0].Range(func(m []byte) bool {
			for _, other := range sets[1:] {
				if other != sets[0] && !other.Has(m) {
					return true
				}
			}
			switch {
			case cardOnly:
				card++
				return limit == 0 || card < limit
			case dst != nil:
				result.Add(m, lim)
			default:
				out.add(m)
			}
			return true
		})
		if cardOnly {
			x.W.Int(card)
			return
		}
	}
	switch {
	case cardOnly:
		x.W.Int(0)
	case dst != nil:
		storeResult(x, tx, dst, result, "sinterstore")
	default:
		out.write(x, true)
	}
}

// storeResult stores a *STORE command's result under dst (deleting dst
// when it is empty) and answers its size.
func storeResult(x *Ctx, tx *engine.Tx, dst []byte, result *datatype.Set, event string) {
	if result.Len() == 0 {
		if tx.Delete(dst) {
			tx.Notify(notify.Generic, "del", dst)
		}
		x.W.Int(0)
		return
	}
	tx.SetObject(dst, result, 0)
	tx.Notify(notify.Set, event, dst)
	x.W.Int(int64(result.Len()))
}

func cmdSunion(x *Ctx) { sunionDiff(x, x.Args[1:], nil, false) }

func cmdSunionstore(x *Ctx) { sunionDiff(x, x.Args[2:], x.Args[1], false) }

func cmdSdiff(x *Ctx) { sunionDiff(x, x.Args[1:], nil, true) }

func cmdSdiffstore(x *Ctx) { sunionDiff(x, x.Args[2:], x.Args[1], true) }

// sunionDiff runs SUNION, SDIFF and their *STORE forms.
func sunionDiff(x *Ctx, keys [][]byte, dst []byte, diff bool) {
	lim := setLimits(x)
	run := func(tx *engine.Tx) {
		sets, _, ok := lookupSets(x, tx, keys, dst == nil)
		if !ok {
			return
		}
		result := unionDiff(sets, diff, lim)
		if dst != nil {
			event := "sunionstore"
			if diff {
				event = "sdiffstore"
			}
			storeResult(x, tx, dst, result, event)
			return
		}
		writeSet(x, result)
	}
	if dst != nil {
		x.Update(run)
	} else {
		x.View(run)
	}
}

// unionDiff is the core of Redis's sunionDiffGenericCommand: the result
// is built in a set that starts as an intset, so it is answered in
// ascending order while it stays one. For SDIFF it picks Redis's
// algorithm by the same estimate, since the two can leave the result in
// different encodings (the second adds all of the first set before
// removing). A nil set is a missing key.
func unionDiff(sets []*datatype.Set, diff bool, lim datatype.SetLimits) *datatype.Set {
	result := datatype.NewSet()
	addAll := func(s *datatype.Set) {
		s.Range(func(m []byte) bool { result.Add(m, lim); return true })
	}
	if !diff {
		for _, s := range sets {
			if s != nil {
				addAll(s)
			}
		}
		return result
	}
	first := sets[0]
	if first == nil || slices.Contains(sets[1:], first) {
		return result
	}
	oneWork, twoWork := 0, 0
	for _, s := range sets {
		if s != nil {
			oneWork += first.Len()
			twoWork += s.Len()
		}
	}
	if oneWork/2 <= twoWork {
		first.Range(func(m []byte) bool {
			for _, s := range sets[1:] {
				if s != nil && s.Has(m) {
					return true
				}
			}
			result.Add(m, lim)
			return true
		})
		return result
	}
	addAll(first)
	for _, s := range sets[1:] {
		if result.Len() == 0 {
			break
		}
		if s != nil {
			s.Range(func(m []byte) bool { result.Remove(m); return true })
		}
	}
	return result
}

func cmdSscan(x *Ctx) {
	scanCollection(x, datatype.KindSet, func(s *datatype.Set, cursor uint64, opts *collectionScan) {
		var found memberList
		next := s.Scan(cursor, opts.count, func(m []byte) {
			if opts.match(m) {
				found.add(m)
			}
		})
		writeScanCursor(x, next)
		found.write(x, false)
	})
}
