package server

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
)

// The cluster family: Redis Cluster's client-facing protocol over a static
// slot map (package cluster). With Options.Cluster set, dispatch sends a
// command whose keys hash to another node's slot there with MOVED, and
// refuses keys in different slots with CROSSSLOT; CLUSTER SLOTS, SHARDS,
// NODES and INFO describe the map so that cluster clients (go-redis,
// redis-py, redis-cli -c) route by themselves. There is no cluster bus: no
// gossip, failover, replicas or slot migration (no ASK), so CLUSTER's
// management subcommands are refused; the map changes only when the file
// is edited and the server gets SIGHUP (SetClusterMap).
//
// Without Options.Cluster the server answers like a Redis started without
// cluster-enabled: CLUSTER, READONLY, READWRITE and ASKING fail with
// errClusterDisabled and routing is never checked.

const (
	errClusterDisabled = "ERR This instance has cluster support disabled"
	// Redis 7.0's wording (the cluster specification says "Keys in a
	// request"; the server says "Keys in request").
	errCrossSlot      = "CROSSSLOT Keys in request don't hash to the same slot"
	errSlotNotServed  = "CLUSTERDOWN Hash slot not served"
	errInvalidSlot    = "ERR Invalid slot"
	errStaticSlotMap  = "ERR kvserver's slot map is static: edit the cluster-config file and send SIGHUP"
	slotScanBatch     = 1024 // keys examined per engine step by slot scans
	slotPurgeInterval = time.Millisecond
)

// ClusterEnabled reports whether the server runs in cluster mode.
func (s *Server) ClusterEnabled() bool { return s.slotMap.Load() != nil }

// SetClusterMap replaces the slot map (a SIGHUP reload). m must have its
// own node located (cluster.Load does that). Keys of slots the node no
// longer serves are answered with MOVED at once and deleted by a
// background sweep. Cluster mode cannot be turned on or off while the
// server runs.
func (s *Server) SetClusterMap(m *cluster.Map) error {
	if m == nil || m.Self() == nil {
		return errors.New("cluster map has no node for this server")
	}
	if s.slotMap.Load() == nil {
		return errors.New("cluster mode is off: start the server with a cluster config")
	}
	s.slotMap.Store(m)
	s.kickSlotPurge()
	return nil
}

// redisMode is INFO's redis_mode and HELLO's mode.
func (s *Server) redisMode() string {
	if s.ClusterEnabled() {
		return "cluster"
	}
	return "standalone"
}

// clusterRedirect returns the error reply that sends a command to the node
// serving its keys, or "" to run it here: always in standalone mode and for
// commands without keys. Like Redis's getNodeByQuery it runs after
// authentication and before memory is reserved.
func (s *Server) clusterRedirect(spec *commands.Spec, args [][]byte) string {
	m := s.slotMap.Load()
	if m == nil {
		return ""
	}
	slot := -1
	for _, i := range spec.RoutingKeys(args) {
		ks := cluster.KeySlot(args[i])
		if slot >= 0 && ks != slot {
			return errCrossSlot
		}
		slot = ks
	}
	if slot < 0 || m.Serves(slot) {
		return ""
	}
	n, ok := m.Owner(slot)
	if !ok {
		return errSlotNotServed
	}
	// Redis writes ip:port without brackets, IPv6 included; clients split
	// at the last colon.
	return "MOVED " + strconv.Itoa(slot) + " " + n.Host + ":" + strconv.Itoa(n.Port)
}

// clusterHandler is a handler that runs only in cluster mode, given the
// slot map in effect.
type clusterHandler func(s *Server, c *Client, args [][]byte, m *cluster.Map)

// clusterOnly adapts h to the command table: in standalone mode the
// command fails like it does on a Redis without cluster support.
func clusterOnly(h clusterHandler) func(s *Server, c *Client, args [][]byte) {
	return func(s *Server, c *Client, args [][]byte) {
		m := s.slotMap.Load()
		if m == nil {
			c.w.Error(errClusterDisabled)
			return
		}
		h(s, c, args, m)
	}
}

// cmdClusterOK answers READONLY, READWRITE and ASKING: every node is a
// master, so reads need no permission and no slot is ever migrating.
func (s *Server) cmdClusterOK(c *Client, args [][]byte, m *cluster.Map) { c.w.OK() }

// cmdClusterStatic answers the subcommands that change a Redis cluster's
// configuration, which here only the file can do.
func (s *Server) cmdClusterStatic(c *Client, args [][]byte, m *cluster.Map) {
	c.w.Error(errStaticSlotMap)
}

// cmdClusterSaveconfig succeeds: there is no nodes.conf, the map is the
// operator's file.
func (s *Server) cmdClusterSaveconfig(c *Client, args [][]byte, m *cluster.Map) { c.w.OK() }

func (s *Server) cmdClusterMyid(c *Client, args [][]byte, m *cluster.Map) {
	c.w.BulkString(m.Self().ID)
}

