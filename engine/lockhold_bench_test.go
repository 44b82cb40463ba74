package engine

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/disktier"
)

// BenchmarkWriteBehindHugeObjectLockHold writes a 2-million-member sorted
// set and a 2-million-field hash behind to a real disk tier (and, with
// demote, demotes them under a memory bound they exceed) while another
// goroutine runs GET on a small string key in a loop, and reports the
// longest GET and the longest hold of the engine lock; after a demotion,
// the same while Preload reads the value back (promote-*). Run it once:
//
//	go test ./engine -run '^$' -bench WriteBehindHugeObject -benchtime 1x
func BenchmarkWriteBehindHugeObjectLockHold(b *testing.B) {
	const members = 2_000_000
	lim := datatype.ZSetLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	hlim := datatype.HashLimits{MaxListpackEntries: 128, MaxListpackValue: 64}
	for _, c := range []struct {
		kind   datatype.Kind
		demote bool
	}{{datatype.KindZSet, false}, {datatype.KindHash, false}, {datatype.KindZSet, true}, {datatype.KindHash, true}} {
		kind, name, maxMemory, want := c.kind, c.kind.String(), int64(0), "memory+disk"
		if c.demote {
			name, maxMemory, want = name+"-demote", 64<<20, "disk"
		}
		b.Run(name, func(b *testing.B) {
			var obj datatype.Object
			switch kind {
			case datatype.KindZSet:
				z := datatype.NewZSet()
				for i := range members {
					z.Set("member:"+strconv.Itoa(i), float64(i%1000), lim)
				}
				obj = z
			default:
				h := datatype.NewHash()
				for i := range members {
					f := strconv.Itoa(i)
					h.Set([]byte("field:"+f), []byte("value:"+f), hlim)
				}
				obj = h
			}
			ctx := context.Background()
			store, err := disktier.Open(ctx, disktier.Options{Dir: b.TempDir(), MaxDisk: -1})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			e, err := Open(ctx, Options{Cold: store, MaxMemory: maxMemory})
			if err != nil {
				b.Fatal(err)
			}
			set(e, 0, "small", []byte("v"), 0)
			stop := runEngine(b, e)
			defer stop()
			// getLoop runs GET on the small key in a goroutine of its own
			// until done (polled here) reports true, and returns the
			// longest GET.
			getLoop := func(done func() bool) time.Duration {
				stop := make(chan struct{})
				worst := make(chan time.Duration)
				go func() {
					var w time.Duration
					for {
						select {
						case <-stop:
							worst <- w
							return
						default:
						}
						start := time.Now()
						if _, ok := get(e, 0, "small"); !ok {
							panic("small key lost")
						}
						w = max(w, time.Since(start))
						time.Sleep(100 * time.Microsecond)
					}
				}()
				for !done() {
					time.Sleep(time.Millisecond)
				}
				close(stop)
				return <-worst
			}
			tierIs := func(want string) func() bool {
				return func() bool {
					var tier string
					e.View(0, func(tx *Tx) {
						info, _ := tx.Info([]byte("huge"))
						tier = info.Tier
					})
					return tier == want
				}
			}
			b.ResetTimer()
			for range b.N {
				e.Update(0, func(tx *Tx) { tx.SetObject([]byte("huge"), obj, 0) })
				e.ResetStats()
				maxGet := getLoop(tierIs(want))
				// The rest of the pass (the flush) completes.
				time.Sleep(1500 * time.Millisecond)
				b.ReportMetric(float64(maxGet.Microseconds())/1000, "max-get-ms")
				b.ReportMetric(float64(e.Stats().LockMaxHold.Microseconds())/1000, "max-lock-hold-ms")
				if !c.demote {
					continue
				}
				// A command reading the demoted value promotes it.
				e.ResetStats()
				preloaded := make(chan struct{})
				go func() {
					e.Preload(ctx, 0, [][]byte{[]byte("huge")})
					close(preloaded)
				}()
				maxGet = getLoop(func() bool {
					select {
					case <-preloaded:
						return true
					default:
						return false
					}
				})
				b.ReportMetric(float64(maxGet.Microseconds())/1000, "promote-max-get-ms")
				b.ReportMetric(float64(e.Stats().LockMaxHold.Microseconds())/1000, "promote-max-lock-hold-ms")
			}
		})
	}
}
