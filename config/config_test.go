package config

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kvserver/kvserver/configs"
)

// wantDefaultMaxMemory is what Load should pick for maxmemory 0.
func wantDefaultMaxMemory(t *testing.T) int64 {
	t.Helper()
	total, err := PhysicalMemory()
	if err != nil {
		return 1 << 30
	}
	return total / 4
}

// defaults is the Config that Load returns with no file, environment or flags.
func defaults(t *testing.T) Config {
	t.Helper()
	return Config{
		Port:            6379,
		Bind:            "127.0.0.1",
		Dir:             "./data",
		MaxMemory:       wantDefaultMaxMemory(t),
		MetricsPort:     9121,
		RequirePass:     "",
		ProtoMaxBulkLen: 512 << 20,
		MaxClients:      10000,
		Databases:       16,
		ConfigFile:      "",
		LogLevel:        "info",
		DiskCompression: "none", KVQuant: "off", EnableDebugCommand: "no", EnableModuleCommand: "no", ClusterName: "kvserver",
		ProtectedMode: true, TLSAuthClients: "yes",
		ClientOutputBufferLimit: DefaultOutputBufferLimits,
		RenameCommand:           map[string]string{},
		byName:                  defaultByName(),
	}
}

// defaultByName is Config.byName as Load fills it from the defaults.
func defaultByName() map[string]any {
	out := map[string]any{}
	for _, s := range settings {
		if s.ReadByName() {
			var c Config
			if err := s.decode(s.Default, &c); err != nil {
				panic(err)
			}
			out[s.Name] = c.byName[s.Name]
		}
	}
	return out
}

