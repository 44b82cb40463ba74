package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Names the code needs beyond the settings table (settings.go).
const (
	keyRenameCommand = "rename-command"
	keyUser          = "user"
	keyConfig        = "config" // flag and environment only, not a YAML key

	envPrefix = "KVSERVER_"

	// fallbackMaxMemory is the maxmemory default where physical memory
	// cannot be read.
	fallbackMaxMemory = 1 << 30
	// minProtoMaxBulkLen is Redis's lower bound for proto-max-bulk-len.
	minProtoMaxBulkLen = 1 << 20
)

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
	KVQuant         string // --kv-quant off|int8|fp8|int4, default off
	ClusterConfig   string // --cluster-config, YAML slot map (package cluster); "" runs without cluster mode
	ClusterEtcd     string // --cluster-etcd, etcd endpoints, comma separated (package cluster/etcdmap); "" off
	ClusterName     string // --cluster-name, the cluster's key prefix in etcd, default "kvserver"

	// NotifyKeyspaceEvents is --notify-keyspace-events, Redis's class
	// letters (package notify), default "" (none).
	NotifyKeyspaceEvents string

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
	// EnableModuleCommand is --enable-module-command no|yes|local, default
	// no: who may run MODULE LOAD, LOADEX and UNLOAD.
	EnableModuleCommand string

	// byName holds the settings whose rows have no field above, by name;
	// read them with Int, String and Bool. It is shared by copies of the
	// Config, which is never changed after Load.
	byName map[string]any
}

// Load builds the Config from, in rising priority: the defaults of the
// settings table (Settings), the YAML file named by --config (or KVSERVER_CONFIG),
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
	if err := v.MergeConfigMap(defaultSettings()); err != nil {
		return Config{}, fmt.Errorf("config: built-in defaults: %w", err)
	}

	fs := newFlagSet()
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
	return "Usage of kvserver:\n" + newFlagSet().FlagUsages()
}

// SlogLevel returns the slog level named by LogLevel, or slog.LevelInfo
// when LogLevel is not one of debug, info, warn, error.
func (c Config) SlogLevel() slog.Level {
	l, _ := parseLevel(c.LogLevel)
	return l
}

// Validate returns an error for impossible values: a value outside its
// setting's bounds or list (the settings table), and what each setting's
// check rejects: the metrics or TLS port equal to another port, an empty
// bind address or data directory, a maxmemory below 1 byte, TLS without its
// files, rename-command entries Redis would reject. The error lists every
// problem, each naming its key.
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	for _, s := range settings {
		if s.field != nil || c.byName[s.Name] != nil {
			s.validate(&c, bad)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("config: invalid settings: %w", errors.Join(errs...))
	}
	return nil
}

// newFlagSet defines one flag per configurable setting plus --config, with
// the table's defaults and doc lines. Parse errors are returned, not
// printed.
func newFlagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("kvserver", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	for _, s := range settings {
		if !s.Configurable() {
			continue
		}
		switch s.Kind {
		case KindInt:
			n, _ := strconv.Atoi(s.Default) // TestEverySettingHasADocAndDefault
			fs.Int(s.Name, n, s.Usage())
		case KindRenames, KindUsers:
			fs.StringArray(s.Name, nil, s.Usage())
		default:
			fs.String(s.Name, s.Default, s.Usage())
		}
	}
	fs.String(keyConfig, "", configDoc)
	return fs
}

// defaultSettings is the lowest configuration layer: each setting's
// Default, as a string for viper (lists and maps have none).
func defaultSettings() map[string]any {
	out := make(map[string]any, len(settings))
	for _, s := range settings {
		if s.Configurable() && s.Kind != KindRenames && s.Kind != KindUsers {
			out[s.Name] = s.Default
		}
	}
	return out
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
	for _, s := range settings {
		if !s.Configurable() {
			continue
		}
		if err := s.decode(v.Get(s.Name), &c); err != nil {
			errs = append(errs, fmt.Errorf("%s (from %s): %w", s.Name, source(s.Name), err))
		}
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
	case int, int8, int16, int32, int64:
		return reflect.ValueOf(t).Int(), nil
	case uint, uint8, uint16, uint32, uint64:
		return fromUint(reflect.ValueOf(t).Uint())
	case float32, float64:
		return fromFloat(reflect.ValueOf(t).Float())
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
