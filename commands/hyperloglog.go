package commands

import (
	"fmt"
	"strings"

	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/hll"
	"github.com/kvserver/kvserver/notify"
)

// hyperloglogCommands are the HyperLogLog family's rows (Redis's
// hyperloglog.c). HyperLogLogs are strings in Redis's own byte layout
// (package hll), so GET, SET, DUMP-free copies between servers and the disk
// tier treat them like any other value.
var hyperloglogCommands = []*Spec{
	{Name: "pfadd", Arity: -2, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @hyperloglog @fast",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyInsert, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdPfadd},
	{Name: "pfcount", Arity: -2, Flags: FlagReadonly, ACL: "@read @hyperloglog @slow",
		KeySpecs: []KeySpec{{Notes: "RW because it may change the internal representation of the key, and propagate to replicas",
			Flags: KeyRW | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(-1, 1, 0)}}, MayReplicate: true, Handler: cmdPfcount},
	{Name: "pfmerge", Arity: -2, Flags: FlagWrite | FlagDenyoom, ACL: "@write @hyperloglog @slow",
		KeySpecs: []KeySpec{
			{Flags: KeyRW | KeyAccess | KeyInsert, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)},
			{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(2), Find: Range(-1, 1, 0)},
		}, Handler: cmdPfmerge},
	{Name: "pfdebug", Arity: 3, Flags: FlagWrite | FlagDenyoom | FlagAdmin, ACL: "@write @hyperloglog @admin @slow @dangerous",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)}}, Handler: cmdPfdebug},
	{Name: "pfselftest", Arity: 1, Flags: FlagAdmin, ACL: "@hyperloglog @admin @slow @dangerous", Handler: cmdPfselftest},
}

// HyperLogLog is the server setting the family reads.
type HyperLogLog interface {
	// HLLSparseMaxBytes is hll-sparse-max-bytes: the largest sparse value,
	// header included, before it turns dense.
	HLLSparseMaxBytes() int64
}

// HyperLogLog error replies.
const (
	errNotHLL     = "WRONGTYPE Key is not a valid HyperLogLog string value."
	errInvalidHLL = "INVALIDOBJ Corrupted HLL object detected"
)

// ownedHLL returns a copy of the stored value v for a command to change,
// with room for a sparse split: stored values are never changed in place.
func ownedHLL(v []byte) []byte {
	return append(make([]byte, 0, len(v)+3), v...)
}

// cmdPfadd adds the elements under the engine lock, like Redis's
// single-threaded pfaddCommand: the work is bounded by the arguments and a
// value of at most hll.DenseSize bytes.
func cmdPfadd(x *Ctx) {
	args := x.Args
	sparseMax := x.HyperLogLog.HLLSparseMaxBytes()
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(args[1])
		var v []byte
		updated := !found
		if found {
			if !hll.Valid(e.Value) {
				x.W.Error(errNotHLL)
				return
			}
			v = ownedHLL(e.Value)
		} else {
			v = hll.New()
		}
		for _, ele := range args[2:] {
			nv, changed, err := hll.Add(v, ele, sparseMax)
			v = nv
			if err != nil {
				// Redis changes the value in place, so what the earlier
				// elements did stays.
				if updated {
					tx.Set(args[1], v, e.ExpireAt)
				}
				x.W.Error(errInvalidHLL)
				return
			}
			updated = updated || changed
		}
		if !updated {
			x.W.Int(0)
			return
		}
		hll.InvalidateCache(v)
		tx.Set(args[1], v, e.ExpireAt)
		tx.Notify(notify.String, "pfadd", args[1])
		x.W.Int(1)
	})
}

func cmdPfcount(x *Ctx) {
	args := x.Args
	if len(args) > 2 {
		pfcountUnion(x, args[1:])
		return
	}
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Get(args[1])
		if !found {
			x.W.Int(0)
			return
		}
		if !hll.Valid(e.Value) {
			x.W.Error(errNotHLL)
			return
		}
		if card, ok := hll.CachedCardinality(e.Value); ok {
			x.W.Int(int64(card))
			return
		}
		card, err := hll.Count(e.Value)
		if err != nil {
			x.W.Error(errInvalidHLL)
			return
		}
		// The cache is part of the value, as in Redis: a later GET shows
		// it.
		v := ownedHLL(e.Value)
		hll.SetCachedCardinality(v, card)
		tx.Set(args[1], v, e.ExpireAt)
		x.W.Int(int64(card))
	})
}

