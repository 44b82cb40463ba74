// Package grouping is the one place for the rule that ties keys together
// into groups: LMCache stores a chunk as two keys, "<name>kv_bytes" (the
// data) and "<name>metadata" (its 28-byte description), and Valkey-style
// clients put a ':' before the suffix. Keys that differ only in such a
// suffix form one group, which the tiers keep, demote and delete as a unit
// so that no client sees half a chunk.
//
// The rule is part of the disk tier's on-disk format: every record stores
// the length of its group name, and a read rejects a record whose group
// differs. A change to the rule (a new suffix, a different separator) would
// turn existing records into "corrupt" ones, so the disk tier stores Version
// in its format key and refuses a store written under another version.
// Change Version whenever Of maps any key differently.
//
// The package also says which group names have the shape of LMCache's chunk
// keys (IsChunk): only those get the chunk rules (a damaged key takes its
// partner with it, a half chunk is dropped at start); an ordinary key whose
// name happens to end in a suffix is whole by itself.
//
// It knows nothing of values (package kvmeta parses the metadata), tiers or
// the wire protocol.
package grouping
