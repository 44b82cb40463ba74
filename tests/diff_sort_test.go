package tests

import "testing"

// TestDifferentialSort runs SORT and SORT_RO against redis-server 7.0:
// lists, intsets, hashtable sets and sorted sets sorted numerically and
// with ALPHA, the conversion error, BY and GET patterns (string keys,
// "->field" of hashes, "#", missing keys, BY nosort keeping the native
// order), LIMIT's edge cases, STORE into a list (and deleting it when
// the result is empty) with its keyspace events, WRONGTYPE, syntax and
// integer errors, and COMMAND GETKEYS. Sets' own order is undefined, so
// a set read without sorting is compared as a multiset.
func TestDifferentialSort(t *testing.T) {
	t.Parallel()
	runDifferential(t, sortScripts())
}

func sortScripts() []script {
	return []script{
		{"arity and options", append(arity(line("SORT"), line("SORT_RO")),
			do("RPUSH", "l", "3", "1", "2"),
			do("SORT", "l", "foo"),
			do("SORT", "l", "LIMIT", "0"),
			do("SORT", "l", "LIMIT", "a", "1"),
			do("SORT", "l", "LIMIT", "0", "1.5"),
			do("SORT", "l", "BY"),
			do("SORT", "l", "GET"),
			do("SORT", "l", "STORE"),
			do("SORT_RO", "l", "STORE", "d"),
			do("SORT", "l", "asc", "DESC", "Asc"),
			do("SORT", "nokey"),
			do("SORT", "nokey", "STORE", "d"),
			do("SORT", "nokey", "LIMIT", "0", "1", "GET", "#"),
			do("SET", "str", "x"),
			do("SORT", "str"),
			do("SORT_RO", "str"),
			do("HSET", "h", "f", "v"),
			do("SORT", "h", "LIMIT", "0", "1"),
			do("SORT", "h", "nonsense"),
		)},
		{"numeric and alpha", []step{
			do("RPUSH", "l", "10", "2", "-1.5", "3e2", "0x10", " 7", "inf", "-inf", "2"),
			do("SORT", "l"),
			do("SORT", "l", "DESC"),
			do("SORT_RO", "l", "DESC"),
			do("SORT", "l", "ALPHA"),
			do("SORT", "l", "ALPHA", "DESC"),
			do("RPUSH", "bad", "1", "x", "2"),
			do("SORT", "bad"),
			do("SORT", "bad", "STORE", "d"),
			do("EXISTS", "d"),
			do("SORT", "bad", "ALPHA"),
			do("RPUSH", "ws", "1", "7 ", "2"),
			do("SORT", "ws"),
			do("RPUSH", "nan", "1", "nan"),
			do("SORT", "nan"),
			do("RPUSH", "nul", "3\x00x", "1", "2\x00"),
			do("SORT", "nul"),
			do("RPUSH", "ties", "b", "a", "c"),
			do("SORT", "ties", "BY", "w_*"),
			do("RPUSH", "bin", "b\x00", "b", "a\xff", "a", "B"),
			do("SORT", "bin", "ALPHA"),
			do("SORT", "bin", "ALPHA", "DESC"),
			do("SORT", "bin", "ALPHA", "STORE", "d"),
			do("LRANGE", "d", "0", "-1"),
			// Last: Redis does not clear errno before strtod, so the
			// ERANGE of an overflow can fail its next numeric SORT.
			do("RPUSH", "big", "1", "1e400"),
			do("SORT", "big"),
		}},
		{"sets and sorted sets", []step{
			do("SADD", "is", "5", "-3", "100", "0", "42"),
			do("SORT", "is"),
			do("SORT", "is", "DESC", "LIMIT", "1", "2"),
			unordered("SORT", "is", "BY", "nosort"),
			do("SORT", "is", "BY", "nosort", "STORE", "d"),
			do("LRANGE", "d", "0", "-1"),
			do("SADD", "hs", "pear", "apple", "fig", "banana", "kiwi"),
			do("SORT", "hs", "ALPHA"),
			do("SORT", "hs"),
			unordered("SORT_RO", "hs", "BY", "nosort"),
			do("EVAL", "return redis.call('SORT', KEYS[1], 'BY', 'nosort')", "1", "hs"),
			do("EVAL", "return redis.call('SORT_RO', KEYS[1], 'BY', 'nosort', 'DESC')", "1", "hs"),
			do("SORT", "hs", "BY", "nosort", "ALPHA", "STORE", "d"),
			do("LRANGE", "d", "0", "-1"),
			do("ZADD", "z", "3", "c", "1", "a", "2", "b", "5", "e", "4", "d"),
			do("SORT", "z", "ALPHA"),
			do("SORT", "z", "BY", "nosort"),
			do("SORT", "z", "BY", "nosort", "DESC"),
			do("SORT", "z", "BY", "nosort", "LIMIT", "1", "3"),
			do("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "1", "3"),
			do("SORT", "z", "BY", "nosort", "DESC", "LIMIT", "4", "10"),
			do("SORT", "z", "BY", "nosort", "LIMIT", "5", "1"),
			do("ZADD", "zn", "1", "30", "2", "10", "3", "20"),
			do("SORT", "zn"),
			do("SORT", "zn", "BY", "nosort"),
		}},
		{"limit", []step{
			do("RPUSH", "l", "5", "3", "1", "4", "2"),
			do("SORT", "l", "LIMIT", "0", "2"),
			do("SORT", "l", "LIMIT", "-5", "2"),
			do("SORT", "l", "LIMIT", "3", "100"),
			do("SORT", "l", "LIMIT", "5", "1"),
			do("SORT", "l", "LIMIT", "100", "1"),
			do("SORT", "l", "LIMIT", "1", "0"),
			do("SORT", "l", "LIMIT", "1", "-1"),
			do("SORT", "l", "LIMIT", "0", "1", "LIMIT", "2", "2"),
			do("SORT", "l", "BY", "nosort", "LIMIT", "1", "2"),
			do("SORT", "l", "BY", "nosort", "DESC", "LIMIT", "1", "2"),
			do("SORT", "l", "BY", "nosort", "DESC", "LIMIT", "0", "-1"),
			do("SORT", "l", "BY", "nosort", "LIMIT", "7", "2"),
			do("SORT", "l", "BY", "nosort", "LIMIT", "2", "0", "GET", "#"),
			do("SORT", "l", "LIMIT", "1", "2", "GET", "#", "GET", "nope"),
		}},
		{"by and get patterns", []step{
			do("RPUSH", "l", "1", "2", "3", "4"),
			do("MSET", "w_1", "40", "w_2", "10", "w_3", "30", "name_1", "one", "name_2", "two", "name_4", "four"),
			do("HSET", "obj_1", "age", "9", "nick", "a"),
			do("HSET", "obj_2", "age", "3", "nick", "b"),
			do("HSET", "obj_3", "age", "7"),
			do("SORT", "l", "BY", "w_*"),
			do("SORT", "l", "BY", "w_*", "DESC", "GET", "#", "GET", "name_*"),
			do("SORT", "l", "BY", "w_*", "ALPHA"),
			do("SORT", "l", "BY", "w_*", "ALPHA", "DESC"),
			do("SORT", "l", "BY", "obj_*->age"),
			do("SORT", "l", "BY", "obj_*->age", "GET", "obj_*->nick", "GET", "obj_*->age", "GET", "obj_*->"),
			do("SORT", "l", "BY", "obj_*->nope", "DESC"),
			do("SORT", "l", "GET", "name_*", "GET", "w_*->x", "GET", "obj_*"),
			do("SORT", "l", "BY", "w_*", "LIMIT", "1", "2", "GET", "name_*"),
			do("SORT", "l", "BY", "nosort", "GET", "name_*"),
			do("SORT", "l", "BY", "nosort", "BY", "w_*"),
			do("SORT", "l", "BY", "w_*", "BY", "nosort"),
			do("SORT", "l", "GET", "*"),
			do("SORT", "l", "GET", "name_*", "STORE", "d"),
			do("LRANGE", "d", "0", "-1"),
			do("SET", "bad_2", "x"),
			do("SORT", "l", "BY", "bad_*"),
			do("SORT", "l", "BY", "bad_*", "ALPHA"),
			do("SORT_RO", "l", "BY", "w_*", "GET", "#"),
			do("SORT", "l", "BY", "#"),
			do("SORT", "l", "BY", "*->age"),
		}},
		{"store", []step{
			do("RPUSH", "l", "3", "1", "2"),
			do("SET", "d", "old"),
			do("EXPIRE", "d", "100"),
			do("SORT", "l", "STORE", "d"),
			do("TYPE", "d"),
			do("TTL", "d"),
			do("LRANGE", "d", "0", "-1"),
			do("SORT", "l", "DESC", "STORE", "x", "STORE", "d"),
			do("LRANGE", "d", "0", "-1"),
			do("EXISTS", "x"),
			do("SORT", "l", "STORE", "l"),
			do("LRANGE", "l", "0", "-1"),
			do("SORT", "l", "LIMIT", "5", "1", "STORE", "d"),
			do("EXISTS", "d"),
			do("SORT", "nokey", "STORE", "nokey2"),
			do("EXISTS", "nokey2"),
		}},
		{"store events", withKeyEvents("KEA",
			onOther(do("RPUSH", "l", "2", "1")),
			listen(2),
			onOther(do("SORT", "l", "STORE", "d")),
			listen(2),
			onOther(do("SORT", "l", "LIMIT", "9", "1", "STORE", "d")),
			listen(2),
			onOther(do("SORT", "l", "LIMIT", "9", "1", "STORE", "d")),
			onOther(do("SORT_RO", "l")),
			onOther(do("RPUSH", "l", "3")),
			listen(2),
		)},
		{"acl key patterns", []step{
			do("RPUSH", "a1", "2", "1"),
			do("ACL", "SETUSER", "sorter", "on", "nopass", "~a*", "+@all"),
			do("AUTH", "sorter", "x"),
			do("SORT", "a1"),
			do("SORT", "a1", "BY", "nosort"),
			do("SORT", "a1", "BY", "a_*"),
			do("SORT", "a1", "GET", "#"),
			do("SORT_RO", "a1", "GET", "a*"),
			do("AUTH", "default", "x"),
			do("ACL", "DELUSER", "sorter"),
		}},
		{"getkeys", []step{
			do("COMMAND", "GETKEYS", "SORT", "a"),
			do("COMMAND", "GETKEYS", "SORT", "a", "BY", "b", "GET", "c", "STORE", "d"),
			do("COMMAND", "GETKEYS", "SORT", "a", "STORE", "d", "LIMIT", "store", "x", "STORE", "e"),
			do("COMMAND", "GETKEYS", "SORT", "a", "GET", "store", "x"),
			do("COMMAND", "GETKEYS", "SORT", "a", "STORE"),
			do("COMMAND", "GETKEYS", "SORT_RO", "a", "BY", "b", "STORE", "d"),
			do("COMMAND", "GETKEYSANDFLAGS", "SORT", "a", "BY", "b", "STORE", "d"),
			do("COMMAND", "GETKEYSANDFLAGS", "SORT_RO", "a", "GET", "b"),
			do("COMMAND", "INFO", "SORT", "SORT_RO"),
		}},
	}
}

// TestSortClusterMode pins Redis's cluster-mode refusal of SORT's BY and
// GET patterns (the keys they name may live on any node), while BY
// without '*' still sorts nothing, and STORE is routed with the sorted key.
func TestSortClusterMode(t *testing.T) {
	tc := startCluster(t, "0-16383")
	c := dialRaw(t, tc.nodes[0].Addr)
	checkReply(t, c, ":3\r\n", "RPUSH", "{l}", "3", "1", "2")
	checkReply(t, c, "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n", "SORT", "{l}")
	checkReply(t, c, "*3\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n", "SORT", "{l}", "BY", "nosort")
	checkReply(t, c, "-ERR BY option of SORT denied in Cluster mode.\r\n", "SORT", "{l}", "BY", "w_*")
	checkReply(t, c, "-ERR GET option of SORT denied in Cluster mode.\r\n", "SORT", "{l}", "GET", "#")
	checkReply(t, c, "-ERR GET option of SORT denied in Cluster mode.\r\n", "SORT_RO", "{l}", "BY", "nosort", "GET", "x_*")
	checkReply(t, c, ":3\r\n", "SORT", "{l}", "DESC", "STORE", "{l}.sorted")
	checkReply(t, c, "-CROSSSLOT Keys in request don't hash to the same slot\r\n", "SORT", "{l}", "STORE", "other")
}
