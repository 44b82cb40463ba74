package tests

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDifferentialMigrate runs the same MIGRATE commands on a
// redis-server and on kvserver, each migrating to a target of its own, and
// compares the replies byte for byte, then what the sources kept and what
// the targets received. The targets are two redis-servers, then two
// kvservers, so the four directions are covered: kvserver to Redis,
// Redis to Redis (the reference), Redis to kvserver and kvserver to
// kvserver. The targets require a password, which shows that a cached
// connection stays authenticated (as Redis's does), and the errors are
// Redis's: a refused connection (IOERR writing, after one retry), a name
// that does not resolve (IOERR connecting), AUTH refused, BUSYKEY, a bad
// database, option and argument errors.
func TestDifferentialMigrate(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	closed := strconv.Itoa(freePort(t)) // nothing listens there
	for _, target := range []struct {
		name  string
		start func() *server
	}{
		{"to redis", func() *server { return startRedis(t, "--requirepass", "pw") }},
		{"to kvserver", func() *server { return startKVServer(t, "--requirepass", "pw") }},
	} {
		t.Run(target.name, func(t *testing.T) {
			refTarget, kvTarget := target.start(), target.start()
			rc, kc := dialRaw(t, ref.Addr), dialRaw(t, kv.Addr)
			for _, step := range migrateSteps(closed) {
				a := rc.Do(withPort(step, refTarget.Port)...)
				b := kc.Do(withPort(step, kvTarget.Port)...)
				if string(a) != string(b) {
					t.Errorf("%q: replies differ\n  redis:    %q\n  kvserver: %q", step, a, b)
				}
			}
			if a, b := contents(t, ref, ""), contents(t, kv, ""); a != b {
				t.Errorf("the sources kept different keys\n  redis:\n%s  kvserver:\n%s", a, b)
			}
			if a, b := contents(t, refTarget, "pw"), contents(t, kvTarget, "pw"); a != b {
				t.Errorf("the targets received different keys\n  redis's:\n%s  kvserver's:\n%s", a, b)
			}
		})
	}
}

// withPort replaces "{port}" in step with the target's port.
func withPort(step []string, port int) []string {
	out := slices.Clone(step)
	for i, a := range out {
		out[i] = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
	}
	return out
}

