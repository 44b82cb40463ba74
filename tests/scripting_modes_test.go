package tests

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"testing"
)

// scriptError is the error reply of a script failing at line with msg, as
// Redis 7.0 words it.
func scriptError(body, msg string, line int) string {
	sum := sha1.Sum([]byte(body))
	return fmt.Sprintf("-%s script: %s, on @user_script:%d.\r\n", msg, hex.EncodeToString(sum[:]), line)
}

// TestClusterScripts pins scripts in cluster mode to redis-server 7.0.15's
// replies (taken from a one-node Redis cluster missing the slots of the
// "non local" keys): declared keys are routed like any command's, keys a
// script touches must be served here and, unless the script is a Redis 6
// style one or allows it, hash to one slot; no-cluster scripts refuse to
// run.
func TestClusterScripts(t *testing.T) {
	tc := startCluster(t, standardSlots...)
	c := dialRaw(t, tc.nodes[0].Addr)
	// Node 0 serves user1000 (3443), bar (5061); node 2 foo (12182).
	nonLocal := "return redis.call('get','foo')"
	checkReply(t, c, scriptError(nonLocal, "ERR Script attempted to access a non local key in a cluster node", 1), "EVAL", nonLocal, "0")
	inOne := "return redis.call('mget','bar','user1000')"
	checkReply(t, c, scriptError(inOne, "ERR Script attempted to access a non local key in a cluster node", 1), "EVAL", inOne, "0")
	twoSlots := "#!lua\nredis.call('get','bar'); return redis.call('get','user1000')"
	checkReply(t, c, scriptError(twoSlots, "ERR Script attempted to access keys that do not hash to the same slot", 2), "EVAL", twoSlots, "0")
	checkReply(t, c, "$-1\r\n", "EVAL", "redis.call('get','bar'); return redis.call('get','user1000')", "0")
	checkReply(t, c, "$-1\r\n", "EVAL", "#!lua flags=allow-cross-slot-keys\nredis.call('get','bar'); return redis.call('get','user1000')", "0")
	undeclared := "#!lua\nreturn redis.call('get','user1000')"
	checkReply(t, c, scriptError(undeclared, "ERR Script attempted to access keys that do not hash to the same slot", 2), "EVAL", undeclared, "1", "bar")
	checkReply(t, c, "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n", "EVAL", "#!lua flags=no-cluster\nreturn 1", "0")
	checkReply(t, c, "-CROSSSLOT Keys in request don't hash to the same slot\r\n", "EVAL", "return 1", "2", "bar", "user1000")
	checkReply(t, c, fmt.Sprintf("-MOVED 12182 127.0.0.1:%d\r\n", tc.ports[2]), "EVAL", "return 1", "1", "foo")
	checkReply(t, c, "+OK\r\n", "EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "user1000")
	checkReply(t, c, "$1\r\nv\r\n", "EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", "1", "user1000")
}

// TestScriptACLMatchesRedis runs scripts as a user whose rules deny a
// command and some keys, on redis-server and kvserver configured with the
// same users: the script's commands are checked against the caller's user.
func TestScriptACLMatchesRedis(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	user := "dave on >d ~cache:* +@all -@dangerous"
	ref := startRedisConf(t, "user "+user)
	kv := startOwnedServer(t, harnessStops, "--user", user)
	diffSteps(t, ref, kv, []step{
		do("AUTH", "dave", "d"),
		eval("return redis.call('set', 'cache:1', 'v')"),
		eval("return redis.call('get', 'cache:1')"),
		eval("return redis.call('get', 'other')"),
		eval("return redis.pcall('get', 'other')"),
		eval("return redis.call('flushall')"),
		eval("return redis.pcall('flushall')"),
		eval("return redis.acl_check_cmd('get', 'cache:1')"),
		eval("return redis.acl_check_cmd('get', 'other')"),
		eval("return redis.acl_check_cmd('flushall')"),
		eval("return redis.acl_check_cmd('nosuch')"),
		do("EVAL", "return 1", "1", "other"),
		do("FUNCTION", "LOAD", "#!lua name=acl\nredis.register_function('g', function(keys) return redis.call('get', keys[1]) end)"),
		do("FCALL", "g", "1", "cache:1"),
		do("FCALL", "g", "0"),
	})
}
