package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/kvserver/kvserver/configs"
)

// Setting names: YAML keys and flag names at once. The environment variable
// of a key is envPrefix followed by the key upper-cased with '-' as '_'.
const (
	keyPort            = "port"
	keyBind            = "bind"
	keyDir             = "dir"
	keyMaxMemory       = "maxmemory"
	keyMetricsPort     = "metrics-port"
	keyRequirePass     = "requirepass"
	keyProtoMaxBulkLen = "proto-max-bulk-len"
	keyMaxClients      = "maxclients"
	keyDatabases       = "databases"
	keyLogLevel        = "log-level"
	keyMaxDisk         = "maxdisk"
	keyDiskCompression = "disk-compression"
	keyExistsLeaseMs   = "exists-lease-ms"
	keyMaxPinSeconds   = "max-pin-seconds"
	keyMaxLeaseMs      = "max-lease-ms"
	keyKVQuant         = "kv-quant"
	keyClusterConfig   = "cluster-config"
	keyTimeout         = "timeout"
	keyProtectedMode   = "protected-mode"
	keyEnableDebug     = "enable-debug-command"
	keyTLSPort         = "tls-port"
	keyTLSCertFile     = "tls-cert-file"
	keyTLSKeyFile      = "tls-key-file"
	keyTLSCACertFile   = "tls-ca-cert-file"
	keyTLSAuthClients  = "tls-auth-clients"
	keyObufLimit       = "client-output-buffer-limit"
	keyRenameCommand   = "rename-command"
	keyUser            = "user"
	keyConfig          = "config" // flag and environment only, not a YAML key

	envPrefix = "KVSERVER_"

	// fallbackMaxMemory is the maxmemory default where physical memory
	// cannot be read.
	fallbackMaxMemory = 1 << 30
	// minProtoMaxBulkLen is Redis's lower bound for proto-max-bulk-len.
	minProtoMaxBulkLen = 1 << 20
)

// fileKeys returns the keys a YAML file may set, in documentation order.
func fileKeys() []string {
	return []string{
		keyPort, keyBind, keyDir, keyMaxMemory, keyMetricsPort, keyRequirePass,
		keyProtoMaxBulkLen, keyMaxClients, keyDatabases, keyLogLevel,
		keyMaxDisk, keyDiskCompression, keyExistsLeaseMs, keyMaxPinSeconds, keyMaxLeaseMs,
		keyKVQuant, keyClusterConfig,
		keyTimeout, keyProtectedMode, keyEnableDebug, keyTLSPort, keyTLSCertFile, keyTLSKeyFile, keyTLSCACertFile,
		keyTLSAuthClients, keyObufLimit, keyRenameCommand, keyUser,
	}
}

