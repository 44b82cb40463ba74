package commands

import (
	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
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
func readHash(x *Ctx, tx *engine.Tx, key []byte) (h *datatype.Hash, ok bool) {
	obj, err := tx.Object(key, datatype.KindHash, true)
	if err != nil {
		x.W.Error(err.Error())
		return nil, false
	}
	if obj == nil {
		return nil, true
	}
	return obj.(*datatype.Hash), true
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

// storeChanged records the change of a collection obtained from a
// write lookup: a created one is stored, an existing one marked modified.
func storeChanged(tx *engine.Tx, key []byte, obj datatype.Object, created bool) {
	if created {
		tx.SetObject(key, obj, 0)
	} else {
		tx.Modified(key)
	}
}

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
	x.Update(func(tx *engine.Tx) {
		h, created, ok := writeHash(x, tx, args[1])
		if !ok {
			return
		}
		added := 0
		for i := 2; i < len(args); i += 2 {
			if h.Set(string(args[i]), string(args[i+1]), lim) {
				added++
			}
		}
		storeChanged(tx, args[1], h, created)
		if name == "hmset" {
			x.W.OK()
		} else {
			x.W.Int(int64(added))
		}
	})
}

func cmdHget(x *Ctx) {
	args := x.Args
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, args[1])
		if !ok {
			return
		}
		if h != nil {
			if v, found := h.Get(string(args[2])); found {
				x.W.BulkString(v)
				return
			}
		}
		x.W.Null()
	})
}

func cmdHdel(x *Ctx) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		h, ok := readHashForWrite(x, tx, args[1])
		if !ok || h == nil {
			if ok {
				x.W.Int(0)
			}
			return
		}
		deleted := 0
		for _, f := range args[2:] {
			if h.Delete(string(f)) {
				deleted++
			}
		}
		if deleted > 0 {
			tx.Modified(args[1])
		}
		x.W.Int(int64(deleted))
	})
}

// readHashForWrite looks key up as a hash to change it without creating
// it: nil when missing.
func readHashForWrite(x *Ctx, tx *engine.Tx, key []byte) (*datatype.Hash, bool) {
	h, created, ok := writeHash(x, tx, key)
	if created {
		return nil, ok
	}
	return h, ok
}

func cmdHlen(x *Ctx) {
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, x.Args[1])
		switch {
		case !ok:
		case h == nil:
			x.W.Int(0)
		default:
			x.W.Int(int64(h.Len()))
		}
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
			_, found = h.Get(string(x.Args[2]))
		}
		if found {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	})
}

func cmdHgetall(x *Ctx) {
	x.View(func(tx *engine.Tx) {
		h, ok := readHash(x, tx, x.Args[1])
		switch {
		case !ok:
		case h == nil:
			x.W.Map(0)
		default:
			x.W.Map(h.Len())
			h.Range(func(f, v string) bool {
				x.W.BulkString(f)
				x.W.BulkString(v)
				return true
			})
		}
	})
}
