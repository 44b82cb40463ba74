package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestSecuritySettingsFromEverySource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		env  []string
		args []string
		want func(*Config)
	}{
		{
			name: "file: rename map, user list, limits",
			file: "rename-command: {FLUSHALL: \"\", CONFIG: CONFIG_x9, kvc.probe: probe2}\n" +
				"user:\n  - \"alice on #abc ~cache:* +@read\"\n  - default off\n" +
				"timeout: 30\nprotected-mode: no\n" +
				"client-output-buffer-limit: \"normal 1mb 512kb 10\"\n",
			want: func(c *Config) {
				c.RenameCommand = map[string]string{"flushall": "", "config": "config_x9", "kvc.probe": "probe2"}
				c.Users = []string{"alice on #abc ~cache:* +@read", "default off"}
				c.Timeout, c.ProtectedMode = 30, false
				c.ClientOutputBufferLimit.Normal = OutputBufferLimit{Hard: 1 << 20, Soft: 512 << 10, SoftSeconds: 10}
			},
		},
		{
			name: "environment: space-separated renames, ';'-separated users",
			env: []string{"KVSERVER_RENAME_COMMAND=FLUSHALL= DEBUG=dbg", "KVSERVER_USER=a on nopass; b off",
				"KVSERVER_PROTECTED_MODE=false", "KVSERVER_TLS_AUTH_CLIENTS=optional"},
			want: func(c *Config) {
				c.RenameCommand = map[string]string{"flushall": "", "debug": "dbg"}
				c.Users = []string{"a on nopass", "b off"}
				c.ProtectedMode, c.TLSAuthClients = false, "optional"
			},
		},
		{
			name: "flags: repeated --rename-command and --user override the file",
			file: "rename-command: {KEYS: \"\"}\nuser: [\"x on\"]\n",
			args: []string{"--rename-command", "SHUTDOWN=", "--rename-command=CONFIG=cfg",
				"--user", "alice on >p, q ~* +@all", "--user", "bob off", "--tls-port", "6380",
				"--tls-cert-file", "c.pem", "--tls-key-file", "k.pem", "--tls-ca-cert-file", "ca.pem", "--port", "0"},
			want: func(c *Config) {
				c.RenameCommand = map[string]string{"shutdown": "", "config": "cfg"}
				c.Users = []string{"alice on >p, q ~* +@all", "bob off"}
				c.TLSPort, c.TLSCertFile, c.TLSKeyFile, c.TLSCACertFile, c.Port = 6380, "c.pem", "k.pem", "ca.pem", 0
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := defaults(t)
			args := tt.args
			if tt.file != "" {
				path := writeYAML(t, tt.file)
				want.ConfigFile = path
				args = append([]string{"--config", path}, args...)
			}
			tt.want(&want)
			got, err := Load(args, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load\n got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestSecuritySettingsRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantMsg string
	}{
		{"TLS without a certificate", []string{"--tls-port", "6380"}, "tls-port: TLS needs tls-cert-file and tls-key-file"},
		{"client certificates without a CA", []string{"--tls-port", "6380", "--tls-cert-file", "c", "--tls-key-file", "k"},
			"tls-ca-cert-file: must be set when tls-auth-clients is yes"},
		{"bad tls-auth-clients", []string{"--tls-auth-clients", "maybe"}, "tls-auth-clients"},
		{"tls-port equal to port", []string{"--tls-port", "6379", "--tls-cert-file", "c", "--tls-key-file", "k", "--tls-auth-clients", "no"},
			"tls-port: 6379 is also the plain client port"},
		{"negative timeout", []string{"--timeout", "-1"}, "timeout"},
		{"bad protected-mode", []string{"--protected-mode", "maybe"}, "protected-mode"},
		{"bad output limit class", []string{"--client-output-buffer-limit", "master 1 2 3"},
			"Invalid client class specified in buffer limit configuration."},
		{"bad output limit count", []string{"--client-output-buffer-limit", "normal 1 2"},
			"Wrong number of arguments in buffer limit configuration."},
		{"bad output limit value", []string{"--client-output-buffer-limit", "normal 1x 2 3"},
			"Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{"rename without =", []string{"--rename-command", "FLUSHALL"}, "rename-command"},
		{"rename to a name with a space", []string{"--rename-command", "FLUSHALL=a|b"}, "rename-command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(tt.args, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Load(%q) = %v, want an error containing %q", tt.args, err, tt.wantMsg)
			}
		})
	}
}

func TestOutputBufferLimitsRoundTripLikeRedis(t *testing.T) {
	t.Parallel()
	if got, want := DefaultOutputBufferLimits.String(), "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"; got != want {
		t.Errorf("default = %q, want Redis's %q", got, want)
	}
	got, err := ParseOutputBufferLimits("normal 1mb 512kb 10", DefaultOutputBufferLimits)
	if err != nil {
		t.Fatal(err)
	}
	// Redis 7.0.15 answers CONFIG GET client-output-buffer-limit with this
	// after CONFIG SET client-output-buffer-limit "normal 1mb 512kb 10".
	if want := "normal 1048576 524288 10 slave 268435456 67108864 60 pubsub 33554432 8388608 60"; got.String() != want {
		t.Errorf("after setting normal: %q, want %q", got, want)
	}
}
