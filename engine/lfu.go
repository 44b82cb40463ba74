package engine

import (
	"math/rand/v2"
	"strings"
)

// Access frequency, Redis's LFU (evict.c): every key carries an 8-bit
// logarithmic counter and the minute it was last decremented. A new key
// starts at lfuInitVal so that it is not evicted before it had a chance to
// be read again; each access first applies the decay (one step per
// DecayMinutes since the last one) and then increments the counter with
// probability 1/((counter-lfuInitVal)*LogFactor+1), so the first
// increments above lfuInitVal are certain and 255 takes about a million
// accesses with the default factor 10. The engine keeps the counter under
// every policy (it costs one byte and one random number per access); the
// LFU policies rank eviction by it (victimLocked) and OBJECT FREQ reports
// it.

// lfuInitVal is LFU_INIT_VAL: a new key's counter.
const lfuInitVal = 5

// Policy is maxmemory-policy and its LFU parameters.
type Policy struct {
	// Name is the policy as Redis spells it ("allkeys-lru",
	// "volatile-lfu", "noeviction", ...). The zero value means
	// allkeys-lru.
	Name string
	// LogFactor is lfu-log-factor: how slowly the counter grows.
	LogFactor int64
	// DecayMinutes is lfu-decay-time: the minutes per decrement of an
	// idle key's counter; 0 never decays.
	DecayMinutes int64
}

// DefaultPolicy is Redis's defaults: allkeys-lru (kvserver's; Redis's
// own is noeviction), lfu-log-factor 10, lfu-decay-time 1. A new engine
// starts with it.
func DefaultPolicy() Policy { return Policy{Name: "allkeys-lru", LogFactor: 10, DecayMinutes: 1} }

// LFU reports whether the policy ranks keys by access frequency.
func (p Policy) LFU() bool { return p.Name == "allkeys-lfu" || p.Name == "volatile-lfu" }

// NoEviction reports whether the policy forbids dropping keys to make
// room: memory pressure still demotes values to the disk tier (their keys
// stay readable), but nothing is evicted, and writes that need room get
// OOM instead.
func (p Policy) NoEviction() bool { return p.Name == "noeviction" }

// SetPolicy changes the eviction policy and the LFU parameters (CONFIG
// SET maxmemory-policy, lfu-log-factor, lfu-decay-time).
func (e *Engine) SetPolicy(p Policy) {
	e.mu.Lock()
	e.policy = p
	e.mu.Unlock()
}

// lfuMinutes is LFUGetTimeInMinutes: unix minutes, modulo 2^16.
func lfuMinutes(nowMs int64) uint16 { return uint16(nowMs / 60000) }

// lfuElapsed is LFUTimeElapsed: minutes since ldt, wrapping once.
func lfuElapsed(now, ldt uint16) int64 {
	if now >= ldt {
		return int64(now - ldt)
	}
	return 65535 - int64(ldt) + int64(now)
}

// lfuDecayed is LFUDecrAndReturn: the counter after the decay due at
// nowMs, without storing it.
func (p Policy) lfuDecayed(it *item, nowMs int64) uint8 {
	if p.DecayMinutes <= 0 {
		return it.freq
	}
	periods := lfuElapsed(lfuMinutes(nowMs), it.freqTime) / p.DecayMinutes
	if periods >= int64(it.freq) {
		return 0
	}
	return it.freq - uint8(periods)
}

// lfuIncr is LFULogIncr with r drawn uniformly from [0, 1).
func (p Policy) lfuIncr(counter uint8, r float64) uint8 {
	if counter == 255 {
		return 255
	}
	base := max(float64(counter)-lfuInitVal, 0)
	if r < 1/(base*float64(p.LogFactor)+1) {
		counter++
	}
	return counter
}

// countAccess is updateLFU: decay, then a logarithmic increment.
func (e *Engine) countAccess(it *item, nowMs int64) {
	if !e.policy.LFU() {
		// As in Redis, the counter is kept only under an LFU policy
		// (OBJECT FREQ refuses to answer otherwise).
		return
	}
	c := e.policy.lfuDecayed(it, nowMs)
	it.freq = e.policy.lfuIncr(c, rand.Float64())
	it.freqTime = lfuMinutes(nowMs)
}

// newFreq gives a new item its initial counter.
func newFreq(it *item, nowMs int64) {
	it.freq = lfuInitVal
	it.freqTime = lfuMinutes(nowMs)
}

// SetFreq sets key's access counter, as RESTORE ... FREQ does under an
// LFU policy, and reports whether the key exists.
func (tx *Tx) SetFreq(key []byte, freq uint8) bool {
	it := tx.find(string(key))
	if it == nil {
		return false
	}
	it.freq = freq
	it.freqTime = lfuMinutes(tx.now)
	return true
}

// SetIdle makes key look idle for idleMs (its last access that long ago),
// as RESTORE ... IDLETIME does under an LRU policy, and reports whether
// the key exists. The group keeps its place in the eviction order.
func (tx *Tx) SetIdle(key []byte, idleMs int64) bool {
	it := tx.find(string(key))
	if it == nil {
		return false
	}
	it.lastUsed = tx.now - idleMs
	return true
}

// lfuWindow is how many of the least recently used groups an LFU policy
// compares to choose a victim: Redis's eviction pool holds 16 candidates.
const lfuWindow = 16

// groupFreq is a group's counter for eviction: its most used key's, so a
// chunk whose metadata is read often keeps its data too.
func (p Policy) groupFreq(g *group, nowMs int64) uint8 {
	var f uint8
	for _, it := range g.items {
		f = max(f, p.lfuDecayed(it, nowMs))
	}
	return f
}

// volatileOnly reports whether the policy evicts only keys with a TTL.
func (p Policy) volatileOnly() bool { return strings.HasPrefix(p.Name, "volatile-") }

// volatile reports whether some key of g has a TTL.
func (g *group) volatile() bool {
	for _, it := range g.items {
		if it.expireAt != 0 {
			return true
		}
	}
	return false
}

// victimLocked chooses the group to demote or evict from list: under an
// LRU policy the least recently used one that skip allows, under an LFU
// policy the least frequently used among the lfuWindow least recently used
// ones that skip allows (the first of them on a tie). To evict (drop the
// keys, not demote them to disk) a volatile-* policy considers only groups
// with a TTL, and noeviction none. nil when there is no candidate.
func (e *Engine) victimLocked(list *lruList, nowMs int64, evict bool, skip func(*group) bool) *group {
	if evict && e.policy.NoEviction() {
		return nil
	}
	var best *group
	var bestFreq uint8
	seen := 0
	for g := list.tail; g != nil && seen < lfuWindow; g = g.prev {
		if skip(g) || (evict && e.policy.volatileOnly() && !g.volatile()) {
			continue
		}
		if !e.policy.LFU() {
			return g
		}
		seen++
		if f := e.policy.groupFreq(g, nowMs); best == nil || f < bestFreq {
			best, bestFreq = g, f
		}
	}
	return best
}