// parseLevel maps an accepted log-level value to its slog level.
func parseLevel(s string) (slog.Level, bool) {
	switch s {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return slog.LevelInfo, false
}

// Config is every setting of kvserver, built once at start.
type Config struct {
	Port            int    // --port, default 6379
	Bind            string // --bind, default "127.0.0.1"
	Dir             string // --dir, default "./data"
	MaxMemory       int64  // --maxmemory, bytes; Redis size syntax; 0 in the sources means 25% of physical RAM (1gb if unknown)
	MetricsPort     int    // --metrics-port, default 9121, 0 disables
	RequirePass     string // --requirepass, default ""
	ProtoMaxBulkLen int64  // --proto-max-bulk-len, bytes, default 512mb
	MaxClients      int    // --maxclients, default 10000
	Databases       int    // --databases, default 16
	ConfigFile      string // --config (or KVSERVER_CONFIG), path of a YAML file, default ""
	LogLevel        string // --log-level debug|info|warn|error, default info
	MaxDisk         int64  // --maxdisk, bytes of the disk tier; 0 means 80% of the free space of Dir at start
	DiskCompression string // --disk-compression none|s2|zstd, default none
	ExistsLeaseMs   int    // --exists-lease-ms, lease an EXISTS hit grants, default 2000, 0 disables
	MaxPinSeconds   int    // --max-pin-seconds, longest KVC.PIN, default 86400
	MaxLeaseMs      int    // --max-lease-ms, longest lease KVC.PROBE LEASE grants (longer ones are clamped), default 60000
	KVQuant         string // --kv-quant off|int8|fp8|int4, default off
	ClusterConfig   string // --cluster-config, YAML slot map (package cluster); "" runs without cluster mode

	// Security and client limits (README "Security").
	Timeout        int    // --timeout, seconds a client may stay idle, 0 = never (Redis's timeout)
	ProtectedMode  bool   // --protected-mode yes|no, default yes: refuse non-loopback clients while the default user has no password
	TLSPort        int    // --tls-port, TLS client port, default 0 (off)
	TLSCertFile    string // --tls-cert-file, server certificate (PEM)
	TLSKeyFile     string // --tls-key-file, its private key (PEM)
	TLSCACertFile  string // --tls-ca-cert-file, CA bundle that client certificates must chain to (PEM)
	TLSAuthClients string // --tls-auth-clients yes|no|optional, default yes: client certificates required
	// ClientOutputBufferLimit is --client-output-buffer-limit, Redis's
	// "normal <hard> <soft> <seconds> ..." (only normal applies).
	ClientOutputBufferLimit OutputBufferLimits
	// RenameCommand maps a command's name (lower case) to its new name;
	// "" disables the command (--rename-command OLD=NEW, repeatable).
	RenameCommand map[string]string
	// Users are ACL user lines in Redis's syntax, "alice on #<sha256>
	// ~cache:* +@read" (--user, repeatable).
	Users []string
	// EnableDebugCommand is --enable-debug-command no|yes|local, default
	// no: who may run DEBUG (Redis 7's setting; local means loopback
	// clients only).
	EnableDebugCommand string
}

// Load builds the Config from, in rising priority: the embedded defaults
// (configs.DefaultYAML), the YAML file named by --config (or KVSERVER_CONFIG),
// environment variables KVSERVER_<KEY> (key upper-cased, '-' as '_', e.g.
// KVSERVER_MAXMEMORY, KVSERVER_PROTO_MAX_BULK_LEN), and the command-line
// flags in args (without the program name). environ is in os.Environ() form;
// empty and unknown KVSERVER_* variables are ignored.
//
// A maxmemory of 0 becomes 25% of PhysicalMemory, or 1gb where that cannot
// be read. The result has passed Validate. Errors name the offending key and
// where its value came from; asking for --help gives an error wrapping
// pflag.ErrHelp, and Usage has the text to print.
func Load(args []string, environ []string) (Config, error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.DefaultYAML)); err != nil {
		return Config{}, fmt.Errorf("config: read embedded defaults: %w", err)
	}
	defaults, err := decode(v, func(string) string { return "built-in defaults" })
	if err != nil {
		return Config{}, fmt.Errorf("config: embedded defaults: %w", err)
	}

	fs := newFlagSet(v, defaults)
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("config: command line: %w", err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("config: command line: unexpected argument %q (settings are given as --key value)", fs.Arg(0))
	}

	env := envSettings(environ)
	path, _ := env[keyConfig].(string)
	delete(env, keyConfig)
	if fs.Changed(keyConfig) {
		path, _ = fs.GetString(keyConfig)
	}

	var fileSet map[string]bool
	if path != "" {
		file, err := readFile(path)
		if err != nil {
			return Config{}, err
		}
		if err := v.MergeConfigMap(file); err != nil {
			return Config{}, fmt.Errorf("config: merge %s: %w", path, err)
		}
		fileSet = make(map[string]bool, len(file))
		for k := range file {
			fileSet[k] = true
		}
	}
	// A list or map from the environment replaces the file's, as a flag
	// does; viper would merge a map and cannot put a string over one.
	envLists := map[string]any{}
	for _, k := range []string{keyRenameCommand, keyUser} {
		if x, ok := env[k]; ok {
			envLists[k] = x
			delete(env, k)
		}
	}
	if len(env) > 0 {
		if err := v.MergeConfigMap(env); err != nil {
			return Config{}, fmt.Errorf("config: merge environment: %w", err)
		}
	}
	if err := v.BindPFlags(fs); err != nil {
		return Config{}, fmt.Errorf("config: bind flags: %w", err)
	}

	source := func(key string) string {
		switch {
		case fs.Changed(key):
			return "flag --" + key
		case env[key] != nil || envLists[key] != nil:
			return "environment " + envName(key)
		case fileSet[key]:
			return "file " + path
		}
		return "built-in defaults"
	}
	cfg, err := decode(v, source)
	if err != nil {
		return Config{}, fmt.Errorf("config: %w", err)
	}
	if x, ok := envLists[keyRenameCommand]; ok && !fs.Changed(keyRenameCommand) {
		if cfg.RenameCommand, err = toRenames(x); err != nil {
			return Config{}, fmt.Errorf("config: %s (from %s): %w", keyRenameCommand, source(keyRenameCommand), err)
		}
	}
	if x, ok := envLists[keyUser]; ok && !fs.Changed(keyUser) {
		if cfg.Users, err = toUserLines(x); err != nil {
			return Config{}, fmt.Errorf("config: %s (from %s): %w", keyUser, source(keyUser), err)
		}
	}
	cfg.ConfigFile = path
	if cfg.MaxMemory == 0 {
		cfg.MaxMemory = defaultMaxMemory()
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Usage returns the command-line help: one line per flag with its meaning
// and default, as printed for --help.
func Usage() string {
	v := viper.New()
	v.SetConfigType("yaml")
	defaults := Config{}
	if err := v.ReadConfig(bytes.NewReader(configs.DefaultYAML)); err == nil {
		defaults, _ = decode(v, func(string) string { return "" })
	}
	return "Usage of kvserver:\n" + newFlagSet(v, defaults).FlagUsages()
}

// SlogLevel returns the slog level named by LogLevel, or slog.LevelInfo
// when LogLevel is not one of debug, info, warn, error.
func (c Config) SlogLevel() slog.Level {
	l, _ := parseLevel(c.LogLevel)
	return l
}

// Validate returns an error for impossible values: ports outside 0..65535,
// the metrics port equal to the client port, an empty bind address or data
// directory, a maxmemory below 1 byte, a proto-max-bulk-len below 1mb (like
// Redis), maxclients or databases below 1, and an unknown log level. The
// error lists every problem, each naming its key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if c.Port < 0 || c.Port > math.MaxUint16 {
		bad(keyPort, "%d is outside 0..65535", c.Port)
	}
	if c.MetricsPort < 0 || c.MetricsPort > math.MaxUint16 {
		bad(keyMetricsPort, "%d is outside 0..65535 (0 disables metrics)", c.MetricsPort)
	} else if c.MetricsPort != 0 && c.MetricsPort == c.Port {
		bad(keyMetricsPort, "%d is also the client port", c.MetricsPort)
	}
	if c.Bind == "" {
		bad(keyBind, "must not be empty")
	}
	if c.Dir == "" {
		bad(keyDir, "must not be empty")
	}
	if c.MaxMemory < 1 {
		bad(keyMaxMemory, "%d bytes is below 1 (Load turns 0 into 25%% of RAM)", c.MaxMemory)
	}
	if c.ProtoMaxBulkLen < minProtoMaxBulkLen {
		bad(keyProtoMaxBulkLen, "%d bytes is below 1mb (%d)", c.ProtoMaxBulkLen, minProtoMaxBulkLen)
	}
	if c.MaxClients < 1 {
		bad(keyMaxClients, "%d is below 1", c.MaxClients)
	}
	if c.Databases < 1 {
		bad(keyDatabases, "%d is below 1", c.Databases)
	}
	if _, ok := parseLevel(c.LogLevel); !ok {
		bad(keyLogLevel, "%q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.MaxDisk < 0 {
		bad(keyMaxDisk, "%d bytes is negative", c.MaxDisk)
	}
	switch c.DiskCompression {
	case "none", "s2", "zstd":
	default:
		bad(keyDiskCompression, "%q is not one of none, s2, zstd", c.DiskCompression)
	}
	if c.ExistsLeaseMs < 0 {
		bad(keyExistsLeaseMs, "%d is negative", c.ExistsLeaseMs)
	}
	if c.MaxPinSeconds < 1 {
		bad(keyMaxPinSeconds, "%d is below 1", c.MaxPinSeconds)
	}
	if c.MaxLeaseMs < 1 || c.MaxLeaseMs > math.MaxInt32 {
		bad(keyMaxLeaseMs, "%d is not between 1 and %d", c.MaxLeaseMs, math.MaxInt32)
	}
	switch c.KVQuant {
	case "off", "int8", "fp8", "int4":
	default:
		bad(keyKVQuant, "%q is not one of off, int8, fp8, int4", c.KVQuant)
	}
	c.validateSecurity(bad)
	if len(errs) > 0 {
		return fmt.Errorf("config: invalid settings: %w", errors.Join(errs...))
	}
	return nil
}

