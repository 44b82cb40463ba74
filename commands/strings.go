package commands

import (
	"math"
	"math/big"
	"strconv"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// stringCommands are the string family's rows (Redis's t_string.c).
var stringCommands = []*Spec{
	{Name: "get", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGet},
	{Name: "set", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @string @slow",
		KeySpecs: []KeySpec{{Notes: "RW and ACCESS due to the optional `GET` argument", Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSet},
	{Name: "setnx", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyInsert, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSetnx},
	{Name: "setex", Arity: 4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSetex},
	{Name: "psetex", Arity: 4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPsetex},
	{Name: "getdel", Arity: 2, Flags: FlagWrite | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGetdel},
	{Name: "getex", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Notes: "RW and UPDATE because it changes the TTL", Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGetex},
	{Name: "getset", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGetset},
	{Name: "mget", Arity: -2, Flags: FlagReadonly | FlagFast, ACL: "@read @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdMget},
	{Name: "mset", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(-1, 2, 0)}}, Handler: cmdMset},
	{Name: "msetnx", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@write @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyInsert, Begin: Index(1), Find: Range(-1, 2, 0)}}, Handler: cmdMsetnx},
	{Name: "strlen", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdStrlen},
	{Name: "append", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyInsert, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdAppend},
	{Name: "getrange", Arity: 4, Flags: FlagReadonly, ACL: "@read @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGetrange},
	{Name: "substr", Arity: 4, Flags: FlagReadonly, ACL: "@read @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGetrange},
	{Name: "setrange", Arity: 4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSetrange},
	{Name: "incr", Arity: 2, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdIncr},
	{Name: "decr", Arity: 2, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdDecr},
	{Name: "incrby", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdIncrby},
	{Name: "decrby", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdDecrby},
	{Name: "incrbyfloat", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @string @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdIncrbyfloat},
	{Name: "lcs", Arity: -3, Flags: FlagReadonly, ACL: "@read @string @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(1, 1, 0)}}, Handler: cmdLcs},
}

// Copies on the large-value paths, counted from the socket:
//   SET: 1 (kernel -> a bulk buffer of exactly the value's size, which the
//        engine then keeps; see Reader and Command.Own).
//   GET: 0 in user space (the reply references the stored slice and is
//        written with writev; see Writer.Bulk).

// expireKind says how an expiry argument is to be read.
type expireKind uint8

const (
	expireNone expireKind = iota
	expireEX              // relative seconds
	expirePX              // relative milliseconds
	expireEXAT            // absolute unix seconds
	expirePXAT            // absolute unix milliseconds
)

// stringOptions are the parsed options of SET and GETEX.
type stringOptions struct {
	nx, xx, get, keepTTL, persist bool
	expire                        expireKind
	expireArg                     []byte
}

// parseStringOptions parses SET's (forSet) or GETEX's options from args,
// following Redis's parseExtendedStringArgumentsOrReply: conflicting
// options and unknown words are a syntax error.
func parseStringOptions(args [][]byte, forSet bool) (stringOptions, bool) {
	var o stringOptions
	for j := 0; j < len(args); j++ {
		a := args[j]
		hasNext := j+1 < len(args)
		noExpire := o.expire == expireNone
		kind := expireOption(a)
		switch {
		case forSet && equalFold(a, "nx") && !o.xx:
			o.nx = true
		case forSet && equalFold(a, "xx") && !o.nx:
			o.xx = true
		case forSet && equalFold(a, "get"):
			o.get = true
		case forSet && equalFold(a, "keepttl") && !o.persist && noExpire:
			o.keepTTL = true
		case !forSet && equalFold(a, "persist") && noExpire && !o.keepTTL:
			o.persist = true
		case kind != expireNone && !o.keepTTL && !o.persist && (noExpire || o.expire == kind) && hasNext:
			o.expire, o.expireArg = kind, args[j+1]
			j++
		default:
			return o, false
		}
	}
	return o, true
}

// parseStringOptionsOrReply is parseStringOptions answering the syntax
// error itself.
func parseStringOptionsOrReply(x *Ctx, args [][]byte, forSet bool) (stringOptions, bool) {
	o, ok := parseStringOptions(args, forSet)
	if !ok {
		x.W.Error(errSyntax)
	}
	return o, ok
}

// expireAt returns the expiry o asks for in unix milliseconds, 0 if none,
// or an error reply for the command cmdName.
func (o stringOptions) expireAt(now int64, cmdName string) (int64, string) {
	if o.expire == expireNone {
		return 0, ""
	}
	return expireAt(o.expire, o.expireArg, now, cmdName)
}

// expireWords are the option words of the expiry kinds.
var expireWords = [...]string{expireEX: "ex", expirePX: "px", expireEXAT: "exat", expirePXAT: "pxat"}

// expireOption returns the expiry kind the option word a names (EX, PX,
// EXAT, PXAT, any case), or expireNone.
func expireOption(a []byte) expireKind {
	for k := expireEX; k <= expirePXAT; k++ {
		if equalFold(a, expireWords[k]) {
			return k
		}
	}
	return expireNone
}

// expireAt turns an expiry argument into unix milliseconds like Redis's
// getExpireMillisecondsOrReply; it returns an error reply on failure.
func expireAt(kind expireKind, arg []byte, now int64, cmdName string) (int64, string) {
	n, ok := ParseInt64(arg)
	if !ok {
		return 0, errNotInteger
	}
	invalid := "ERR invalid expire time in '" + cmdName + "' command"
	seconds := kind == expireEX || kind == expireEXAT
	if n <= 0 || (seconds && n > math.MaxInt64/1000) {
		return 0, invalid
	}
	if seconds {
		n *= 1000
	}
	if kind == expireEX || kind == expirePX {
		if n > math.MaxInt64-now {
			return 0, invalid
		}
		n += now
	}
	return n, ""
}

// cmdGet looks the value up under the engine lock and writes the reply
// after it (stored values are never changed in place), so that copying a
// value into the reply buffer does not hold up other clients.
func cmdGet(x *Ctx) {
	value, found, ok := storedValue(x, x.Args[1])
	if !ok {
		return
	}
	if found {
		x.W.StoredBulk(value)
	} else {
		x.W.Null()
	}
}

// storedValue returns the string value of key, looked up under the engine
// lock for the caller to read after it: stored values are never changed in
// place, so replies and the read-only bitmap commands use them without
// holding up other clients. ok is false, with WRONGTYPE answered, when the
// key holds another type.
func storedValue(x *Ctx, key []byte) (value []byte, found, ok bool) {
	var e engine.Entry
	x.View(func(tx *engine.Tx) { e, found = tx.Get(key) })
	if found && e.Kind != datatype.KindString {
		x.W.Error(errWrongType)
		return nil, false, false
	}
	return e.Value, found, true
}

// errWrongType is Redis's reply to a command run against a key of another
// type.
const errWrongType = "WRONGTYPE Operation against a key holding the wrong kind of value"

// wrongType answers WRONGTYPE and reports true when e, found, holds
// another type than a string.
func wrongType(x *Ctx, e engine.Entry, found bool) bool {
	if found && e.Kind != datatype.KindString {
		x.W.Error(errWrongType)
		return true
	}
	return false
}

// lookupStringOrReply is lookupObjectOrReply for a string: ok is false,
// with missing's reply or WRONGTYPE written, unless key holds a string.
func lookupStringOrReply(x *Ctx, tx *engine.Tx, key []byte, missing missingKeyReply) (engine.Entry, bool) {
	e, found := tx.Get(key)
	switch {
	case wrongType(x, e, found):
		return e, false
	case !found:
		missing(x.W)
		return e, false
	}
	return e, true
}

func cmdSet(x *Ctx) {
	args := x.Args
	o, ok := parseStringOptionsOrReply(x, args[3:], true)
	if !ok {
		return
	}
	setGeneric(x, args[1], 2, o, "set", nil, nil)
}

// setGeneric implements SET and its variants. valueArg is the index of the
// value in the command; okReply and abortReply, when set, replace +OK and
// the null reply (SETNX answers :1 and :0).
func setGeneric(x *Ctx, key []byte, valueArg int, o stringOptions, name string, okReply, abortReply func()) {
	// A large value is copied (when the reader did not already give it
	// its own buffer) before taking the engine lock, not while holding
	// it (setArg).
	var value []byte
	if len(x.Args[valueArg]) > engine.MaxCopiedValue {
		value = x.Session.Own(valueArg)
	}
	if okReply == nil {
		okReply = x.W.OK
	}
	if abortReply == nil {
		abortReply = x.W.Null
	}
	x.Update(func(tx *engine.Tx) {
		at, msg := o.expireAt(tx.Now(), name)
		if msg != "" {
			x.W.Error(msg)
			return
		}
		var old engine.Entry
		var found bool
		switch {
		case o.get:
			old, found = tx.Peek(key)
			if wrongType(x, old, found) {
				return
			}
		case o.nx || o.xx || o.keepTTL:
			old, found = tx.Stat(key, false) // the old value itself is not needed
		}
		// A plain SET leaves the lookup to tx.Set: one map lookup, not two.
		if o.get {
			if found {
				x.W.StoredBulk(old.Value)
			} else {
				x.W.Null()
			}
		}
		if (o.nx && found) || (o.xx && !found) {
			if o.get {
				return
			}
			abortReply()
			return
		}
		if o.keepTTL && found {
			at = old.ExpireAt
		}
		setArg(x, tx, key, valueArg, value, at)
		tx.Notify(notify.String, "set", key)
		if o.expire != expireNone {
			tx.Notify(notify.Generic, "expire", key)
		}
		if o.get {
			return
		}
		okReply()
	})
}

func cmdSetnx(x *Ctx) {
	args := x.Args
	setGeneric(x, args[1], 2, stringOptions{nx: true}, "setnx",
		func() { x.W.Int(1) }, func() { x.W.Int(0) })
}

func cmdSetex(x *Ctx) {
	args := x.Args
	setGeneric(x, args[1], 3, stringOptions{expire: expireEX, expireArg: args[2]}, "setex", nil, nil)
}

func cmdPsetex(x *Ctx) {
	args := x.Args
	setGeneric(x, args[1], 3, stringOptions{expire: expirePX, expireArg: args[2]}, "psetex", nil, nil)
}

func cmdGetdel(x *Ctx) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		e, ok := lookupStringOrReply(x, tx, args[1], replyNull)
		if !ok {
			return
		}
		x.W.StoredBulk(e.Value)
		tx.Delete(args[1])
		tx.Notify(notify.Generic, "del", args[1])
	})
}

