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
	"syscall"
	"time"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/glob"
)

// The server family: CONFIG, COMMAND, TIME, LASTSAVE, SAVE, BGSAVE, DEBUG
// and SHUTDOWN. INFO lives in info.go, COMMAND INFO and DOCS data in
// commanddocs.go.

// configParam is one parameter of CONFIG GET and CONFIG SET: a row of the
// settings table that CONFIG reports (config.Setting.InConfig).
type configParam struct {
	name string
	get  func(s *Server) string
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
}

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
	"max-lease-ms": {get: func(s *Server) string { return strconv.FormatInt(s.options().MaxLeaseMs, 10) },
		apply: func(s *Server, v any) { s.updateOptions(func(o *Options) { o.MaxLeaseMs = v.(int64) }) }},
	"timeout": {get: func(s *Server) string { return strconv.FormatInt(s.idleTimeout.Load(), 10) },
		apply: func(s *Server, v any) { s.idleTimeout.Store(v.(int64)) }},
	"protected-mode": {get: func(s *Server) string { return yesNo(s.protectedMode.Load()) },
		apply: func(s *Server, v any) { s.protectedMode.Store(v.(bool)) }},
	"client-output-buffer-limit": {get: func(s *Server) string { return s.outputLimits().String() },
		apply: func(s *Server, v any) { lim := v.(config.OutputBufferLimits); s.obufLimits.Store(&lim) }},
	"enable-debug-command": {get: func(s *Server) string { return s.options().EnableDebugCommand }},
	"tls-port":             {get: func(s *Server) string { return strconv.Itoa(s.options().TLS.Port) }},
	"tls-cert-file":        {get: func(s *Server) string { return s.options().TLS.CertFile }},
	"tls-key-file":         {get: func(s *Server) string { return s.options().TLS.KeyFile }},
	"tls-ca-cert-file":     {get: func(s *Server) string { return s.options().TLS.CACertFile }},
	"tls-auth-clients":     {get: func(s *Server) string { return s.options().TLS.AuthClients }},
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
		p := configParam{name: st.Name}
		if st.ConfigOnly {
			p.get = fixedValue(st.Default)
			p.set = onlyValue(st.Default, st.Kind == config.KindEnum || st.Kind == config.KindBool)
			out = append(out, p)
			continue
		}
		acc := state[st.Name]
		p.get = acc.get
		if st.Mutable && acc.apply != nil {
			p.set = func(s *Server, v string) (func(), string) {
				x, reason := parseConfigValue(s, st, v)
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
	n, ok := parseInt64([]byte(v))
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
		if strings.EqualFold(configParams[i].name, name) {
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

// cmdConfigGet implements CONFIG GET pattern [pattern ...]. Like Redis, a
// pattern without glob characters is looked up directly and answered under
// the name as written; a glob matches names case-insensitively; each
// parameter is reported once.
func (s *Server) cmdConfigGet(c *Client, args [][]byte) {
	type pair struct{ name, value string }
	var out []pair
	seen := make(map[string]bool)
	for _, a := range args[2:] {
		pattern := string(a)
		if !strings.ContainsAny(pattern, "[*?") {
			p := lookupConfigParam(pattern)
			if p != nil && !seen[p.name] {
				seen[p.name] = true
				out = append(out, pair{pattern, p.get(s)})
			}
			continue
		}
		for i := range configParams {
			p := &configParams[i]
			if !seen[p.name] && glob.MatchFold(a, []byte(p.name)) {
				seen[p.name] = true
				out = append(out, pair{p.name, p.get(s)})
			}
		}
	}
	c.w.Map(len(out))
	for _, p := range out {
		c.w.BulkString(p.name)
		c.w.BulkString(p.value)
	}
}

// cmdConfigSet implements CONFIG SET param value [param value ...]
// atomically, in Redis 7's order: unknown, immutable and duplicate
// parameters are found first, then every value is validated, and only
// then are they all applied.
func (s *Server) cmdConfigSet(c *Client, args [][]byte) {
	if len(args)%2 != 0 {
		c.w.Error(errSyntax)
		return
	}
	n := (len(args) - 2) / 2
	params := make([]*configParam, n)
	for i := range n {
		arg := string(args[2+2*i])
		p := lookupConfigParam(arg)
		switch {
		case p == nil:
			c.w.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + arg + "'")
			return
		case p.set == nil:
			c.w.Error(configSetError(arg, "can't set immutable config"))
			return
		}
		for _, prev := range params[:i] {
			if prev == p {
				c.w.Error(configSetError(arg, "duplicate parameter"))
				return
			}
		}
		params[i] = p
	}
	applies := make([]func(), n)
	for i, p := range params {
		apply, reason := p.set(s, string(args[3+2*i]))
		if reason != "" {
			c.w.Error(configSetError(p.name, reason))
			return
		}
		applies[i] = apply
	}
	for _, apply := range applies {
		apply()
	}
	c.w.OK()
}

func configSetError(name, reason string) string {
	return "ERR CONFIG SET failed (possibly related to argument '" + name + "') - " + reason
}

// cmdConfigResetstat zeroes the counters INFO reports, like Redis's
// resetServerStats: engine hits, misses, expiries and evictions, the
// connection, command, traffic and error counters, and the memory peak.
func (s *Server) cmdConfigResetstat(c *Client, args [][]byte) {
	s.eng.ResetStats()
	st := &s.stats
	st.connectionsReceived.Store(0)
	st.rejectedConnections.Store(0)
	st.commandsProcessed.Store(0)
	st.netInput.Store(0)
	st.netOutput.Store(0)
	st.memPeak.Store(0)
	st.errors.reset()
	c.w.OK()
}

func (s *Server) cmdConfigHelp(c *Client, args [][]byte) {
	writeHelp(c, "CONFIG",
		"GET <pattern>",
		"    Return parameters matching the glob-like <pattern> and their values.",
		"SET <directive> <value>",
		"    Set the configuration <directive> to <value>.",
		"RESETSTAT",
		"    Reset statistics reported by the INFO command.",
		"REWRITE",
		"    Rewrite the configuration file.",
	)
}

// cmdConfigRewrite writes the settings in effect to the config file.
func (s *Server) cmdConfigRewrite(c *Client, args [][]byte) {
	path := s.options().ConfigFile
	if path == "" {
		c.w.Error("ERR The server is running without a config file")
		return
	}
	if err := s.rewriteConfig(path); err != nil {
		s.log.Warn("CONFIG REWRITE failed", "file", path, "err", err)
		c.w.Error("ERR Rewriting config file: " + rewriteErrorText(err))
		return
	}
	s.log.Info("CONFIG REWRITE executed with success", "file", path)
	c.w.OK()
}

// rewriteErrorText is strerror's wording for system errors, the error
// itself otherwise.
func rewriteErrorText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		return strings.ToUpper(msg[:1]) + msg[1:]
	}
	return err.Error()
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
	return out
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
		for _, line := range strings.Split(text, "\n") {
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

// cmdTime replies with the unix time in seconds and microseconds.
func (s *Server) cmdTime(c *Client, args [][]byte) {
	now := time.Now()
	c.w.Array(2)
	c.w.BulkInt(now.Unix())
	c.w.BulkInt(int64(now.Nanosecond() / 1000))
}

func (s *Server) cmdLastsave(c *Client, args [][]byte) { c.w.Int(s.stats.lastSave.Load()) }

// cmdSave succeeds at once: the memory tier has nothing to snapshot, so a
// save only records its time for LASTSAVE and INFO persistence.
func (s *Server) cmdSave(c *Client, args [][]byte) {
	s.stats.lastSave.Store(time.Now().Unix())
	c.w.OK()
}

// cmdBgsave implements BGSAVE [SCHEDULE] like SAVE.
func (s *Server) cmdBgsave(c *Client, args [][]byte) {
	if len(args) > 2 || (len(args) == 2 && !equalFold(args[1], "schedule")) {
		c.w.Error(errSyntax)
		return
	}
	s.stats.lastSave.Store(time.Now().Unix())
	c.w.Simple("Background saving started")
}

// cmdShutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]. On
// success there is no reply: the server stops and the connection closes.
// A shutdown is never left pending, so ABORT always finds none.
func (s *Server) cmdShutdown(c *Client, args [][]byte) {
	var nosave, save, flags, abort bool
	for _, a := range args[1:] {
		switch {
		case equalFold(a, "nosave"):
			nosave, flags = true, true
		case equalFold(a, "save"):
			save, flags = true, true
		case equalFold(a, "now"), equalFold(a, "force"):
			flags = true
		case equalFold(a, "abort"):
			abort = true
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	if (abort && flags) || (nosave && save) {
		c.w.Error(errSyntax)
		return
	}
	if abort {
		c.w.Error("ERR No shutdown in progress.")
		return
	}
	s.log.Warn("user requested shutdown", "client", c.ID, "addr", c.conn.RemoteAddr().String())
	s.requestShutdown()
	c.closeAfterReply = true
}

// debugIgnored are Redis DEBUG subcommands that have no meaning for
// kvserver (encodings, RDB/AOF, crashes, replication, allocator): they are
// acknowledged with +OK and do nothing.
var debugIgnored = []string{
	"aof-flush-sleep", "assert", "change-repl-id", "client-eviction", "clusterlink",
	"config-rewrite-force-all", "crash-and-recover", "dict-resizing", "digest",
	"digest-value", "drop-cluster-packet-filter", "htstats", "htstats-key", "jmap",
	"leak", "listpack", "loadaof", "mallctl", "mallctl-str", "object", "oom", "panic",
	"pause-cron", "populate", "protocol", "quicklist", "quicklist-packed-threshold",
	"reload", "replicate", "replybuffer", "restart", "sdslen", "segfault",
	"set-active-expire", "set-disable-deny-scripts", "set-skip-checksum-validation",
	"stringmatch-len", "stringmatch-test", "structsize",
}

// cmdDebug implements DEBUG SLEEP, ERROR, LOG and HELP; Redis's other
// subcommands do not apply and answer +OK.
func (s *Server) cmdDebug(c *Client, args [][]byte) {
	sub := args[1]
	switch {
	case equalFold(sub, "help") && len(args) == 2:
		writeHelp(c, "DEBUG",
			"ERROR <string>",
			"    Return a Redis protocol error with <string> as message. Useful for clients",
			"    unit tests to simulate Redis errors.",
			"LOG <message>",
			"    Write <message> to the server log.",
			"SLEEP <seconds>",
			"    Stop the server for <seconds>. Decimals allowed.",
			"    (kvserver: only the calling connection sleeps.)",
			"Other Redis DEBUG subcommands are accepted and do nothing.",
		)
	case equalFold(sub, "sleep") && len(args) == 3:
		s.debugSleep(parseFloatPrefix(args[2]))
		c.w.OK()
	case equalFold(sub, "error") && len(args) == 3:
		c.w.Error(sanitize(string(args[2])))
	case equalFold(sub, "log") && len(args) == 3:
		s.log.Warn("DEBUG LOG: "+string(args[2]), "client", c.ID)
		c.w.OK()
	default:
		for _, name := range debugIgnored {
			if equalFold(sub, name) {
				c.w.OK()
				return
			}
		}
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" +
			sanitize(truncate(string(sub), 128)) + "'. Try DEBUG HELP.")
	}
}

// debugSleep blocks the calling connection (only it: other clients are
// served by their own goroutines) for secs seconds, or until shutdown.
func (s *Server) debugSleep(secs float64) {
	if !(secs > 0) {
		return
	}
	d := time.Duration(math.MaxInt64)
	if secs < d.Seconds() {
		d = time.Duration(secs * float64(time.Second))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.shutdown:
	}
}

// Patterns of what C's strtod consumes after the sign: a decimal number
// with an optional exponent, or a hexadecimal one.
var (
	decimalPrefix = regexp.MustCompile(`^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)
	hexPrefix     = regexp.MustCompile(`^0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)`)
)

// parseFloatPrefix reads a number the way Redis's DEBUG SLEEP does, with
// strtod and no error check: leading space skipped, the longest numeric
// prefix taken, 0 if there is none.
func parseFloatPrefix(b []byte) float64 {
	rest := strings.TrimLeft(string(b), " \t\n\v\f\r")
	sign := 1.0
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		if rest[0] == '-' {
			sign = -1
		}
		rest = rest[1:]
	}
	lower := strings.ToLower(rest)
	switch {
	case strings.HasPrefix(lower, "inf"):
		return sign * math.Inf(1)
	case strings.HasPrefix(lower, "nan"):
		return math.NaN()
	}
	num := decimalPrefix.FindString(rest)
	if h := hexPrefix.FindString(rest); h != "" {
		num = h + "p0"
	}
	// Out of range gives ±Inf or 0 with an error, as strtod does.
	f, _ := strconv.ParseFloat(num, 64)
	return sign * f
}
