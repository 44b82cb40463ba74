package commands

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/glob"
	"github.com/kvserver/kvserver/notify"
)

// keyspaceCommands are the keyspace family's rows (Redis's db.c and
// expire.c): commands about keys and databases rather than values.
var keyspaceCommands = []*Spec{
	{Name: "del", Arity: -2, Flags: FlagWrite, ACL: "@keyspace @write @slow",
		KeySpecs: []KeySpec{{Flags: KeyRM | KeyDelete, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdDel},
	{Name: "unlink", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRM | KeyDelete, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdUnlink},
	{Name: "exists", Arity: -2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdExists},
	{Name: "touch", Arity: -2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdTouch},
	{Name: "type", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdType},
	{Name: "keys", Arity: 2, Flags: FlagReadonly, ACL: "@keyspace @read @slow @dangerous", Handler: cmdKeys},
	{Name: "scan", Arity: -2, Flags: FlagReadonly, ACL: "@keyspace @read @slow", Handler: cmdScan},
	{Name: "randomkey", Arity: 1, Flags: FlagReadonly, ACL: "@keyspace @read @slow", Handler: cmdRandomkey},
	{Name: "rename", Arity: 3, Flags: FlagWrite, ACL: "@keyspace @write @slow",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: KeyOW | KeyUpdate, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdRename},
	{Name: "renamenx", Arity: 3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: KeyOW | KeyInsert, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdRenamenx},
	{Name: "copy", Arity: -3, Flags: FlagWrite | FlagDenyoom, ACL: "@keyspace @write @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}, {Flags: KeyOW | KeyUpdate, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdCopy},
	{Name: "move", Arity: 3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdMove},
	{Name: "dbsize", Arity: 1, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast", Handler: cmdDbsize},
	{Name: "flushdb", Arity: -1, Flags: FlagWrite, ACL: "@keyspace @write @slow @dangerous", Handler: cmdFlushdb},
	{Name: "flushall", Arity: -1, Flags: FlagWrite, ACL: "@keyspace @write @slow @dangerous", Handler: cmdFlushall},
	{Name: "expire", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdExpire},
	{Name: "pexpire", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPexpire},
	{Name: "expireat", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdExpireat},
	{Name: "pexpireat", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPexpireat},
	{Name: "ttl", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdTtl},
	{Name: "pttl", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPttl},
	{Name: "expiretime", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdExpiretime},
	{Name: "pexpiretime", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@keyspace @read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPexpiretime},
	{Name: "persist", Arity: 2, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPersist},
	{Name: "select", Arity: 2, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@fast @connection", Handler: cmdSelect},
	{Name: "swapdb", Arity: 3, Flags: FlagWrite | FlagFast, ACL: "@keyspace @write @fast @dangerous", Handler: cmdSwapdb},
	{Name: "object", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "object|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@keyspace @slow", Handler: cmdObjectHelp},
		{Name: "object|encoding", Arity: 3, Flags: FlagReadonly, ACL: "@keyspace @read @slow",
			KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdObjectEncoding},
		{Name: "object|freq", Arity: 3, Flags: FlagReadonly, ACL: "@keyspace @read @slow",
			KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdObjectFreq},
		{Name: "object|idletime", Arity: 3, Flags: FlagReadonly, ACL: "@keyspace @read @slow",
			KeySpecs: []KeySpec{{Flags: KeyRO, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdObjectIdletime},
		{Name: "object|refcount", Arity: 3, Flags: FlagReadonly, ACL: "@keyspace @read @slow",
			KeySpecs: []KeySpec{{Flags: KeyRO, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdObjectRefcount},
	}},
}

// KeyspaceConfig is what the keyspace family needs to know of the server
// beyond its engine.
type KeyspaceConfig interface {
	// ClusterEnabled reports whether the server runs in cluster mode,
	// where clients see database 0 only.
	ClusterEnabled() bool
	// ExistsLeaseMs is --exists-lease-ms: the lease an EXISTS hit grants
	// the key, 0 for none.
	ExistsLeaseMs() int64
}

func cmdDel(x *Ctx) { x.Update(countKeys(x, deleteKey)) }

// deleteKey deletes k, publishing "del" when it existed.
func deleteKey(tx *engine.Tx, k []byte) bool {
	if !tx.Delete(k) {
		return false
	}
	tx.Notify(notify.Generic, "del", k)
	return true
}

func cmdUnlink(x *Ctx) { cmdDel(x) }

func cmdExists(x *Ctx) {
	lease := x.KeyspaceConfig.ExistsLeaseMs()
	x.View(countKeys(x, func(tx *engine.Tx, k []byte) bool {
		if !tx.Exists(k) {
			return false
		}
		if lease > 0 {
			// A hit promises the GET that usually follows.
			tx.Lease(k, tx.Now()+lease)
		}
		return true
	}))
}

func cmdTouch(x *Ctx) { x.View(countKeys(x, (*engine.Tx).Touch)) }

// countKeys is the step of DEL, EXISTS and TOUCH: it applies op to every
// key argument and replies with how many it held for.
func countKeys(x *Ctx, op func(tx *engine.Tx, k []byte) bool) func(tx *engine.Tx) {
	return func(tx *engine.Tx) {
		n := 0
		for _, k := range x.Args[1:] {
			if op(tx, k) {
				n++
			}
		}
		x.W.Int(int64(n))
	}
}

func cmdType(x *Ctx) {
	args := x.Args
	x.View(func(tx *engine.Tx) {
		if e, ok := tx.Stat(args[1], true); ok {
			x.W.Simple(e.Kind.String())
		} else {
			x.W.Simple("none")
		}
	})
}

func cmdKeys(x *Ctx) {
	args := x.Args
	pattern := args[1]
	all := len(pattern) == 1 && pattern[0] == '*'
	var keys []string
	x.View(func(tx *engine.Tx) {
		tx.Keys(func(k string) bool {
			if all || glob.Match(pattern, []byte(k)) {
				keys = append(keys, k)
			}
			return true
		})
	})
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.BulkString(k)
	}
}

// parseCursor parses a SCAN cursor like Redis's strtoul-based parser.
func parseCursor(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, true // strtoul("") is 0 and Redis accepts it
	}
	if isSpace(b[0]) {
		return 0, false
	}
	neg := false
	switch b[0] {
	case '+':
		b = b[1:]
	case '-':
		neg = true
		b = b[1:]
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func cmdScan(x *Ctx) {
	args := x.Args
	cursor, ok := parseCursor(args[1])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return
	}
	count := int64(10)
	var pattern, typeName []byte
	usePattern := false
	for i := 2; i < len(args); {
		remaining := len(args) - i
		switch {
		case equalFold(args[i], "count") && remaining >= 2:
			n, ok := countArg(x, i+1, 1)
			if !ok {
				return
			}
			count = n
			i += 2
		case equalFold(args[i], "match") && remaining >= 2:
			pattern = args[i+1]
			usePattern = !(len(pattern) == 1 && pattern[0] == '*')
			i += 2
		case equalFold(args[i], "type") && remaining >= 2:
			typeName = args[i+1]
			i += 2
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	var keys []string
	var next uint64
	x.View(func(tx *engine.Tx) {
		next = tx.Scan(cursor, int(min(count, math.MaxInt32)), func(k string) {
			if usePattern && !glob.Match(pattern, []byte(k)) {
				return
			}
			if typeName != nil {
				if kind, _ := tx.Kind([]byte(k)); !equalFold(typeName, kind.String()) {
					return
				}
			}
			keys = append(keys, k)
		})
	})
	x.W.Array(2)
	x.W.BulkString(strconv.FormatUint(next, 10))
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.BulkString(k)
	}
}

func cmdRandomkey(x *Ctx) {
	x.View(func(tx *engine.Tx) {
		if k, ok := tx.RandomKey(); ok {
			x.W.BulkString(k)
		} else {
			x.W.Null()
		}
	})
}

func cmdRename(x *Ctx) { rename(x, false) }

func cmdRenamenx(x *Ctx) { rename(x, true) }

func rename(x *Ctx, nx bool) {
	args := x.Args
	src, dst := args[1], args[2]
	x.Update(func(tx *engine.Tx) {
		e, ok := tx.Peek(src)
		if !ok {
			x.W.Error("ERR no such key")
			return
		}
		if bytes.Equal(src, dst) {
			if nx {
				x.W.Int(0)
			} else {
				x.W.OK()
			}
			return
		}
		if _, exists := tx.Stat(dst, false); exists {
			if nx {
				x.W.Int(0)
				return
			}
			// Redis deletes the old key and adds a new one ("new").
			tx.Delete(dst)
		}
		tx.Delete(src)
		tx.Put(dst, e)
		tx.Notify(notify.Generic, "rename_from", src)
		tx.Notify(notify.Generic, "rename_to", dst)
		if nx {
			x.W.Int(1)
		} else {
			x.W.OK()
		}
	})
}

// errIntRange is getIntFromObjectOrReply's reply for an integer outside
// the C int range.
const errIntRange = "ERR value is out of range, value must between -2147483648 and 2147483647"

// parseDBIndex parses a database number like getIntFromObjectOrReply,
// returning the error reply on failure (msg replaces both errors when set,
// as SWAPDB does).
func parseDBIndex(b []byte, msg string) (int, string) {
	n, ok := ParseInt64(b)
	switch {
	case !ok && msg == "":
		return 0, errNotInteger
	case !ok || n < math.MinInt32 || n > math.MaxInt32:
		if msg != "" {
			return 0, msg
		}
		return 0, errIntRange
	}
	return int(n), ""
}

func validDB(x *Ctx, db int) bool { return db >= 0 && db < x.Engine.Databases() }

// existingDBArg parses a database number that must exist (SELECT, MOVE,
// COPY ... DB), answering Redis's error reply on failure.
func existingDBArg(x *Ctx, arg []byte) (int, bool) {
	db, msg := parseDBIndex(arg, "")
	if msg == "" && !validDB(x, db) {
		msg = errDBIndex
	}
	if msg != "" {
		x.W.Error(msg)
		return 0, false
	}
	return db, true
}

func cmdCopy(x *Ctx) {
	args := x.Args
	src, dst := args[1], args[2]
	srcDB := x.Session.DB()
	dstDB := srcDB
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "db") && j < len(args)-1:
			db, ok := existingDBArg(x, args[j+1])
			if !ok {
				return
			}
			dstDB = db
			j++
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	if x.KeyspaceConfig.ClusterEnabled() && (srcDB != 0 || dstDB != 0) {
		x.W.Error("ERR Copying to another database is not allowed in cluster mode")
		return
	}
	if srcDB == dstDB && bytes.Equal(src, dst) {
		x.W.Error("ERR source and destination objects are the same")
		return
	}
	x.Update(func(tx *engine.Tx) {
		e, ok := tx.Get(src)
		if !ok {
			x.W.Int(0)
			return
		}
		dtx := tx.On(dstDB)
		if _, exists := dtx.Stat(dst, false); exists {
			if !replace {
				x.W.Int(0)
				return
			}
			dtx.Delete(dst)
		}
		// Strings are immutable, so the copy can share the bytes; an
		// object is changed in place and needs its own copy.
		if e.Object != nil {
			e.Object = e.Object.Clone()
		}
		dtx.Put(dst, e)
		dtx.Notify(notify.Generic, "copy_to", dst)
		x.W.Int(1)
	})
}

func cmdMove(x *Ctx) {
	args := x.Args
	if x.KeyspaceConfig.ClusterEnabled() {
		x.W.Error("ERR MOVE is not allowed in cluster mode")
		return
	}
	db, ok := existingDBArg(x, args[2])
	if !ok {
		return
	}
	if db == x.Session.DB() {
		x.W.Error("ERR source and destination objects are the same")
		return
	}
	x.Update(func(tx *engine.Tx) {
		e, ok := tx.Peek(args[1])
		if !ok {
			x.W.Int(0)
			return
		}
		dtx := tx.On(db)
		if _, exists := dtx.Stat(args[1], false); exists {
			x.W.Int(0)
			return
		}
		tx.Delete(args[1])
		dtx.Put(args[1], e)
		tx.Notify(notify.Generic, "move_from", args[1])
		dtx.Notify(notify.Generic, "move_to", args[1])
		x.W.Int(1)
	})
}

func cmdDbsize(x *Ctx) {
	x.View(func(tx *engine.Tx) { x.W.Int(int64(tx.Len())) })
}

// flushFlagsOK checks FLUSHDB/FLUSHALL's optional ASYNC|SYNC argument.
func flushFlagsOK(args [][]byte) bool {
	return len(args) == 1 || (len(args) == 2 && (equalFold(args[1], "sync") || equalFold(args[1], "async")))
}

func cmdFlushdb(x *Ctx) {
	args := x.Args
	if !flushFlagsOK(args) {
		x.W.Error(errSyntax)
		return
	}
	replyOKOrError(x, x.Engine.FlushDB(x.Context(), x.Session.DB()))
}

func cmdFlushall(x *Ctx) {
	args := x.Args
	if !flushFlagsOK(args) {
		x.W.Error(errSyntax)
		return
	}
	replyOKOrError(x, x.Engine.FlushAll(x.Session.ServerContext()))
}

// expireFlags are EXPIRE's NX|XX|GT|LT options.
type expireFlags struct{ nx, xx, gt, lt bool }

func parseExpireFlags(args [][]byte) (expireFlags, string) {
	var f expireFlags
	for _, a := range args {
		switch {
		case equalFold(a, "nx"):
			f.nx = true
		case equalFold(a, "xx"):
			f.xx = true
		case equalFold(a, "gt"):
			f.gt = true
		case equalFold(a, "lt"):
			f.lt = true
		default:
			return f, "ERR Unsupported option " + string(a)
		}
	}
	if f.nx && (f.xx || f.gt || f.lt) {
		return f, "ERR NX and XX, GT or LT options at the same time are not compatible"
	}
	if f.gt && f.lt {
		return f, "ERR GT and LT options at the same time are not compatible"
	}
	return f, ""
}

func cmdExpire(x *Ctx)    { expireGeneric(x, true, 1000) }
func cmdPexpire(x *Ctx)   { expireGeneric(x, true, 1) }
func cmdExpireat(x *Ctx)  { expireGeneric(x, false, 1000) }
func cmdPexpireat(x *Ctx) { expireGeneric(x, false, 1) }

// expireGeneric implements the EXPIRE family like Redis's
// expireGenericCommand: relative commands add the current time; unit is
// 1000 for seconds, 1 for milliseconds.
func expireGeneric(x *Ctx, relative bool, unit int64) {
	args := x.Args
	flags, msg := parseExpireFlags(args[3:])
	if msg != "" {
		x.W.Error(msg)
		return
	}
	when, ok := intArg(x, 2)
	if !ok {
		return
	}
	// Built only when answered: most calls never need it.
	invalid := func() string { return "ERR invalid expire time in '" + string(bytes.ToLower(args[0])) + "' command" }
	if unit == 1000 {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			x.W.Error(invalid())
			return
		}
		when *= 1000
	}
	x.Update(func(tx *engine.Tx) {
		var base int64
		if relative {
			base = tx.Now()
		}
		if when > math.MaxInt64-base {
			x.W.Error(invalid())
			return
		}
		at := when + base
		e, ok := tx.Stat(args[1], false)
		if !ok {
			x.W.Int(0)
			return
		}
		cur := e.ExpireAt // 0 = none
		switch {
		case flags.nx && cur != 0,
			flags.xx && cur == 0,
			flags.gt && (cur == 0 || at <= cur),
			flags.lt && cur != 0 && at >= cur:
			x.W.Int(0)
			return
		}
		if at <= tx.Now() {
			tx.Delete(args[1])
			tx.Notify(notify.Generic, "del", args[1])
			x.W.Int(1)
			return
		}
		tx.SetExpire(args[1], at)
		x.W.Int(1) // before the event, as in Redis's expireGenericCommand
		tx.Notify(notify.Generic, "expire", args[1])
	})
}

func cmdTtl(x *Ctx)         { ttlGeneric(x, x.Args[1], false, false) }
func cmdPttl(x *Ctx)        { ttlGeneric(x, x.Args[1], true, false) }
func cmdExpiretime(x *Ctx)  { ttlGeneric(x, x.Args[1], false, true) }
func cmdPexpiretime(x *Ctx) { ttlGeneric(x, x.Args[1], true, true) }

// ttlGeneric answers TTL, PTTL, EXPIRETIME and PEXPIRETIME: -2 for a
// missing key, -1 for a key without expiry.
func ttlGeneric(x *Ctx, key []byte, ms, absolute bool) {
	x.View(func(tx *engine.Tx) {
		e, ok := tx.Stat(key, true)
		switch {
		case !ok:
			x.W.Int(-2)
		case e.ExpireAt == 0:
			x.W.Int(-1)
		case absolute && ms:
			x.W.Int(e.ExpireAt)
		case absolute:
			x.W.Int(e.ExpireAt / 1000)
		default:
			ttl := max(e.ExpireAt-tx.Now(), 0)
			if ms {
				x.W.Int(ttl)
			} else {
				x.W.Int((ttl + 500) / 1000)
			}
		}
	})
}

func cmdPersist(x *Ctx) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		e, ok := tx.Stat(args[1], false)
		if !ok || e.ExpireAt == 0 {
			x.W.Int(0)
			return
		}
		tx.SetExpire(args[1], 0)
		tx.Notify(notify.Generic, "persist", args[1])
		x.W.Int(1)
	})
}

func cmdSelect(x *Ctx) {
	args := x.Args
	if x.KeyspaceConfig.ClusterEnabled() {
		// Redis parses the number first, then refuses any but 0.
		if db, msg := parseDBIndex(args[1], ""); msg == "" && db != 0 {
			x.W.Error("ERR SELECT is not allowed in cluster mode")
			return
		}
	}
	db, ok := existingDBArg(x, args[1])
	if !ok {
		return
	}
	x.Session.SetDB(db)
	x.W.OK()
}

func cmdSwapdb(x *Ctx) {
	args := x.Args
	if x.KeyspaceConfig.ClusterEnabled() {
		x.W.Error("ERR SWAPDB is not allowed in cluster mode")
		return
	}
	a, msg := parseDBIndex(args[1], "ERR invalid first DB index")
	if msg != "" {
		x.W.Error(msg)
		return
	}
	b, msg := parseDBIndex(args[2], "ERR invalid second DB index")
	if msg != "" {
		x.W.Error(msg)
		return
	}
	if !validDB(x, a) || !validDB(x, b) {
		x.W.Error(errDBIndex)
		return
	}
	replyOKOrError(x, x.Engine.SwapDB(x.Session.ServerContext(), a, b))
}

// replyOKOrError answers +OK, or the error of a failed storage operation.
func replyOKOrError(x *Ctx, err error) {
	if err != nil {
		x.Log.Error("storage operation failed", "client", x.Session.ID(), "err", err)
		x.W.Error("ERR " + err.Error())
		return
	}
	x.W.OK()
}

func cmdObjectHelp(x *Ctx) {
	writeHelp(x, "OBJECT",
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.",
	)
}

// Redis's limits for string encodings (object.c): an integer that fits a
// long in at most 20 bytes is "int", a string of at most 44 bytes
// "embstr"; integers below 10000 are shared objects unless an LRU or LFU
// policy needs each key's own.
const (
	maxIntEncodingLen = 20
	maxEmbstrLen      = 44
	sharedIntegers    = 10000
	sharedRefcount    = math.MaxInt32
)

// Redis's refusals of OBJECT FREQ and IDLETIME under the other policy kind.
const (
	errNotLFU = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that " +
		"when switching between policies at runtime LRU and LFU data will take some time to adjust."
	errLFU = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when " +
		"switching between policies at runtime LRU and LFU data will take some time to adjust."
)

// objectValue looks OBJECT's key up without touching it: its value when
// it is short enough to be an integer (nil otherwise), its info, and
// whether it exists. A missing key is answered with a null.
func objectValue(x *Ctx) (small []byte, info engine.KeyInfo, obj datatype.Object, ok bool) {
	x.View(func(tx *engine.Tx) {
		tx.SetNoTouch(true)
		if info, ok = tx.Info(x.Args[2]); !ok || (info.Size > maxIntEncodingLen && info.Kind == datatype.KindString) {
			return
		}
		var e engine.Entry
		e, ok = tx.Peek(x.Args[2])
		small, obj = e.Value, e.Object
	})
	if !ok {
		x.W.Null()
	}
	return small, info, obj, ok
}

// isIntEncoded reports whether Redis stores v as an integer: a long that
// prints back as the same bytes.
func isIntEncoded(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > maxIntEncodingLen {
		return 0, false
	}
	n, ok := ParseInt64(v)
	return n, ok && strconv.FormatInt(n, 10) == string(v)
}

// cmdObjectEncoding names the encoding Redis would give the string.
func cmdObjectEncoding(x *Ctx) {
	small, info, obj, ok := objectValue(x)
	switch {
	case !ok:
	case obj != nil:
		x.W.BulkString(obj.Encoding())
	case isIntString(small):
		x.W.BulkString("int")
	case info.Size <= maxEmbstrLen:
		x.W.BulkString("embstr")
	default:
		x.W.BulkString("raw")
	}
}

// isIntString reports whether v is int-encoded.
func isIntString(v []byte) bool { _, ok := isIntEncoded(v); return ok }

// cmdObjectRefcount is 1, or a shared integer's INT_MAX where Redis would
// share it.
func cmdObjectRefcount(x *Ctx) {
	small, _, _, ok := objectValue(x)
	if !ok {
		return
	}
	n, isInt := isIntEncoded(small)
	lruOrLFU := policyIs(x, "lru") || policyIs(x, "lfu")
	if isInt && n >= 0 && n < sharedIntegers && (x.Engine.MaxMemory() == 0 || !lruOrLFU) {
		x.W.Int(sharedRefcount)
		return
	}
	x.W.Int(1)
}

// cmdObjectIdletime is the seconds since the key's last access.
func cmdObjectIdletime(x *Ctx) {
	var info engine.KeyInfo
	var ok bool
	var now int64
	x.View(func(tx *engine.Tx) {
		info, ok = tx.Info(x.Args[2])
		now = tx.Now()
	})
	switch {
	case !ok:
		x.W.Null()
	case policyIs(x, "lfu"):
		x.W.Error(errLFU)
	default:
		x.W.Int(max(now-info.LastUsed, 0) / 1000)
	}
}

// cmdObjectFreq is the key's LFU access counter, decayed to now (Redis's
// LFUDecrAndReturn), under an LFU policy; Redis refuses under the others.
func cmdObjectFreq(x *Ctx) {
	var info engine.KeyInfo
	var ok bool
	x.View(func(tx *engine.Tx) {
		tx.SetNoTouch(true)
		info, ok = tx.Info(x.Args[2])
	})
	switch {
	case !ok:
		x.W.Null()
	case !policyIs(x, "lfu"):
		x.W.Error(errNotLFU)
	default:
		x.W.Int(int64(info.Freq))
	}
}

// policyIs reports whether maxmemory-policy is of a kind ("lru", "lfu").
func policyIs(x *Ctx, kind string) bool {
	return strings.Contains(strings.ToLower(x.Diagnostics.Setting("maxmemory-policy")), kind)
}