// newFlagSet defines one flag per setting plus --config. Defaults shown in
// the help come from the embedded YAML: raw text for sizes, decoded values
// for the rest. Parse errors are returned, not printed.
func newFlagSet(defaults *viper.Viper, d Config) *pflag.FlagSet {
	raw := func(key string) string {
		if x := defaults.Get(key); x != nil {
			return fmt.Sprint(x)
		}
		return ""
	}
	fs := pflag.NewFlagSet("kvserver", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.Int(keyPort, d.Port, "TCP port for Redis-protocol clients (0..65535)")
	fs.String(keyBind, d.Bind, "address the client port listens on")
	fs.String(keyDir, d.Dir, "directory for data files")
	fs.String(keyMaxMemory, raw(keyMaxMemory), "memory limit, bytes or Redis size (1gb, 512mb); 0 means 25% of physical RAM")
	fs.Int(keyMetricsPort, d.MetricsPort, "HTTP port for /metrics and /debug/pprof/; 0 disables")
	fs.String(keyRequirePass, d.RequirePass, "password clients must AUTH with; empty means none")
	fs.String(keyProtoMaxBulkLen, raw(keyProtoMaxBulkLen), "largest bulk string a client may send, bytes or Redis size; at least 1mb")
	fs.Int(keyMaxClients, d.MaxClients, "most clients connected at once")
	fs.Int(keyDatabases, d.Databases, "number of logical databases")
	fs.String(keyLogLevel, d.LogLevel, "least severe log level written: debug, info, warn, error")
	fs.String(keyMaxDisk, raw(keyMaxDisk), "disk tier limit, bytes or Redis size; 0 means 80% of the free space of dir at start")
	fs.String(keyDiskCompression, d.DiskCompression, "lossless compression of the disk tier: none, s2, zstd")
	fs.Int(keyExistsLeaseMs, d.ExistsLeaseMs, "milliseconds an EXISTS hit protects the key's chunk from eviction; 0 disables")
	fs.Int(keyMaxPinSeconds, d.MaxPinSeconds, "longest lifetime KVC.PIN accepts, in seconds")
	fs.Int(keyMaxLeaseMs, d.MaxLeaseMs, "longest lease KVC.PROBE LEASE grants, in milliseconds; longer ones are clamped to it")
	fs.String(keyKVQuant, d.KVQuant, "quantized storage of fp16/bf16 KV chunks: off, int8, fp8, int4 (lossy unless off)")
	fs.String(keyClusterConfig, d.ClusterConfig, "YAML slot map that turns on Redis Cluster mode; empty means standalone")
	fs.Int(keyTimeout, d.Timeout, "close a client idle for this many seconds; 0 never")
	fs.String(keyProtectedMode, raw(keyProtectedMode), "yes: refuse non-loopback clients while the default user has no password")
	fs.String(keyEnableDebug, d.EnableDebugCommand, "who may run DEBUG: no, yes, or local (loopback clients only)")
	fs.Int(keyTLSPort, d.TLSPort, "TCP port for TLS clients; 0 disables TLS")
	fs.String(keyTLSCertFile, d.TLSCertFile, "server certificate for TLS (PEM)")
	fs.String(keyTLSKeyFile, d.TLSKeyFile, "private key of the server certificate (PEM)")
	fs.String(keyTLSCACertFile, d.TLSCACertFile, "CA certificates that client certificates must chain to (PEM)")
	fs.String(keyTLSAuthClients, d.TLSAuthClients, "client certificates: yes (required), optional or no")
	fs.String(keyObufLimit, raw(keyObufLimit), "Redis's client-output-buffer-limit, e.g. \"normal 256mb 64mb 60\"")
	fs.StringArray(keyRenameCommand, nil, "rename a command, OLD=NEW, or disable it, OLD= (repeatable)")
	fs.StringArray(keyUser, nil, "an ACL user in Redis's syntax, \"alice on #<sha256> ~cache:* +@read\" (repeatable)")
	fs.String(keyConfig, "", "YAML file of settings, keys named like these flags")
	return fs
}

// envName returns the environment variable that sets key.
func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

// envSettings picks the non-empty KVSERVER_<KEY> variables of known keys
// (file keys and config) out of environ. Later duplicates win, as in
// os.Getenv.
func envSettings(environ []string) map[string]any {
	keys := append(fileKeys(), keyConfig)
	byName := make(map[string]string, len(keys))
	for _, k := range keys {
		byName[envName(k)] = k
	}
	out := make(map[string]any)
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || value == "" {
			continue
		}
		if key, known := byName[name]; known {
			out[key] = value
		}
	}
	return out
}

