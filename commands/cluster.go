package commands

import (
	"net"
	"strconv"
	"strings"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/engine"
)

// The cluster family: Redis Cluster's client-facing commands over a slot
// map (package cluster) from a file or from etcd (package cluster/etcdmap). CLUSTER SLOTS, SHARDS, NODES and INFO
// describe the map so that cluster clients (go-redis, redis-py, redis-cli
// -c) route by themselves; package server's dispatch does the routing
// itself (MOVED, CROSSSLOT). There is no cluster bus: no gossip, failover,
// replicas or slot migration (no ASK), so CLUSTER's management subcommands
// are refused; the map changes only when the file is edited and the server
// gets SIGHUP, or, with etcd, when nodes join or leave.
//
// Without a cluster config the server answers like a Redis started without
// cluster-enabled: CLUSTER, READONLY, READWRITE and ASKING fail with
// errClusterDisabled.

// clusterCommands are the cluster family's rows (Redis's cluster.c).
var clusterCommands = []*Spec{
	{Name: "cluster", Arity: -2, Flags: 0, ACL: "@slow", Subcommands: []*Spec{
		{Name: "cluster|addslots", Arity: -3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|addslotsrange", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|bumpepoch", Arity: 2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|count-failure-reports", Arity: 3, Flags: FlagAdmin | FlagStale, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterCountFailureReports)},
		{Name: "cluster|countkeysinslot", Arity: 3, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterCountkeysinslot)},
		{Name: "cluster|delslots", Arity: -3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|delslotsrange", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|failover", Arity: -2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|flushslots", Arity: 2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|forget", Arity: 3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|getkeysinslot", Arity: 4, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterGetkeysinslot)},
		{Name: "cluster|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterHelp)},
		{Name: "cluster|info", Arity: 2, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterInfo)},
		{Name: "cluster|keyslot", Arity: 3, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterKeyslot)},
		{Name: "cluster|links", Arity: 2, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterLinks)},
		{Name: "cluster|meet", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|myid", Arity: 2, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterMyid)},
		{Name: "cluster|nodes", Arity: 2, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterNodes)},
		{Name: "cluster|replicas", Arity: 3, Flags: FlagAdmin | FlagStale, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterReplicas)},
		{Name: "cluster|replicate", Arity: 3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|reset", Arity: -2, Flags: FlagAdmin | FlagNoscript | FlagStale, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|saveconfig", Arity: 2, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterSaveconfig)},
		{Name: "cluster|set-config-epoch", Arity: 3, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|setslot", Arity: -4, Flags: FlagAdmin | FlagStale | FlagNoAsyncLoading, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterStatic)},
		{Name: "cluster|shards", Arity: 2, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterShards)},
		{Name: "cluster|slaves", Arity: 3, Flags: FlagAdmin | FlagStale, ACL: "@admin @slow @dangerous", Handler: clusterOnly(cmdClusterReplicas)},
		{Name: "cluster|slots", Arity: 2, Flags: FlagStale, ACL: "@slow", Handler: clusterOnly(cmdClusterSlots)},
	}},
	{Name: "readonly", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@fast @connection", Handler: clusterOnly(cmdClusterOK)},
	{Name: "readwrite", Arity: 1, Flags: FlagLoading | FlagStale | FlagFast, ACL: "@fast @connection", Handler: clusterOnly(cmdClusterOK)},
	{Name: "asking", Arity: 1, Flags: FlagFast, ACL: "@fast @connection", Handler: clusterOnly(cmdClusterOK)},
}

const (
	errClusterDisabled = "ERR This instance has cluster support disabled"
	errInvalidSlot     = "ERR Invalid slot"
	errStaticSlotMap   = "ERR kvserver's slot map is static: edit the cluster-config file and send SIGHUP"
	errEtcdSlotMap     = "ERR kvserver's slot map is computed from the members in etcd: start or stop nodes to change it"
)

// Cluster is the server's cluster mode as the cluster family sees it.
type Cluster interface {
	// SlotMap is the slot map in effect, with this node located; nil when
	// the server runs standalone.
	SlotMap() *cluster.Map
	// Membership is the node's standing in etcd (--cluster-etcd); ok is
	// false for a static map or a standalone server.
	Membership() (m Membership, ok bool)
}

// Membership is a cluster node's standing in etcd, for INFO cluster.
type Membership struct {
	// Session reports whether the node holds a live lease.
	Session bool
	// Reconciler reports whether the node is the elected reconciler.
	Reconciler bool
	// MapsApplied counts the slot maps from etcd the node applied.
	MapsApplied int64
}

// clusterHandler is a handler that runs only in cluster mode, given the
// slot map in effect.
type clusterHandler func(x *Ctx, m *cluster.Map)

// clusterOnly adapts h to the command table: in standalone mode the
// command fails like it does on a Redis without cluster support.
func clusterOnly(h clusterHandler) Handler {
	return func(x *Ctx) {
		m := x.Cluster.SlotMap()
		if m == nil {
			x.W.Error(errClusterDisabled)
			return
		}
		h(x, m)
	}
}

