package server

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kvserver/kvserver/acl"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// CONFIG's machinery: the parameters CONFIG GET and SET know (the settings
// table joined with where each setting lives in the server) and CONFIG
// REWRITE's YAML writer. The CONFIG, INFO and server families' handlers
// are in package commands (config.go, info.go, server.go), which reach
// this through commands.Config (session_config.go).

// configParam is one parameter of CONFIG GET and CONFIG SET: a row of the
// settings table that CONFIG reports (config.Setting.InConfig).
type configParam struct {
	name string
	// alias is Redis's older name of the parameter, "" for none.
	alias string
	get   func(s *Server) string
	// set validates a value and returns the change to make, or the reason
	// Redis would give after "CONFIG SET failed (...) - ". Nil for
	// parameters fixed at start (Redis's immutable configs).
	set func(s *Server, v string) (apply func(), reason string)
	// yaml is the value CONFIG REWRITE writes; nil when it writes none.
	yaml func(s *Server) string
	// rewriteDefault, when set, is the YAML value REWRITE leaves out of a
	// file that lacks the key.
	rewriteDefault string
}

// configAccessor reads, and for mutable settings changes, the server's
// state of one setting CONFIG reports. apply receives the value parsed
// by the setting's kind: int64 for KindInt and KindSize, bool for
// KindBool, config.OutputBufferLimits, or the string.
type configAccessor struct {
	get   func(s *Server) string
	apply func(s *Server, v any)
	// yaml overrides the value REWRITE writes (default: get's, formatted
	// by kind).
	yaml func(s *Server) string
	// parse, when set, validates and parses a CONFIG SET value instead of
	// the setting's kind.
	parse func(v string) (any, string)
}

// errNotifyClass is Redis's refusal of an unknown notify-keyspace-events
// letter.
const errNotifyClass = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

// configState is where each setting CONFIG reports lives in the server;
// the rest of a parameter (name, order, kind, bounds, mutability, rewrite)
// is its row in config.Settings. TestEveryConfigSettingHasAnAccessor keeps
// the two in step. Redis parameters kvserver only reports (ConfigOnly rows)
// need none.
var configState = map[string]configAccessor{
	"port": {get: func(s *Server) string { return strconv.Itoa(s.options().Port) }},
	"bind": {get: func(s *Server) string { return s.options().Bind }},
	"dir": {get: func(s *Server) string {
		dir := s.options().Dir
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		return dir
	}, yaml: func(s *Server) string { return yamlString(s.options().Dir, false) }},
	"maxmemory": {get: func(s *Server) string { return strconv.FormatInt(s.eng.MaxMemory(), 10) },
		apply: func(s *Server, v any) {
			n := v.(int64)
			s.eng.SetMaxMemory(n)
			if hook := s.options().OnMaxMemory; hook != nil {
				hook(n)
			}
		}},
	"requirepass": {get: func(s *Server) string { return s.options().RequirePass },
		yaml: func(s *Server) string { return yamlString(s.options().RequirePass, true) },
		apply: func(s *Server, v any) {
			s.updateOptions(func(o *Options) { o.RequirePass = v.(string) })
			s.users.SetDefaultPassword(v.(string))
		}},
	"proto-max-bulk-len": {get: func(s *Server) string { return strconv.FormatInt(s.maxBulk.Load(), 10) },
		apply: func(s *Server, v any) { s.maxBulk.Store(v.(int64)) }},
	"maxclients": {get: func(s *Server) string { return strconv.Itoa(s.options().MaxClients) },
		apply: func(s *Server, v any) { s.updateOptions(func(o *Options) { o.MaxClients = int(v.(int64)) }) }},
	"databases": {get: func(s *Server) string { return strconv.Itoa(s.eng.Databases()) }},
	"timeout": {get: func(s *Server) string { return strconv.FormatInt(s.idleTimeout.Load(), 10) },
		apply: func(s *Server, v any) { s.idleTimeout.Store(v.(int64)) }},
	"protected-mode": {get: func(s *Server) string { return yesNo(s.protectedMode.Load()) },
		apply: func(s *Server, v any) { s.protectedMode.Store(v.(bool)) }},
	"notify-keyspace-events": {get: func(s *Server) string { return notify.Class(s.notifyFlags.Load()).String() },
		parse: func(v string) (any, string) {
			flags, ok := notify.Parse(v)
			if !ok {
				return nil, errNotifyClass
			}
			return flags, ""
		},
		apply: func(s *Server, v any) { s.notifyFlags.Store(int32(v.(notify.Class))) }},
	"client-output-buffer-limit": {get: func(s *Server) string { return s.outputLimits().String() },
		apply: func(s *Server, v any) { lim := v.(config.OutputBufferLimits); s.obufLimits.Store(&lim) }},
	"enable-debug-command":  {get: func(s *Server) string { return s.options().EnableDebugCommand }},
	"enable-module-command": {get: func(s *Server) string { return s.options().EnableModuleCommand }},
	"tls-port":              {get: func(s *Server) string { return strconv.Itoa(s.options().TLS.Port) }},
	"tls-cert-file":         {get: func(s *Server) string { return s.options().TLS.CertFile }},
	"tls-key-file":          {get: func(s *Server) string { return s.options().TLS.KeyFile }},
	"tls-ca-cert-file":      {get: func(s *Server) string { return s.options().TLS.CACertFile }},
	"tls-auth-clients":      {get: func(s *Server) string { return s.options().TLS.AuthClients }},
}

