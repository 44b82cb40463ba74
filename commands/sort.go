package commands

import (
	"bytes"
	"math"
	"sort"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// sortCommands are SORT and SORT_RO (Redis's sort.c).
var sortCommands = []*Spec{
	{Name: "sort", Arity: -2, Flags: FlagWrite | FlagDenyoom, ACL: "@write @set @sortedset @list @slow @dangerous",
		KeySpecs: []KeySpec{sortSourceKey, sortPatternKeys, {
			Notes: "For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array",
			Flags: KeyOW | KeyUpdate, Begin: UnknownBegin()}},
		GetKeys: sortGetKeys, Handler: cmdSort},
	{Name: "sort_ro", Arity: -2, Flags: FlagReadonly, ACL: "@read @set @sortedset @list @slow @dangerous",
		KeySpecs: []KeySpec{sortSourceKey, sortPatternKeys},
		GetKeys:  func([][]byte) []int { return []int{1} }, Handler: cmdSortRO},
}

var (
	// sortSourceKey is the key SORT sorts.
	sortSourceKey = KeySpec{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}
	// sortPatternKeys are the keys BY and GET patterns name, which only
	// the sorted elements decide.
	sortPatternKeys = KeySpec{
		Notes: "For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort",
		Flags: KeyRO | KeyAccess, Begin: UnknownBegin()}
)

// sortGetKeys is Redis's sortGetKeys: the sorted key, then the argument
// after the last STORE, skipping the arguments of LIMIT, GET and BY.
func sortGetKeys(args [][]byte) []int {
	keys := []int{1}
	store := 0
	for i := 2; i < len(args); i++ {
		switch {
		case equalFold(args[i], "limit"):
			i += 2
		case equalFold(args[i], "get"), equalFold(args[i], "by"):
			i++
		case equalFold(args[i], "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store > 0 {
		keys = append(keys, store)
	}
	return keys
}

// sortKeyFlags are the flags sortGetKeys gives argument k: the sorted
// key is read, the STORE destination overwritten.
func sortKeyFlags(_ [][]byte, k int) KeyFlags {
	if k == 1 {
		return KeyRO | KeyAccess
	}
	return KeyOW | KeyUpdate
}

func cmdSort(x *Ctx)   { sortGeneric(x, false) }
func cmdSortRO(x *Ctx) { sortGeneric(x, true) }

// sortOptions are SORT's parsed arguments.
type sortOptions struct {
	desc, alpha, dontsort  bool
	limitStart, limitCount int64
	by, store              []byte
	gets                   [][]byte
}

// parseSortOptions parses SORT's options as sortCommandGeneric does,
// answering the first error; ok is false after one.
func parseSortOptions(x *Ctx, readonly bool) (o sortOptions, ok bool) {
	args := x.Args
	o.limitCount = -1
	clustered := x.Cluster != nil && x.Cluster.SlotMap() != nil
	full := fullKeyAccess(x)
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case equalFold(a, "asc"):
			o.desc = false
		case equalFold(a, "desc"):
			o.desc = true
		case equalFold(a, "alpha"):
			o.alpha = true
		case equalFold(a, "limit") && left >= 2:
			var okStart, okCount bool
			o.limitStart, okStart = ParseInt64(args[j+1])
			o.limitCount, okCount = ParseInt64(args[j+2])
			if !okStart || !okCount {
				x.W.Error(errNotInteger)
				return o, false
			}
			j += 2
		case !readonly && equalFold(a, "store") && left >= 1:
			o.store = args[j+1]
			j++
		case equalFold(a, "by") && left >= 1:
			o.by = args[j+1]
			// A pattern without '*' names no per-element key: the elements
			// keep their order (Redis never clears dontsort again).
			if bytes.IndexByte(o.by, '*') < 0 {
				o.dontsort = true
			} else if clustered {
				x.W.Error("ERR BY option of SORT denied in Cluster mode.")
				return o, false
			} else if !full {
				x.W.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return o, false
			}
			j++
		case equalFold(a, "get") && left >= 1:
			if clustered {
				x.W.Error("ERR GET option of SORT denied in Cluster mode.")
				return o, false
			}
			if !full {
				x.W.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return o, false
			}
			o.gets = append(o.gets, args[j+1])
			j++
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// fullKeyAccess reports whether the connection's user may read every key
// (Redis's ACLUserCheckKeyPerm of "*"), which BY and GET patterns need:
// the keys they read depend on the data.
func fullKeyAccess(x *Ctx) bool {
	if x.Users == nil {
		return true
	}
	u := x.Users.User(x.Session.UserName())
	return u == nil || u.AllKeys() || u.KeyAllowed([]byte("*"))
}

// sortElem is one element being sorted: the element, its numeric score,
// and for ALPHA with BY the value it is compared by (nil when missing).
type sortElem struct {
	obj    []byte
	score  float64
	cmpobj []byte
}

// sortGeneric is Redis's sortCommandGeneric.
func sortGeneric(x *Ctx, readonly bool) {
	o, ok := parseSortOptions(x, readonly)
	if !ok {
		return
	}
	run := x.View
	if o.store != nil {
		run = x.Update
	}
	run(func(tx *engine.Tx) { sortIn(x, tx, &o) })
}

// sortIn sorts, answers and stores within one transaction.
func sortIn(x *Ctx, tx *engine.Tx, o *sortOptions) {
	key := x.Args[1]
	kind, _ := tx.Kind(key)
	switch kind {
	case datatype.KindList, datatype.KindSet, datatype.KindZSet:
	default:
		kind = datatype.KindList
	}
	obj, err := tx.Object(key, kind, true)
	if err != nil {
		x.W.Error(err.Error())
		return
	}
	// A set's order is its hash table's: STORE and scripts (what
	// replicas replay) sort it, as Redis does.
	sa, scripted := x.Session.(ScriptAware)
	if o.dontsort && kind == datatype.KindSet && (o.store != nil || scripted && sa.InScript()) {
		o.dontsort, o.alpha, o.by = false, true, nil
	}
	n := 0
	if obj != nil {
		n = obj.Len()
	}
	start, end := sortBounds(o.limitStart, o.limitCount, n)
	vector := loadSortVector(obj, o, start, end)
	if o.dontsort && kind != datatype.KindSet && obj != nil && end >= start {
		end -= start
		start = 0
	}
	if !o.dontsort {
		if !scoreSortVector(tx, vector, o) {
			x.W.Error("ERR One or more scores can't be converted into double")
			return
		}
		sortVector(vector, o)
	}
	var out [][]byte
	for j := start; j <= end; j++ {
		e := vector[j].obj
		if len(o.gets) == 0 {
			out = append(out, e)
			continue
		}
		for _, pat := range o.gets {
			v, _ := lookupKeyByPattern(tx, pat, e)
			out = append(out, v)
		}
	}
	if o.store == nil {
		x.W.Array(len(out))
		for _, v := range out {
			if v == nil {
				x.W.Null()
			} else {
				x.W.Bulk(v)
			}
		}
		return
	}
	storeSorted(x, tx, o.store, out)
}

// sortBounds is SORT's LIMIT sanity check: the first and last index of
// the n elements to answer (end < start for none).
func sortBounds(limitStart, limitCount int64, n int) (start, end int) {
	s := max(limitStart, 0)
	e := int64(n) - 1
	if limitCount >= 0 {
		e = s + limitCount - 1
	}
	if s >= int64(n) {
		s, e = int64(n)-1, int64(n)-2
	}
	e = min(e, int64(n)-1)
	return int(s), int(e)
}

// loadSortVector copies the elements to sort out of obj. A list or sorted
// set that is not sorted (BY without '*') loads only the LIMIT range, in
// its own order or reversed for DESC.
func loadSortVector(obj datatype.Object, o *sortOptions, start, end int) []sortElem {
	var vector []sortElem
	add := func(b []byte) { vector = append(vector, sortElem{obj: bytes.Clone(b)}) }
	switch v := obj.(type) {
	case nil:
	case *datatype.List:
		if !o.dontsort {
			v.Range(0, false, func(_ int, b []byte) bool { add(b); return true })
		} else if end >= start {
			from := start
			if o.desc {
				from = v.Len() - start - 1
			}
			v.Range(from, o.desc, func(_ int, b []byte) bool { add(b); return len(vector) < end-start+1 })
		}
	case *datatype.ZSet:
		if !o.dontsort {
			v.ForEach(func(e datatype.ZEntry) bool { add([]byte(e.Member)); return true })
		} else if end >= start {
			from := start
			if o.desc {
				from = v.Len() - start - 1
			}
			v.Range(from, o.desc, func(e datatype.ZEntry) bool { add([]byte(e.Member)); return len(vector) < end-start+1 })
		}
	case *datatype.Set:
		v.Range(func(b []byte) bool { add(b); return true })
	}
	return vector
}

// scoreSortVector loads what each element is compared by: its BY value
// (a missing one scores 0) or itself. It reports false when a numeric sort
// meets a value strtod does not take whole.
func scoreSortVector(tx *engine.Tx, vector []sortElem, o *sortOptions) bool {
	ok := true
	for j := range vector {
		by := vector[j].obj
		if o.by != nil {
			v, found := lookupKeyByPattern(tx, o.by, vector[j].obj)
			if !found {
				continue
			}
			by = v
		}
		if o.alpha {
			if o.by != nil {
				vector[j].cmpobj = by
			}
			continue
		}
		by = cString(by) // strtod's end check stops at a NUL as well
		f, n, erange := strtod(by)
		if len(by) > 0 && n == 0 {
			n = -1 // strtod stops at the start: the leading space is left
		}
		vector[j].score = f
		if n != len(by) || erange || math.IsNaN(f) {
			ok = false
		}
	}
	return ok
}

// sortVector sorts as Redis's sortCompare orders: numerically with ties
// by the elements' bytes, or ALPHA in byte order (kvserver does not
// collate), by the BY values when there are any (missing ones first).
// Without STORE Redis compares ALPHA with strcoll, which in the C locale
// is strcmp and stops at a NUL byte; the sort is stable, as glibc's qsort
// (a merge sort) is.
func sortVector(vector []sortElem, o *sortOptions) {
	alphaCmp := bytes.Compare
	if o.store == nil {
		alphaCmp = func(a, b []byte) int { return bytes.Compare(cString(a), cString(b)) }
	}
	cmp := func(a, b *sortElem) int {
		switch {
		case !o.alpha:
			switch {
			case a.score > b.score:
				return 1
			case a.score < b.score:
				return -1
			}
			return bytes.Compare(a.obj, b.obj)
		case o.by != nil:
			switch {
			case a.cmpobj == nil && b.cmpobj == nil:
				return 0
			case a.cmpobj == nil:
				return -1
			case b.cmpobj == nil:
				return 1
			}
			return alphaCmp(a.cmpobj, b.cmpobj)
		}
		return alphaCmp(a.obj, b.obj)
	}
	sort.SliceStable(vector, func(i, j int) bool {
		c := cmp(&vector[i], &vector[j])
		if o.desc {
			c = -c
		}
		return c < 0
	})
}

// cString is b as C's string functions see it: up to its first NUL.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// lookupKeyByPattern is Redis's lookupKeyByPattern: "#" is the element
// itself; otherwise the first '*' is replaced by the element, and a
// "->field" after it reads that field of a hash instead of a string. It
// answers false when the pattern has no '*' or the key is missing or of
// another type. The value is a copy.
func lookupKeyByPattern(tx *engine.Tx, pattern, elem []byte) ([]byte, bool) {
	if len(pattern) == 1 && pattern[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(pattern, '*')
	if star < 0 {
		return nil, false
	}
	keyPat, field := pattern, []byte(nil)
	if f := bytes.Index(pattern[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(pattern) {
		keyPat, field = pattern[:star+1+f], pattern[star+1+f+2:]
	}
	key := make([]byte, 0, len(keyPat)-1+len(elem))
	key = append(append(append(key, keyPat[:star]...), elem...), keyPat[star+1:]...)
	e, ok := tx.Get(key)
	if !ok {
		return nil, false
	}
	if field == nil {
		if e.Kind != datatype.KindString {
			return nil, false
		}
		return bytes.Clone(e.Value), true
	}
	h, isHash := e.Object.(*datatype.Hash)
	if !isHash {
		return nil, false
	}
	v, ok := h.Get(field)
	return bytes.Clone(v), ok
}

// storeSorted stores SORT's output as a list under dst (deleting dst when
// there is none) and answers its length, with Redis's events.
func storeSorted(x *Ctx, tx *engine.Tx, dst []byte, out [][]byte) {
	if len(out) == 0 {
		if tx.Delete(dst) {
			tx.Notify(notify.Generic, "del", dst)
		}
		x.W.Int(0)
		return
	}
	l, lim := datatype.NewList(), listLimits(x)
	for _, v := range out {
		if v == nil {
			v = []byte{}
		}
		l.Push(v, false, lim)
	}
	tx.SetObject(dst, l, 0)
	tx.Notify(notify.List, "sortstore", dst)
	x.W.Int(int64(len(out)))
}
