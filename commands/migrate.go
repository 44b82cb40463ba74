package commands

import (
	"context"
	"time"

	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/migrate"
	"github.com/kvserver/kvserver/notify"
	"github.com/kvserver/kvserver/rdb"
)

// MIGRATE (Redis's cluster.c migrateCommand): the keys go to another
// server as DUMP payloads restored there, then are deleted here unless
// COPY. The keys are read in one engine step, the network exchange
// (package migrate) runs without the engine lock (and, through the
// server's Migrator, without the server's transaction lock, so that EXEC
// and scripts do not wait for a slow target), and the deletion is a
// second step that leaves alone a key whose value changed meanwhile (the
// target then holds the older value, this server the newer one; Redis,
// single-threaded, has no such window).

// migrateCommands is MIGRATE's row.
var migrateCommands = []*Spec{
	{Name: "migrate", Arity: -6, Flags: FlagWrite, ACL: "@keyspace @write @slow @dangerous",
		KeySpecs: []KeySpec{
			{Flags: KeyRW | KeyAccess | KeyDelete, ReadsValue: true, Begin: Index(3), Find: Range(0, 1, 0)},
			{Flags: KeyRW | KeyAccess | KeyDelete | KeyIncomplete, ReadsValue: true, Begin: Keyword("KEYS", -2), Find: Range(-1, 1, 0)},
		},
		GetKeys: migrateGetKeys, Handler: cmdMigrate},
}

// Migrator moves serialized keys to another server: the server's
// *migrate.Pool, reached without the server's transaction lock.
type Migrator interface {
	Migrate(ctx context.Context, req migrate.Request) migrate.Result
}

// migrateGetKeys is Redis's migrateGetKeys: the key argument, or with
// KEYS (and an empty key argument) the arguments after it; AUTH's and
// AUTH2's values are skipped in the search, and KEYS after a non-empty
// key argument means no keys.
func migrateGetKeys(args [][]byte) []int {
	skip := map[string]int{"copy": 0, "replace": 0, "auth": 1, "auth2": 2}
	for i := 6; i < len(args); i++ {
		if equalFold(args[i], "keys") {
			if len(args[3]) > 0 {
				return nil
			}
			out := make([]int, 0, len(args)-i-1)
			for j := i + 1; j < len(args); j++ {
				out = append(out, j)
			}
			return out
		}
		for name, n := range skip {
			if equalFold(args[i], name) {
				i += n
				break
			}
		}
	}
	return []int{3}
}

// MigrateSecretArgs says which arguments of a MIGRATE are secrets that
// MONITOR and the slow log redact, as migrateCommand does: AUTH's
// password, AUTH2's username and password.
func MigrateSecretArgs(args [][]byte) func(i int) bool {
	secret := map[int]bool{}
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case equalFold(args[j], "auth") && more >= 1:
			secret[j+1] = true
			j++
		case equalFold(args[j], "auth2") && more >= 2:
			secret[j+1], secret[j+2] = true, true
			j += 2
		case equalFold(args[j], "keys"):
			return func(i int) bool { return secret[i] }
		}
	}
	return func(i int) bool { return secret[i] }
}

// migrateOptions are MIGRATE's arguments after the timeout.
type migrateOptions struct {
	copy, replace bool
	// auth are AUTH's arguments, nil for none.
	auth []string
	// firstKey and numKeys locate the keys among the arguments.
	firstKey, numKeys int
}

// parseMigrate parses the options as migrateCommand does, answering the
// error on failure.
func parseMigrate(x *Ctx) (migrateOptions, bool) {
	o := migrateOptions{firstKey: 3, numKeys: 1}
	args := x.Args
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case equalFold(args[j], "copy"):
			o.copy = true
		case equalFold(args[j], "replace"):
			o.replace = true
		case equalFold(args[j], "auth") && more >= 1:
			j++
			o.auth = []string{string(args[j])}
		case equalFold(args[j], "auth2") && more >= 2:
			o.auth = []string{string(args[j+1]), string(args[j+2])}
			j += 2
		case equalFold(args[j], "keys"):
			if len(args[3]) != 0 {
				x.W.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return o, false
			}
			o.firstKey, o.numKeys = j+1, len(args)-j-1
			return o, true
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	return o, true
}

// migratedKey is a key read for MIGRATE: its payload (built after the
// lock for a string) and the value's version, to delete it only if it is
// unchanged.
type migratedKey struct {
	key     migrate.Key
	str     []byte
	version uint64
}

func cmdMigrate(x *Ctx) {
	o, ok := parseMigrate(x)
	if !ok {
		return
	}
	timeout, ok := intArg(x, 5)
	if !ok {
		return
	}
	db, ok := intArg(x, 4)
	if !ok {
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	keys, err := readMigratedKeys(x, o)
	if err != nil {
		x.W.Error("ERR " + err.Error())
		return
	}
	if len(keys) == 0 {
		x.W.Simple("NOKEY")
		return
	}
	req := migrate.Request{Host: string(x.Args[1]), Port: string(x.Args[2]), DB: db,
		Timeout: time.Duration(min(timeout, int64(time.Duration(1<<62)/time.Millisecond))) * time.Millisecond,
		Auth:    o.auth, Replace: o.replace,
		Asking: x.Cluster.SlotMap() != nil}
	for i := range keys {
		if keys[i].str != nil {
			if keys[i].key.Payload, err = rdb.Dump(rdb.Value{String: keys[i].str}); err != nil {
				x.W.Error("ERR " + err.Error())
				return
			}
		}
		req.Keys = append(req.Keys, keys[i].key)
	}
	// The exchange waits for the network: off the event loop that other
	// clients share.
	x.Lifecycle.WillWait()
	res := x.Migrator.Migrate(x.Context(), req)
	if !o.copy {
		x.Update(func(tx *engine.Tx) {
			for i, k := range keys {
				if v, ok := tx.Version(k.key.Name); res.Accepted[i] && ok && v == k.version {
					tx.Delete(k.key.Name)
					tx.Notify(notify.Generic, "del", k.key.Name)
				}
			}
		})
	}
	switch {
	case res.TargetError != "":
		x.W.Error("ERR Target instance replied with error: " + res.TargetError)
	case res.IOError != "":
		x.W.Error(res.IOError)
	default:
		x.W.OK()
	}
}

// readMigratedKeys looks the keys up as reads (lookupKeyRead: missing and
// expired ones are left out) in one step, with their TTLs and versions;
// objects are serialized under the lock, strings (never changed in place)
// after it.
func readMigratedKeys(x *Ctx, o migrateOptions) ([]migratedKey, error) {
	var keys []migratedKey
	var err error
	x.View(func(tx *engine.Tx) {
		for _, name := range x.Args[o.firstKey : o.firstKey+o.numKeys] {
			e, found := tx.Get(name)
			if !found {
				continue
			}
			k := migratedKey{key: migrate.Key{Name: name}}
			if e.ExpireAt != 0 {
				k.key.TTL = max(e.ExpireAt-tx.Now(), 1)
			}
			k.version, _ = tx.Version(name)
			if e.Object != nil {
				if k.key.Payload, err = rdb.Dump(rdb.Value{Object: e.Object}); err != nil {
					return
				}
			} else {
				k.str = e.Value
				if k.str == nil {
					k.str = []byte{}
				}
			}
			keys = append(keys, k)
		}
	})
	return keys, err
}
