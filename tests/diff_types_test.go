package tests

import "testing"

// TestDifferentialWrongType pins what every string, bitmap and keyspace
// command answers for a key holding a hash (WRONGTYPE, or working on any
// type), and TYPE, OBJECT ENCODING and SCAN TYPE for each type.
func TestDifferentialWrongType(t *testing.T) {
	t.Parallel()
	runDifferential(t, wrongTypeScripts())
}

// wrongTypeScripts are the scripts of TestDifferentialWrongType.
func wrongTypeScripts() []script {
	hash := func(steps ...step) []step {
		return append([]step{do("HSET", "h", "f", "v", "g", "w")}, steps...)
	}
	return []script{
		{"string commands on a hash", hash(
			do("GET", "h"),
			do("GETDEL", "h"),
			do("GETEX", "h"),
			do("GETEX", "h", "EX", "10"),
			do("GETEX", "h", "EX", "nope"),
			do("GETSET", "h", "x"),
			do("SET", "h", "x", "GET"),
			do("SET", "h", "x", "NX", "GET"),
			do("SET", "h", "x", "NX"),
			do("SETNX", "h", "x"),
			do("MSETNX", "h", "x", "other", "y"),
			do("MGET", "h", "other", "missing"),
			do("STRLEN", "h"),
			do("APPEND", "h", "x"),
			do("GETRANGE", "h", "0", "-1"),
			do("SUBSTR", "h", "0", "-1"),
			do("SETRANGE", "h", "0", "x"),
			do("SETRANGE", "h", "0", ""),
			do("SETRANGE", "h", "-1", "x"),
			do("INCR", "h"),
			do("DECR", "h"),
			do("INCRBY", "h", "2"),
			do("DECRBY", "h", "2"),
			do("INCRBYFLOAT", "h", "1.5"),
			do("LCS", "h", "other"),
			do("LCS", "other", "h"),
			do("SETBIT", "h", "1", "1"),
			do("GETBIT", "h", "1"),
			do("BITCOUNT", "h"),
			do("BITCOUNT", "h", "0", "1"),
			do("BITPOS", "h", "1"),
			do("BITOP", "AND", "dst", "h", "other"),
			do("BITOP", "NOT", "dst", "h"),
			do("BITFIELD", "h", "GET", "u8", "0"),
			do("BITFIELD", "h", "SET", "u8", "0", "1"),
			do("BITFIELD_RO", "h", "GET", "u8", "0"),
			do("HGETALL", "h"),
		)},
		{"strings overwrite a hash", hash(
			do("SET", "h", "x"),
			do("TYPE", "h"),
			do("GET", "h"),
			do("HSET", "h", "f", "v"),
			do("HSET", "h2", "f", "v"),
			do("MSET", "h2", "x"),
			do("GET", "h2"),
			do("HSET", "h3", "f", "v"),
			do("SET", "h3", "x", "XX"),
			do("GET", "h3"),
			do("HSET", "h4", "f", "v"),
			do("SETEX", "h4", "100", "x"),
			do("GET", "h4"),
		)},
		{"keyspace commands on a hash", hash(
			do("TYPE", "h"),
			do("TYPE", "missing"),
			do("OBJECT", "ENCODING", "h"),
			do("EXISTS", "h"),
			do("TOUCH", "h"),
			do("EXPIRE", "h", "100"),
			do("TTL", "h"),
			do("PERSIST", "h"),
			do("TTL", "h"),
			do("RENAME", "h", "h2"),
			do("HGETALL", "h2"),
			do("EXISTS", "h"),
			do("SET", "s", "x"),
			do("RENAME", "s", "h2"),
			do("TYPE", "h2"),
			do("HSET", "h", "a", "1"),
			do("RENAMENX", "h", "h2"),
			do("RENAMENX", "h", "h3"),
			do("COPY", "h3", "h4"),
			do("HSET", "h4", "b", "2"),
			do("HGETALL", "h3"),
			do("HGETALL", "h4"),
			do("COPY", "h4", "h3", "REPLACE"),
			do("HGETALL", "h3"),
			do("MOVE", "h3", "1"),
			do("EXISTS", "h3"),
			do("SELECT", "1"),
			do("HGETALL", "h3"),
			do("TYPE", "h3"),
			do("SELECT", "0"),
			do("DEL", "h4", "h2"),
			do("EXISTS", "h4"),
		)},
		{"scan type", []step{
			do("HSET", "h", "f", "v"),
			do("SET", "s", "x"),
			do("SCAN", "0", "TYPE", "hash"),
			do("SCAN", "0", "TYPE", "HASH"),
			do("SCAN", "0", "TYPE", "string"),
			do("SCAN", "0", "TYPE", "list"),
			do("SCAN", "0", "TYPE", "nosuchtype"),
		}},
		{"hash basics and listpack conversion", []step{
			do("HSET", "h"),
			do("HSET", "h", "f"),
			do("HSET", "h", "f", "v", "g"),
			do("HSET", "h", "f", "v", "g", "w"),
			do("HSET", "h", "f", "v2", "x", "y"),
			do("HMSET", "h", "z", "1"),
			do("HGET", "h", "f"),
			do("HGET", "h", "nope"),
			do("HGET", "nokey", "f"),
			do("HLEN", "h"),
			do("HLEN", "nokey"),
			do("HEXISTS", "h", "g"),
			do("HEXISTS", "h", "nope"),
			do("HGETALL", "h"),
			do("HGETALL", "nokey"),
			do("OBJECT", "ENCODING", "h"),
			do("HDEL", "h", "f", "nope", "g"),
			do("HGETALL", "h"),
			do("HDEL", "h", "x", "z"),
			do("EXISTS", "h"),
			do("HDEL", "h", "x"),
			do("HSET", "big", "f", "a-value-longer-than-sixty-four-bytes-.................................."),
			do("OBJECT", "ENCODING", "big"),
			do("HDEL", "big", "f"),
			do("SET", "s", "x"),
			do("HSET", "s", "f", "v"),
			do("HGET", "s", "f"),
			do("HDEL", "s", "f"),
			do("HLEN", "s"),
			do("HGETALL", "s"),
			do("HEXISTS", "s", "f"),
		}},
	}
}

// TestDifferentialConfigAliases pins CONFIG GET and SET of the encoding
// limits under Redis 7.0's older ziplist names.
func TestDifferentialConfigAliases(t *testing.T) {
	t.Parallel()
	runDifferential(t, []script{{"ziplist aliases", []step{
		do("CONFIG", "GET", "hash-max-ziplist-entries"),
		do("CONFIG", "GET", "HASH-MAX-ZIPLIST-VALUE"),
		do("CONFIG", "SET", "hash-max-ziplist-entries", "7"),
		do("CONFIG", "GET", "hash-max-listpack-entries"),
		do("CONFIG", "SET", "hash-max-listpack-entries", "9"),
		do("CONFIG", "GET", "hash-max-ziplist-entries"),
		unorderedPairs("CONFIG", "GET", "hash-max-*-value"),
		do("CONFIG", "SET", "hash-max-ziplist-entries", "512"),
	}}})
}
