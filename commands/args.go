package commands

import (
	"math"
	"math/big"
	"strings"

	"github.com/kvserver/kvserver/datatype"
)

// The fixed vocabulary of Redis error replies used by several families.
const (
	errSyntax      = "ERR syntax error"
	errNotInteger  = "ERR value is not an integer or out of range"
	errNotFloat    = "ERR value is not a valid float"
	errDBIndex     = "ERR DB index is out of range"
	errStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	errOverflow    = "ERR increment or decrement would overflow"
	errNaNInf      = "ERR increment would produce NaN or Infinity"
	// errMustBePositive is getPositiveLongFromObjectOrReply's error.
	errMustBePositive = "ERR value is out of range, must be positive"
)

// ParseInt64 parses a decimal integer exactly like Redis's string2ll: no
// spaces, no '+', no leading zeros, no "-0", at most 20 characters.
func ParseInt64(b []byte) (int64, bool) { return datatype.ParseInt64(b) }

// intArg parses x.Args[i] with ParseInt64, answering Redis's
// not-an-integer error if it is not one.
func intArg(x *Ctx, i int) (int64, bool) {
	n, ok := ParseInt64(x.Args[i])
	if !ok {
		x.W.Error(errNotInteger)
	}
	return n, ok
}

// positiveArg parses x.Args[i] as an integer of at least 0, answering
// Redis's getPositiveLongFromObjectOrReply error if it is not one.
func positiveArg(x *Ctx, i int) (int64, bool) {
	n, ok := ParseInt64(x.Args[i])
	if !ok || n < 0 {
		x.W.Error(errMustBePositive)
		return 0, false
	}
	return n, true
}

// optionalCount is the count that LPOP, RPOP, ZPOPMIN and ZPOPMAX take
// as their argument 2: -1 when it is not given.
func optionalCount(x *Ctx) (int64, bool) {
	if len(x.Args) < 3 {
		return -1, true
	}
	return positiveArg(x, 2)
}

// randCountArg parses the count of SRANDMEMBER, HRANDFIELD and
// ZRANDMEMBER (argument 2) with Redis's range, -LONG_MAX to LONG_MAX.
func randCountArg(x *Ctx) (int64, bool) {
	n, ok := intArg(x, 2)
	if ok && n == math.MinInt64 {
		x.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false
	}
	return n, ok
}

// parseMultiPop parses numkeys key [key ...] END [COUNT count] from
// argument i, END being first or second (LEFT|RIGHT, MIN|MAX), with the
// errors of Redis's lmpopGenericCommand and zmpopGenericCommand: the keys,
// whether END is second, and the count (1 when not given).
func parseMultiPop(x *Ctx, i int, first, second string) (keys [][]byte, isSecond bool, count int64, ok bool) {
	args := x.Args
	n, ok := ParseInt64(args[i])
	if !ok || n < 1 {
		x.W.Error("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	}
	if n >= int64(len(args)-i-1) {
		x.W.Error(errSyntax)
		return nil, false, 0, false
	}
	where := i + 1 + int(n)
	switch end := args[where]; {
	case equalFold(end, first):
	case equalFold(end, second):
		isSecond = true
	default:
		x.W.Error(errSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := where + 1; j < len(args); j++ {
		if count != -1 || !equalFold(args[j], "count") || j+1 >= len(args) {
			x.W.Error(errSyntax)
			return nil, false, 0, false
		}
		j++
		if count, ok = ParseInt64(args[j]); !ok || count < 1 {
			x.W.Error("ERR count should be greater than 0")
			return nil, false, 0, false
		}
	}
	return args[i+1 : where], isSecond, max(count, 1), true
}

// addOverflows reports whether cur+delta overflows an int64 (Redis's
// INCRBY and HINCRBY check).
func addOverflows(cur, delta int64) bool {
	return (delta < 0 && cur < 0 && delta < math.MinInt64-cur) ||
		(delta > 0 && cur > 0 && delta > math.MaxInt64-cur)
}

// countArg parses argument i as a count of at least least, answering
// Redis's errors itself: not an integer, or a syntax error below least
// (SCAN COUNT, MEMORY USAGE SAMPLES).
func countArg(x *Ctx, i int, least int64) (int64, bool) {
	n, ok := intArg(x, i)
	if ok && n < least {
		x.W.Error(errSyntax)
		return 0, false
	}
	return n, ok
}

// longDoublePrec is the mantissa of the x86 80-bit long double that Redis
// uses for INCRBYFLOAT; big.Float at this precision reproduces its results.
const longDoublePrec = 64

// maxLongDoubleExp is where an 80-bit long double overflows to infinity.
const maxLongDoubleExp = 16384

// parseLongDouble parses a float like Redis's string2ld (strtold): no
// leading space, the whole string consumed, no NaN, no overflow.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= 5*1024 || isSpace(b[0]) {
		return nil, false
	}
	s := string(b)
	low := strings.ToLower(strings.TrimLeft(s, "+-"))
	if low == "inf" || low == "infinity" {
		f := new(big.Float).SetPrec(longDoublePrec).SetInf(strings.HasPrefix(s, "-"))
		return f, true
	}
	if strings.ContainsAny(s, "_ \t\r\n") || strings.Contains(low, "nan") {
		return nil, false
	}
	f, _, err := big.ParseFloat(s, 0, longDoublePrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	if f.MantExp(nil) > maxLongDoubleExp {
		return nil, false
	}
	return f, true
}

// formatLongDouble formats like Redis's ld2string in human-friendly mode:
// "%.17Lf" with trailing zeros (and a trailing '.') removed, "-0" as "0".
func formatLongDouble(f *big.Float) string {
	s := f.Text('f', 17)
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// equalFold compares an argument with a lower-case ASCII keyword.
func equalFold(arg []byte, lower string) bool {
	if len(arg) != len(lower) {
		return false
	}
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// isSpace reports whether c is white space for C's isspace, as Redis's
// argument parsers (and resp's inline command splitter) see it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Truncate cuts s to at most n bytes, as Redis does to the arguments it
// quotes in error replies.
func Truncate(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) > n {
		return s[:n]
	}
	return s
}
