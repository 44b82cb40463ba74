package tests

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/datatype"

	"github.com/kvserver/kvserver/rdb"
)

// TestDifferentialDumpRestore pins DUMP's payloads byte for byte (integer
// and LZF string encodings, listpack and hashtable hashes) and RESTORE's
// options, errors and results to Redis 7's.
func TestDifferentialDumpRestore(t *testing.T) {
	t.Parallel()
	runDifferential(t, dumpScripts(t))
}

// dumpScripts are the scripts of TestDifferentialDumpRestore.
func dumpScripts(t *testing.T) []script {
	payload := func(v rdb.Value) string {
		p, err := rdb.Dump(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(p)
	}
	good := payload(rdb.Value{String: []byte("restored")})
	corrupt := []byte(good)
	corrupt[2] ^= 1
	// A well-formed footer over an unknown object type (99).
	x := payload(rdb.Value{String: []byte("x")})
	badDataPayload := string(rdb.AppendFooter(append([]byte{99}, x[1:len(x)-10]...)))
	zsetOf := func(limits int, pairs ...string) string {
		z := datatype.NewZSet()
		lim := datatype.ZSetLimits{MaxListpackEntries: limits, MaxListpackValue: 64}
		for i := 0; i < len(pairs); i += 2 {
			f, _ := strconv.ParseFloat(pairs[i+1], 64)
			z.Set(pairs[i], f, lim)
		}
		return payload(rdb.Value{Object: z})
	}
	zlp := zsetOf(128, "a", "1", "b", "2.5", "c", "-3")
	zsk := zsetOf(1, "a", "1", "b", "2.5", "c", "-3") // a skiplist: RDB_TYPE_ZSET_2, loaded as a listpack
	var bigList []string
	for i := 0; i < 3000; i++ {
		bigList = append(bigList, "element-"+strconv.Itoa(i*7))
	}
	l := datatype.NewList()
	for _, v := range []string{"x", "12", strings.Repeat("y", 30)} {
		l.Push([]byte(v), false, datatype.DefaultListLimits)
	}
	lst := payload(rdb.Value{Object: l})
	// A quicklist with no nodes: Redis refuses an empty list.
	emptyList := string(rdb.AppendFooter([]byte{18, 0}))
	strs := []string{"", "0", "1", "-1", "127", "128", "-128", "-129", "32767", "32768", "-32769",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807", "01", "+1", "1.5",
		"12345678901", "123456789012", "abcdefghijklmnopqrstu", strings.Repeat("a", 21), strings.Repeat("ab", 100),
		strings.Repeat("abcdefghij", 500), "hello world hello world hello world hello world",
		string([]byte{0, 1, 2, 255, 254, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7})}
	var dumps []step
	for i, s := range strs {
		k := "s" + string(rune('a'+i))
		dumps = append(dumps, do("SET", k, s), do("DUMP", k))
	}
	var hset []string
	for i := 0; i < 20; i++ {
		hset = append(hset, "field"+strings.Repeat("x", i), strings.Repeat("v", i*3))
	}
	return append([]script{
		{"dump strings", dumps},
		{"dump hashes", []step{
			do("HSET", "h", "a", "1", "b", "-5000", "c", "70000", "d", "text", "e", "99999999999", "f", ""),
			do("DUMP", "h"),
			do("HSET", "h", "a", "changed"),
			do("HDEL", "h", "c"),
			do("DUMP", "h"),
			do(append([]string{"HSET", "h2"}, hset...)...),
			do("DUMP", "h2"),
			do("DUMP", "missing"),
		}},
		{"dump sorted sets", []step{
			do("ZADD", "z", "1", "a", "2.5", "b", "-3", "c", "1e20", "d", "inf", "e", "-inf", "f", "0", "g", "-0", "h", "4611686018427387904", "i", "123456789012", "j"),
			do("DUMP", "z"),
			do("ZADD", "big", "1", strings.Repeat("m", 70), "2", "n", "3.25", "o"),
			do("OBJECT", "ENCODING", "big"),
			do("DUMP", "big"),
			do("ZADD", "z2", "5", "x"),
			do("ZREM", "z2", "x"),
			do("DUMP", "z2"),
		}},
		{"dump lists", []step{
			do("RPUSH", "l", "a", "1", "-70000", strings.Repeat("x", 100), "", "9223372036854775807"),
			do("DUMP", "l"),
			do("LPUSH", "l2", "c", "b", "a"),
			do("DUMP", "l2"),
			do(append([]string{"RPUSH", "big"}, bigList...)...),
			do("LLEN", "big"), do("DUMP", "big"), // several nodes, each compressed
			do("RPUSH", "huge", strings.Repeat("h", 9000), "small", strings.Repeat("i", 5000)),
			do("DUMP", "huge"),
			do("RESTORE", "l3", "0", lst),
			do("LRANGE", "l3", "0", "-1"),
			do("RESTORE", "l4", "0", emptyList),
		}},
		{"restore sorted sets", []step{
			do("ZADD", "z", "1", "a", "2.5", "b", "-3", "c"),
			do("ZADD", "big", "1", strings.Repeat("m", 70), "2", "n", "3.25", "o"),
			do("RESTORE", "z1", "0", zlp),
			do("ZRANGE", "z1", "0", "-1", "WITHSCORES"),
			do("OBJECT", "ENCODING", "z1"),
			do("RESTORE", "z2", "0", zsk),
			do("ZRANGE", "z2", "0", "-1", "WITHSCORES"),
			do("OBJECT", "ENCODING", "z2"),
		}},
		{"dump then restore", []step{
			do("SET", "a", strings.Repeat("xyz", 50)),
			do("HSET", "h", "f", "v", "n", "12"),
			do("EXPIRE", "a", "100"),
			do("RESTORE", "b", "0", good),
			do("GET", "b"),
			do("TTL", "b"),
			do("RESTORE", "b", "0", good),
			do("RESTORE", "b", "0", good, "REPLACE"),
			do("RESTORE", "c", "100000", good),
			approxInt(2, "PTTL", "c"),
			do("RESTORE", "d", "1", good, "ABSTTL"),
			do("EXISTS", "d"),
			do("RESTORE", "c", "1", good, "ABSTTL", "REPLACE"),
			do("EXISTS", "c"),
			do("RESTORE", "e", "4102444800000", good, "ABSTTL"),
			do("PEXPIRETIME", "e"),
			do("RESTORE", "f", "0", good, "IDLETIME", "10"),
			do("RESTORE", "g", "0", good, "FREQ", "10"),
			do("RESTORE", "g2", "0", good, "FREQ", "10", "IDLETIME", "1"),
			do("RESTORE", "g3", "0", good, "IDLETIME", "-1"),
			do("RESTORE", "g4", "0", good, "FREQ", "256"),
			do("RESTORE", "g5", "0", good, "FREQ", "x"),
			do("RESTORE", "g6", "0", good, "IDLETIME"),
			do("RESTORE", "g7", "0", good, "BOGUS"),
			do("RESTORE", "g8", "-1", good),
			do("RESTORE", "g9", "x", good),
			do("RESTORE", "b", "x", good),
			do("RESTORE", "g10", "0", "short"),
			do("RESTORE", "g11", "0", string(corrupt)),
			do("RESTORE", "g12", "0", badDataPayload),
			do("RESTORE", "g13", "0"),
			do("TYPE", "h"),
			do("RESTORE", "h", "0", good, "REPLACE"),
			do("TYPE", "h"),
			do("KEYS", "g*"),
		}},
	}, streamDumpScripts(t, payload)...)
}

// streamDumpScripts pin streams' DUMP payloads (one node and many, groups
// without consumers, after XDEL and XTRIM) byte for byte to Redis's, and
// RESTORE of payloads with consumers and pending entries (made by
// kvserver at fixed times) and with deleted entries (made by Redis): both
// servers must show the same stream and dump it again to the same bytes.
func streamDumpScripts(t *testing.T, payload func(rdb.Value) string) []script {
	lim := datatype.StreamLimits{MaxNodeBytes: 4096, MaxNodeEntries: 100}
	s := datatype.NewStream()
	for i := 1; i <= 250; i++ {
		s.Append(datatype.StreamID{Ms: 1700000000000 + uint64(i/2), Seq: uint64(i % 2)},
			[]string{"temp", strconv.Itoa(i * 3), "where", "room " + strconv.Itoa(i%4)}, lim)
	}
	g := s.CreateGroup("g", datatype.StreamID{Ms: 1700000000000 + 60}, 120)
	s.CreateGroup("unread", datatype.StreamID{}, 0)
	alice, _ := g.AddConsumer("alice", 1700000005000)
	bob, _ := g.AddConsumer("bob", 1700000006000)
	g.AddConsumer("carol", 1700000007000)
	for i := 0; i < 10; i++ {
		c := alice
		if i%3 == 0 {
			c = bob
		}
		p := g.Deliver(datatype.StreamID{Ms: 1700000000000 + uint64(i/2), Seq: uint64(i % 2)}, c, 1700000008000+int64(i))
		p.DeliveryCount = int64(1 + i)
	}
	withGroups := payload(rdb.Value{Object: s})
	// Redis's DUMP after XADD s 1-1 a 1, 2-1 a 2, 3-1 a 3 and XDEL s 2-1:
	// the deleted entry stays in the listpack, flagged.
	xdel := string(rdb.AppendFooter([]byte("\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01" +
		"\x30\x30\x00\x00\x00\x14\x00\x02\x01\x01\x01\x01\x01\x81\x61\x02\x00\x01\x02\x01\x00\x01\x00\x01\x01\x01" +
		"\x04\x01\x03\x01\x01\x01\x00\x01\x02\x01\x04\x01\x02\x01\x02\x01\x00\x01\x03\x01\x04\x01\xff" +
		"\x02\x03\x01\x01\x01\x02\x01\x03\x00")))
	truncated := string(rdb.AppendFooter([]byte(withGroups[:len(withGroups)-40])))
	var many, sameFields []string
	for i := 1; i <= 300; i++ {
		many = append(many, "XADD", "big", strconv.Itoa(i)+"-0", "f", strings.Repeat("v", i))
	}
	for i := 1; i < 60; i++ {
		sameFields = append(sameFields, "XADD", "same", strconv.Itoa(i)+"-"+strconv.Itoa(i%3), "temp", strconv.Itoa(i*7), "name", "sensor number "+strconv.Itoa(i))
	}
	lines := func(args []string) []step {
		var steps []step
		for i := 0; i < len(args); i += 5 {
			end := i + 5
			for end < len(args) && args[end] != "XADD" {
				end++
			}
			steps = append(steps, do(args[i:end]...))
		}
		return steps
	}
	full := func(key string) step { return masked(0, []string{"radix-tree-nodes"}, "XINFO", "STREAM", key, "FULL") }
	return []script{
		{"dump streams", seq(
			do("XADD", "s", "1-1", "a", "1"), do("XADD", "s", "1-2", "b", "2", "c", "3"),
			do("XADD", "s", "2-0", "a", "x"), do("XADD", "s", "5-5", "d", "4"),
			do("XADD", "s", "9999999999-0", "f", "-3", "g", "99999999999999"),
			do("DUMP", "s"),
			lines(sameFields), do("DUMP", "same"),
			lines(many), masked(0, []string{"radix-tree-nodes"}, "XINFO", "STREAM", "big"), do("DUMP", "big"),
			do("XTRIM", "big", "MAXLEN", "~", "150"), do("DUMP", "big"),
			do("XGROUP", "CREATE", "s", "g1", "0"), do("XGROUP", "CREATE", "s", "g2", "$"),
			do("XGROUP", "CREATE", "s", "12", "1-1", "ENTRIESREAD", "1"), do("DUMP", "s"),
			do("XGROUP", "CREATE", "empty", "g", "$", "MKSTREAM"), do("DUMP", "empty"),
			do("XADD", "gone", "1-1", "a", "1"), do("XDEL", "gone", "1-1"), do("DUMP", "gone"),
			// Deleted entries stay in the listpack, flagged.
			do("XADD", "d", "1-1", "a", "1"), do("XADD", "d", "2-1", "a", "2"), do("XDEL", "d", "1-1"),
			do("DUMP", "d"),
			do("XTRIM", "same", "MAXLEN", "20"), do("XDEL", "same", "50-2", "59-2"), do("DUMP", "same"),
			do("XTRIM", "big", "MINID", "200"), do("DEL", "d"), do("XDEL", "big", "250-0"), do("DUMP", "big"),
		)},
		{"restore streams", []step{
			do("RESTORE", "r", "0", withGroups),
			full("r"), do("XINFO", "GROUPS", "r"), do("XPENDING", "r", "g"), // the extended form has idle times
			do("DUMP", "r"),
			do("XADD", "r", "1800000000000-0", "temp", "1"), do("XLEN", "r"), do("DUMP", "r"),
			do("RESTORE", "x", "0", xdel),
			full("x"), do("XRANGE", "x", "-", "+"), do("DUMP", "x"),
			do("XADD", "x", "4-1", "a", "4"), do("XRANGE", "x", "-", "+"), do("DUMP", "x"),
			do("XDEL", "x", "1-1", "3-1"), do("DUMP", "x"), do("XDEL", "x", "4-1"), do("DUMP", "x"), do("XLEN", "x"),
			do("RESTORE", "t", "0", truncated),
			do("EXISTS", "t"),
		}},
	}
}
