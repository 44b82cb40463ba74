package resp

// globMatch reports whether str matches pattern with Redis's glob rules
// (stringmatchlen in util.c): * ? [abc] [^abc] [a-z] and \ escapes.
func globMatch(pattern, str []byte) bool {
	return globMatchDepth(pattern, str, 0)
}

func globMatchDepth(pattern, str []byte, depth int) bool {
	// Like Redis, bound the recursion so a pathological pattern cannot
	// exhaust the stack.
	if depth > 1000 {
		return false
	}
	for len(pattern) > 0 && len(str) > 0 {
		switch pattern[0] {
		case '*':
			for len(pattern) > 1 && pattern[1] == '*' {
				pattern = pattern[1:]
			}
			if len(pattern) == 1 {
				return true
			}
			for len(str) > 0 {
				if globMatchDepth(pattern[1:], str, depth+1) {
					return true
				}
				str = str[1:]
			}
			return false
		case '?':
			str = str[1:]
		case '[':
			pattern = pattern[1:]
			not := len(pattern) > 0 && pattern[0] == '^'
			if not {
				pattern = pattern[1:]
			}
			match := false
			for {
				if len(pattern) == 0 {
					break
				}
				if pattern[0] == '\\' && len(pattern) >= 2 {
					pattern = pattern[1:]
					if pattern[0] == str[0] {
						match = true
					}
				} else if pattern[0] == ']' {
					break
				} else if len(pattern) >= 3 && pattern[1] == '-' {
					start, end := pattern[0], pattern[2]
					if start > end {
						start, end = end, start
					}
					pattern = pattern[2:]
					if str[0] >= start && str[0] <= end {
						match = true
					}
				} else if pattern[0] == str[0] {
					match = true
				}
				pattern = pattern[1:]
			}
			if len(pattern) == 0 {
				// Unterminated class: Redis treats the end as ']'.
				pattern = []byte{']'}
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
			if pattern[0] != str[0] {
				return false
			}
			str = str[1:]
		}
		pattern = pattern[1:]
		if len(str) == 0 {
			for len(pattern) > 0 && pattern[0] == '*' {
				pattern = pattern[1:]
			}
			break
		}
	}
	return len(pattern) == 0 && len(str) == 0
}