// writeYAML writes body to a fresh file and returns its path.
func writeYAML(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kvserver.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadWithoutSourcesGivesDocumentedDefaults(t *testing.T) {
	t.Parallel()
	got, err := Load(nil, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := defaults(t); !reflect.DeepEqual(got, want) {
		t.Errorf("Load(nil, nil) = %+v, want %+v", got, want)
	}
}

func TestLoadLayersOverrideInRisingPriority(t *testing.T) {
	t.Parallel()
	const file = "port: 7000\nmaxmemory: 2gb\nbind: 0.0.0.0\nrequirepass: filepass\n"
	tests := []struct {
		name string
		file string // YAML body; the path is passed with --config unless viaEnv
		// viaEnv passes the file path as KVSERVER_CONFIG instead of --config.
		viaEnv bool
		env    []string
		args   []string
		want   func(*Config)
	}{
		{
			name: "file overrides defaults",
			file: file,
			want: func(c *Config) {
				c.Port, c.MaxMemory, c.Bind, c.RequirePass = 7000, 2<<30, "0.0.0.0", "filepass"
			},
		},
		{
			name: "environment overrides file",
			file: file,
			env:  []string{"KVSERVER_PORT=7001", "KVSERVER_MAXMEMORY=3gb"},
			want: func(c *Config) {
				c.Port, c.MaxMemory, c.Bind, c.RequirePass = 7001, 3<<30, "0.0.0.0", "filepass"
			},
		},
		{
			name: "flags override environment",
			file: file,
			env:  []string{"KVSERVER_PORT=7001", "KVSERVER_MAXMEMORY=3gb"},
			args: []string{"--port", "7002", "--maxmemory=4gb"},
			want: func(c *Config) {
				c.Port, c.MaxMemory, c.Bind, c.RequirePass = 7002, 4<<30, "0.0.0.0", "filepass"
			},
		},
		{
			name:   "KVSERVER_CONFIG names the file",
			file:   file,
			viaEnv: true,
			want: func(c *Config) {
				c.Port, c.MaxMemory, c.Bind, c.RequirePass = 7000, 2<<30, "0.0.0.0", "filepass"
			},
		},
		{
			name: "environment names upper-case keys with underscores",
			env: []string{
				"KVSERVER_PROTO_MAX_BULK_LEN=1gb", "KVSERVER_METRICS_PORT=0",
				"KVSERVER_LOG_LEVEL=DEBUG", "KVSERVER_MAXCLIENTS=5", "KVSERVER_DIR=/var/lib/kv",
			},
			want: func(c *Config) {
				c.ProtoMaxBulkLen, c.MetricsPort, c.LogLevel, c.MaxClients, c.Dir = 1<<30, 0, "debug", 5, "/var/lib/kv"
			},
		},
		{
			name: "empty and unknown environment variables are ignored",
			env:  []string{"KVSERVER_PORT=", "KVSERVER_NOPE=1", "PORT=1", "KVSERVERPORT=1", "garbage"},
			want: func(*Config) {},
		},
		{
			name: "later duplicate environment variable wins",
			env:  []string{"KVSERVER_DATABASES=2", "KVSERVER_DATABASES=3"},
			want: func(c *Config) { c.Databases = 3 },
		},
		{
			name: "empty key in file keeps the default",
			file: "port:\nmaxmemory:\ndatabases: 4\n",
			want: func(c *Config) { c.Databases = 4 },
		},
		{
			name: "integer size in file is bytes",
			file: "maxmemory: 1048576\nproto-max-bulk-len: 2097152\n",
			want: func(c *Config) { c.MaxMemory, c.ProtoMaxBulkLen = 1<<20, 2<<20 },
		},
		{
			name: "maxmemory 0 means 25% of RAM",
			env:  []string{"KVSERVER_MAXMEMORY=1gb"},
			args: []string{"--maxmemory", "0"},
			want: func(*Config) {},
		},
		{
			name: "cluster-config from file",
			file: "cluster-config: /etc/kv/file.yaml\n",
			want: func(c *Config) { c.ClusterConfig = "/etc/kv/file.yaml" },
		},
		{
			name: "cluster-config environment beats file",
			file: "cluster-config: /etc/kv/file.yaml\n",
			env:  []string{"KVSERVER_CLUSTER_CONFIG=/etc/kv/env.yaml"},
			want: func(c *Config) { c.ClusterConfig = "/etc/kv/env.yaml" },
		},
		{
			name: "cluster-config flag beats environment",
			env:  []string{"KVSERVER_CLUSTER_CONFIG=/etc/kv/env.yaml"},
			args: []string{"--cluster-config", "/etc/kv/flag.yaml"},
			want: func(c *Config) { c.ClusterConfig = "/etc/kv/flag.yaml" },
		},
		{
			name: "numeric password in file is kept as text",
			file: "requirepass: 123456\n",
			want: func(c *Config) { c.RequirePass = "123456" },
		},
		{
			name: "flags set every key",
			args: []string{
				"--port=1", "--bind=::1", "--dir=d", "--maxmemory=10mb", "--metrics-port=2",
				"--requirepass=pw", "--proto-max-bulk-len=1mb", "--maxclients=3", "--databases=4", "--log-level=warn",
			},
			want: func(c *Config) {
				*c = Config{
					Port: 1, Bind: "::1", Dir: "d", MaxMemory: 10 << 20, MetricsPort: 2, RequirePass: "pw",
					ProtoMaxBulkLen: 1 << 20, MaxClients: 3, Databases: 4, LogLevel: "warn", DiskCompression: "none", KVQuant: "off", EnableDebugCommand: "no", EnableModuleCommand: "no", ClusterName: "kvserver",
					ProtectedMode: true, TLSAuthClients: "yes", ClientOutputBufferLimit: DefaultOutputBufferLimits, RenameCommand: map[string]string{},
					byName: defaultByName(),
				}
			},
		},
		{
			name: "settings read by name come from the same layers",
			env:  []string{"KVSERVER_MAX_PIN_SECONDS=60"},
			args: []string{"--max-lease-ms=500"},
			file: "exists-lease-ms: 0\n",
			want: func(c *Config) {
				c.byName = defaultByName()
				*c.byName["max-lease-ms"].(*int64) = 500
				*c.byName["max-pin-seconds"].(*int64) = 60
				*c.byName["exists-lease-ms"].(*int64) = 0
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := defaults(t)
			env, args := tt.env, tt.args
			if tt.file != "" {
				path := writeYAML(t, tt.file)
				want.ConfigFile = path
				if tt.viaEnv {
					env = append([]string{"KVSERVER_CONFIG=" + path}, env...)
				} else {
					args = append([]string{"--config", path}, args...)
				}
			}
			tt.want(&want)
			got, err := Load(args, env)
			if err != nil {
				t.Fatalf("Load(%q, %q): %v", args, env, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load(%q, %q)\n got %+v\nwant %+v", args, env, got, want)
			}
		})
	}
}

func TestLoadFlagConfigBeatsEnvironmentConfig(t *testing.T) {
	t.Parallel()
	fromEnv := writeYAML(t, "databases: 2\n")
	fromFlag := writeYAML(t, "databases: 3\n")
	got, err := Load([]string{"--config", fromFlag}, []string{"KVSERVER_CONFIG=" + fromEnv})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got.Databases != 3 || got.ConfigFile != fromFlag {
		t.Errorf("Databases, ConfigFile = %d, %q; want 3, %q", got.Databases, got.ConfigFile, fromFlag)
	}
}

func TestLoadBadValuesGiveErrorsNamingTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		env  []string
		args []string
		want []string // substrings of the error
	}{
		{name: "fractional size flag", args: []string{"--maxmemory", "1.5gb"}, want: []string{"maxmemory", "flag --maxmemory", "fractional"}},
		{name: "negative size flag", args: []string{"--maxmemory=-1"}, want: []string{"maxmemory", "negative"}},
		{name: "unknown size unit in environment", env: []string{"KVSERVER_PROTO_MAX_BULK_LEN=5tb"}, want: []string{"proto-max-bulk-len", "environment KVSERVER_PROTO_MAX_BULK_LEN", "unknown unit"}},
		{name: "non-integer port in environment", env: []string{"KVSERVER_PORT=abc"}, want: []string{"port", "environment KVSERVER_PORT"}},
		{name: "non-integer port flag", args: []string{"--port", "abc"}, want: []string{"port"}},
		{name: "port out of range", args: []string{"--port", "70000"}, want: []string{"port", "65535"}},
		{name: "metrics port equals client port", args: []string{"--port", "7000", "--metrics-port", "7000"}, want: []string{"metrics-port"}},
		{name: "too few databases in file", file: "databases: 0\n", want: []string{"databases"}},
		{name: "negative size in file", file: "maxmemory: -5\n", want: []string{"maxmemory", "negative"}},
		{name: "fractional number in file", file: "maxclients: 1.5\n", want: []string{"maxclients", "not an integer"}},
		{name: "list where a number belongs in file", file: "port: [1, 2]\n", want: []string{"port"}},
		{name: "unknown key in file", file: "maxmemroy: 1gb\n", want: []string{"maxmemroy", "unknown key"}},
		{name: "nested key in file", file: "port:\n  tcp: 1\n", want: []string{"port.tcp", "unknown key"}},
		{name: "malformed YAML file", file: "port: [\n", want: []string{"parse"}},
		{name: "bulk length under 1mb", args: []string{"--proto-max-bulk-len", "1000"}, want: []string{"proto-max-bulk-len", "1mb"}},
		{name: "zero maxclients", env: []string{"KVSERVER_MAXCLIENTS=0"}, want: []string{"maxclients"}},
		{name: "unknown log level", args: []string{"--log-level", "verbose"}, want: []string{"log-level", "verbose"}},
		{name: "unknown flag", args: []string{"--nope"}, want: []string{"nope"}},
		{name: "positional argument", args: []string{"redis.conf"}, want: []string{"unexpected argument", "redis.conf"}},
		{name: "every problem is reported", args: []string{"--databases=0", "--maxclients=0"}, want: []string{"databases", "maxclients"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", writeYAML(t, tt.file)}, args...)
			}
			_, err := Load(args, tt.env)
			if err == nil {
				t.Fatalf("Load(%q, %q) succeeded, want an error", args, tt.env)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%q, %q) error %q does not mention %q", args, tt.env, err, w)
				}
			}
		})
	}
}