func cmdGetex(x *Ctx) {
	args := x.Args
	o, ok := parseStringOptionsOrReply(x, args[2:], false)
	if !ok {
		return
	}
	x.Update(func(tx *engine.Tx) {
		e, ok := lookupStringOrReply(x, tx, args[1], replyNull)
		if !ok {
			return
		}
		at, msg := o.expireAt(tx.Now(), "getex")
		if msg != "" {
			x.W.Error(msg)
			return
		}
		x.W.StoredBulk(e.Value)
		switch {
		case o.expire != expireNone && at <= tx.Now():
			tx.SetExpire(args[1], at) // deletes it
			tx.Notify(notify.Generic, "del", args[1])
		case o.expire != expireNone:
			tx.SetExpire(args[1], at)
			tx.Notify(notify.Generic, "expire", args[1])
		case o.persist && e.ExpireAt != 0:
			tx.SetExpire(args[1], 0)
			tx.Notify(notify.Generic, "persist", args[1])
		}
	})
}

func cmdGetset(x *Ctx) {
	args := x.Args
	value := x.Session.Own(2) // copied before the engine lock, as in setGeneric
	x.Update(func(tx *engine.Tx) {
		if writeValue(x, tx, args[1]) {
			tx.Set(args[1], value, 0)
			tx.Notify(notify.String, "set", args[1])
		}
	})
}