// migrateSteps are the commands of TestDifferentialMigrate; closed is a
// port nothing listens on.
func migrateSteps(closed string) [][]string {
	m := func(rest ...string) []string { return append([]string{"MIGRATE", "127.0.0.1", "{port}"}, rest...) }
	return [][]string{
		{"FLUSHALL"},
		{"SET", "key", "hello"},
		{"MIGRATE", "127.0.0.1", closed, "key", "0", "200"},
		{"MIGRATE", "nosuch.invalid", closed, "key", "0", "200"},
		m("missing", "0", "1000"),
		m("key", "0", "1000"), // NOAUTH
		m("key", "0", "1000", "AUTH", "bad"),
		m("key", "0", "1000", "AUTH2", "default", "bad"),
		m("key", "0", "1000", "AUTH2", "", "pw"), // AUTH "" pw: no such user
		m("key", "1", "1000", "AUTH", "pw", "COPY"),
		{"EXISTS", "key"},
		m("key", "1", "1000", "AUTH", "pw", "COPY"), // BUSYKEY
		m("key", "1", "1000", "AUTH", "pw", "REPLACE"),
		{"EXISTS", "key"},
		// The cached connection is still authenticated.
		{"SET", "k2", "v2"},
		m("k2", "1", "1000"),
		{"EXISTS", "k2"},
		// Every type, with a TTL on some, in one MIGRATE with KEYS.
		{"HSET", "h", "f", "v", "g", "12"},
		{"RPUSH", "l", "a", "b", "3"},
		{"ZADD", "z", "1", "a", "2.5", "b"},
		{"SADD", "s", "x", "y"},
		{"SADD", "si", "1", "2", "3"},
		{"SET", "t", "ttl", "PX", "100000"},
		{"HSET", "ht", "f", "v"},
		{"PEXPIRE", "ht", "200000"},
		{"SET", "int", "12345"},
		{"SET", "big", strings.Repeat("0123456789", 2000)},
		{"SET", "huge", incompressible(300 << 10)}, // its payload is written apart from the commands
		{"SET", "huge2", incompressible(70 << 10)},
		m("", "2", "5000", "AUTH2", "default", "pw", "KEYS", "h", "l", "z", "s", "si", "t", "ht", "int", "big", "huge", "missing", "huge2"),
		{"DBSIZE"},
		// Some keys refused (BUSYKEY), the others moved and deleted here.
		{"SET", "a", "1"},
		{"SET", "b", "2"},
		m("a", "3", "1000", "COPY"),
		m("", "3", "1000", "KEYS", "a", "b"),
		{"EXISTS", "a", "b"},
		m("", "3", "1000", "REPLACE", "KEYS", "a", "b"),
		{"EXISTS", "a", "b"},
		// Argument errors.
		{"SET", "c", "3"},
		m("c", "3", "1000", "KEYS", "c"),
		m("", "3", "1000", "KEYS"),
		m("", "3", "1000", "AUTH"),
		m("", "3", "1000", "AUTH2", "u"),
		m("c", "3", "1000", "BOGUS"),
		m("c", "x", "1000"),
		m("c", "3", "x"),
		m("c", "3", "-5", "COPY"),
		m("c", "99", "1000"),
		m("c", "3", "1000"),
		{"EXISTS", "c"},
		{"MIGRATE", "127.0.0.1", "{port}", "c", "3"},
		// ACL key permissions apply to the keys after KEYS.
		{"ACL", "SETUSER", "mig", "on", ">p", "~a*", "+@all"},
		{"AUTH", "mig", "p"},
		m("", "3", "1000", "KEYS", "b"),
		m("", "3", "1000", "KEYS", "a", "b"),
		m("", "3", "1000", "KEYS", "a"),
		m("b", "3", "1000"),
		{"AUTH", "default", "x"},
		{"ACL", "DELUSER", "mig"},
		// Redis's migrateGetKeys: AUTH's and AUTH2's values are skipped.
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "KEYS", "a", "b"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "k", "0", "5", "COPY", "KEYS", "a"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "AUTH", "keys", "KEYS", "a"},
		{"COMMAND", "GETKEYS", "MIGRATE", "h", "1", "", "0", "5", "AUTH2", "keys", "keys", "KEYS", "a"},
		{"COMMAND", "GETKEYSANDFLAGS", "MIGRATE", "h", "1", "k", "0", "5", "REPLACE"},
		{"COMMAND", "GETKEYSANDFLAGS", "MIGRATE", "h", "1", "", "0", "5", "KEYS", "a", "b"},
	}
}

// incompressible is n bytes that LZF cannot shrink, the same every time.
func incompressible(n int) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

// contents describes what every database of s holds: per key its type,
// DUMP payload and whether it has a TTL.
func contents(t *testing.T, s *server, password string) string {
	t.Helper()
	c := dialRaw(t, s.Addr)
	defer c.Close()
	if password != "" {
		c.Do("AUTH", password)
	}
	var b strings.Builder
	for db := 0; db < 4; db++ {
		c.Do("SELECT", strconv.Itoa(db))
		r, err := parseReply(c.Do("KEYS", "*"))
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, k := range r.Elems {
			keys = append(keys, k.Str)
		}
		slices.Sort(keys)
		for _, k := range keys {
			ttl, _ := parseReply(c.Do("PTTL", k))
			typ := c.Do("TYPE", k)
			value := string(c.Do("DUMP", k))
			if string(typ) == "+set\r\n" {
				// A hashtable set's payload follows its hash seed's order.
				members, _ := parseReply(c.Do("SMEMBERS", k))
				var ms []string
				for _, m := range members.Elems {
					ms = append(ms, m.Str)
				}
				slices.Sort(ms)
				value = strings.Join(ms, ",")
			}
			fmt.Fprintf(&b, "db%d %s %q %q ttl=%v\n", db, k, typ, value, ttl.Int > 0)
		}
	}
	return b.String()
}
