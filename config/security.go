package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// checkTLS is tls-port's check: the port differs from the others, and TLS
// has its certificate and key, and a CA unless client certificates are off
// (Redis's rule).
func checkTLS(c Config, bad func(key, format string, args ...any)) {
	switch {
	case c.TLSPort != 0 && c.TLSPort == c.Port:
		bad("tls-port", "%d is also the plain client port", c.TLSPort)
	case c.TLSPort != 0 && c.TLSPort == c.MetricsPort:
		bad("tls-port", "%d is also the metrics port", c.TLSPort)
	}
	if c.TLSPort != 0 {
		if c.TLSCertFile == "" || c.TLSKeyFile == "" {
			bad("tls-port", "TLS needs tls-cert-file and tls-key-file")
		}
		if c.TLSAuthClients != "no" && c.TLSCACertFile == "" {
			bad("tls-ca-cert-file", "must be set when tls-auth-clients is %s (or set tls-auth-clients no)", c.TLSAuthClients)
		}
	}
}

// checkRenames is rename-command's check: entries Redis would reject.
func checkRenames(c Config, bad func(key, format string, args ...any)) {
	for _, old := range slices.Sorted(maps.Keys(c.RenameCommand)) {
		if old == "" || strings.ContainsAny(old, " |") {
			bad(keyRenameCommand, "%q is not a command name", old)
		}
		if n := c.RenameCommand[old]; strings.ContainsAny(n, " |") {
			bad(keyRenameCommand, "new name %q of %s contains a space or '|'", n, old)
		}
	}
}

// toRenames reads rename-command: a YAML map {OLD: NEW}, or entries
// "OLD=NEW" (flags: one per --rename-command; environment: separated by
// spaces). Names are lower-cased, as command lookup ignores case; an empty
// NEW disables the command.
func toRenames(x any) (map[string]string, error) {
	out := map[string]string{}
	add := func(entry string) error {
		old, n, ok := strings.Cut(entry, "=")
		if !ok {
			return fmt.Errorf("%q is not OLD=NEW (OLD= disables the command)", entry)
		}
		out[strings.ToLower(strings.TrimSpace(old))] = strings.ToLower(strings.TrimSpace(n))
		return nil
	}
	switch t := x.(type) {
	case nil:
	case map[string]any:
		// viper splits keys at dots, so "kvc.probe" arrives nested: join
		// the path back.
		var walk func(prefix string, m map[string]any) error
		walk = func(prefix string, m map[string]any) error {
			for k, v := range m {
				if sub, ok := v.(map[string]any); ok {
					if err := walk(prefix+k+".", sub); err != nil {
						return err
					}
					continue
				}
				n, err := toString(v)
				if err != nil {
					return err
				}
				out[strings.ToLower(prefix+k)] = strings.ToLower(n)
			}
			return nil
		}
		if err := walk("", t); err != nil {
			return nil, err
		}
	case string:
		for _, e := range strings.Fields(t) {
			if err := add(e); err != nil {
				return nil, err
			}
		}
	case []string:
		for _, e := range t {
			if err := add(e); err != nil {
				return nil, err
			}
		}
	case []any:
		for _, e := range t {
			s, err := toString(e)
			if err != nil {
				return nil, err
			}
			if err := add(s); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%v (%T) is neither a map of OLD: NEW nor a list of OLD=NEW", x, x)
	}
	return out, nil
}

// toUserLines reads user: a YAML list of ACL user lines (flags: one per
// --user; environment: lines separated by ';').
func toUserLines(x any) ([]string, error) {
	var lines []string
	switch t := x.(type) {
	case nil:
	case string:
		lines = strings.Split(t, ";")
	case []string:
		lines = t
	case []any:
		for _, e := range t {
			s, err := toString(e)
			if err != nil {
				return nil, err
			}
			lines = append(lines, s)
		}
	default:
		return nil, fmt.Errorf("%v (%T) is not a list of user lines", x, x)
	}
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
