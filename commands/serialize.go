package commands

import (
	"errors"
	"math"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
	"github.com/kvserver/kvserver/rdb"
)

// DUMP and RESTORE (Redis's cluster.c): values in Redis 7.0's RDB
// serialization, so they move between redis-server and kvserver.

// serializeCommands are DUMP, RESTORE and RESTORE-ASKING's rows.
var serializeCommands = []*Spec{
	{Name: "dump", Arity: 2, Flags: FlagReadonly, ACL: "@keyspace @read @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdDump},
	{Name: "restore", Arity: -4, Flags: FlagWrite | FlagDenyoom, ACL: "@keyspace @write @slow @dangerous",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdRestore},
	// RESTORE-ASKING is what MIGRATE sends a cluster node.
	{Name: "restore-asking", Arity: -4, Flags: FlagWrite | FlagDenyoom | FlagAsking, ACL: "@keyspace @write @slow @dangerous",
		KeySpecs: []KeySpec{{Flags: KeyOW | KeyUpdate, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdRestore},
}

// cmdDump serializes a string after the engine lock (strings are never
// changed in place) and an object under it.
func cmdDump(x *Ctx) {
	var e engine.Entry
	var found bool
	var payload []byte
	var err error
	x.View(func(tx *engine.Tx) {
		e, found = tx.Get(x.Args[1])
		if found && e.Object != nil {
			payload, err = rdb.Dump(rdb.Value{Object: e.Object})
		}
	})
	switch {
	case !found:
		x.W.Null()
		return
	case e.Object == nil:
		payload, err = rdb.Dump(rdb.Value{String: e.Value})
	}
	if err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	x.W.Bulk(payload)
}

// restoreOptions are RESTORE's options after the payload.
type restoreOptions struct {
	replace, absTTL bool
	// idleSeconds and freq are IDLETIME's and FREQ's values, -1 when
	// absent.
	idleSeconds, freq int64
}

// parseRestoreOptions parses REPLACE, ABSTTL, IDLETIME and FREQ as
// restoreCommand does, answering the error reply on failure.
func parseRestoreOptions(x *Ctx) (restoreOptions, bool) {
	o := restoreOptions{idleSeconds: -1, freq: -1}
	args := x.Args
	idle, freq := false, false
	for j := 4; j < len(args); j++ {
		more := len(args) - j - 1
		switch {
		case equalFold(args[j], "replace"):
			o.replace = true
		case equalFold(args[j], "absttl"):
			o.absTTL = true
		case equalFold(args[j], "idletime") && more >= 1 && !freq:
			v, ok := intArg(x, j+1)
			if !ok {
				return o, false
			}
			if v < 0 {
				x.W.Error("ERR Invalid IDLETIME value, must be >= 0")
				return o, false
			}
			idle = true
			o.idleSeconds = v
			j++
		case equalFold(args[j], "freq") && more >= 1 && !idle:
			v, ok := intArg(x, j+1)
			if !ok {
				return o, false
			}
			if v < 0 || v > 255 {
				x.W.Error("ERR Invalid FREQ value, must be >= 0 and <= 255")
				return o, false
			}
			freq = true
			o.freq = v
			j++
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// cmdRestore decodes the payload before the engine lock and answers its
// errors in Redis's order: options, an existing key, the TTL, the
// payload's checksum, then its data.
func cmdRestore(x *Ctx) {
	o, ok := parseRestoreOptions(x)
	if !ok {
		return
	}
	ttl, ttlOK := ParseInt64(x.Args[2])
	value, decodeErr := rdb.Restore(x.Session.Own(3), rdb.Limits{Hash: hashLimits(x), ZSet: zsetLimits(x), Set: setLimits(x), List: listLimits(x)})
	key := x.Args[1]
	x.Update(func(tx *engine.Tx) {
		if _, exists := tx.Stat(key, false); exists && !o.replace {
			x.W.Error("BUSYKEY Target key name already exists.")
			return
		}
		switch {
		case !ttlOK:
			x.W.Error(errNotInteger)
			return
		case ttl < 0:
			x.W.Error("ERR Invalid TTL value, must be >= 0")
			return
		case errors.Is(decodeErr, rdb.ErrPayload):
			x.W.Error("ERR " + rdb.ErrPayload.Error())
			return
		case decodeErr != nil:
			x.W.Error("ERR " + rdb.ErrData.Error())
			return
		}
		if ttl != 0 && !o.absTTL {
			ttl += tx.Now()
		}
		deleted := o.replace && tx.Delete(key)
		if ttl != 0 && ttl <= tx.Now() {
			if deleted {
				tx.Notify(notify.Generic, "del", key)
			}
			x.W.OK() // already expired: nothing is stored
			return
		}
		e := engine.Entry{Kind: datatype.KindString, Value: value.String, Object: value.Object, ExpireAt: ttl}
		tx.Put(key, e)
		// objectSetLRUOrLFU: FREQ counts under an LFU policy, IDLETIME
		// under the others.
		if lfu := policyIs(x, "lfu"); lfu && o.freq >= 0 {
			tx.SetFreq(key, uint8(o.freq))
		} else if !lfu && o.idleSeconds >= 0 {
			tx.SetIdle(key, min(o.idleSeconds, math.MaxInt64/1000)*1000)
		}
		tx.Notify(notify.Generic, "restore", key)
		x.W.OK()
	})
}