// cmdClusterOK answers READONLY, READWRITE and ASKING: every node is a
// master, so reads need no permission and no slot is ever migrating.
func cmdClusterOK(x *Ctx, m *cluster.Map) { x.W.OK() }

// cmdClusterStatic answers the subcommands that change a Redis cluster's
// configuration, which here only the file, or etcd's reconciler, can do.
func cmdClusterStatic(x *Ctx, m *cluster.Map) {
	if _, etcd := x.Cluster.Membership(); etcd {
		x.W.Error(errEtcdSlotMap)
		return
	}
	x.W.Error(errStaticSlotMap)
}

// cmdClusterSaveconfig succeeds: there is no nodes.conf, the map is the
// operator's file.
func cmdClusterSaveconfig(x *Ctx, m *cluster.Map) { x.W.OK() }

func cmdClusterMyid(x *Ctx, m *cluster.Map) {
	x.W.BulkString(m.Self().ID)
}

func cmdClusterKeyslot(x *Ctx, m *cluster.Map) {
	x.W.Int(int64(cluster.KeySlot(x.Args[2])))
}

// cmdClusterInfo writes CLUSTER INFO in Redis 7.0's format. The state is
// ok even when some slots have no node (Redis with
// cluster-require-full-coverage no): the served slots keep working.
func cmdClusterInfo(x *Ctx, m *cluster.Map) {
	var w InfoWriter
	assigned := int64(m.Assigned())
	size := 0
	pfail := int64(0)
	for i := range m.Nodes() {
		if len(m.Nodes()[i].Slots) > 0 {
			size++
		}
		if m.Nodes()[i].Failing {
			pfail += int64(m.Nodes()[i].SlotCount())
		}
	}
	w.Str("cluster_state", "ok")
	w.Int("cluster_slots_assigned", assigned)
	w.Int("cluster_slots_ok", assigned-pfail)
	w.Int("cluster_slots_pfail", pfail)
	w.Int("cluster_slots_fail", 0)
	w.Int("cluster_known_nodes", int64(len(m.Nodes())))
	w.Int("cluster_size", int64(size))
	w.Int("cluster_current_epoch", m.CurrentEpoch())
	w.Int("cluster_my_epoch", m.NodeEpoch(m.SelfIndex()))
	w.Int("cluster_stats_messages_sent", 0)
	w.Int("cluster_stats_messages_received", 0)
	w.Int("total_cluster_links_buffer_limit_exceeded", 0)
	x.W.Verbatim(w.String())
}

// cmdClusterNodes writes CLUSTER NODES: this node first, then the others
// in file order. There is no cluster bus, so the bus port is 0 and the
// ping and pong times are 0. A node etcd knows to be down while it keeps
// its slots for the grace is "master,fail?" and disconnected, as Redis
// shows a node it suspects.
func cmdClusterNodes(x *Ctx, m *cluster.Map) {
	var b strings.Builder
	line := func(i int) {
		n := &m.Nodes()[i]
		b.WriteString(n.ID)
		b.WriteByte(' ')
		b.WriteString(n.Host + ":" + strconv.Itoa(n.Port) + "@0 ")
		if i == m.SelfIndex() {
			b.WriteString("myself,")
		}
		b.WriteString("master")
		link := " connected"
		if n.Failing {
			b.WriteString(",fail?")
			link = " disconnected"
		}
		b.WriteString(" - 0 0 ")
		b.WriteString(strconv.FormatInt(m.NodeEpoch(i), 10))
		b.WriteString(link)
		for _, r := range n.Slots {
			b.WriteByte(' ')
			b.WriteString(r.String())
		}
		b.WriteByte('\n')
	}
	line(m.SelfIndex())
	for i := range m.Nodes() {
		if i != m.SelfIndex() {
			line(i)
		}
	}
	x.W.Verbatim(b.String())
}

// cmdClusterSlots writes CLUSTER SLOTS: one row per run of consecutive
// slots of one node, in slot order, each with the node's endpoint, port,
// id and an empty metadata map (Redis 7.0's shape; no replicas).
func cmdClusterSlots(x *Ctx, m *cluster.Map) {
	runs := m.Runs()
	x.W.Array(len(runs))
	for _, r := range runs {
		x.W.Array(3)
		x.W.Int(int64(r.Start))
		x.W.Int(int64(r.End))
		x.W.Array(4)
		x.W.BulkString(r.Node.Host)
		x.W.Int(int64(r.Node.Port))
		x.W.BulkString(r.Node.ID)
		x.W.Map(0)
	}
}