// readFile reads a YAML settings file and returns its keys, lower-cased.
// Keys other than the file keys are an error, to catch typos.
func readFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: read config file: %w", err)
	}
	fv := viper.New()
	fv.SetConfigType("yaml")
	if err := fv.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("config: parse %s: %w", path, err)
	}
	known := fileKeys()
	for _, k := range fv.AllKeys() {
		if !slices.Contains(known, k) && !strings.HasPrefix(k, keyRenameCommand+".") {
			return nil, fmt.Errorf("config: %s: unknown key %q (known: %s)", path, k, strings.Join(known, ", "))
		}
	}
	return fv.AllSettings(), nil
}

// decode converts the merged settings in v into a Config, strictly: a value
// of the wrong kind is an error naming the key and source(key), not a zero.
func decode(v *viper.Viper, source func(key string) string) (Config, error) {
	var (
		c    Config
		errs []error
	)
	fail := func(key string, err error) {
		errs = append(errs, fmt.Errorf("%s (from %s): %w", key, source(key), err))
	}
	intKey := func(key string, dst *int) {
		n, err := toInt(v.Get(key))
		if err == nil && (n < math.MinInt || n > math.MaxInt) {
			err = fmt.Errorf("%d is out of range", n)
		}
		if err != nil {
			fail(key, err)
			return
		}
		*dst = int(n)
	}
	sizeKey := func(key string, dst *int64) {
		n, err := toSize(v.Get(key))
		if err != nil {
			fail(key, err)
			return
		}
		*dst = n
	}
	stringKey := func(key string, dst *string) {
		s, err := toString(v.Get(key))
		if err != nil {
			fail(key, err)
			return
		}
		*dst = s
	}

	intKey(keyPort, &c.Port)
	stringKey(keyBind, &c.Bind)
	stringKey(keyDir, &c.Dir)
	sizeKey(keyMaxMemory, &c.MaxMemory)
	intKey(keyMetricsPort, &c.MetricsPort)
	stringKey(keyRequirePass, &c.RequirePass)
	sizeKey(keyProtoMaxBulkLen, &c.ProtoMaxBulkLen)
	intKey(keyMaxClients, &c.MaxClients)
	intKey(keyDatabases, &c.Databases)
	stringKey(keyLogLevel, &c.LogLevel)
	c.LogLevel = strings.ToLower(c.LogLevel)
	sizeKey(keyMaxDisk, &c.MaxDisk)
	stringKey(keyDiskCompression, &c.DiskCompression)
	c.DiskCompression = strings.ToLower(c.DiskCompression)
	intKey(keyExistsLeaseMs, &c.ExistsLeaseMs)
	intKey(keyMaxPinSeconds, &c.MaxPinSeconds)
	intKey(keyMaxLeaseMs, &c.MaxLeaseMs)
	stringKey(keyKVQuant, &c.KVQuant)
	c.KVQuant = strings.ToLower(c.KVQuant)
	stringKey(keyClusterConfig, &c.ClusterConfig)
	intKey(keyTimeout, &c.Timeout)
	var protected string
	stringKey(keyProtectedMode, &protected)
	switch strings.ToLower(protected) {
	case "yes", "true":
		c.ProtectedMode = true
	case "no", "false":
	default:
		fail(keyProtectedMode, fmt.Errorf("%q is not yes or no", protected))
	}
	stringKey(keyEnableDebug, &c.EnableDebugCommand)
	c.EnableDebugCommand = strings.ToLower(c.EnableDebugCommand)
	intKey(keyTLSPort, &c.TLSPort)
	stringKey(keyTLSCertFile, &c.TLSCertFile)
	stringKey(keyTLSKeyFile, &c.TLSKeyFile)
	stringKey(keyTLSCACertFile, &c.TLSCACertFile)
	stringKey(keyTLSAuthClients, &c.TLSAuthClients)
	c.TLSAuthClients = strings.ToLower(c.TLSAuthClients)
	switch c.TLSAuthClients {
	case "true":
		c.TLSAuthClients = "yes"
	case "false":
		c.TLSAuthClients = "no"
	}
	var obuf string
	stringKey(keyObufLimit, &obuf)
	if lim, err := ParseOutputBufferLimits(obuf, DefaultOutputBufferLimits); err != nil {
		fail(keyObufLimit, err)
	} else {
		c.ClientOutputBufferLimit = lim
	}
	if m, err := toRenames(v.Get(keyRenameCommand)); err != nil {
		fail(keyRenameCommand, err)
	} else {
		c.RenameCommand = m
	}
	if users, err := toUserLines(v.Get(keyUser)); err != nil {
		fail(keyUser, err)
	} else {
		c.Users = users
	}

	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// toInt converts a YAML, environment or flag value to an integer. Strings
// must be plain decimal integers; floats must be whole.
func toInt(x any) (int64, error) {
	switch t := x.(type) {
	case int:
		return int64(t), nil
	case int8:
		return int64(t), nil
	case int16:
		return int64(t), nil
	case int32:
		return int64(t), nil
	case int64:
		return t, nil
	case uint:
		return fromUint(uint64(t))
	case uint8:
		return int64(t), nil
	case uint16:
		return int64(t), nil
	case uint32:
		return int64(t), nil
	case uint64:
		return fromUint(t)
	case float32:
		return fromFloat(float64(t))
	case float64:
		return fromFloat(t)
	case string:
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", t)
		}
		return n, nil
	case nil:
		return 0, errors.New("no value")
	}
	return 0, fmt.Errorf("%v (%T) is not an integer", x, x)
}