func TestLoadMissingConfigFileWrapsNotExist(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := Load([]string{"--config", path}, nil)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("Load with missing file: err = %v, want fs.ErrNotExist naming %s", err, path)
	}
}

func TestLoadHelpWrapsErrHelp(t *testing.T) {
	t.Parallel()
	_, err := Load([]string{"--help"}, nil)
	if !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("Load(--help) err = %v, want pflag.ErrHelp", err)
	}
}

func TestUsageListsEveryFlagWithItsDefault(t *testing.T) {
	t.Parallel()
	u := Usage()
	for _, want := range []string{
		"--port int", "(default 6379)", "--bind", "--dir", "--maxmemory", "--metrics-port", "(default 9121)",
		"--requirepass", "--proto-max-bulk-len", `(default "512mb")`, "--maxclients", "--databases",
		"--log-level", "--config",
	} {
		if !strings.Contains(u, want) {
			t.Errorf("Usage() lacks %q:\n%s", want, u)
		}
	}
}

func TestEmbeddedYAMLCommentsEveryKey(t *testing.T) {
	t.Parallel()
	sc := bufio.NewScanner(bytes.NewReader(configs.DefaultYAML))
	prev := ""
	seen := map[string]bool{}
	for sc.Scan() {
		line := sc.Text()
		if key, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, " ") {
			seen[key] = true
			if !strings.HasPrefix(prev, "# Default:") {
				t.Errorf("key %q is not preceded by a \"# Default:\" comment", key)
			}
		}
		prev = line
	}
	for _, k := range fileKeys() {
		if !seen[k] {
			t.Errorf("embedded YAML lacks key %q", k)
		}
	}
	if len(seen) != len(fileKeys()) {
		t.Errorf("embedded YAML has keys %v, want exactly %v", seen, fileKeys())
	}
}

