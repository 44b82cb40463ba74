package glob

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestGlobMatchFollowsRedisRules(t *testing.T) {
	cases := []struct {
		pattern, str string
		want         bool
	}{
		{"*", "", false}, // KEYS and SCAN special-case a lone "*"
		{"*", "anything", true},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h*llo", "heeeello", true},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hbllo", true},
		{"h[a-b]llo", "hcllo", false},
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hello", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"user:*", "user:1", true},
		{"user:*", "users", false},
		{"[abc", "a", true},
		{"", "", true},
		{"", "a", false},
		{"a*", "a", true},
		{"*a", "", false},
	}
	for _, tc := range cases {
		if got := Match([]byte(tc.pattern), []byte(tc.str)); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.str, got, tc.want)
		}
	}
}

// redisStringMatch is a line-for-line port of stringmatchlen_impl from
// Redis 7.0.15's util.c (recursive, with the 7.0.9 skipLongerMatches and
// nesting limit), the reference Match must agree with. at() returns
// the NUL that ends Redis's sds strings where the C code reads one byte
// past the pattern.
func redisStringMatch(pattern, str []byte, nocase bool) bool {
	skip := false
	return redisStringMatchImpl(pattern, str, nocase, &skip, 0)
}

func redisStringMatchImpl(pattern, str []byte, nocase bool, skipLongerMatches *bool, nesting int) bool {
	at := func(b []byte, i int) byte {
		if i < len(b) {
			return b[i]
		}
		return 0
	}
	lower := func(b byte) byte {
		if 'A' <= b && b <= 'Z' {
			return b + 'a' - 'A'
		}
		return b
	}
	if nesting > 1000 {
		return false
	}
	for len(pattern) > 0 && len(str) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 0 && at(pattern, 1) == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 1 {
				return true
			}
			for len(str) > 0 {
				if redisStringMatchImpl(pattern[1:], str, nocase, skipLongerMatches, nesting+1) {
					return true
				}
				if *skipLongerMatches {
					return false
				}
				str = str[1:]
			}
			*skipLongerMatches = true
			return false
		case '?':
			str = str[1:]
		case '[':
			pattern = pattern[1:]
			not := at(pattern, 0) == '^'
			if not {
				pattern = pattern[1:]
			}
			match := false
			for {
				if at(pattern, 0) == '\\' && len(pattern) >= 2 {
					pattern = pattern[1:]
					if pattern[0] == str[0] {
						match = true
					}
				} else if at(pattern, 0) == ']' {
					break
				} else if len(pattern) == 0 {
					// pattern--; patternLen++ in C: step back onto the
					// last byte so that the pattern++ below ends it.
					pattern = []byte{0}
					break
				} else if len(pattern) >= 3 && pattern[1] == '-' {
					start, end, c := pattern[0], pattern[2], str[0]
					if start > end {
						start, end = end, start
					}
					if nocase {
						start, end, c = lower(start), lower(end), lower(c)
					}
					pattern = pattern[2:]
					if c >= start && c <= end {
						match = true
					}
				} else if !nocase && pattern[0] == str[0] || nocase && lower(pattern[0]) == lower(str[0]) {
					match = true
				}
				pattern = pattern[1:]
			}
			if not {
				match = !match
			}
			if !match {
				return false
			}
			str = str[1:]
		case '\\':
			if len(pattern) >= 2 {
				pattern = pattern[1:]
			}
			fallthrough
		default:
			if !nocase && pattern[0] != str[0] || nocase && lower(pattern[0]) != lower(str[0]) {
				return false
			}
			str = str[1:]
		}
		pattern = pattern[1:]
		if len(str) == 0 {
			for at(pattern, 0) == '*' {
				pattern = pattern[1:]
			}
			break
		}
	}
	return len(pattern) == 0 && len(str) == 0
}

// randomGlob draws a short pattern over a small alphabet so that matches,
// classes, ranges, escapes and unterminated classes all come up often.
func randomGlob(rng *rand.Rand, n int) []byte {
	const pieces = "aAbB*?[]^-\\"
	p := make([]byte, rng.IntN(n+1))
	for i := range p {
		p[i] = pieces[rng.IntN(len(pieces))]
	}
	return p
}