func (s *Server) cmdClusterKeyslot(c *Client, args [][]byte, m *cluster.Map) {
	c.w.Int(int64(cluster.KeySlot(args[2])))
}

// epochs: a node's config epoch is its position in the file, from 1, so
// every node reports the same epochs.
func nodeEpoch(i int) int { return i + 1 }

// cmdClusterInfo writes CLUSTER INFO in Redis 7.0's format. The state is
// ok even when some slots have no node (Redis with
// cluster-require-full-coverage no): the served slots keep working.
func (s *Server) cmdClusterInfo(c *Client, args [][]byte, m *cluster.Map) {
	var w infoWriter
	assigned := int64(m.Assigned())
	size := 0
	for i := range m.Nodes() {
		if len(m.Nodes()[i].Slots) > 0 {
			size++
		}
	}
	w.str("cluster_state", "ok")
	w.int("cluster_slots_assigned", assigned)
	w.int("cluster_slots_ok", assigned)
	w.int("cluster_slots_pfail", 0)
	w.int("cluster_slots_fail", 0)
	w.int("cluster_known_nodes", int64(len(m.Nodes())))
	w.int("cluster_size", int64(size))
	w.int("cluster_current_epoch", int64(len(m.Nodes())))
	w.int("cluster_my_epoch", int64(nodeEpoch(m.SelfIndex())))
	w.int("cluster_stats_messages_sent", 0)
	w.int("cluster_stats_messages_received", 0)
	w.int("total_cluster_links_buffer_limit_exceeded", 0)
	c.w.Verbatim(w.b.String())
}

