package commands

import (
	"math"
	"strconv"

	"github.com/kvserver/kvserver/datatype"
)

// Score parsing, score printing and the score and lex ranges of the
// sorted-set family, as Redis's t_zset.c, util.c and object.c do them.

const (
	errMinMaxFloat = "ERR min or max is not a float"
	errMinMaxLex   = "ERR min or max not valid string range item"
	errZNaN        = "ERR resulting score is not a number (NaN)"
)

// strtod parses the longest prefix of b that C's strtod accepts: leading
// white space, a sign, then a decimal number with an optional exponent, a
// hexadecimal one (0x, optional binary exponent p), "inf", "infinity" or
// "nan". n is the length parsed (0 when nothing was); erange reports a
// finite text that overflowed to infinity or underflowed to zero.
func strtod(b []byte) (f float64, n int, erange bool) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	start := i
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	neg := i > start && b[start] == '-'
	if m := matchWord(b[i:], "infinity"); m > 0 {
		return math.Inf(int(sign(neg))), i + m, false
	}
	if m := matchWord(b[i:], "inf"); m > 0 {
		return math.Inf(int(sign(neg))), i + m, false
	}
	if m := matchWord(b[i:], "nan"); m > 0 {
		i += m
		if j := nanSuffix(b[i:]); j > 0 {
			i += j
		}
		return math.NaN(), i, false
	}
	digitsStart := i
	hex := i+1 < len(b) && b[i] == '0' && (b[i+1]|0x20) == 'x'
	isDigit := isDecDigit
	if hex {
		i += 2
		isDigit = isHexDigit
	}
	nd := 0
	nonzero := false
	for i < len(b) && isDigit(b[i]) {
		nonzero = nonzero || b[i] != '0'
		i, nd = i+1, nd+1
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for j < len(b) && isDigit(b[j]) {
			nonzero = nonzero || b[j] != '0'
			j, nd = j+1, nd+1
		}
		if nd > 0 {
			i = j
		}
	}
	if nd == 0 {
		if hex { // "0x" with no digits: strtod reads the "0"
			return math.Copysign(0, sign(neg)), digitsStart + 1, false
		}
		return 0, 0, false
	}
	mantEnd := i
	expChar := byte('e')
	if hex {
		expChar = 'p'
	}
	if i < len(b) && (b[i]|0x20) == expChar {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		k := j
		for k < len(b) && isDecDigit(b[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	text := string(b[start:i])
	if hex && mantEnd == i {
		text += "p0"
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, 0, false
	}
	erange = math.IsInf(f, 0) || (f == 0 && nonzero)
	return f, i, erange
}

func sign(neg bool) float64 {
	if neg {
		return -1
	}
	return 1
}

func isDecDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDecDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

// matchWord returns len(word) when b starts with word, ignoring case.
func matchWord(b []byte, word string) int {
	if len(b) < len(word) || !equalFold(b[:len(word)], word) {
		return 0
	}
	return len(word)
}

// nanSuffix is the length of strtod's optional "(n-char-sequence)" after
// "nan", 0 when there is none.
func nanSuffix(b []byte) int {
	if len(b) == 0 || b[0] != '(' {
		return 0
	}
	for j := 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == ')':
			return j + 1
		case isDecDigit(c), 'a' <= c|0x20 && c|0x20 <= 'z', c == '_':
		default:
			return 0
		}
	}
	return 0
}

// parseScore parses a score like Redis's getDoubleFromObject: the whole
// argument, no leading space, no overflow or underflow to zero, no NaN.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) {
		return 0, false
	}
	f, n, erange := strtod(b)
	if n != len(b) || (erange && (math.IsInf(f, 0) || f == 0)) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// formatScore formats a score as ZSCAN prints it. A listpack keeps its
