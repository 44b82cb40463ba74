package server

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
)

// Cluster mode's server side: the slot map in effect (package cluster),
// routing and the foreign-slot purge. With Options.Cluster set, dispatch
// sends a command whose keys hash to another node's slot there with MOVED,
// and refuses keys in different slots with CROSSSLOT. The map changes
// (SetClusterMap) when the file is edited and the server gets SIGHUP, or,
// with --cluster-etcd, whenever package cluster/etcdmap sees a newer map. The
// cluster family's commands (CLUSTER, READONLY, READWRITE, ASKING) live in
// package commands (commands/cluster.go) and see the map through
// commands.Cluster (session_cluster.go).
//
// Without Options.Cluster the server answers like a Redis started without
// cluster-enabled: routing is never checked.

const (
	// Redis 7.0's wording (the cluster specification says "Keys in a
	// request"; the server says "Keys in request").
	errCrossSlot      = "CROSSSLOT Keys in request don't hash to the same slot"
	errSlotNotServed  = "CLUSTERDOWN Hash slot not served"
	slotPurgeInterval = time.Millisecond
)

// ClusterEnabled reports whether the server runs in cluster mode.
func (s *Server) ClusterEnabled() bool { return s.slotMap.Load() != nil }

// SetClusterMap replaces the slot map (a SIGHUP reload, or a map from
// etcd). m must have its own node located (cluster.Load and cluster.New do
// that). Keys of slots the node no
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
	// Subscribers of shard channels whose slot moved away are told, as
	// Redis does when a slot leaves the node.
	s.hub.DropShardChannels(func(ch []byte) bool { return !m.Serves(cluster.KeySlot(ch)) })
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
	slot, msg := s.keysSlot(-1, spec, args)
	if msg != "" {
		return msg
	}
	return s.slotRedirect(m, slot)
}

// keysSlot is the slot of the routing keys of one command, which must be
// slot unless slot is -1 (no key seen yet); it answers CROSSSLOT when they
// hash to different slots.
func (s *Server) keysSlot(slot int, spec *commands.Spec, args [][]byte) (int, string) {
	var buf [16]int
	for _, i := range spec.RoutingKeys(buf[:0], args) {
		ks := cluster.KeySlot(args[i])
		if slot >= 0 && ks != slot {
			return slot, errCrossSlot
		}
		slot = ks
	}
	return slot, ""
}

// slotRedirect is the answer for a command whose keys hash to slot (-1
// for none): "" when this node serves it, else MOVED or CLUSTERDOWN.
func (s *Server) slotRedirect(m *cluster.Map, slot int) string {
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

// kickSlotPurge asks the purger to sweep keys of slots this node does not
// serve.
func (s *Server) kickSlotPurge() { s.purgeWake.Notify() }

// runSlotPurge deletes, whenever kicked, the keys of slots this node does
// not serve: those restored from disk at start under an older map, and
// those of slots a reload gave to another node. Such keys are unreachable
// already (dispatch answers MOVED); deleting them frees their memory and
// disk, and keeps a slot that later comes back from serving values that
// were overwritten or deleted on the other node meanwhile. It works in
// batches of cluster.ScanBatch keys per engine step, so clients are served in
// between, and returns when ctx ends.
func (s *Server) runSlotPurge(ctx context.Context) {
	for s.purgeWake.Wait(ctx) {
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
				cursor = tx.Scan(cursor, cluster.ScanBatch, func(k string) {
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
