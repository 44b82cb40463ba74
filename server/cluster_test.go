package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/engine"
)

// testMap is the three-node layout of a Redis cluster made with
// redis-cli --cluster create on ports 7801-7803, located at self.
func testMap(t *testing.T, text string, self int) *cluster.Map {
	t.Helper()
	m, err := cluster.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Locate("127.0.0.1", self); err != nil {
		t.Fatal(err)
	}
	return m
}

const threeNodeMap = `
nodes:
  - addr: 127.0.0.1:7801
    slots: 0-5460
  - addr: 127.0.0.1:7802
    slots: 5461-10922
  - addr: 127.0.0.1:7803
    slots: 10923-16383
`

func bulkOf(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// TestClusterRepliesMatchRedisShapes compares CLUSTER SLOTS, SHARDS, INFO,
// MYID and NODES byte for byte with what redis-server 7.0.15 answered for
// the same layout (three masters, no replicas), node ids aside: Redis's are
// random, ours the SHA-1 of the address.
func TestClusterRepliesMatchRedisShapes(t *testing.T) {
	m := testMap(t, threeNodeMap, 7801)
	as := startAdminServer(t, Options{Cluster: m})
	id := func(i int) string { return m.Nodes()[i].ID }

	slotsRow := func(start, end, i int, emptyMap string) string {
		n := m.Nodes()[i]
		return "*3\r\n:" + strconv.Itoa(start) + "\r\n:" + strconv.Itoa(end) + "\r\n*4\r\n" +
			bulkOf("127.0.0.1") + ":" + strconv.Itoa(n.Port) + "\r\n" + bulkOf(id(i)) + emptyMap
	}
	shard := func(i int, mapHdr func(n int) string) string {
		n := m.Nodes()[i]
		r := n.Slots[0]
		return mapHdr(2) + bulkOf("slots") + "*2\r\n:" + strconv.Itoa(r.Start) + "\r\n:" + strconv.Itoa(r.End) + "\r\n" +
			bulkOf("nodes") + "*1\r\n" + mapHdr(7) +
			bulkOf("id") + bulkOf(id(i)) + bulkOf("port") + ":" + strconv.Itoa(n.Port) + "\r\n" +
			bulkOf("ip") + bulkOf("127.0.0.1") + bulkOf("endpoint") + bulkOf("127.0.0.1") +
			bulkOf("role") + bulkOf("master") + bulkOf("replication-offset") + ":0\r\n" +
			bulkOf("health") + bulkOf("online")
	}
	resp2Map := func(n int) string { return "*" + strconv.Itoa(2*n) + "\r\n" }
	resp3Map := func(n int) string { return "%" + strconv.Itoa(n) + "\r\n" }
	info := "cluster_state:ok\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:16384\r\n" +
		"cluster_slots_pfail:0\r\ncluster_slots_fail:0\r\ncluster_known_nodes:3\r\ncluster_size:3\r\n" +
		"cluster_current_epoch:3\r\ncluster_my_epoch:1\r\ncluster_stats_messages_sent:0\r\n" +
		"cluster_stats_messages_received:0\r\ntotal_cluster_links_buffer_limit_exceeded:0\r\n"
	nodes := id(0) + " 127.0.0.1:7801@0 myself,master - 0 0 1 connected 0-5460\n" +
		id(1) + " 127.0.0.1:7802@0 master - 0 0 2 connected 5461-10922\n" +
		id(2) + " 127.0.0.1:7803@0 master - 0 0 3 connected 10923-16383\n"

	c := as.dial(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"CLUSTER", "SLOTS"}, "*3\r\n" + slotsRow(0, 5460, 0, "*0\r\n") + slotsRow(5461, 10922, 1, "*0\r\n") + slotsRow(10923, 16383, 2, "*0\r\n")},
		{[]string{"CLUSTER", "SHARDS"}, "*3\r\n" + shard(0, resp2Map) + shard(1, resp2Map) + shard(2, resp2Map)},
		{[]string{"CLUSTER", "INFO"}, bulkOf(info)},
		{[]string{"CLUSTER", "NODES"}, bulkOf(nodes)},
		{[]string{"CLUSTER", "MYID"}, bulkOf(id(0))},
		{[]string{"CLUSTER", "KEYSLOT", "foo"}, ":12182\r\n"},
		{[]string{"CLUSTER", "REPLICAS", id(1)}, "*0\r\n"},
		{[]string{"CLUSTER", "SLAVES", id(2)}, "*0\r\n"},
		{[]string{"CLUSTER", "COUNT-FAILURE-REPORTS", id(2)}, ":0\r\n"},
		{[]string{"CLUSTER", "COUNT-FAILURE-REPORTS", "x"}, "-ERR Unknown node x\r\n"},
		{[]string{"CLUSTER", "SAVECONFIG"}, "+OK\r\n"},
		{[]string{"READONLY"}, "+OK\r\n"},
		{[]string{"GET", "foo"}, "-MOVED 12182 127.0.0.1:7803\r\n"},
		{[]string{"HELLO", "3"}, ""},
		{[]string{"CLUSTER", "SLOTS"}, "*3\r\n" + slotsRow(0, 5460, 0, "%0\r\n") + slotsRow(5461, 10922, 1, "%0\r\n") + slotsRow(10923, 16383, 2, "%0\r\n")},
		{[]string{"CLUSTER", "SHARDS"}, "*3\r\n" + shard(0, resp3Map) + shard(1, resp3Map) + shard(2, resp3Map)},
		{[]string{"CLUSTER", "INFO"}, "=" + strconv.Itoa(len(info)+4) + "\r\ntxt:" + info + "\r\n"},
		{[]string{"CLUSTER", "NODES"}, "=" + strconv.Itoa(len(nodes)+4) + "\r\ntxt:" + nodes + "\r\n"},
	}
	for _, tc := range cases {
		got := c.do(tc.args...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	if hello := c.do("HELLO"); !strings.Contains(hello, bulkOf("mode")+bulkOf("cluster")) {
		t.Errorf("HELLO does not report mode cluster: %q", hello)
	}
}

// TestClusterRedirectRouting pins the routing decision for each kind of
// command: keyless, one key, several keys, key steps (MSET), and
// KVC.PROBE's leading LEASE.
func TestClusterRedirectRouting(t *testing.T) {
	m := testMap(t, "nodes:\n  - addr: 127.0.0.1:7801\n    slots: 0-5460,15495\n  - addr: 127.0.0.1:7802\n    slots: 5461-10922\n", 7801)
	s := New(engine.New(engine.Options{}), Options{Cluster: m})
	moved := func(slot, port int) string {
		return "MOVED " + strconv.Itoa(slot) + " 127.0.0.1:" + strconv.Itoa(port)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, ""},
		{[]string{"DBSIZE"}, ""},
		{[]string{"GET", "user1000"}, ""},          // 3443, here
		{[]string{"GET", "a"}, ""},                 // 15495, here
		{[]string{"GET", "9"}, moved(10106, 7802)}, // slot 10106
		{[]string{"GET", "foo"}, errSlotNotServed}, // 12182, nobody
		{[]string{"MGET", "a", "{a}b"}, ""},        // one slot
		{[]string{"MGET", "user1000", "a"}, errCrossSlot},
		{[]string{"MSET", "a", "user1000", "{a}x", "v"}, ""}, // values are not keys
		{[]string{"MSET", "a", "1", "user1000", "2"}, errCrossSlot},
		{[]string{"KVC.PIN", "100", "a", "{a}1"}, ""}, // FirstKey 2
		{[]string{"KVC.PROBE", "a", "9"}, ""},         // routed by its first key only
		{[]string{"KVC.PROBE", "9", "a"}, moved(10106, 7802)},
		{[]string{"KVC.PROBE", "LEASE", "100", "a", "9"}, ""},
		{[]string{"KVC.PROBE", "LEASE", "100", "9"}, moved(10106, 7802)},
		{[]string{"KVC.PROBE", "LEASE", "100"}, ""},         // the handler reports the arity
		{[]string{"KVC.PROBE", "LEASE"}, moved(8586, 7802)}, // "LEASE" alone is a key
	}
	for _, tc := range cases {
		args := make([][]byte, len(tc.args))
		for i, a := range tc.args {
			args[i] = []byte(a)
		}
		spec := s.table.Lookup(args[0])
		if got := s.clusterRedirect(spec, args); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestSetClusterMap: a reload needs a located map, cannot turn cluster
// mode on, and moves routing and the keys of slots given away.
func TestSetClusterMap(t *testing.T) {
	if err := New(engine.New(engine.Options{}), Options{}).SetClusterMap(testMap(t, threeNodeMap, 7801)); err == nil {
		t.Error("SetClusterMap turned cluster mode on in a standalone server")
	}
	as := startAdminServer(t, Options{Cluster: testMap(t, threeNodeMap, 7801)})
	unlocated, _ := cluster.Parse([]byte(threeNodeMap))
	if err := as.srv.SetClusterMap(unlocated); err == nil {
		t.Error("SetClusterMap accepted a map without a self node")
	}
	c := as.dial(t)
	for _, k := range []string{"user1000", "{user1000}x", "b"} { // 3443, 3443, 3300
		if got := c.do("SET", k, "v"); got != "+OK\r\n" {
			t.Fatalf("SET %s = %q", k, got)
		}
	}
	if err := as.srv.SetClusterMap(testMap(t, "nodes:\n  - addr: 127.0.0.1:7801\n    slots: 0-3400\n  - addr: 127.0.0.1:7802\n    slots: 3401-16383\n", 7801)); err != nil {
		t.Fatal(err)
	}
	if got := c.do("GET", "user1000"); got != "-MOVED 3443 127.0.0.1:7802\r\n" {
		t.Errorf("GET after the reload = %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.do("DBSIZE") != ":1\r\n" {
		if time.Now().After(deadline) {
			t.Fatalf("keys of slots given away were not deleted: DBSIZE %q", c.do("DBSIZE"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.do("GET", "b"); got != bulkOf("v") {
		t.Errorf("key of a kept slot: GET = %q", got)
	}
}