// liveParsers validate CONFIG SET values of settings read by name whose
// kind says too little, returning the value to keep.
var liveParsers = map[string]func(v string) (any, string){
	// Kept as Redis prints the numbers back.
	"latency-tracking-info-percentiles": func(v string) (any, string) {
		ps, reason := config.ParsePercentiles(v)
		if reason != "" {
			return nil, reason
		}
		return config.FormatPercentiles(ps), ""
	},
}

// latencyPercentiles are the percentiles INFO latencystats prints.
func (s *Server) latencyPercentiles() []float64 {
	ps, _ := config.ParsePercentiles(s.settings.String("latency-tracking-info-percentiles"))
	return ps
}

// liveHooks are what a change to a setting read by name must also do,
// beyond the live settings: the settings of the engine's eviction policy
// reach the engine.
var liveHooks = map[string]func(s *Server){
	"maxmemory-policy": applyPolicy,
	"lfu-log-factor":   applyPolicy,
	"lfu-decay-time":   applyPolicy,
	// Read by every command: an atomic, not a lookup by name.
	"slowlog-log-slower-than": applySlowlogThreshold,
	"latency-tracking":        applyLatencyTracking,
}

// applyLatencyTracking copies latency-tracking for observe.
func applyLatencyTracking(s *Server) { s.latencyTracking.Store(s.settings.Bool("latency-tracking")) }

// applySlowlogThreshold copies slowlog-log-slower-than for recordSlow.
func applySlowlogThreshold(s *Server) {
	s.slowlogSlowerThan.Store(s.settings.Int("slowlog-log-slower-than"))
}

// applyPolicy hands the engine the eviction policy of the live settings.
func applyPolicy(s *Server) { s.eng.SetPolicy(s.evictionPolicy()) }

// evictionPolicy is the engine's policy as the live settings say.
func (s *Server) evictionPolicy() engine.Policy {
	return engine.Policy{Name: s.settings.String("maxmemory-policy"),
		LogFactor: s.settings.Int("lfu-log-factor"), DecayMinutes: s.settings.Int("lfu-decay-time")}
}

// configParams are the parameters kvserver knows, in the settings table's
// order, which CONFIG GET follows for a pattern. Parameters Redis has but
// kvserver does not implement report the value that describes kvserver's
// behaviour and can only be set to that value.
var configParams = newConfigParams(config.Settings(), configState)

// newConfigParams joins the settings CONFIG reports with their accessors.
func newConfigParams(table []config.Setting, state map[string]configAccessor) []configParam {
	var out []configParam
	for _, st := range table {
		if !st.InConfig {
			continue
		}
		p := configParam{name: st.Name, alias: st.Alias}
		if st.ConfigOnly {
			p.get = fixedValue(st.Default)
			p.set = onlyValue(st.Default, st.Kind == config.KindEnum || st.Kind == config.KindBool)
			out = append(out, p)
			continue
		}
		acc, ok := state[st.Name]
		if !ok && st.ReadByName() {
			// Read by name: the live settings hold it; no code of its own.
			acc = configAccessor{
				parse: liveParsers[st.Name],
				get:   func(s *Server) string { return s.settings.Text(st.Name) },
				apply: func(s *Server, v any) {
					s.settings.Set(st.Name, v)
					if hook := liveHooks[st.Name]; hook != nil {
						hook(s)
					}
				},
			}
		}
		p.get = acc.get
		if st.Mutable && acc.apply != nil {
			p.set = func(s *Server, v string) (func(), string) {
				var x any
				var reason string
				if acc.parse != nil {
					x, reason = acc.parse(v)
				} else {
					x, reason = parseConfigValue(s, st, v)
				}
				if reason != "" {
					return nil, reason
				}
				return func() { acc.apply(s, x) }, ""
			}
		}
		if st.Rewrite != config.NoRewrite {
			p.yaml = acc.yaml
			if p.yaml == nil {
				p.yaml = func(s *Server) string { return yamlValue(st.Kind, acc.get(s)) }
			}
			if st.Rewrite == config.RewriteIfChanged {
				p.rewriteDefault = yamlDefault(st)
			}
		}
		out = append(out, p)
	}
	return out
}

