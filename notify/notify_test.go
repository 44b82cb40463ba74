package notify

import "testing"

// TestParseAndStringMatchRedis pins the canonical CONFIG GET form Redis
// 7.0.15 reports for what CONFIG SET was given (checked against it).
func TestParseAndStringMatchRedis(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"AKEn", "AKE"}, {"KEA", "AKE"}, {"nKE", "nKE"}, {"Ex", "xE"},
		{"x$gK", "g$xK"}, {"", ""}, {"mA", "Am"}, {"Kg$lshzxetd", "AK"},
	} {
		c, ok := Parse(tc.in)
		if !ok {
			t.Fatalf("Parse(%q) failed", tc.in)
		}
		if got := c.String(); got != tc.out {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.out)
		}
	}
	if _, ok := Parse("Q"); ok {
		t.Error("Parse accepted Q")
	}
}

func TestPublishesNeedsKOrE(t *testing.T) {
	c, _ := Parse("x")
	if c.Publishes(Expired) {
		t.Error("x without K or E publishes")
	}
	c, _ = Parse("xK")
	if !c.Publishes(Expired) || c.Publishes(Generic) {
		t.Error("xK: wrong classes")
	}
}

func TestChannels(t *testing.T) {
	if got := string(KeyspaceChannel(nil, 3, "k")); got != "__keyspace@3__:k" {
		t.Error(got)
	}
	if got := string(KeyeventChannel(nil, 0, "set")); got != "__keyevent@0__:set" {
		t.Error(got)
	}
}
