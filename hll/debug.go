package hll

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Decode lists the opcodes of the sparse value v the way PFDEBUG DECODE
// does: "z:N" (ZERO), "Z:N" (XZERO), "v:VALUE,N" (VAL), space-separated.
func Decode(v []byte) string {
	var b strings.Builder
	for r := range runs(v) {
		b.WriteByte(r.kind)
		b.WriteByte(':')
		if r.kind == 'v' {
			b.WriteString(strconv.Itoa(r.val) + ",")
		}
		b.WriteString(strconv.Itoa(r.n) + " ")
	}
	return strings.TrimRight(b.String(), " ")
}

// selfTestCycles is how many random register fillings SelfTest checks
// (HLL_TEST_CYCLES).
const selfTestCycles = 1000

// SelfTest is PFSELFTEST: it checks that every dense register keeps what
// was written without touching its neighbours, then adds ten million
// distinct elements to a dense and a sparse value side by side, checking
// at each power of ten that the sparse one stays sparse while small, that
// both estimate the same cardinality, and that the error stays within six
// standard errors. Its errors read as Redis's ("TESTFAILED ...").
func SelfTest(ctx context.Context, sparseMax int64) error {
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	dense := make([]byte, DenseSize)
	regs := dense[HeaderSize:]
	want := make([]int, Registers)
	for range selfTestCycles {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("ERR self test stopped: %w", err)
		}
		for i := range Registers {
			want[i] = rng.IntN(RegisterMax + 1)
			denseSetRegister(regs, i, want[i])
		}
		for i := range Registers {
			if got := denseGet(regs, i); got != want[i] {
				return fmt.Errorf("TESTFAILED Register %d should be %d but is %d", i, want[i], got)
			}
		}
	}

	clear(regs)
	copy(dense, "HYLL")
	sparse := New()
	relerr := 1.04 / math.Sqrt(Registers)
	checkpoint := int64(1)
	seed := rng.Uint64()
	var ele [8]byte
	for j := int64(1); j <= 10_000_000; j++ {
		if j&0xfffff == 0 && ctx.Err() != nil {
			return fmt.Errorf("ERR self test stopped: %w", ctx.Err())
		}
		u := uint64(j) ^ seed
		for k := range ele {
			ele[k] = byte(u >> (8 * k))
		}
		index, count := PatLen(ele[:])
		denseSet(regs, index, count)
		var err error
		if sparse, _, err = Add(sparse, ele[:], sparseMax); err != nil {
			return fmt.Errorf("TESTFAILED %w", err)
		}
		if j != checkpoint {
			continue
		}
		if j < sparseMax/2 && EncodingOf(sparse) != Sparse {
			return fmt.Errorf("TESTFAILED sparse encoding not used")
		}
		d, _ := Count(dense)
		s, err := Count(sparse)
		if err != nil || d != s {
			return fmt.Errorf("TESTFAILED dense/sparse disagree")
		}
		abserr := checkpoint - int64(d)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1 // collisions make larger errors likely at 10
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			return fmt.Errorf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, abserr)
		}
		checkpoint *= 10
	}
	return nil
}
