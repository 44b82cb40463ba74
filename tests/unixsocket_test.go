package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestUnixSocket serves clients on --unixsocket beside the TCP port, as
// Redis does: redis-cli -s and go-redis over "unix" store and read values,
// CONFIG GET reports the path and the octal permissions, CLIENT INFO
// names the socket, and the socket file carries those permissions.
func TestUnixSocket(t *testing.T) {
	t.Parallel()
	// A short directory: a socket path is limited to 107 bytes, which a
	// test's TempDir can exceed.
	dir, err := os.MkdirTemp("", "kvsock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "kv.sock")
	s := startKVServer(t, "--unixsocket", path, "--unixsocketperm", "700")

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("socket file: %v", err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket file mode %v, want a socket with permissions 0700", fi.Mode())
	}

	if got := redisCLI(t, s, "", "-s", path, "SET", "unix:cli", "over-the-socket"); strings.TrimSpace(got) != "OK" {
		t.Errorf("redis-cli -s SET printed %q, want OK", got)
	}
	if got := redisCLI(t, s, "", "-s", path, "GET", "unix:cli"); strings.TrimSpace(got) != "over-the-socket" {
		t.Errorf("redis-cli -s GET printed %q, want over-the-socket", got)
	}
	// Redis answers a pattern in its dictionary's order: compare as pairs.
	got := map[string]string{}
	fields := strings.Fields(redisCLI(t, s, "", "-s", path, "CONFIG", "GET", "unixsocket*"))
	for i := 0; i+1 < len(fields); i += 2 {
		got[fields[i]] = fields[i+1]
	}
	if got["unixsocket"] != path || got["unixsocketperm"] != "700" || len(got) != 2 {
		t.Errorf("CONFIG GET unixsocket* gave %v, want unixsocket %s and unixsocketperm 700", got, path)
	}

	if got := redisCLI(t, s, "", "-s", path, "CLIENT", "INFO"); !strings.Contains(got, " addr="+path+":0 ") ||
		!strings.Contains(got, " laddr="+path+":0 ") {
		t.Errorf("CLIENT INFO over the socket printed %q, want addr=%s:0 and laddr=%s:0 as Redis writes them", got, path, path)
	}

	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: path, PoolSize: 4,
		DialTimeout: 5 * time.Second, ReadTimeout: 20 * time.Second, WriteTimeout: 20 * time.Second})
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	value := randomBytes(17, 4<<20)
	if err := rdb.Set(ctx, "unix:big", value, 0).Err(); err != nil {
		t.Fatalf("go-redis SET over the unix socket: %v", err)
	}
	back, err := rdb.Get(ctx, "unix:big").Bytes()
	if err != nil || string(back) != string(value) {
		t.Fatalf("go-redis GET over the unix socket: %d bytes, %v; want the 4 MiB value back", len(back), err)
	}
	// The same keyspace as the TCP port.
	if v := dialRaw(t, s.Addr).Do("GET", "unix:cli"); string(v) != bulk("over-the-socket") {
		t.Errorf("GET over TCP of a key set over the socket: %q", v)
	}
}