// cmdMget, like cmdGet, writes the reply after the engine lock.
func cmdMget(x *Ctx) {
	keys := x.Args[1:]
	type result struct {
		value []byte
		found bool
	}
	var small [16]result
	results := small[:0]
	if len(keys) > len(small) {
		results = make([]result, 0, len(keys))
	}
	x.View(func(tx *engine.Tx) {
		for _, k := range keys {
			e, ok := tx.Get(k)
			results = append(results, result{e.Value, ok && e.Kind == datatype.KindString})
		}
	})
	x.W.Array(len(results))
	for _, r := range results {
		if r.found {
			x.W.StoredBulk(r.value)
		} else {
			x.W.Null()
		}
	}
}

func cmdMset(x *Ctx) {
	if !checkPairs(x, "mset") {
		return
	}
	x.Update(func(tx *engine.Tx) {
		setPairs(x, tx)
		x.W.OK()
	})
}

func cmdMsetnx(x *Ctx) {
	if !checkPairs(x, "msetnx") {
		return
	}
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		for i := 1; i < len(args); i += 2 {
			if _, ok := tx.Stat(args[i], false); ok {
				x.W.Int(0)
				return
			}
		}
		setPairs(x, tx)
		x.W.Int(1)
	})
}

// writeValue answers the value of key, or null if it has none; false,
// with WRONGTYPE answered, when key holds another type.
func writeValue(x *Ctx, tx *engine.Tx, key []byte) bool {
	e, ok := tx.Get(key)
	switch {
	case wrongType(x, e, ok):
		return false
	case ok:
		x.W.StoredBulk(e.Value)
	default:
		x.W.Null()
	}
	return true
}

