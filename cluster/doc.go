// Package cluster is kvserver's Redis Cluster slot map: which node serves
// each of the 16384 hash slots, read from a static YAML file instead of
// being negotiated over a cluster bus.
//
// A file lists the nodes and the slots each one serves:
//
//	nodes:
//	  - addr: 10.0.0.1:6379
//	    slots: 0-5460
//	  - addr: 10.0.0.2:6379
//	    slots: 5461-10922
//	  - addr: 10.0.0.3:6379
//	    slots: 10923-16383
//
// Slots are single numbers and inclusive ranges, comma separated
// ("0-100,200,300-400"), or a YAML list of those. Every node reads the same
// file and finds itself in it by its listen address (Map.Locate); node ids
// are the SHA-1 of the address, so all nodes agree on them without talking
// to each other.
//
// Parse rejects overlapping slots, slots outside 0..16383, duplicate
// addresses and unknown keys. It accepts slots that no node serves: like a
// Redis cluster running with cluster-require-full-coverage no, the served
// slots keep working and a key in an unserved slot is answered with
// CLUSTERDOWN. That lets an operator drain a node by editing the file
// without first finding a new home for every slot.
//
// KeySlot is Redis's keyHashSlot: CRC16 (XMODEM) of the key, or of the
// first non-empty {hash tag} in it, modulo 16384.
//
// New builds a map whose node ids and epoch the caller chose: package
// cluster/etcdmap makes its maps that way, from the slot map an elected
// node keeps in etcd (--cluster-etcd), with the map's etcd revision as
// the epoch.
//
// The package knows nothing of RESP or of the keyspace; package server turns
// a Map into MOVED and CROSSSLOT replies and the CLUSTER command family.
package cluster