// parseConfigValue parses a CONFIG SET value by the setting's kind and
// bounds, with Redis's messages.
func parseConfigValue(s *Server, st config.Setting, v string) (any, string) {
	hi := st.Max
	if hi == 0 {
		hi = math.MaxInt64
	}
	switch st.Kind {
	case config.KindInt:
		n, reason := parseIntValue(v, st.Min, hi)
		return n, reason
	case config.KindSize:
		n, reason := parseMemoryValue(v, st.Min, hi)
		return n, reason
	case config.KindBool:
		on, ok := parseYesNo(v)
		if !ok {
			return nil, "argument must be 'yes' or 'no'"
		}
		return on, ""
	case config.KindOutputBufferLimits:
		lim, err := config.ParseOutputBufferLimits(v, s.outputLimits())
		if err != nil {
			return nil, err.Error()
		}
		return lim, ""
	case config.KindEnum:
		if l := strings.ToLower(v); slices.Contains(st.Values, l) && l != "" {
			return l, ""
		}
		return nil, "argument(s) must be one of the following: " + strings.Join(st.Values, ", ")
	}
	return v, ""
}

// yamlValue writes a CONFIG GET value as CONFIG REWRITE puts it in the
// YAML file.
func yamlValue(kind config.Kind, v string) string {
	switch kind {
	case config.KindSize:
		n, _ := strconv.ParseInt(v, 10, 64)
		return config.SizeText(n)
	case config.KindOutputBufferLimits:
		return strconv.Quote(v)
	case config.KindString:
		return yamlString(v, false)
	}
	return v
}