// scores as Redis 7.0's d2string wrote them (integers up to 2^62 without
// a fraction, -0 as 0, others %.17g); a skiplist's are printed %.17g.
func formatScore(f float64, listpack bool) string {
	switch {
	case listpack:
		return datatype.ListpackScore(f)
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// scoreRange is Redis's zrangespec: min and max, each maybe exclusive.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

// parseScoreBound parses one end of a score range ("(1.5", "-inf", "3")
// like zslParseRange: strtod over the whole rest, NaN refused.
func parseScoreBound(b []byte) (f float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		b, ex = b[1:], true
	}
	f, n, _ := strtod(b)
	if (n != len(b) && b[n] != 0) || math.IsNaN(f) {
		return 0, false, false
	}
	return f, ex, true
}

// parseScoreRange parses min and max, answering Redis's error itself.
func parseScoreRange(x *Ctx, min, max []byte) (scoreRange, bool) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseScoreBound(min)
	r.max, r.maxex, ok2 = parseScoreBound(max)
	if !ok1 || !ok2 {
		x.W.Error(errMinMaxFloat)
		return r, false
	}
	return r, true
}

// below reports whether e comes before the range (score under min).
func (r *scoreRange) below(e datatype.ZEntry) bool {
	if r.minex {
		return e.Score <= r.min
	}
	return e.Score < r.min
}

// notAbove reports whether e is at most max.
func (r *scoreRange) notAbove(e datatype.ZEntry) bool {
	if r.maxex {
		return e.Score < r.max
	}
	return e.Score <= r.max
}

// lexBound is one end of a lex range: "-" (lowest), "+" (highest), or a
// member, inclusive ("[a") or exclusive ("(a").
type lexBound struct {
	value string
	// inf is -1 for "-", 1 for "+", 0 for a member.
	inf int
	ex  bool
}

// lexRange is Redis's zlexrangespec.
type lexRange struct{ min, max lexBound }

func parseLexBound(b []byte) (lexBound, bool) {
	if len(b) == 0 {
		return lexBound{}, false
	}
	switch b[0] {
	case '+', '-':
		if len(b) != 1 {
			return lexBound{}, false
		}
		if b[0] == '+' {
			return lexBound{inf: 1, ex: true}, true
		}
		return lexBound{inf: -1, ex: true}, true
	case '(':
		return lexBound{value: string(b[1:]), ex: true}, true
	case '[':
		return lexBound{value: string(b[1:])}, true
	}
	return lexBound{}, false
}

// parseLexRange parses min and max, answering Redis's error itself.
func parseLexRange(x *Ctx, min, max []byte) (lexRange, bool) {
	lo, ok1 := parseLexBound(min)
	hi, ok2 := parseLexBound(max)
	if !ok1 || !ok2 {
		x.W.Error(errMinMaxLex)
		return lexRange{}, false
	}
	return lexRange{lo, hi}, true
}

// cmpLex compares a member with a bound like Redis's sdscmplex.
func cmpLex(member string, b *lexBound) int {
	switch {
	case b.inf < 0:
		return 1
	case b.inf > 0:
		return -1
	case member < b.value:
		return -1
	case member > b.value:
		return 1
	}
	return 0
}

// below reports whether e comes before the range.
func (r *lexRange) below(e datatype.ZEntry) bool {
	c := cmpLex(e.Member, &r.min)
	if r.min.ex {
		return c <= 0
	}
	return c < 0
}

// notAbove reports whether e is at most max.
func (r *lexRange) notAbove(e datatype.ZEntry) bool {
	c := cmpLex(e.Member, &r.max)
	if r.max.ex {
		return c < 0
	}
	return c <= 0
}

// ranksOf returns the ranks [lo, hi) of the entries in a range given by
// its two predicates (empty when lo >= hi).
func ranksOf(z *datatype.ZSet, below, notAbove func(datatype.ZEntry) bool) (lo, hi int) {
	lo = z.CountWhile(below)
	hi = z.CountWhile(notAbove)
	return lo, max(lo, hi)
}
