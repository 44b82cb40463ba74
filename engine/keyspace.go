package engine

import (
	"hash/maphash"

	"github.com/tidwall/btree"
)

// itemOverhead approximates what a key costs beyond its key and value bytes:
// the item struct, its map slot, its btree slot and its expiry slot.
const itemOverhead = 160

// item is one stored key.
type item struct {
	key      string
	value    []byte
	expireAt int64 // unix milliseconds; 0 means no expiry
	hash     uint64
	lastUsed int64 // unix milliseconds of the last access
	ks       *keyspace
	prev     *item
	next     *item
}

// size is the memory the item is charged for.
func (it *item) size() int64 {
	return int64(itemOverhead + len(it.key) + cap(it.value))
}

// keyspace is one numbered database.
type keyspace struct {
	items   map[string]*item
	expires map[*item]struct{}
	// order holds the items sorted by (hash, key). SCAN walks it with the
	// hash as cursor, so a key present for a whole scan is returned
	// exactly once however the keyspace changes meanwhile.
	order *btree.BTreeG[*item]
}

func newKeyspace() *keyspace {
	return &keyspace{
		items:   make(map[string]*item),
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
