package engine

import (
	"time"

	"github.com/kvserver/kvserver/datatype"
)

// Leases and pins protect a chunk group from being dropped from the server
// (by the memory bound without a disk tier, or by the disk bound); the group
// may still move between tiers. Both are held in the index only and end on
// their own: a restart, a deadline passing, or the group's last key being
// deleted ends them. The protect map remembers the groups that carry
// either, so they can be counted and swept without walking the keyspace.

// KeyInfo describes where and how a key is stored (KVC.INFO).
type KeyInfo struct {
	// Tier is "memory" (value only in memory), "disk" (only on disk) or
	// "memory+disk" (in memory, with a current copy on disk).
	Tier string
	// Size is the value's length in bytes (for a value of another kind
	// than a string, the memory it uses).
	Size int64
	// Kind is the value's type.
	Kind datatype.Kind
	// Group is the chunk group the key belongs to and GroupKeys its keys.
	Group     string
	GroupKeys []string
	// LeaseUntil and PinUntil are unix-millisecond deadlines, 0 for none.
	LeaseUntil, PinUntil int64
	// ExpireAt is the key's expiry in unix milliseconds, 0 for none.
	ExpireAt int64
	// Codec is how the value is stored: "none", or the quantization mode.
	Codec string
	// LastUsed is the unix millisecond of the key's last access.
	LastUsed int64
	// Freq is the key's LFU access counter, decayed to now (OBJECT FREQ).
	Freq uint8
	// Memory is what the engine accounts for the key: its index entry,
	// name and, when resident, its value.
	Memory int64
}

// Lease protects key's group until untilMs unless it is already protected
// longer. It reports whether the key exists.
func (tx *Tx) Lease(key []byte, untilMs int64) bool {
	it := tx.find(string(key))
	if it == nil {
		return false
	}
	g := it.grp
	if untilMs > g.leaseUntil {
		g.leaseUntil = untilMs
		tx.e.protect[g] = struct{}{}
	}
	return true
}

// Pin protects key's group until untilMs (replacing an earlier pin) and
// reports the group pinned, nil when the key does not exist.
func (tx *Tx) Pin(key []byte, untilMs int64) (group string, ok bool) {
	it := tx.find(string(key))
	if it == nil {
		return "", false
	}
	it.grp.pinUntil = untilMs
	tx.e.protect[it.grp] = struct{}{}
	return it.grp.name, true
}

// Unpin removes the pin of key's group and reports the group, false when
// the key does not exist or its group was not pinned.
func (tx *Tx) Unpin(key []byte) (group string, ok bool) {
	it := tx.find(string(key))
	if it == nil || it.grp.pinUntil <= tx.now {
		return "", false
	}
	it.grp.pinUntil = 0
	return it.grp.name, true
}

// Info describes key without loading its value from disk.
func (tx *Tx) Info(key []byte) (KeyInfo, bool) {
	it := tx.find(string(key))
	if it == nil {
		return KeyInfo{}, false
	}
	g := it.grp
	info := KeyInfo{Size: it.length, Kind: it.kind, Group: g.name, ExpireAt: it.expireAt, Codec: "none",
		LastUsed: it.lastUsed, Freq: tx.e.policy.lfuDecayed(it, tx.now), Memory: it.memSize()}
	if it.quantized {
		info.Codec = tx.e.opts.KVQuant.String()
		if tx.e.opts.KVQuant == 0 {
			info.Codec = "quantized"
		}
	}
	switch {
	case it.resident && it.onDisk:
		info.Tier = "memory+disk"
	case it.resident:
		info.Tier = "memory"
	default:
		info.Tier = "disk"
	}
	if g.leaseUntil > tx.now {
		info.LeaseUntil = g.leaseUntil
	}
	if g.pinUntil > tx.now {
		info.PinUntil = g.pinUntil
	}
	for _, m := range g.items {
		info.GroupKeys = append(info.GroupKeys, m.key)
	}
	return info, true
}

// ProtectionStats counts the groups under a live lease or pin.
type ProtectionStats struct {
	LeasedGroups, PinnedGroups int64
}

// Protection sweeps ended leases and pins and counts the live ones.
func (e *Engine) Protection() ProtectionStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sweepProtectLocked(e.opts.Now().UnixMilli())
	var st ProtectionStats
	now := e.opts.Now().UnixMilli()
	for g := range e.protect {
		if g.leaseUntil > now {
			st.LeasedGroups++
		}
		if g.pinUntil > now {
			st.PinnedGroups++
		}
	}
	return st
}

// sweepProtectLocked forgets groups whose lease and pin have both ended.
func (e *Engine) sweepProtectLocked(now int64) {
	for g := range e.protect {
		if !g.protected(now) {
			delete(e.protect, g)
		}
	}
}

// protectSweepInterval is how often Run forgets ended leases and pins.
const protectSweepInterval = time.Second