// checkPairs reports whether the arguments after the command name come in
// key-value pairs, answering name's arity error if not.
func checkPairs(x *Ctx, name string) bool {
	if len(x.Args)%2 == 0 {
		x.W.Error("ERR wrong number of arguments for '" + name + "' command")
		return false
	}
	return true
}

// setPairs sets each key of the key-value pairs after the command name,
// without expiry.
func setPairs(x *Ctx, tx *engine.Tx) {
	for i := 1; i < len(x.Args); i += 2 {
		setArg(x, tx, x.Args[i], i+1, nil, 0)
		tx.Notify(notify.String, "set", x.Args[i])
	}
}

// setArg stores argument i under key: a value of at most
// engine.MaxCopiedValue bytes is copied by the engine (SetCopy, into the
// old value's buffer when it can); a larger one is handed over as owned,
// already taken before the lock, or taken here (Own).
func setArg(x *Ctx, tx *engine.Tx, key []byte, i int, owned []byte, expireAt int64) {
	if len(x.Args[i]) <= engine.MaxCopiedValue {
		tx.SetCopy(key, x.Args[i], expireAt)
		return
	}
	if owned == nil {
		owned = x.Session.Own(i)
	}
	if x.Transaction.InExec() {
		// A queued command's arguments are read again after it has run
		// (MONITOR, the slow log), while the buffer could already be
		// reused if a later command of the transaction overwrote the key.
		tx.Set(key, owned, expireAt)
		return
	}
	tx.SetOwned(key, owned, expireAt)
}

func cmdStrlen(x *Ctx) {
	args := x.Args
	x.View(func(tx *engine.Tx) {
		e, found := tx.Stat(args[1], true)
		if !wrongType(x, e, found) {
			x.W.Int(e.Len)
		}
	})
}

// checkStringLength is Redis's guard against strings over
// proto-max-bulk-len.
func checkStringLength(x *Ctx, size, add int64) bool {
	total := size + add
	return total <= x.Session.MaxBulk() && total >= size && total >= add
}

func cmdAppend(x *Ctx) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		e, ok := tx.Peek(args[1])
		if wrongType(x, e, ok) {
			return
		}
		if !ok {
			tx.Set(args[1], x.Session.Own(2), 0)
			tx.Notify(notify.String, "append", args[1])
			x.W.Int(int64(len(args[2])))
			return
		}
		if !checkStringLength(x, int64(len(e.Value)), int64(len(args[2]))) {
			x.W.Error(errStringLimit)
			return
		}
		// Stored values are immutable (replies may still reference them),
		// so APPEND builds a new value.
		nv := make([]byte, 0, len(e.Value)+len(args[2]))
		nv = append(append(nv, e.Value...), args[2]...)
		tx.Set(args[1], nv, e.ExpireAt)
		tx.Notify(notify.String, "append", args[1])
		x.W.Int(int64(len(nv)))
	})
}

