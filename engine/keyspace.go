package engine

import (
	"hash/maphash"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/disktier"

	"github.com/tidwall/btree"
)

// itemOverhead approximates what a key costs beyond its key and value bytes:
// the item struct, its map slot, its btree slot, its group and expiry slots.
const itemOverhead = 160

// item is one stored key. Its value is in memory when resident; otherwise
// only the index entry is, and the value lives in the cold tier.
type item struct {
	key string
	// value is a resident string's bytes; nil when not resident or when
	// the value is an object.
	value []byte
	// obj holds a resident value of any kind but a string (kind), and
	// objSize the MemSize it was last accounted with.
	obj      datatype.Object
	objSize  int64
	length   int64 // length of the value, resident or not
	expireAt int64 // unix milliseconds; 0 means no expiry
	hash     uint64
	lastUsed int64 // unix milliseconds of the last access
	// lruSeen is the memLRU push count of the item's group as the item
	// last saw it; the group's own (group.pushedAt) is at least that
	// while the group is on memLRU (see Tx.touchLRU).
	lruSeen uint64
	// version changes whenever the value changes, so a demotion or load
	// that ran without the lock can tell whether it is still current.
	version uint64
	// disk is the footprint of the record the cold tier holds of the key
	// (onDisk or diskOld), as the write that made it or a read reported
	// it, so that the record's replacement need not read its header; zero
	// when not known.
	disk disktier.Footprint
	// grp is the key's group, and through it its keyspace (keyspace).
	grp *group
	// chunk is set on a metadata key whose value is LMCache metadata.
	chunk *chunkInfo
	// The small fields last, together, so that the struct has no holes.
	kind datatype.Kind // the value's type
	// freq is the LFU access counter and freqTime the minute (modulo
	// 2^16) of its last decrement or increment (lfu.go).
	freq     uint8
	freqTime uint16
	resident bool
	// onDisk: the cold tier holds the current value (written by a
	// demotion, or loaded from it and unchanged since).
	onDisk bool
	// diskOld: the cold tier holds an older record of the key (its value
	// or expiry changed since it was written). The record stays until the
	// write-back replaces it, so that a crash finds the older value
	// rather than nothing. Never set together with onDisk. A non-resident
	// item has onDisk or diskOld set; with diskOld only its expiry is
	// stale on disk.
	diskOld bool
	// quantized: the stored value (in memory and on disk) is a codec
	// encoding of the client's value, whose length is still length.
	quantized bool
	// private: value is a buffer the engine allocated itself (SetCopy)
	// and has not handed out since (a read, a quantization), so that
	// nothing outside the engine holds it. A write-behind or demotion
	// holds it while its group is demoting. A private buffer may take
	// the key's next value in place (reuseValueLocked).
	private bool
}

// keyspace is the database the item is in (or was, once removed).
func (it *item) keyspace() *keyspace { return it.grp.ks }

// hasRecord reports whether the cold tier holds a record of the key,
// current or older.
func (it *item) hasRecord() bool { return it.onDisk || it.diskOld }

// memSize is the memory the item costs: its index entry, plus its value
// when resident (see Engine.charge for where it is counted).
func (it *item) memSize() int64 {
	n := int64(itemOverhead + len(it.key))
	if it.resident {
		if it.obj != nil {
			n += it.objSize
		} else {
			n += int64(cap(it.value))
		}
	}
	return n
}

// valueBytes is what a resident value counts in residentBytes.
func (it *item) valueBytes() int64 {
	if it.obj != nil {
		return it.objSize
	}
	return int64(len(it.value))
}

// keyspace is one numbered database.
type keyspace struct {
	// phys is the database number its records use in the cold tier; it
	// differs from the logical number after SWAPDB.
	phys    int
	items   map[string]*item
	groups  map[string]*group
	expires map[*item]struct{}
	// order holds the items sorted by (hash, key). SCAN walks it with the
	// hash as cursor, so a key present for a whole scan is returned
	// exactly once however the keyspace changes meanwhile.
	order *btree.BTreeG[*item]
}

func newKeyspace(phys int) *keyspace {
	return &keyspace{
		phys:    phys,
		items:   make(map[string]*item),
		groups:  make(map[string]*group),
		expires: make(map[*item]struct{}),
		order:   btree.NewBTreeGOptions(itemLess, btree.Options{NoLocks: true}),
	}
}

func itemLess(a, b *item) bool {
	if a.hash != b.hash {
		return a.hash < b.hash
	}
	return a.key < b.key
}

func hashKey(seed maphash.Seed, key string) uint64 {
	return maphash.String(seed, key)
}
