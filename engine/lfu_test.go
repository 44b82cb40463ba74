package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func freqOf(e *Engine, db int, key string) uint8 {
	var f uint8
	e.View(db, func(tx *Tx) {
		info, _ := tx.Info([]byte(key))
		f = info.Freq
	})
	return f
}

// TestLFULogIncrIsCertainUpToInitValThenLogarithmic pins LFULogIncr: below
// and at LFU_INIT_VAL every access counts whatever the random draw; above
// it the probability is 1/((c-5)*factor+1); 255 saturates; factor 0
// always counts.
func TestLFULogIncrIsCertainUpToInitValThenLogarithmic(t *testing.T) {
	p := Policy{Name: "allkeys-lfu", LogFactor: 10}
	tests := []struct {
		counter uint8
		r       float64
		want    uint8
	}{
		{0, 0.999999, 1},
		{5, 0.999999, 6},
		{6, 1.0 / 11 * 0.99, 7}, // p = 1/11
		{6, 1.0 / 11 * 1.01, 6},
		{15, 1.0 / 101 * 0.99, 16}, // p = 1/101
		{15, 1.0 / 101 * 1.01, 15},
		{255, 0, 255},
	}
	for _, tc := range tests {
		if got := p.lfuIncr(tc.counter, tc.r); got != tc.want {
			t.Errorf("lfuIncr(%d, %v) = %d, want %d", tc.counter, tc.r, got, tc.want)
		}
	}
	zero := Policy{LogFactor: 0}
	if got := zero.lfuIncr(200, 0.999999); got != 201 {
		t.Errorf("factor 0: lfuIncr(200) = %d, want 201", got)
	}
}

// TestLFUCounterStartsAtFiveCountsReadsAndDecays: a new key starts at 5,
// reads count (with factor 0, every one), OBJECT FREQ-style reads through
// Info do not, and an idle key loses one per lfu-decay-time minutes.
func TestLFUCounterStartsAtFiveCountsReadsAndDecays(t *testing.T) {
	e, clock := newTestEngine(0)
	e.SetPolicy(Policy{Name: "allkeys-lfu", LogFactor: 0, DecayMinutes: 2})
	set(e, 0, "k", []byte("v"), 0)
	if f := freqOf(e, 0, "k"); f != lfuInitVal {
		t.Fatalf("new key: freq %d, want %d", f, lfuInitVal)
	}
	for range 10 {
		get(e, 0, "k")
	}
	if f := freqOf(e, 0, "k"); f != 15 {
		t.Fatalf("after 10 reads: freq %d, want 15", f)
	}
	e.View(0, func(tx *Tx) { tx.Exists([]byte("k")) })
	if f := freqOf(e, 0, "k"); f != 15 {
		t.Fatalf("EXISTS counted: freq %d, want 15", f)
	}
	clock.Advance(7 * time.Minute) // three periods of 2 minutes, and a bit
	if f := freqOf(e, 0, "k"); f != 12 {
		t.Fatalf("after 7 idle minutes: freq %d, want 12", f)
	}
	get(e, 0, "k") // decays, stores, then counts
	clock.Advance(time.Minute)
	if f := freqOf(e, 0, "k"); f != 13 {
		t.Fatalf("after a read and 1 minute: freq %d, want 13", f)
	}
	clock.Advance(time.Hour)
	if f := freqOf(e, 0, "k"); f != 0 {
		t.Fatalf("after an idle hour: freq %d, want 0", f)
	}
	e.Update(0, func(tx *Tx) { tx.SetFreq([]byte("k"), 200) })
	if f := freqOf(e, 0, "k"); f != 200 {
		t.Fatalf("SetFreq: freq %d, want 200", f)
	}
}

