package glob

// maxGlobStars is the star group from which Redis gives up: its recursive
// stringmatchlen returns "no match" past a nesting of 1000, which a pattern
// reaches at its 1001st group of stars unless that group ends the pattern.
// Kept so that both servers answer the same for such patterns.
const maxGlobStars = 1000

// Match reports whether str matches pattern with Redis's glob rules
// (stringmatchlen in util.c, Redis 7.0): * ? [abc] [^abc] [a-z] and \
// escapes, case-sensitive as KEYS, SCAN MATCH and ACL key patterns are.
func Match(pattern, str []byte) bool { return stringMatch(pattern, str, false) }

// MatchFold is Match ignoring ASCII case, Redis's nocase variant
// (CONFIG GET and COMMAND LIST FILTERBY PATTERN).
func MatchFold(pattern, str []byte) bool { return stringMatch(pattern, str, true) }

// stringMatch is Redis's stringmatchlen without its recursion: one pass
// over the string that, on a mismatch, goes back only to the last star seen
// and lets it swallow one more byte. Every pattern token other than a star
// matches exactly one byte, so a later star can always stand in for what an
// earlier one would have swallowed, and retrying earlier stars never finds
// a match the last one misses (the argument behind Redis 7.0.9's
// skipLongerMatches, CVE-2022-36021). That bounds the work by
// len(pattern)*len(str) instead of growing exponentially with the stars,
// so "a*a*a*...*b" against a long run of a's answers at once.
//
// The answers are Redis's, quirks included: an empty string matches only
// the empty pattern (Redis's loop needs a byte to start, so "*" does not
// match ""), an unterminated class ends with the pattern, "[a-]" is a range
// up to ']', and an escape inside a class compares case-sensitively even
// when nocase is set.
func stringMatch(pattern, str []byte, nocase bool) bool {
	if len(str) == 0 {
		return len(pattern) == 0
	}
	p, s := 0, 0
	// restartP and restartS are where to resume after a mismatch: the
	// token after the last star, and the byte it was last tried at.
	restartP, restartS := -1, 0
	stars := 0
	for {
		if s == len(str) {
			// Redis skips trailing stars once the string is used up.
			for p < len(pattern) && pattern[p] == '*' {
				p++
			}
			if p == len(pattern) {
				return true
			}
		} else if p < len(pattern) && pattern[p] == '*' {
			for p+1 < len(pattern) && pattern[p+1] == '*' {
				p++
			}
			if p+1 == len(pattern) {
				return true
			}
			if stars++; stars > maxGlobStars {
				return false
			}
			p++
			restartP, restartS = p, s
			continue
		} else if p < len(pattern) {
			if next, ok := matchToken(pattern, p, str[s], nocase); ok {
				p, s = next, s+1
				continue
			}
		}
		// Mismatch: the last star swallows one more byte. Redis never
		// tries the empty rest of the string after a star, and the token
		// after a star needs a byte anyway.
		if restartP < 0 || restartS+1 >= len(str) {
			return false
		}
		restartS++
		p, s = restartP, restartS
	}
}

// matchToken matches the one-byte token at pattern[p] (anything but a
// star) against c and returns where the next token starts.
func matchToken(pattern []byte, p int, c byte, nocase bool) (next int, ok bool) {
	switch pattern[p] {
	case '?':
		return p + 1, true
	case '[':
		return matchClass(pattern, p+1, c, nocase)
	case '\\':
		if p+1 < len(pattern) {
			p++
		}
	}
	return p + 1, byteEqual(pattern[p], c, nocase)
}

// matchClass matches c against the class whose body starts at pattern[i]
// (after the '[') and returns where the next token starts. The loop is
// Redis's, step for step.
func matchClass(pattern []byte, i int, c byte, nocase bool) (next int, ok bool) {
	not := i < len(pattern) && pattern[i] == '^'
	if not {
		i++
	}
	match := false
	for {
		if i == len(pattern) {
			// Unterminated: the class ends with the pattern.
			i--
			break
		}
		if pattern[i] == '\\' && len(pattern)-i >= 2 {
			i++
			if pattern[i] == c {
				match = true
			}
		} else if pattern[i] == ']' {
			break
		} else if len(pattern)-i >= 3 && pattern[i+1] == '-' {
			start, end, b := pattern[i], pattern[i+2], c
			if start > end {
				start, end = end, start
			}
			if nocase {
				start, end, b = lowerASCII(start), lowerASCII(end), lowerASCII(b)
			}
			i += 2
			if b >= start && b <= end {
				match = true
			}
		} else if byteEqual(pattern[i], c, nocase) {
			match = true
		}
		i++
	}
	if not {
		match = !match
	}
	return i + 1, match
}

func byteEqual(a, b byte, nocase bool) bool {
	if nocase {
		return lowerASCII(a) == lowerASCII(b)
	}
	return a == b
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
