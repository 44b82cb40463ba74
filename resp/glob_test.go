package resp

import "testing"

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
		if got := globMatch([]byte(tc.pattern), []byte(tc.str)); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.str, got, tc.want)
		}
	}
}