// cmdClusterNodes writes CLUSTER NODES: this node first, then the others
// in file order. There is no cluster bus, so the bus port is 0 and the
// ping and pong times are 0.
func (s *Server) cmdClusterNodes(c *Client, args [][]byte, m *cluster.Map) {
	var b strings.Builder
	line := func(i int) {
		n := &m.Nodes()[i]
		b.WriteString(n.ID)
		b.WriteByte(' ')
		b.WriteString(n.Host + ":" + strconv.Itoa(n.Port) + "@0 ")
		if i == m.SelfIndex() {
			b.WriteString("myself,")
		}
		b.WriteString("master - 0 0 ")
		b.WriteString(strconv.Itoa(nodeEpoch(i)))
		b.WriteString(" connected")
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
	c.w.Verbatim(b.String())
}

// cmdClusterSlots writes CLUSTER SLOTS: one row per run of consecutive
// slots of one node, in slot order, each with the node's endpoint, port,
// id and an empty metadata map (Redis 7.0's shape; no replicas).
func (s *Server) cmdClusterSlots(c *Client, args [][]byte, m *cluster.Map) {
	runs := m.Runs()
	c.w.Array(len(runs))
	for _, r := range runs {
		c.w.Array(3)
		c.w.Int(int64(r.Start))
		c.w.Int(int64(r.End))
		c.w.Array(4)
		c.w.BulkString(r.Node.Host)
		c.w.Int(int64(r.Node.Port))
		c.w.BulkString(r.Node.ID)
		c.w.Map(0)
	}
}

// cmdClusterShards writes CLUSTER SHARDS: one shard per node, in file
// order, with its slot ranges and the node (always a master, online).
func (s *Server) cmdClusterShards(c *Client, args [][]byte, m *cluster.Map) {
	c.w.Array(len(m.Nodes()))
	for i := range m.Nodes() {
		n := &m.Nodes()[i]
		c.w.Map(2)
		c.w.BulkString("slots")
		c.w.Array(2 * len(n.Slots))
		for _, r := range n.Slots {
			c.w.Int(int64(r.Start))
			c.w.Int(int64(r.End))
		}
		c.w.BulkString("nodes")
		c.w.Array(1)
		hostname := net.ParseIP(n.Host) == nil
		fields := 7
		if hostname {
			fields++
		}
		c.w.Map(fields)
		c.w.BulkString("id")
		c.w.BulkString(n.ID)
		c.w.BulkString("port")
		c.w.Int(int64(n.Port))
		c.w.BulkString("ip")
		c.w.BulkString(n.Host)
		c.w.BulkString("endpoint")
		c.w.BulkString(n.Host)
		if hostname {
			c.w.BulkString("hostname")
			c.w.BulkString(n.Host)
		}
		c.w.BulkString("role")
		c.w.BulkString("master")
		c.w.BulkString("replication-offset")
		c.w.Int(0)
		c.w.BulkString("health")
		c.w.BulkString("online")
	}
}

// cmdClusterLinks answers an empty list: there are no cluster bus links.
func (s *Server) cmdClusterLinks(c *Client, args [][]byte, m *cluster.Map) { c.w.Array(0) }

// knownNode checks a node-id argument like Redis ("ERR Unknown node <id>").
func knownNode(c *Client, m *cluster.Map, id []byte) bool {
	for i := range m.Nodes() {
		if m.Nodes()[i].ID == string(id) {
			return true
		}
	}
	c.w.Error("ERR Unknown node " + sanitize(string(id)))
	return false
}

// cmdClusterReplicas answers CLUSTER REPLICAS and SLAVES: no node has
// replicas.
func (s *Server) cmdClusterReplicas(c *Client, args [][]byte, m *cluster.Map) {
	if knownNode(c, m, args[2]) {
		c.w.Array(0)
	}
}

func (s *Server) cmdClusterCountFailureReports(c *Client, args [][]byte, m *cluster.Map) {
	if knownNode(c, m, args[2]) {
		c.w.Int(0)
	}
}

// cmdClusterCountkeysinslot implements CLUSTER COUNTKEYSINSLOT slot. The
// engine keeps no per-slot index, so this walks the whole keyspace (in
// batches, so other clients are served in between): O(keys), fine for the
// occasional administrative call, not for a hot path.
func (s *Server) cmdClusterCountkeysinslot(c *Client, args [][]byte, m *cluster.Map) {
	slot, ok := parseInt64(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots {
		c.w.Error(errInvalidSlot)
		return
	}
	c.w.Int(int64(len(s.keysInSlot(c, int(slot), -1))))
}

// cmdClusterGetkeysinslot implements CLUSTER GETKEYSINSLOT slot count, at
// the cost of a keyspace walk like COUNTKEYSINSLOT (it stops once it has
// count keys).
func (s *Server) cmdClusterGetkeysinslot(c *Client, args [][]byte, m *cluster.Map) {
	slot, ok1 := parseInt64(args[2])
	count, ok2 := parseInt64(args[3])
	if !ok1 || !ok2 {
		c.w.Error(errNotInteger)
		return
	}
	if slot < 0 || slot >= cluster.Slots || count < 0 {
		c.w.Error("ERR Invalid slot or number of keys")
		return
	}
	var keys []string
	if count > 0 {
		keys = s.keysInSlot(c, int(slot), int(min(count, 1<<30)))
	}
	c.w.Array(len(keys))
	for _, k := range keys {
		c.w.BulkString(k)
	}
}

// keysInSlot returns up to max (all when max < 0) keys of the client's
// database that hash to slot, walking the keyspace slotScanBatch keys per
// engine step. A key present for the whole walk is seen exactly once.
func (s *Server) keysInSlot(c *Client, slot, max int) []string {
	var keys []string
	var cursor uint64
	for {
		s.view(c, func(tx *engine.Tx) {
			cursor = tx.Scan(cursor, slotScanBatch, func(k string) {
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

func (s *Server) cmdClusterHelp(c *Client, args [][]byte, m *cluster.Map) {
	writeHelp(c, "CLUSTER",
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
		"(kvserver: the slot map is static; ADDSLOTS, SETSLOT, MEET, FAILOVER and the",
		"other subcommands that change it are refused: edit the cluster-config file and",
		"send SIGHUP.)",
	)
}

// kickSlotPurge asks the purger to sweep keys of slots this node does not
// serve.
func (s *Server) kickSlotPurge() {
	select {
	case s.purgeKick <- struct{}{}:
	default:
	}
}

// runSlotPurge deletes, whenever kicked, the keys of slots this node does
// not serve: those restored from disk at start under an older map, and
// those of slots a reload gave to another node. Such keys are unreachable
// already (dispatch answers MOVED); deleting them frees their memory and
// disk, and keeps a slot that later comes back from serving values that
// were overwritten or deleted on the other node meanwhile. It works in
// batches of slotScanBatch keys per engine step, so clients are served in
// between, and returns when ctx ends.
func (s *Server) runSlotPurge(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.purgeKick:
		}
		if n := s.purgeForeignKeys(ctx); n > 0 {
			s.log.Info("deleted keys of slots this node does not serve", "keys", n)
		}
	}
}

// purgeForeignKeys is one sweep of runSlotPurge over every database; it
// returns the number of keys deleted.
func (s *Server) purgeForeignKeys(ctx context.Context) int {
	total := 0
	for db := 0; db < s.eng.Databases(); db++ {
		var cursor uint64
		for {
			if ctx.Err() != nil {
				return total
			}
			// A reload during the sweep applies from the next batch on;
			// it kicks another sweep for the batches already done.
			m := s.slotMap.Load()
			s.eng.Update(db, func(tx *engine.Tx) {
				var foreign []string
				cursor = tx.Scan(cursor, slotScanBatch, func(k string) {
					if !m.Serves(cluster.KeySlot([]byte(k))) {
						foreign = append(foreign, k)
					}
				})
				for _, k := range foreign {
					tx.Delete([]byte(k))
				}
				total += len(foreign)
			})
			if cursor == 0 {
				break
			}
			// Leave the engine lock to the clients for a moment.
			select {
			case <-ctx.Done():
				return total
			case <-time.After(slotPurgeInterval):
			}
		}
	}
	return total
}