// cmdClusterShards writes CLUSTER SHARDS: one shard per node, in file
// order, with its slot ranges and the node (always a master, online).
func cmdClusterShards(x *Ctx, m *cluster.Map) {
	x.W.Array(len(m.Nodes()))
	for i := range m.Nodes() {
		n := &m.Nodes()[i]
		x.W.Map(2)
		x.W.BulkString("slots")
		x.W.Array(2 * len(n.Slots))
		for _, r := range n.Slots {
			x.W.Int(int64(r.Start))
			x.W.Int(int64(r.End))
		}
		x.W.BulkString("nodes")
		x.W.Array(1)
		hostname := net.ParseIP(n.Host) == nil
		fields := 7
		if hostname {
			fields++
		}
		x.W.Map(fields)
		x.W.BulkString("id")
		x.W.BulkString(n.ID)
		x.W.BulkString("port")
		x.W.Int(int64(n.Port))
		x.W.BulkString("ip")
		x.W.BulkString(n.Host)
		x.W.BulkString("endpoint")
		x.W.BulkString(n.Host)
		if hostname {
			x.W.BulkString("hostname")
			x.W.BulkString(n.Host)
		}
		x.W.BulkString("role")
		x.W.BulkString("master")
		x.W.BulkString("replication-offset")
		x.W.Int(0)
		x.W.BulkString("health")
		x.W.BulkString("online")
	}
}

// cmdClusterLinks answers an empty list: there are no cluster bus links.
func cmdClusterLinks(x *Ctx, m *cluster.Map) { x.W.Array(0) }

// knownNode checks a node-id argument like Redis ("ERR Unknown node <id>").
func knownNode(x *Ctx, m *cluster.Map, id []byte) bool {
	for i := range m.Nodes() {
		if m.Nodes()[i].ID == string(id) {
			return true
		}
	}
	x.W.Error("ERR Unknown node " + Sanitize(string(id)))
	return false
}

// cmdClusterReplicas answers CLUSTER REPLICAS and SLAVES: no node has
// replicas.
func cmdClusterReplicas(x *Ctx, m *cluster.Map) {
	if knownNode(x, m, x.Args[2]) {
		x.W.Array(0)
	}
}

func cmdClusterCountFailureReports(x *Ctx, m *cluster.Map) {
	if knownNode(x, m, x.Args[2]) {
		x.W.Int(0)
	}
}

// cmdClusterCountkeysinslot implements CLUSTER COUNTKEYSINSLOT slot. The
// engine keeps no per-slot index, so this walks the whole keyspace (in
// batches, so other clients are served in between): O(keys), fine for the
// occasional administrative call, not for a hot path.
func cmdClusterCountkeysinslot(x *Ctx, m *cluster.Map) {
	slot, ok := intArg(x, 2)
	if !ok {
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		x.W.Error(errInvalidSlot)
		return
	}
	x.W.Int(int64(len(keysInSlot(x, int(slot), -1))))
}

// cmdClusterGetkeysinslot implements CLUSTER GETKEYSINSLOT slot count, at
// the cost of a keyspace walk like COUNTKEYSINSLOT (it stops once it has
// count keys).
func cmdClusterGetkeysinslot(x *Ctx, m *cluster.Map) {
	slot, ok1 := ParseInt64(x.Args[2])
	count, ok2 := ParseInt64(x.Args[3])
	if !ok1 || !ok2 {
		x.W.Error(errNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots || count < 0 {
		x.W.Error("ERR Invalid slot or number of keys")
		return
	}
	var keys []string
	if count > 0 {
		keys = keysInSlot(x, int(slot), int(min(count, 1<<30)))
	}
	x.W.Array(len(keys))
	for _, k := range keys {
		x.W.BulkString(k)
	}
}

// keysInSlot returns up to max (all when max < 0) keys of the client's
// database that hash to slot, walking the keyspace cluster.ScanBatch keys per
// engine step. A key present for the whole walk is seen exactly once.
func keysInSlot(x *Ctx, slot, max int) []string {
	var keys []string
	var cursor uint64
	for {
		x.View(func(tx *engine.Tx) {
			cursor = tx.Scan(cursor, cluster.ScanBatch, func(k string) {
				if (max < 0 || len(keys) < max) && cluster.KeySlot([]byte(k)) == slot {
					keys = append(keys, k)
				}
			})
		})
		if cursor == 0 || (max >= 0 && len(keys) >= max) {
			return keys
		}
	}
}

func cmdClusterHelp(x *Ctx, m *cluster.Map) {
	writeHelp(x, "CLUSTER",
		"COUNTKEYSINSLOT <slot>",
		"    Return the number of keys in <slot>.",
		"GETKEYSINSLOT <slot> <count>",
		"    Return key names stored by current node in a slot.",
		"INFO",
		"    Return information about the cluster.",
		"KEYSLOT <key>",
		"    Return the hash slot for <key>.",
		"MYID",
		"    Return the node id.",
		"NODES",
		"    Return cluster configuration seen by node. Output format:",
		"    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
		"REPLICAS <node-id>",
		"    Return <node-id> replicas.",
		"SLOTS",
		"    Return information about slots range mappings. Each range is made of:",
		"    start, end, master and replicas IP addresses, ports and ids",
		"SHARDS",
		"    Return information about slot range mappings and the nodes associated with them.",
		"LINKS",
		"    Return information about all network links between this node and its peers.",
		"(kvserver: the slot map comes from the cluster-config file (edit it and send",
		"SIGHUP) or from etcd (nodes joining and leaving change it); ADDSLOTS, SETSLOT,",
		"MEET, FAILOVER and the other subcommands that change it are refused.)",
	)
}
