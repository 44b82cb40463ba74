package commands

import (
	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
)

// lookupObject looks key up as a value of kind (whose Go type is T): the
// zero T (nil) when missing; ok is false, with WRONGTYPE answered, when it
// holds another type. read counts a keyspace hit or miss, as Redis's
// lookupKeyRead does, against lookupKeyWrite's lookup before a change.
func lookupObject[T datatype.Object](x *Ctx, tx *engine.Tx, key []byte, kind datatype.Kind, read bool) (v T, ok bool) {
	obj, err := tx.Object(key, kind, read)
	if err != nil {
		x.W.Error(err.Error())
		return v, false
	}
	if obj == nil {
		return v, true
	}
	return obj.(T), true
}