func randomGlobSubject(rng *rand.Rand, n int) []byte {
	const letters = "aAbB*?[]-\\"
	s := make([]byte, rng.IntN(n+1))
	for i := range s {
		s[i] = letters[rng.IntN(len(letters))]
	}
	return s
}

func TestGlobMatchAgreesWithRedisOnRandomPatterns(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 6))
	n := 300_000
	if testing.Short() {
		n = 30_000
	}
	for range n {
		pattern, str := randomGlob(rng, 10), randomGlobSubject(rng, 8)
		for _, nocase := range []bool{false, true} {
			want := redisStringMatch(pattern, str, nocase)
			if got := stringMatch(pattern, str, nocase); got != want {
				t.Fatalf("stringMatch(%q, %q, nocase=%v) = %v, Redis says %v", pattern, str, nocase, got, want)
			}
		}
	}
}

func TestGlobMatchFollowsRedisNestingLimit(t *testing.T) {
	str := []byte(strings.Repeat("a", 1100))
	for _, stars := range []int{999, 1000, 1001, 1002} {
		for _, tail := range []string{"", "*", "a", "a*"} {
			pattern := []byte(strings.Repeat("a*", stars) + tail)
			want := redisStringMatch(pattern, str, false)
			if got := Match(pattern, str); got != want {
				t.Errorf("%d stars + %q: Match = %v, Redis says %v", stars, tail, got, want)
			}
		}
	}
}

// TestGlobMatchIsPolynomial pins down CVE-2022-36021's class: patterns
// whose stars a backtracking matcher retries exponentially often. Each
// must answer in well under a second; before, the first one alone ran for
// hours.
func TestGlobMatchIsPolynomial(t *testing.T) {
	a40 := strings.Repeat("a", 40)
	a10k := strings.Repeat("a", 10_000)
	cases := []struct {
		pattern, str string
		want         bool
	}{
		{strings.Repeat("a*", 20) + "b", a40, false},
		{strings.Repeat("*a", 20) + "b", a40, false},
		{strings.Repeat("?*", 20) + "b", a40, false},
		{strings.Repeat("[a]*", 20) + "b", a40, false},
		{strings.Repeat("[^b]*", 20) + "b", a40, false},
		{strings.Repeat("a*", 500) + "b", a10k, false},
		{strings.Repeat("*a", 900) + "b", a10k, false},
		{strings.Repeat("a*", 500), a10k, true},
		{strings.Repeat("a*", 20) + "b", a40 + "b", true},
	}
	for _, tc := range cases {
		done := make(chan bool, 2)
		start := time.Now()
		go func() {
			done <- Match([]byte(tc.pattern), []byte(tc.str))
			done <- MatchFold([]byte(tc.pattern), []byte(tc.str))
		}()
		for range 2 {
			select {
			case got := <-done:
				if got != tc.want {
					t.Errorf("pattern %.30q... (%d bytes) on %d bytes = %v, want %v", tc.pattern, len(tc.pattern), len(tc.str), got, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("pattern %.30q... (%d bytes) on %d bytes still running after 10s", tc.pattern, len(tc.pattern), len(tc.str))
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("pattern %.30q... on %d bytes took %v", tc.pattern, len(tc.str), d)
		}
	}
}

// FuzzGlobMatch checks Match and its nocase variant against the port
// of Redis's own matcher. Inputs are capped so that a pathological pattern
// cannot make the recursive reference itself the slow part.
func FuzzGlobMatch(f *testing.F) {
	for _, seed := range [][2]string{
		{"h[^e]llo", "hallo"}, {"a*b*c", "aXbYc"}, {`h\*llo`, "h*llo"}, {"[abc", "a"},
		{"[a-]x", "]x"}, {"*", ""}, {"[^", "x"}, {`[\]]`, "]"}, {"[Z-a]", "_"},
		{strings.Repeat("a*", 20) + "b", strings.Repeat("a", 40)},
	} {
		f.Add([]byte(seed[0]), []byte(seed[1]))
	}
	f.Fuzz(func(t *testing.T, pattern, str []byte) {
		if len(pattern) > 64 || len(str) > 64 {
			return
		}
		for _, nocase := range []bool{false, true} {
			want := redisStringMatch(pattern, str, nocase)
			if got := stringMatch(pattern, str, nocase); got != want {
				t.Fatalf("stringMatch(%q, %q, nocase=%v) = %v, Redis says %v", pattern, str, nocase, got, want)
			}
		}
	})
}
