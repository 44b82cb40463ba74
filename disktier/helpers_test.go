package disktier

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// bf16KV returns n bytes shaped like one chunk of a bf16 KV cache: rows of
// `channels` values drawn from a standard normal distribution, where a few
// outlier channels are scaled up (as real K caches have), converted to bf16
// with round-to-nearest-even and stored little-endian. n is rounded down to
// whole elements; an odd n gets one trailing random byte.
func bf16KV(seed uint64, n int) []byte {
	const channels = 1024
	rng := rand.New(rand.NewPCG(seed, 0x6b76))
	scale := make([]float64, channels)
	for c := range scale {
		scale[c] = 0.5 + rng.Float64()
		if rng.IntN(100) < 2 {
			scale[c] *= 20 // outlier channel
		}
	}
	out := make([]byte, n)
	for i := 0; i+1 < n; i += 2 {
		v := float32(rng.NormFloat64() * scale[(i/2)%channels])
		binary.LittleEndian.PutUint16(out[i:], toBF16(v))
	}
	if n%2 == 1 {
		out[n-1] = byte(rng.Uint32())
	}
	return out
}

func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1 // round to nearest even
	return uint16(b >> 16)
}

// randomBytes returns n incompressible bytes.
func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x72616e64))
	out := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(out[i:], rng.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		out[i] = byte(rng.Uint32())
	}
	return out
}

// openTest opens a store in a fresh temporary directory (or dir, if given)
// and closes it when the test ends unless the test closed it.
func openTest(tb testing.TB, opts Options) *Store {
	tb.Helper()
	if opts.Dir == "" {
		opts.Dir = tb.TempDir()
	}
	if opts.MaxDisk == 0 {
		opts.MaxDisk = -1
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
