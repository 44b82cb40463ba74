package commands

import (
	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
	"github.com/kvserver/kvserver/resp"
)

// errNoKey is Redis's shared.nokeyerr.
const errNoKey = "ERR no such key"

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

// lookupObjectOrReply is lookupObject for a command with a fixed answer
// to a missing key, Redis's lookupKeyReadOrReply (lookupKeyWriteOrReply
// with read false) and checkType: ok is false, with missing's reply or
// WRONGTYPE written, unless key holds a value of kind.
func lookupObjectOrReply[T datatype.Object](x *Ctx, tx *engine.Tx, key []byte, kind datatype.Kind, read bool, missing missingKeyReply) (v T, ok bool) {
	obj, err := tx.Object(key, kind, read)
	switch {
	case err != nil:
		x.W.Error(err.Error())
	case obj == nil:
		missing(x.W)
	default:
		return obj.(T), true
	}
	return v, false
}

// missingKeyReply writes a command's fixed answer to a missing key.
type missingKeyReply func(*resp.Writer)

// The answers to a missing key that lookupObjectOrReply's callers give:
// Redis's shared.czero, shared.null and shared.nokeyerr.
var (
	replyZero  missingKeyReply = func(w *resp.Writer) { w.Int(0) }
	replyNull  missingKeyReply = (*resp.Writer).Null
	replyNoKey missingKeyReply = func(w *resp.Writer) { w.Error(errNoKey) }
)

// replyLen answers the number of elements of key's value of kind, 0 when
// the key is missing: HLEN, LLEN, SCARD, ZCARD and XLEN.
func replyLen(x *Ctx, kind datatype.Kind) {
	x.View(func(tx *engine.Tx) {
		if obj, ok := lookupObjectOrReply[datatype.Object](x, tx, x.Args[1], kind, true, replyZero); ok {
			x.W.Int(int64(obj.Len()))
		}
	})
}

// removeMembers is HDEL, SREM and ZREM: it removes the arguments from 2
// on from key's collection of kind with remove, answers how many it held,
// and after a change raises event of class (then "del" when the
// collection emptied).
func removeMembers[T datatype.Object](x *Ctx, kind datatype.Kind, class notify.Class, event string, remove func(T, []byte) bool) {
	args := x.Args
	x.Update(func(tx *engine.Tx) {
		c, ok := lookupObjectOrReply[T](x, tx, args[1], kind, false, replyZero)
		if !ok {
			return
		}
		removed := 0
		for _, m := range args[2:] {
			if remove(c, m) {
				removed++
			}
		}
		if removed > 0 {
			objectChanged(tx, args[1], c, class, event)
		}
		x.W.Int(int64(removed))
	})
}