// yamlDefault is yamlValue of the setting's default.
func yamlDefault(st config.Setting) string {
	switch st.Kind {
	case config.KindSize:
		n, _ := config.ParseSize(st.Default)
		return config.SizeText(n)
	case config.KindOutputBufferLimits:
		lim, _ := config.ParseOutputBufferLimits(st.Default, config.DefaultOutputBufferLimits)
		return strconv.Quote(lim.String())
	}
	return yamlValue(st.Kind, st.Default)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// parseYesNo parses a Redis boolean config value.
func parseYesNo(v string) (on, ok bool) {
	switch strings.ToLower(v) {
	case "yes":
		return true, true
	case "no":
		return false, true
	}
	return false, false
}

func fixedValue(v string) func(*Server) string { return func(*Server) string { return v } }

// onlyValue accepts only the value kvserver implements (compared
// case-insensitively for Redis's enum and boolean configs).
func onlyValue(want string, fold bool) func(*Server, string) (func(), string) {
	return func(_ *Server, v string) (func(), string) {
		if v == want || (fold && strings.EqualFold(v, want)) {
			return func() {}, ""
		}
		if want == "" {
			return nil, "argument must be an empty string (kvserver takes no snapshots)"
		}
		return nil, "argument(s) must be one of the following: " + want
	}
}

// parseIntValue parses a numeric config value with Redis's string2ll and
// checks its bounds, with Redis's messages.
func parseIntValue(v string, lo, hi int64) (int64, string) {
	n, ok := commands.ParseInt64([]byte(v))
	if !ok {
		return 0, "argument couldn't be parsed into an integer"
	}
	if n < lo || n > hi {
		return 0, fmt.Sprintf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, ""
}

// parseMemoryValue parses a size ("512mb", "1gb", bytes; "" is 0) and
// checks its bounds, with Redis's messages.
func parseMemoryValue(v string, lo, hi int64) (int64, string) {
	n := int64(0) // Redis's memtoull reads "" as 0
	if v != "" {
		var err error
		if n, err = config.ParseSize(v); err != nil {
			return 0, "argument must be a memory value"
		}
	}
	if n < lo || n > hi {
		return 0, fmt.Sprintf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, ""
}

func lookupConfigParam(name string) *configParam {
	for i := range configParams {
		if strings.EqualFold(configParams[i].name, name) || (configParams[i].alias != "" && strings.EqualFold(configParams[i].alias, name)) {
			return &configParams[i]
		}
	}
	return nil
}

// updateOptions changes the CONFIG SET-able options under the lock.
func (s *Server) updateOptions(fn func(o *Options)) {
	s.cfgMu.Lock()
	fn(&s.opts)
	s.cfgMu.Unlock()
}

func configSetError(name, reason string) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + reason
}

// rewriteSetting is one YAML key CONFIG REWRITE writes. A setting with a
// def is added to the file only when its value differs from def (like
// Redis, which leaves defaults out); a line already in the file is always
// updated.
type rewriteSetting struct{ key, value, def string }

// rewriteSettings are the settings in effect, as YAML values in the style
// of configs/kvserver.yaml: the CONFIG parameters whose row says REWRITE
// writes them. metrics-port and log-level are not the server's to know and
// stay as the file has them.
func (s *Server) rewriteSettings() []rewriteSetting {
	var out []rewriteSetting
	for _, p := range configParams {
		if p.yaml != nil {
			out = append(out, rewriteSetting{p.name, p.yaml(s), p.rewriteDefault})
		}
	}
	// The ACL users, as Redis's CONFIG REWRITE writes its user lines
	// (ACL SAVE too): left out while they are what a start without user
	// lines gives.
	def := ""
	if start, err := acl.NewUsers(s.users.Catalog(), s.options().RequirePass, nil); err == nil {
		def = yamlList(start.Lines())
	}
	return append(out, rewriteSetting{"user", yamlList(s.users.Lines()), def})
}

// yamlList writes items as a YAML flow sequence of quoted strings.
func yamlList(items []string) string {
	quoted := make([]string, len(items))
	for i, it := range items {
		quoted[i] = yamlString(it, true)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

var plainYAML = regexp.MustCompile(`^[A-Za-z0-9_./][A-Za-z0-9_./:-]*$`)

// yamlString writes s plain when YAML reads it back as that same string,
// double-quoted otherwise (always when quote is set).
func yamlString(s string, quote bool) string {
	if !quote && plainYAML.MatchString(s) {
		_, numErr := strconv.ParseFloat(s, 64)
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		default:
			if numErr != nil {
				return s
			}
		}
	}
	return strconv.Quote(s)
}

// yamlKeyLine matches a top-level "key:" line of the config file.
var yamlKeyLine = regexp.MustCompile(`^([A-Za-z0-9_-]+)\s*:`)

// rewriteConfig rewrites path like Redis's CONFIG REWRITE: comments, order
// and unknown keys are kept, each setting's line is replaced (duplicates
// dropped), and settings the file lacks are appended. The new file is
// checked to load, then replaces the old one atomically.
func (s *Server) rewriteConfig(path string) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	settings := s.rewriteSettings()
	index := make(map[string]int, len(settings))
	for i, st := range settings {
		index[st.key] = i
	}
	written := make([]bool, len(settings))
	var out []string
	text := strings.TrimSuffix(string(old), "\n")
	if text != "" {
		// replaced is set after a replaced key's line: the lines of its
		// old block value (indented, or "- " items) go with it.
		replaced := false
		for _, line := range strings.Split(text, "\n") {
			if replaced && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "-")) {
				continue
			}
			replaced = false
			m := yamlKeyLine.FindStringSubmatch(line)
			if m == nil {
				out = append(out, line)
				continue
			}
			i, ok := index[strings.ToLower(m[1])]
			if !ok {
				out = append(out, line)
				continue
			}
			replaced = true
			if !written[i] {
				written[i] = true
				out = append(out, settings[i].key+": "+settings[i].value)
			}
		}
	}
	header := false
	for i, st := range settings {
		if written[i] || (st.def != "" && st.value == st.def) {
			continue
		}
		if !header {
			out = append(out, "", "# Generated by CONFIG REWRITE")
			header = true
		}
		out = append(out, st.key+": "+st.value)
	}
	data := []byte(strings.Join(out, "\n") + "\n")

	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kvserver-config-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if _, err := config.Load([]string{"--config", tmp.Name()}, nil); err != nil {
		return fmt.Errorf("rewritten file does not load: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}

// armIdleTimeout applies CONFIG SET timeout to the next read: a client
// that sends nothing for that long is disconnected, as in Redis. Each read
// that brings bytes moves the deadline on (clientConn), so the time counts
// from the last byte received.
func (s *Server) armIdleTimeout(c *Client) {
	t := s.idleTimeout.Load()
	if c.subscribed.Load() {
		t = 0 // Redis never times out a pubsub client
	}
	switch {
	case t > 0:
		c.idle = time.Duration(t) * time.Second
		c.conn.SetReadDeadline(time.Now().Add(c.idle))
		c.readDeadline = true
	case c.readDeadline:
		c.idle = 0
		c.conn.SetReadDeadline(time.Time{})
		c.readDeadline = false
	}
}
