package commands

import (
	"strconv"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/grouping"
	"github.com/kvserver/kvserver/kvmeta"
	"github.com/kvserver/kvserver/resp"
)

// kvserver's own commands for KV-cache clients, dot-named like Redis module
// commands. An LMCache deployment needs none of them; a client that knows
// them saves round trips (KVC.PROBE) and keeps hot prefixes resident
// (KVC.PIN).

// kvcacheCommands are the kvcache family's rows.
var kvcacheCommands = []*Spec{
	{Name: "kvc.probe", Arity: -2, Flags: FlagReadonly | FlagFast, ACL: "@read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(1), Find: Range(-1, 1, 0)}},
		GetKeys:  probeKeys, Routing: RouteFirstKey, Handler: cmdKvcProbe},
	{Name: "kvc.pin", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(2), Find: Range(-1, 1, 0)}}, Handler: cmdKvcPin},
	{Name: "kvc.unpin", Arity: -2, Flags: FlagWrite | FlagFast, ACL: "@write @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyUpdate, Begin: Index(1), Find: Range(-1, 1, 0)}}, Handler: cmdKvcUnpin},
	{Name: "kvc.info", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdKvcInfo},
}

// KVCache is what the kvcache family needs to know of the server beyond
// its engine.
type KVCache interface {
	// SlotMap is the cluster slot map in effect, nil outside cluster
	// mode.
	SlotMap() *cluster.Map
	// MaxLeaseMs is --max-lease-ms: the longest lease KVC.PROBE LEASE
	// grants.
	MaxLeaseMs() int64
	// MaxPinSeconds is --max-pin-seconds: the longest pin KVC.PIN grants,
	// 0 for no bound.
	MaxPinSeconds() int64
}

// parsePositive parses a strictly positive integer argument, returning the
// error reply on failure: Redis's integer error, or "invalid <what> in
// '<cmd>' command" for zero and negatives.
func parsePositive(arg []byte, what, cmd string) (int64, string) {
	n, ok := ParseInt64(arg)
	if !ok {
		return 0, errNotInteger
	}
	if n <= 0 {
		return 0, "ERR invalid " + what + " in '" + cmd + "' command"
	}
	return n, ""
}

// probeKeys finds KVC.PROBE's keys: every argument after the LEASE option.
func probeKeys(args [][]byte) []int {
	first := 1
	if len(args) >= 3 && equalFold(args[1], "lease") {
		first = 3
	}
	keys := make([]int, 0, len(args)-first)
	for i := first; i < len(args); i++ {
		keys = append(keys, i)
	}
	return keys
}

// cmdKvcProbe implements KVC.PROBE [LEASE ms] key [key ...]: the number of
// leading keys that exist, in any tier, stopping at the first missing one.
// With LEASE each found key's chunk group is protected from eviction for ms
// milliseconds, so the GETs that follow cannot miss. ms is clamped to
// --max-lease-ms: the command needs only @read, so a lease must not outlast
// what KVC.PIN (a write, bounded by --max-pin-seconds) may grant, and
// now+ms must not overflow.
//
// In cluster mode the probe is routed by its first key alone (MOVED when
// another node serves it) and also stops at the first key of a slot this
// node does not serve: chained chunk keys hash to different slots, so
// refusing them with CROSSSLOT would make the probe useless. A count n
// below the number of keys means key n is missing or lives elsewhere; a
// client probes again from key n (its node answers) until a probe returns
// 0, one round trip per change of node instead of one per chunk.
func cmdKvcProbe(x *Ctx) {
	args := x.Args
	keys := args[1:]
	var leaseMs int64
	if equalFold(keys[0], "lease") && len(keys) >= 2 {
		if len(keys) < 3 {
			x.W.Error("ERR wrong number of arguments for 'kvc.probe' command")
			return
		}
		var msg string
		if leaseMs, msg = parsePositive(keys[1], "lease time", "kvc.probe"); msg != "" {
			x.W.Error(msg)
			return
		}
		leaseMs = min(leaseMs, x.KVCache.MaxLeaseMs())
		keys = keys[2:]
	}
	m := x.KVCache.SlotMap()
	x.View(func(tx *engine.Tx) {
		n := 0
		for _, k := range keys {
			if m != nil && !m.Serves(cluster.KeySlot(k)) {
				break
			}
			if !tx.Exists(k) {
				break
			}
			if leaseMs > 0 {
				tx.Lease(k, tx.Now()+leaseMs)
			}
			n++
		}
		x.W.Int(int64(n))
	})
}

