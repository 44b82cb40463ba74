package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/config"
)

// TestEveryConfigSettingHasAnAccessor checks configState against the
// settings table: a setting wired into the server by hand has an accessor
// that can change it exactly when it is mutable; one read by name has none
// (CONFIG uses the live settings).
func TestEveryConfigSettingHasAnAccessor(t *testing.T) {
	rows := map[string]bool{}
	for _, st := range config.Settings() {
		if !st.InConfig {
			continue
		}
		rows[st.Name] = true
		acc, ok := configState[st.Name]
		switch {
		case st.ConfigOnly && ok:
			t.Errorf("%s: a ConfigOnly parameter reports its default and needs no accessor", st.Name)
		case st.ConfigOnly:
		case st.ReadByName() && ok:
			t.Errorf("%s: read by name from the live settings, it needs no accessor", st.Name)
		case st.ReadByName():
		case !ok || acc.get == nil:
			t.Errorf("%s: CONFIG reports it but configState has no get for it", st.Name)
		case st.Mutable != (acc.apply != nil):
			t.Errorf("%s: Mutable is %v but the accessor's apply is set: %v", st.Name, st.Mutable, acc.apply != nil)
		}
	}
	for name := range configState {
		if !rows[name] {
			t.Errorf("configState has %q, which is no CONFIG parameter of the settings table", name)
		}
	}
	if len(configParams) != len(rows) {
		t.Errorf("%d CONFIG parameters, want the table's %d", len(configParams), len(rows))
	}
}

// configValue is the value of a one-parameter CONFIG GET reply.
func configValue(t *testing.T, c *adminConn, name string) string {
	t.Helper()
	r := c.do("CONFIG", "GET", name)
	parts := strings.Split(r, "\r\n")
	if len(parts) != 6 || parts[0] != "*2" || parts[2] != name {
		t.Fatalf("CONFIG GET %s = %q, want one pair", name, r)
	}
	return parts[4]
}

// altValue is a value other than the default that CONFIG SET accepts for
// st, or "" for parameters that take only one value.
func altValue(st config.Setting, cur string) string {
	switch st.Kind {
	case config.KindInt, config.KindSize:
		return strconv.FormatInt(st.Max, 10)
	case config.KindBool:
		if cur == "yes" {
			return "no"
		}
		return "yes"
	case config.KindOutputBufferLimits:
		return "normal 1mb 512kb 10"
	case config.KindEnum:
		for _, v := range st.Values {
			if v != cur && v != "" {
				return v
			}
		}
	case config.KindString:
		switch st.Name {
		case "notify-keyspace-events":
			return "Kx" // only class letters are valid
		case "latency-tracking-info-percentiles":
			return "1 2.5"
		}
		return "s3cret value"
	}
	return ""
}

func TestConfigGetOfEveryMutableSettingRoundTrips(t *testing.T) {
	as := startAdminServer(t, Options{Port: 7001, Bind: "127.0.0.1", Dir: t.TempDir()})
	c := as.dial(t)
	n := 0
	for _, st := range config.Settings() {
		if !st.Mutable {
			continue
		}
		n++
		orig := configValue(t, c, st.Name)
		if r := c.do("CONFIG", "SET", st.Name, orig); r != "+OK\r\n" {
			t.Errorf("CONFIG SET %s %q (the value GET reported) = %q", st.Name, orig, r)
		}
		if got := configValue(t, c, st.Name); got != orig {
			t.Errorf("CONFIG GET %s after setting %q = %q", st.Name, orig, got)
		}
		if st.ConfigOnly {
			continue
		}
		alt := altValue(st, orig)
		if r := c.do("CONFIG", "SET", st.Name, alt); r != "+OK\r\n" {
			t.Errorf("CONFIG SET %s %q = %q", st.Name, alt, r)
			continue
		}
		got := configValue(t, c, st.Name)
		if got == orig {
			t.Errorf("CONFIG SET %s %q left GET at %q", st.Name, alt, got)
		}
		if r := c.do("CONFIG", "SET", st.Name, got); r != "+OK\r\n" || configValue(t, c, st.Name) != got {
			t.Errorf("CONFIG SET %s %q (as GET reported it) = %q, does not round-trip", st.Name, got, r)
		}
		if r := c.do("CONFIG", "SET", st.Name, orig); r != "+OK\r\n" {
			t.Fatalf("restoring %s to %q: %q", st.Name, orig, r)
		}
	}
	if n < 10 {
		t.Errorf("only %d mutable settings; the table lost its Mutable marks", n)
	}
}