// pfcountUnion answers PFCOUNT of several keys: the cardinality of their
// union, computed over one-byte registers and never cached.
func pfcountUnion(x *Ctx, keys [][]byte) {
	regs := make([]byte, hll.Registers)
	ok := true
	x.View(func(tx *engine.Tx) {
		ok = mergeHLLs(x, tx, keys, regs) != nil
	})
	if ok {
		x.W.Int(int64(hll.RawEstimate(regs)))
	}
}

// mergeHLLs raises regs to the registers of each existing key of keys and
// reports whether one of them is dense; a missing key counts as empty. On
// a value that is not an HLL it answers the error and returns nil.
func mergeHLLs(x *Ctx, tx *engine.Tx, keys [][]byte, regs []byte) (anyDense *bool) {
	dense := false
	for _, key := range keys {
		e, found := tx.Get(key)
		if !found {
			continue
		}
		if !hll.Valid(e.Value) {
			x.W.Error(errNotHLL)
			return nil
		}
		dense = dense || hll.EncodingOf(e.Value) == hll.Dense
		if hll.Merge(regs, e.Value) != nil {
			x.W.Error(errInvalidHLL)
			return nil
		}
	}
	return &dense
}

func cmdPfmerge(x *Ctx) {
	args := x.Args
	sparseMax := x.HyperLogLog.HLLSparseMaxBytes()
	regs := make([]byte, hll.Registers)
	x.Update(func(tx *engine.Tx) {
		useDense := mergeHLLs(x, tx, args[1:], regs)
		if useDense == nil {
			return
		}
		// The destination was validated with the sources.
		e, found := tx.Peek(args[1])
		var v []byte
		if found {
			v = ownedHLL(e.Value)
		} else {
			v = hll.New()
		}
		if *useDense {
			var err error
			if v, err = hll.ToDense(v); err != nil {
				x.W.Error(errInvalidHLL)
				return
			}
		}
		for i, r := range regs {
			if r != 0 {
				v = hll.Set(v, i, int(r), sparseMax)
			}
		}
		hll.InvalidateCache(v)
		tx.Set(args[1], v, e.ExpireAt)
		tx.Notify(notify.String, "pfadd", args[1])
		x.W.OK()
	})
}

func cmdPfdebug(x *Ctx) {
	args := x.Args
	sub := strings.ToLower(string(args[1]))
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(args[2])
		if !found {
			x.W.Error("ERR The specified key does not exist")
			return
		}
		if !hll.Valid(e.Value) {
			x.W.Error(errNotHLL)
			return
		}
		v := e.Value
		sparse := hll.EncodingOf(v) == hll.Sparse
		toDense := func() bool {
			dense, err := hll.ToDense(v)
			if err != nil {
				x.W.Error(errInvalidHLL)
				return false
			}
			tx.Set(args[2], dense, e.ExpireAt)
			v = dense
			return true
		}
		switch sub {
		case "getreg":
			if sparse && !toDense() {
				return
			}
			regs := hll.DenseRegisters(v)
			x.W.Array(len(regs))
			for _, r := range regs {
				x.W.Int(int64(r))
			}
		case "decode":
			if !sparse {
				x.W.Error("ERR HLL encoding is not sparse")
				return
			}
			x.W.BulkString(hll.Decode(v))
		case "encoding":
			if sparse {
				x.W.Simple("sparse")
			} else {
				x.W.Simple("dense")
			}
		case "todense":
			if !sparse {
				x.W.Int(0)
			} else if toDense() {
				x.W.Int(1)
			}
		default:
			x.W.Error(fmt.Sprintf("ERR Unknown PFDEBUG subcommand '%s'", Sanitize(string(args[1]))))
		}
	})
}

// cmdPfselftest runs Redis's self test of the register code and the
// estimator.
func cmdPfselftest(x *Ctx) {
	if err := hll.SelfTest(x.Context(), x.HyperLogLog.HLLSparseMaxBytes()); err != nil {
		x.W.Error(err.Error())
		return
	}
	x.W.OK()
}