func cmdGetrange(x *Ctx) {
	args := x.Args
	start, ok1 := ParseInt64(args[2])
	end, ok2 := ParseInt64(args[3])
	if !ok1 || !ok2 {
		x.W.Error(errNotInteger)
		return
	}
	x.View(func(tx *engine.Tx) {
		e, found := tx.Get(args[1])
		if wrongType(x, e, found) {
			return
		}
		n := int64(len(e.Value))
		if start < 0 && end < 0 && start > end {
			x.W.BulkString("")
			return
		}
		start, end = clampRange(start, end, n)
		if start > end || n == 0 {
			x.W.BulkString("")
			return
		}
		x.W.StoredBulk(e.Value[start : end+1])
	})
}

// clampRange resolves Redis's inclusive start/end indexes over n
// elements: negative ones count from the end, then both are clamped to
// [0, n-1] (end may become -1 when n is 0; start > end means empty).
func clampRange(start, end, n int64) (int64, int64) {
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	return start, end
}

func cmdSetrange(x *Ctx) {
	args := x.Args
	offset, ok := intArg(x, 2)
	if !ok {
		return
	}
	if offset < 0 {
		x.W.Error("ERR offset is out of range")
		return
	}
	value := args[3]
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(args[1])
		if wrongType(x, e, found) {
			return
		}
		if len(value) == 0 {
			x.W.Int(int64(len(e.Value)))
			return
		}
		if !checkStringLength(x, offset, int64(len(value))) {
			x.W.Error(errStringLimit)
			return
		}
		n := max(int64(len(e.Value)), offset+int64(len(value)))
		nv := make([]byte, n)
		copy(nv, e.Value)
		copy(nv[offset:], value)
		var at int64
		if found {
			at = e.ExpireAt
		}
		tx.Set(args[1], nv, at)
		tx.Notify(notify.String, "setrange", args[1])
		x.W.Int(n)
	})
}

func cmdIncr(x *Ctx) { incrBy(x, x.Args[1], 1) }

func cmdDecr(x *Ctx) { incrBy(x, x.Args[1], -1) }

func cmdIncrby(x *Ctx) {
	args := x.Args
	n, ok := intArg(x, 2)
	if !ok {
		return
	}
	incrBy(x, args[1], n)
}

func cmdDecrby(x *Ctx) {
	args := x.Args
	n, ok := intArg(x, 2)
	if !ok {
		return
	}
	if n == math.MinInt64 {
		x.W.Error("ERR decrement would overflow")
		return
	}
	incrBy(x, args[1], -n)
}

// incrBy adds delta to the integer stored at key, keeping its TTL.
func incrBy(x *Ctx, key []byte, delta int64) {
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(key)
		if wrongType(x, e, found) {
			return
		}
		var cur int64
		if found {
			var ok bool
			if cur, ok = ParseInt64(e.Value); !ok {
				x.W.Error(errNotInteger)
				return
			}
		}
		if addOverflows(cur, delta) {
			x.W.Error(errOverflow)
			return
		}
		cur += delta
		tx.Set(key, strconv.AppendInt(nil, cur, 10), e.ExpireAt)
		tx.Notify(notify.String, "incrby", key)
		x.W.Int(cur)
	})
}

func cmdIncrbyfloat(x *Ctx) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(args[1])
		if wrongType(x, e, found) {
			return
		}
		cur := new(big.Float).SetPrec(longDoublePrec)
		if found {
			v, ok := parseLongDouble(e.Value)
			if !ok {
				x.W.Error(errNotFloat)
				return
			}
			cur = v
		}
		incr, ok := parseLongDouble(args[2])
		if !ok {
			x.W.Error(errNotFloat)
			return
		}
		if cur.IsInf() || incr.IsInf() {
			x.W.Error(errNaNInf)
			return
		}
		sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(cur, incr)
		if sum.MantExp(nil) > maxLongDoubleExp {
			x.W.Error(errNaNInf)
			return
		}
		out := formatLongDouble(sum)
		tx.Set(args[1], []byte(out), e.ExpireAt)
		tx.Notify(notify.String, "incrbyfloat", args[1])
		x.W.BulkString(out)
	})
}

// setKeyFlags are SET's key flags for these arguments (Redis's
// setGetKeys): with GET it reads the old value, without it overwrites.
func setKeyFlags(cmd [][]byte) KeyFlags {
	for _, a := range cmd[min(3, len(cmd)):] {
		if equalFold(a, "get") {
			return KeyRW | KeyAccess | KeyUpdate
		}
	}
	return KeyOW | KeyUpdate
}