func TestValidateRejectsImpossibleValuesNamingTheKey(t *testing.T) {
	t.Parallel()
	valid := Config{
		Port: 6379, Bind: "127.0.0.1", Dir: "./data", MaxMemory: 1 << 30, MetricsPort: 9121,
		ProtoMaxBulkLen: 512 << 20, MaxClients: 10000, Databases: 16, LogLevel: "info", DiskCompression: "none", KVQuant: "off", EnableDebugCommand: "no", EnableModuleCommand: "no", ClusterName: "kvserver",
	}
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantKey string // "" means valid
	}{
		{name: "defaults are valid", mutate: func(*Config) {}},
		{name: "port 0 is valid", mutate: func(c *Config) { c.Port = 0 }},
		{name: "metrics port 0 disables metrics", mutate: func(c *Config) { c.MetricsPort = 0; c.Port = 0 }},
		{name: "bulk length of exactly 1mb is valid", mutate: func(c *Config) { c.ProtoMaxBulkLen = 1 << 20 }},
		{name: "negative port", mutate: func(c *Config) { c.Port = -1 }, wantKey: "port"},
		{name: "port above 65535", mutate: func(c *Config) { c.Port = 65536 }, wantKey: "port"},
		{name: "metrics port above 65535", mutate: func(c *Config) { c.MetricsPort = 65536 }, wantKey: "metrics-port"},
		{name: "metrics port equal to client port", mutate: func(c *Config) { c.MetricsPort = c.Port }, wantKey: "metrics-port"},
		{name: "empty bind", mutate: func(c *Config) { c.Bind = "" }, wantKey: "bind"},
		{name: "empty dir", mutate: func(c *Config) { c.Dir = "" }, wantKey: "dir"},
		{name: "zero maxmemory", mutate: func(c *Config) { c.MaxMemory = 0 }, wantKey: "maxmemory"},
		{name: "bulk length under 1mb", mutate: func(c *Config) { c.ProtoMaxBulkLen = 1<<20 - 1 }, wantKey: "proto-max-bulk-len"},
		{name: "zero maxclients", mutate: func(c *Config) { c.MaxClients = 0 }, wantKey: "maxclients"},
		{name: "zero databases", mutate: func(c *Config) { c.Databases = 0 }, wantKey: "databases"},
		{name: "unknown log level", mutate: func(c *Config) { c.LogLevel = "trace" }, wantKey: "log-level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid
			tt.mutate(&c)
			err := c.Validate()
			switch {
			case tt.wantKey == "" && err != nil:
				t.Errorf("Validate(%+v) = %v, want nil", c, err)
			case tt.wantKey != "" && err == nil:
				t.Errorf("Validate(%+v) = nil, want an error naming %s", c, tt.wantKey)
			case tt.wantKey != "" && !strings.Contains(err.Error(), tt.wantKey+":"):
				t.Errorf("Validate(%+v) = %v, want it to name %s", c, err, tt.wantKey)
			}
		})
	}
}

func TestSlogLevelFollowsLogLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level string
		want  slog.Level
	}{
		{"debug", slog.LevelDebug},
		{"info", slog.LevelInfo},
		{"warn", slog.LevelWarn},
		{"error", slog.LevelError},
		{"bogus", slog.LevelInfo},
	}
	for _, tt := range tests {
		if got := (Config{LogLevel: tt.level}).SlogLevel(); got != tt.want {
			t.Errorf("Config{LogLevel: %q}.SlogLevel() = %v, want %v", tt.level, got, tt.want)
		}
	}
}
