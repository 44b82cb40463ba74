package engine

import (
	"context"
	"errors"

	"github.com/kvserver/kvserver/datatype"
)

// ErrWrongType is Redis's error for a command run against a key holding
// another type of value.
var ErrWrongType = errors.New("WRONGTYPE Operation against a key holding the wrong kind of value")

// setObjectLocked makes obj the resident value of it (a write or a load).
func (e *Engine) setObjectLocked(it *item, obj datatype.Object) {
	e.releaseValueLocked(it)
	it.value, it.obj, it.objSize, it.private = nil, obj, obj.MemSize(), false
	it.kind = obj.Kind()
	it.quantized = false
	it.length = it.objSize
	e.residentBytes += it.objSize
	it.resident = true
	e.charge(it)
	e.memLRU.touch(it.grp)
}

// resizeObjectLocked accounts the memory of it's object again after a
// change in place.
func (e *Engine) resizeObjectLocked(it *item) {
	e.uncharge(it)
	e.residentBytes -= it.objSize
	it.objSize = it.obj.MemSize()
	it.length = it.objSize
	e.residentBytes += it.objSize
	e.charge(it)
}

// makeResidentLocked puts a value read from disk in memory: a string as
// it is, any other kind decoded into its object. A value that does not
// decode is damaged: the key goes (with its chunk, damage.go) and false is
// returned.
func (e *Engine) makeResidentLocked(ctx context.Context, it *item, stored []byte) bool {
	if it.kind == datatype.KindString {
		e.setResidentLocked(it, stored)
		return true
	}
	obj, err := datatype.Decode(it.kind, stored)
	return e.residentObjectLocked(ctx, it, obj, err)
}

// residentObjectLocked puts obj, decoded from it's disk record with the
// outcome err, in memory, as makeResidentLocked does; Preload decodes
// without the lock and calls it directly.
func (e *Engine) residentObjectLocked(ctx context.Context, it *item, obj datatype.Object, err error) bool {
	if err != nil {
		e.opts.Logger.Error("decode value from disk tier", "key", it.key, "err", err)
		e.dropLostLocked(ctx, it)
		return false
	}
	e.setObjectLocked(it, obj)
	return true
}

// Kind returns the type of key's value without loading it, and false when
// the key does not exist.
func (tx *Tx) Kind(key []byte) (datatype.Kind, bool) {
	it := tx.find(string(key))
	if it == nil {
		return 0, false
	}
	return it.kind, true
}

// objectOf returns it's object, loading it from disk; nil when the disk
// copy was lost (the key is then gone). In a write step, which may change
// the object in place, it first waits for an encoding of the object in
// progress without the lock (snapshot.go).
func (tx *Tx) objectOf(it *item) datatype.Object {
	if !it.resident {
		if _, ok := tx.e.loadLocked(tx.ctx(), it, true); !ok || !it.resident {
			return nil
		}
	}
	if tx.write {
		tx.e.awaitEncodedLocked(it.obj)
	}
	return it.obj
}

// Object returns key's value, which must be of kind k, for reading or for
// changing in place (then call Modified). It returns nil and no error when
// the key does not exist, and ErrWrongType when it holds another type.
// read counts a keyspace hit or miss and publishes "keymiss", as Redis's
// lookupKeyRead does.
func (tx *Tx) Object(key []byte, k datatype.Kind, read bool) (datatype.Object, error) {
	it := tx.find(string(key))
	if it == nil {
		if read {
			tx.miss(key)
		}
		return nil, nil
	}
	if it.kind != k {
		return nil, ErrWrongType
	}
	if read && it.resident {
		tx.e.hits.Add(1)
	}
	obj := tx.objectOf(it)
	if obj == nil {
		if read {
			tx.miss(key)
		}
		return nil, nil
	}
	tx.touch(it)
	return obj, nil
}

// Modified records that the object under key (from Object, or just given
// to SetObject) was changed in place: watchers see the write, the memory is
// accounted again, and the disk copy becomes stale. An object left empty
// is deleted, as Redis deletes empty collections.
func (tx *Tx) Modified(key []byte) {
	it := tx.ks.items[string(key)]
	if it == nil || it.obj == nil {
		return
	}
	e := tx.e
	if datatype.Empty(it.obj) {
		e.removeLocked(tx.ctx(), it)
		return
	}
	e.touchLocked(tx.db, it.key)
	if it.onDisk {
		it.onDisk = false
		it.diskOld = true
	}
	it.version = e.bumpVersion()
	e.resizeObjectLocked(it)
	e.markDirtyLocked(it.grp)
	it.lastUsed = tx.now
	tx.protect = it
}

// SetObject stores obj under key with the given expiry (0 = none),
// replacing any previous value of any type. The engine owns obj from now
// on. An empty obj deletes the key.
func (tx *Tx) SetObject(key []byte, obj datatype.Object, expireAt int64) {
	if datatype.Empty(obj) {
		tx.Delete(key)
		return
	}
	k := string(key)
	e := tx.e
	e.touchLocked(tx.db, k)
	it := tx.ks.items[k]
	if it == nil {
		size := obj.MemSize()
		it = &item{key: k, kind: obj.Kind(), obj: obj, objSize: size, length: size,
			lastUsed: tx.now, resident: true, version: e.bumpVersion()}
		newFreq(it, tx.now)
		e.insertLocked(tx.ks, it)
		defer tx.created(it)
	} else {
		if it.onDisk {
			it.onDisk = false
			it.diskOld = true
		}
		it.version = e.bumpVersion()
		e.forgetChunkLocked(it)
		e.setObjectLocked(it, obj)
	}
	e.markDirtyLocked(it.grp)
	tx.setExpireItem(it, expireAt)
	it.lastUsed = tx.now
	tx.protect = it
}

// Put stores what Get or Peek returned for another key under key: the
// value of any type, with e.ExpireAt (RENAME, MOVE, COPY). An object is
// taken over, not copied.
func (tx *Tx) Put(key []byte, e Entry) {
	if e.Object != nil {
		tx.SetObject(key, e.Object, e.ExpireAt)
		return
	}
	tx.Set(key, e.Value, e.ExpireAt)
}
