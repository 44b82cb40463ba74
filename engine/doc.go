// Package engine is kvserver's keyspace: string values in numbered
// databases, expiry (lazy on access and active in the background), memory
// accounting of everything a key costs, and LRU eviction when the memory
// bound is reached.
//
// Every operation runs inside a transaction (Engine.Update or Engine.View)
// that holds the engine lock, so a command made of several steps is atomic.
// Values handed to the engine are owned by it from then on and are never
// modified in place: a reply may keep referencing a value after the lock is
// released, which is what lets the protocol layer write large values without
// copying them.
//
// The package knows nothing of RESP; the protocol front end (package server)
// turns requests into engine calls. Under the memory tier sits the optional
// disk tier (Options.Cold, package disktier): memory pressure demotes the least
// recently used groups of keys (package grouping) to it instead of evicting
// them, and reads promote them back.
package engine