// cmdKvcPin implements KVC.PIN seconds key [key ...]: it pins the chunk
// groups of the existing keys for seconds (at most --max-pin-seconds) and
// returns how many distinct groups it pinned. Pinned groups may move
// between tiers but are never evicted from the server.
func cmdKvcPin(x *Ctx) {
	args := x.Args
	secs, msg := parsePositive(args[1], "pin time", "kvc.pin")
	if msg != "" {
		x.W.Error(msg)
		return
	}
	if max := x.KVCache.MaxPinSeconds(); max > 0 && secs > max {
		x.W.Error("ERR pin time exceeds the maximum of " + strconv.FormatInt(max, 10) + " seconds")
		return
	}
	x.Update(func(tx *engine.Tx) {
		groups := map[string]bool{}
		for _, k := range args[2:] {
			if g, ok := tx.Pin(k, tx.Now()+secs*1000); ok {
				groups[g] = true
			}
		}
		x.W.Int(int64(len(groups)))
	})
}

// cmdKvcUnpin implements KVC.UNPIN key [key ...]: it removes the pins of
// the keys' groups and returns how many groups were pinned.
func cmdKvcUnpin(x *Ctx) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		groups := map[string]bool{}
		for _, k := range args[1:] {
			if g, ok := tx.Unpin(k); ok {
				groups[g] = true
			}
		}
		x.W.Int(int64(len(groups)))
	})
}

// cmdKvcInfo implements KVC.INFO key: where and how the key is stored, its
// chunk group, lease and pin deadlines, codec, and the decoded LMCache
// metadata of its group. A missing key gets a null reply.
func cmdKvcInfo(x *Ctx) {
	args := x.Args
	var info engine.KeyInfo
	var found bool
	var metaValue []byte
	x.View(func(tx *engine.Tx) {
		info, found = tx.Info(args[1])
		if !found {
			return
		}
		for _, k := range info.GroupKeys {
			if grouping.IsMetadata(k) && k != info.Group {
				if e, ok := tx.Peek([]byte(k)); ok {
					metaValue = e.Value
				}
			}
		}
	})
	if !found {
		x.W.Null()
		return
	}
	deadline := func(ms int64) int64 {
		if ms == 0 {
			return -1
		}
		return ms
	}
	meta := describeMetadata(metaValue)
	x.W.Map(9)
	x.W.BulkString("tier")
	x.W.BulkString(info.Tier)
	x.W.BulkString("size")
	x.W.Int(info.Size)
	x.W.BulkString("group")
	x.W.BulkString(info.Group)
	x.W.BulkString("group_keys")
	x.W.Array(len(info.GroupKeys))
	for _, k := range info.GroupKeys {
		x.W.BulkString(k)
	}
	x.W.BulkString("expire_at_ms")
	x.W.Int(deadline(info.ExpireAt))
	x.W.BulkString("lease_until_ms")
	x.W.Int(deadline(info.LeaseUntil))
	x.W.BulkString("pin_until_ms")
	x.W.Int(deadline(info.PinUntil))
	x.W.BulkString("codec")
	x.W.BulkString(info.Codec)
	x.W.BulkString("metadata")
	if meta == nil {
		x.W.Null()
		return
	}
	x.W.WriteValue(*meta)
}

// describeMetadata decodes a chunk's LMCache metadata for KVC.INFO: one map
// per KV group (length, format, dtype, shape), or nil when there is none or
// it does not parse.
func describeMetadata(raw []byte) *resp.Value {
	if raw == nil {
		return nil
	}
	chunk, err := kvmeta.Parse(raw)
	if err != nil {
		return nil
	}
	groups := make([]resp.Value, 0, len(chunk.Groups))
	for _, m := range chunk.Groups {
		shape := make([]resp.Value, len(m.Shape))
		for i, d := range m.Shape {
			shape[i] = resp.Int(int64(d))
		}
		groups = append(groups, resp.Map(
			resp.Bulk("length"), resp.Int(m.Length),
			resp.Bulk("format"), resp.Bulk(m.Format.String()),
			resp.Bulk("dtype"), resp.Bulk(m.DType.String()),
			resp.Bulk("shape"), resp.Array(shape...),
		))
	}
	v := resp.Array(groups...)
	return &v
}