// fromUint converts u to int64 if it fits.
func fromUint(u uint64) (int64, error) {
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("%d is out of range", u)
	}
	return int64(u), nil
}

// fromFloat converts a whole float (YAML reads 1e9 as one) to int64.
func fromFloat(f float64) (int64, error) {
	if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, fmt.Errorf("%v is not an integer", f)
	}
	return int64(f), nil
}

// toSize converts a value to a byte count: integers as bytes, strings by
// ParseSize. Negative values are errors.
func toSize(x any) (int64, error) {
	if s, ok := x.(string); ok {
		return ParseSize(s)
	}
	n, err := toInt(x)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, fmt.Errorf("size %d: negative sizes are not allowed", n)
	}
	return n, nil
}

// toString converts a scalar value to a string; YAML may have read a
// password of digits as a number.
func toString(x any) (string, error) {
	switch t := x.(type) {
	case string:
		return t, nil
	case nil:
		return "", nil
	case bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return fmt.Sprint(t), nil
	}
	return "", fmt.Errorf("%v (%T) is not a string", x, x)
}

// defaultMaxMemory is 25% of physical memory, or fallbackMaxMemory when
// that cannot be read.
func defaultMaxMemory() int64 {
	total, err := PhysicalMemory()
	if err != nil || total/4 < 1 {
		return fallbackMaxMemory
	}
	return total / 4
}