// TestLFUPolicyEvictsTheLeastFrequentlyUsed: under allkeys-lfu the victim
// is the key read least often, though it is not the least recently used;
// under allkeys-lru it is the least recently used.
func TestLFUPolicyEvictsTheLeastFrequentlyUsed(t *testing.T) {
	value := make([]byte, 1000)
	per := int64(itemOverhead + 2 + 1000)
	for _, tc := range []struct{ policy, evicted string }{
		{"allkeys-lfu", "k2"},
		{"allkeys-lru", "k1"},
	} {
		e, _ := newTestEngine(3 * per)
		e.SetPolicy(Policy{Name: tc.policy, LogFactor: 0})
		set(e, 0, "k1", value, 0)
		for range 5 {
			get(e, 0, "k1") // k1: 10
		}
		set(e, 0, "k2", value, 0) // k2: 5
		set(e, 0, "k3", value, 0)
		for range 5 {
			get(e, 0, "k3") // k3: 10
		}
		set(e, 0, "k4", value, 0) // needs room: one of k1..k3 goes
		if _, ok := get(e, 0, tc.evicted); ok {
			t.Errorf("%s: %s should have been evicted", tc.policy, tc.evicted)
		}
		if st := e.Stats(); st.EvictedKeys != 1 || st.Keys != 3 {
			t.Errorf("%s: stats %+v, want 1 evicted and 3 keys", tc.policy, st)
		}
	}
}

// TestVolatileAndNoEvictionPolicies: volatile-* evicts only keys with a
// TTL, and noeviction nothing: a write that needs room gets ErrOOM.
func TestVolatileAndNoEvictionPolicies(t *testing.T) {
	value := make([]byte, 1000)
	per := int64(itemOverhead + 2 + 1000)
	e, clock := newTestEngine(2 * per)
	e.SetPolicy(Policy{Name: "volatile-lru", LogFactor: 10})
	far := clock.Now().Add(time.Hour).UnixMilli()
	set(e, 0, "p1", value, 0)
	set(e, 0, "v1", value, far)
	set(e, 0, "p2", value, 0)
	if _, ok := get(e, 0, "v1"); ok {
		t.Fatal("volatile-lru: v1, the only key with a TTL, was not evicted")
	}
	if _, ok := get(e, 0, "p1"); !ok {
		t.Fatal("volatile-lru: p1 (no TTL) was evicted")
	}
	e.SetPolicy(Policy{Name: "noeviction", LogFactor: 10})
	set(e, 0, "p3", value, 0) // over the bound now; nothing may go
	if st := e.Stats(); st.Keys != 3 {
		t.Fatalf("noeviction: %d keys, want 3", st.Keys)
	}
	if err := e.Reserve(context.Background(), nil); !errors.Is(err, ErrOOM) {
		t.Fatalf("noeviction: Reserve = %v, want ErrOOM", err)
	}
}

// TestLFUPolicyDemotesTheLeastFrequentlyUsedGroups: with a disk tier,
// memory pressure demotes under allkeys-lfu the groups read least often,
// so chunks read many times stay in memory though they are the least
// recently used; under allkeys-lru those are the ones demoted.
func TestLFUPolicyDemotesTheLeastFrequentlyUsedGroups(t *testing.T) {
	for _, tc := range []struct {
		policy       string
		hotResident  bool
		otherwiseMsg string
	}{
		{"allkeys-lfu", true, "a chunk read often was demoted"},
		{"allkeys-lru", false, "the least recently used chunk stayed in memory"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			e, store := openTiered(t, t.TempDir(), 1<<20)
			defer store.Close()
			e.SetPolicy(Policy{Name: tc.policy, LogFactor: 0})
			runEngine(t, e)
			for i := range 8 {
				putPair(t, e, i)
			}
			for range 10 {
				for i := range 4 {
					pairState(e, i) // reads both keys of chunks 0..3
				}
			}
			for i := 4; i < 8; i++ {
				pairState(e, i) // chunks 4..7: read once, more recently
			}
			for i := 8; i < 40; i++ { // 2 MiB more: most groups must go to disk
				putPair(t, e, i)
			}
			for i := range 4 {
				k := fmt.Sprintf("m@1@0@%04d@bfloat16kv_bytes", i)
				var info KeyInfo
				e.View(0, func(tx *Tx) {
					tx.SetNoTouch(true)
					info, _ = tx.Info([]byte(k))
				})
				if resident := info.Tier != "disk"; resident != tc.hotResident {
					t.Errorf("chunk %d is in tier %q: %s", i, info.Tier, tc.otherwiseMsg)
				}
			}
		})
	}
}
