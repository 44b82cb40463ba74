// Package etcdmap runs kvserver's cluster mode on etcd: membership,
// failure detection and the slot map come from etcd (through its official
// client) instead of a file copied to every node.
//
// Under the cluster's prefix (--cluster-name, default "kvserver") etcd
// holds:
//
//	/kvserver/members/<id>   {"addr":"10.0.0.1:6379"} on the node's lease
//	/kvserver/election/...   concurrency.Election: who reconciles
//	/kvserver/map            {"nodes":[{"id":…,"addr":…,"slots":[[0,5461]]}]}
//
// Each node keeps a lease alive (--cluster-node-ttl) with its member key
// on it; its id is random, made once and kept in --dir, so a node that
// restarts is the same member. One node at a time, elected through etcd,
// reconciles: it turns the members into a slot map with Assign (minimal
// movement: a join takes an even share from the others, a departure
// spreads the departed node's slots) and writes it only if the map's
// revision is still the one it read and it still holds the election. A
// member whose key vanished (its lease expired) keeps its slots for
// --cluster-grace seconds, so that a node restarted within the grace comes
// back to its slots and its disk tier; after the grace they move.
//
// The map key's revision is the map's epoch (CLUSTER INFO's
// cluster_current_epoch). Every node watches the key and hands each newer
// map to its server, which applies it as it applies a reloaded file:
// MOVED for slots it lost, a background purge of their keys, CLUSTER
// SLOTS/SHARDS/NODES/INFO describing the new map. The last map is also
// kept in --dir, so that a node restarting while etcd is away serves what
// it last knew.
//
// A node that loses its lease keeps serving its last map and registers
// again with a new lease; a node that leaves on purpose (Leave) marks its
// member key leaving, waits until a map without its slots is in effect,
// then revokes its lease.
//
// The package knows nothing of RESP or of the keyspace: it produces
// cluster.Map values; package server routes by them.
package etcdmap