// lcsOptions are LCS's parsed options.
type lcsOptions struct {
	getLen, getIdx, withMatchLen bool
	minMatchLen                  int64
}

// parseLcsOptions parses LCS's options like Redis's lcsCommand, answering
// the error itself.
func parseLcsOptions(x *Ctx) (lcsOptions, bool) {
	var o lcsOptions
	args := x.Args
	for j := 3; j < len(args); j++ {
		more := j < len(args)-1
		switch a := args[j]; {
		case equalFold(a, "idx"):
			o.getIdx = true
		case equalFold(a, "len"):
			o.getLen = true
		case equalFold(a, "withmatchlen"):
			o.withMatchLen = true
		case equalFold(a, "minmatchlen") && more:
			n, ok := intArg(x, j+1)
			if !ok {
				return o, false
			}
			o.minMatchLen = max(n, 0)
			j++
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	if o.getIdx && o.getLen {
		x.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return o, false
	}
	return o, true
}

func cmdLcs(x *Ctx) {
	var a, b []byte
	var wrong bool
	x.View(func(tx *engine.Tx) { // both in one step, as Redis reads them
		ea, _ := tx.Get(x.Args[1])
		eb, _ := tx.Get(x.Args[2])
		a, b = ea.Value, eb.Value
		wrong = ea.Kind != datatype.KindString || eb.Kind != datatype.KindString
	})
	if wrong {
		x.W.Error("ERR The specified keys must contain string values")
		return
	}
	o, ok := parseLcsOptions(x)
	if !ok {
		return
	}
	if int64(len(a)) >= math.MaxUint32-1 || int64(len(b)) >= math.MaxUint32-1 {
		x.W.Error("ERR String too long for LCS")
		return
	}
	cells := (int64(len(a)) + 1) * (int64(len(b)) + 1)
	if cells*4 > x.Session.MaxBulk() {
		x.W.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	writeLcs(x, a, b, o)
}

// writeLcs computes the longest common subsequence of a and b with
// Redis's dynamic programming table and walk, and answers it as o asks.
func writeLcs(x *Ctx, a, b []byte, o lcsOptions) {
	alen, blen := len(a), len(b)
	w := blen + 1
	dp := make([]uint32, (alen+1)*w)
	for i := 1; i <= alen; i++ {
		for j := 1; j <= blen; j++ {
			switch {
			case a[i-1] == b[j-1]:
				dp[i*w+j] = dp[(i-1)*w+j-1] + 1
			default:
				dp[i*w+j] = max(dp[(i-1)*w+j], dp[i*w+j-1])
			}
		}
	}
	total := dp[alen*w+blen]
	if o.getLen && !o.getIdx {
		x.W.Int(int64(total))
		return
	}
	result := make([]byte, total)
	type match struct{ aStart, aEnd, bStart, bEnd, n int }
	var matches []match
	idx := int(total)
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0
	for i, j := alen, blen; i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx, i, j = idx-1, i-1, j-1
		} else {
			if dp[(i-1)*w+j] > dp[i*w+j-1] {
				i--
			} else {
				j--
			}
			emit = aStart != alen
		}
		if emit {
			n := aEnd - aStart + 1
			if o.minMatchLen == 0 || int64(n) >= o.minMatchLen {
				matches = append(matches, match{aStart, aEnd, bStart, bEnd, n})
			}
			aStart = alen
		}
	}
	if !o.getIdx {
		x.W.Bulk(result)
		return
	}
	x.W.Map(2)
	x.W.BulkString("matches")
	x.W.Array(len(matches))
	for _, m := range matches {
		if o.withMatchLen {
			x.W.Array(3)
		} else {
			x.W.Array(2)
		}
		x.W.Array(2)
		x.W.Int(int64(m.aStart))
		x.W.Int(int64(m.aEnd))
		x.W.Array(2)
		x.W.Int(int64(m.bStart))
		x.W.Int(int64(m.bEnd))
		if o.withMatchLen {
			x.W.Int(int64(m.n))
		}
	}
	x.W.BulkString("len")
	x.W.Int(int64(total))
}
