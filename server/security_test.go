package server

import (
	"github.com/kvserver/kvserver/commands"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/config"
)

func TestProtectedModeRefuses(t *testing.T) {
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 1234} }
	tests := []struct {
		name          string
		protected     bool
		defaultNoPass bool
		remote        net.Addr
		want          bool
	}{
		{"remote, no password", true, true, tcp("192.0.2.7"), true},
		{"remote IPv6, no password", true, true, tcp("2001:db8::1"), true},
		{"IPv4-mapped remote", true, true, tcp("::ffff:192.0.2.7"), true},
		{"loopback", true, true, tcp("127.0.0.1"), false},
		{"other loopback address", true, true, tcp("127.0.0.2"), false},
		{"IPv6 loopback", true, true, tcp("::1"), false},
		{"IPv4-mapped loopback", true, true, tcp("::ffff:127.0.0.1"), false},
		{"unix socket", true, true, &net.UnixAddr{Name: "/tmp/s", Net: "unix"}, false},
		{"remote, default user has a password", true, false, tcp("192.0.2.7"), false},
		{"remote, protected-mode no", false, true, tcp("192.0.2.7"), false},
	}
	for _, tt := range tests {
		if got := protectedModeRefuses(tt.protected, tt.defaultNoPass, tt.remote); got != tt.want {
			t.Errorf("%s: protectedModeRefuses = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestRenameCommands(t *testing.T) {
	tests := []struct {
		name    string
		renames map[string]string
		wantErr string
		// lookups maps a name to the command it must find ("" = none).
		lookups map[string]string
	}{
		{"disable", map[string]string{"flushall": ""}, "", map[string]string{"flushall": "", "FLUSHALL": "", "get": "get"}},
		{"rename", map[string]string{"config": "config_x9"}, "", map[string]string{"config": "", "CONFIG_X9": "config"}},
		{"swap", map[string]string{"get": "set", "set": "get"}, "", map[string]string{"get": "set", "set": "get"}},
		{"unknown command", map[string]string{"nosuch": "x"}, "No such command in rename-command", nil},
		{"subcommand", map[string]string{"config|get": ""}, "No such command in rename-command", nil},
		{"target exists", map[string]string{"get": "set"}, "Target command name already exists", nil},
	}
	for _, tt := range tests {
		table := commands.NewTable(commands.Specs())
		before := len(table.All())
		err := table.Rename(tt.renames)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: rename = %v, want %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for name, want := range tt.lookups {
			got := ""
			if spec := table.Lookup([]byte(name)); spec != nil {
				got = spec.Name
			}
			if got != want {
				t.Errorf("%s: Lookup(%q) = %q, want %q", tt.name, name, got, want)
			}
		}
		disabled := 0
		for _, n := range tt.renames {
			if n == "" {
				disabled++
			}
		}
		if got := len(table.All()); got != before-disabled {
			t.Errorf("%s: %d commands listed, want %d", tt.name, got, before-disabled)
		}
	}
	// The shared command table is not changed by a server's renames.
	if commands.NewTable(commands.Specs()).Lookup([]byte("flushall")) == nil {
		t.Error("renaming in one table disabled the command in another")
	}
}

func TestConfigRewriteWritesChangedSecuritySettings(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kvserver.yaml")
	if err := os.WriteFile(path, []byte("timeout: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	as := startAdminServer(t, Options{Port: 7001, Bind: "127.0.0.1", Dir: dir, ConfigFile: path, Timeout: 7})
	c := as.dial(t)
	for _, args := range [][]string{
		{"CONFIG", "SET", "timeout", "0", "protected-mode", "no"},
		{"CONFIG", "SET", "client-output-buffer-limit", "normal 1mb 512kb 10"},
		{"CONFIG", "REWRITE"},
	} {
		if r := c.do(args...); r != "+OK\r\n" {
			t.Fatalf("%q = %q", args, r)
		}
	}
	cfg, err := config.Load([]string{"--config", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config.DefaultOutputBufferLimits
	want.Normal = config.OutputBufferLimit{Hard: 1 << 20, Soft: 512 << 10, SoftSeconds: 10}
	if cfg.Timeout != 0 || cfg.ProtectedMode || cfg.ClientOutputBufferLimit != want {
		t.Errorf("loaded back timeout %d, protected-mode %v, limits %v", cfg.Timeout, cfg.ProtectedMode, cfg.ClientOutputBufferLimit)
	}
	// Settings left at their defaults are not added.
	as2 := startAdminServer(t, Options{Port: 7002, Bind: "127.0.0.1", Dir: dir, ConfigFile: filepath.Join(dir, "new.yaml")})
	if r := as2.dial(t).do("CONFIG", "REWRITE"); r != "+OK\r\n" {
		t.Fatalf("CONFIG REWRITE = %q", r)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "new.yaml"))
	for _, k := range []string{"timeout", "protected-mode", "client-output-buffer-limit"} {
		if strings.Contains(string(data), k+":") {
			t.Errorf("default %s written:\n%s", k, data)
		}
	}
}
