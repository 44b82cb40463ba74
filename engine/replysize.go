package engine

// DiskOnlyBytes is the total length of the values of keys (in database db)
// that are only on disk: what reading them loads into fresh memory, which
// a caller bounding the memory of replies reserves before the read. It
// returns 0 at once, without the lock, when no value is only on disk.
func (e *Engine) DiskOnlyBytes(db int, keys [][]byte) int64 {
	if e.cold == nil || e.diskOnlyPub.Load() == 0 {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ks := e.dbs[db]
	var n int64
	for _, key := range keys {
		if it := ks.items[string(key)]; it != nil && !it.resident {
			n += it.length
		}
	}
	return n
}

// ReplyBytes is DiskOnlyBytes plus the memory of the resident collections
// among keys: a reply that lists a collection's elements (LRANGE,
// SMEMBERS, HGETALL) is a fresh copy about that size, which a caller
// bounding the memory of replies reserves before building it. It takes
// the lock: callers use it for commands that may copy a whole collection,
// not for GET.
func (e *Engine) ReplyBytes(db int, keys [][]byte) int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	ks := e.dbs[db]
	var n int64
	for _, key := range keys {
		switch it := ks.items[string(key)]; {
		case it == nil:
		case !it.resident:
			n += it.length
		case it.obj != nil:
			n += it.objSize
		}
	}
	return n
}
