package commands

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/notify"
)

// bitmapCommands are the bitmap family's rows (Redis's bitops.c). Bitmaps
// are strings; every handler reads and writes string values.
var bitmapCommands = []*Spec{
	{Name: "setbit", Arity: 4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @bitmap @slow",
		KeySpecs: []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdSetbit},
	{Name: "getbit", Arity: 3, Flags: FlagReadonly | FlagFast, ACL: "@read @bitmap @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdGetbit},
	{Name: "bitcount", Arity: -2, Flags: FlagReadonly, ACL: "@read @bitmap @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdBitcount},
	{Name: "bitpos", Arity: -3, Flags: FlagReadonly, ACL: "@read @bitmap @slow",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdBitpos},
	{Name: "bitop", Arity: -4, Flags: FlagWrite | FlagDenyoom, ACL: "@write @bitmap @slow",
		KeySpecs: []KeySpec{
			{Flags: KeyOW | KeyUpdate, Begin: Index(2), Find: Range(0, 1, 0)},
			{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(3), Find: Range(-1, 1, 0)},
		}, Handler: cmdBitop},
	{Name: "bitfield", Arity: -2, Flags: FlagWrite | FlagDenyoom, ACL: "@write @bitmap @slow",
		KeySpecs: []KeySpec{{Notes: "This command allows both access and modification of the key", Flags: KeyRW | KeyAccess | KeyUpdate | KeyVariableFlags, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdBitfield},
	{Name: "bitfield_ro", Arity: -2, Flags: FlagReadonly | FlagFast, ACL: "@read @bitmap @fast",
		KeySpecs: []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdBitfieldRO},
}

// Bitmap error replies.
const (
	errBitOffset    = "ERR bit offset is not an integer or out of range"
	errBitValue     = "ERR bit is not an integer or out of range"
	errBitArgument  = "ERR The bit argument must be 1 or 0."
	errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
)

// bitOffsetArg parses a bit offset like Redis's getBitOffsetFromArgument:
// with hash (BITFIELD), "#N" means N times width bits. Offsets whose byte
// would reach proto-max-bulk-len are refused.
func bitOffsetArg(x *Ctx, arg []byte, hash bool, width int64) (uint64, bool) {
	useHash := hash && width > 0 && len(arg) > 0 && arg[0] == '#'
	if useHash {
		arg = arg[1:]
	}
	n, ok := ParseInt64(arg)
	if ok && useHash {
		n *= width // wraps like Redis's long long multiplication
	}
	if !ok || n < 0 || n>>3 >= x.Session.MaxBulk() {
		x.W.Error(errBitOffset)
		return 0, false
	}
	return uint64(n), true
}

// bitAt returns bit offset of s (most significant bit first), zero past
// its end.
func bitAt(s []byte, offset uint64) bool {
	b := offset >> 3
	return b < uint64(len(s)) && s[b]&(0x80>>(offset&7)) != 0
}

// growCopy returns a copy of s at least n bytes long, zero-padded:
// stored values are never changed in place.
func growCopy(s []byte, n uint64) []byte {
	out := make([]byte, max(uint64(len(s)), n))
	copy(out, s)
	return out
}

func cmdSetbit(x *Ctx) {
	args := x.Args
	offset, ok := bitOffsetArg(x, args[2], false, 0)
	if !ok {
		return
	}
	on, ok := ParseInt64(args[3])
	if !ok || on&^1 != 0 {
		x.W.Error(errBitValue)
		return
	}
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(args[1])
		if wrongType(x, e, found) {
			return
		}
		old := bitAt(e.Value, offset)
		byteIdx := offset >> 3
		if !found || byteIdx >= uint64(len(e.Value)) || old != (on == 1) {
			nv := growCopy(e.Value, byteIdx+1)
			mask := byte(0x80 >> (offset & 7))
			if on == 1 {
				nv[byteIdx] |= mask
			} else {
				nv[byteIdx] &^= mask
			}
			tx.Set(args[1], nv, e.ExpireAt)
			tx.Notify(notify.String, "setbit", args[1])
		}
		if old {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	})
}

func cmdGetbit(x *Ctx) {
	args := x.Args
	offset, ok := bitOffsetArg(x, args[2], false, 0)
	if !ok {
		return
	}
	value, _, ok := storedValue(x, args[1])
	if !ok {
		return
	}
	if bitAt(value, offset) {
		x.W.Int(1)
	} else {
		x.W.Int(0)
	}
}

// bitRange is a byte range of a string with, for BIT ranges, the masks of
// the bits of its first and last bytes that lie outside the range.
type bitRange struct {
	start, end          int64
	firstMask, lastMask byte
}

// resolveBitRange turns user start/end indexes over a string of n bytes
// into a byte range, as BITCOUNT and BITPOS do: negative indexes count
// from the end; isBit counts bits instead of bytes. An empty range has
// start > end.
func resolveBitRange(start, end, n int64, isBit bool) bitRange {
	total := n
	if isBit {
		total <<= 3
	}
	start, end = clampRange(start, end, total)
	r := bitRange{start: start, end: end}
	if isBit && start <= end {
		r.firstMask = ^byte((1 << (8 - (start & 7))) - 1)
		r.lastMask = byte((1 << (7 - (end & 7))) - 1)
		r.start, r.end = start>>3, end>>3
	}
	return r
}

// bitUnitArg parses BITCOUNT's and BITPOS's BYTE|BIT argument, answering
// the syntax error for anything else.
func bitUnitArg(x *Ctx, arg []byte) (isBit, ok bool) {
	switch {
	case equalFold(arg, "bit"):
		return true, true
	case equalFold(arg, "byte"):
		return false, true
	}
	x.W.Error(errSyntax)
	return false, false
}

// popcount counts the set bits of s, eight bytes at a time.
func popcount(s []byte) int64 {
	var n int
	for len(s) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(s))
		s = s[8:]
	}
	for _, b := range s {
		n += bits.OnesCount8(b)
	}
	return int64(n)
}

func cmdBitcount(x *Ctx) {
	args := x.Args
	p, found, ok := storedValue(x, args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(0)
		return
	}
	var r bitRange
	switch len(args) {
	case 2:
		r = bitRange{start: 0, end: int64(len(p)) - 1}
	case 4, 5:
		start, ok1 := ParseInt64(args[2])
		end, ok2 := ParseInt64(args[3])
		if !ok1 || !ok2 {
			x.W.Error(errNotInteger)
			return
		}
		isBit := false
		if len(args) == 5 {
			var ok bool
			if isBit, ok = bitUnitArg(x, args[4]); !ok {
				return
			}
		}
		if start < 0 && end < 0 && start > end {
			x.W.Int(0)
			return
		}
		r = resolveBitRange(start, end, int64(len(p)), isBit)
	default:
		x.W.Error(errSyntax)
		return
	}
	if r.start > r.end {
		x.W.Int(0)
		return
	}
	count := popcount(p[r.start : r.end+1])
	count -= popcount([]byte{p[r.start] & r.firstMask, p[r.end] & r.lastMask})
	x.W.Int(count)
}

// firstBit is Redis's redisBitpos: the position of the first bit equal to
// bit in s, -1 if none is set when looking for 1, or len(s)*8 (the zero
// padding on the right) when looking for 0 in all-ones.
func firstBit(s []byte, bit bool) int64 {
	for i, b := range s {
		if !bit {
			b = ^b
		}
		if b != 0 {
			return int64(i)*8 + int64(bits.LeadingZeros8(b))
		}
	}
	if bit {
		return -1
	}
	return int64(len(s)) * 8
}

func cmdBitpos(x *Ctx) {
	args := x.Args
	bitArg, ok := intArg(x, 2)
	if !ok {
		return
	}
	if bitArg != 0 && bitArg != 1 {
		x.W.Error(errBitArgument)
		return
	}
	bit := bitArg == 1
	p, found, ok := storedValue(x, args[1])
	if !ok {
		return
	}
	if !found {
		x.W.Int(-bitArg)
		return
	}
	var r bitRange
	endGiven := false
	switch len(args) {
	case 3:
		r = bitRange{start: 0, end: int64(len(p)) - 1}
	case 4, 5, 6:
		if r, endGiven, ok = bitposRange(x, int64(len(p))); !ok {
			return
		}
	default:
		x.W.Error(errSyntax)
		return
	}
	x.W.Int(bitposIn(p, r, bit, endGiven))
}

// bitposRange parses BITPOS's start [end [BYTE|BIT]] over a string of n
// bytes, answering the error itself.
func bitposRange(x *Ctx, n int64) (r bitRange, endGiven, ok bool) {
	args := x.Args
	start, ok := intArg(x, 3)
	if !ok {
		return r, false, false
	}
	isBit := false
	if len(args) == 6 {
		if isBit, ok = bitUnitArg(x, args[5]); !ok {
			return r, false, false
		}
	}
	var end int64
	if len(args) >= 5 {
		if end, ok = intArg(x, 4); !ok {
			return r, false, false
		}
		endGiven = true
	} else if isBit {
		end = n<<3 + 7
	} else {
		end = n - 1
	}
	return resolveBitRange(start, end, n, isBit), endGiven, true
}

// bitposIn is the position BITPOS answers for bit within range r of p.
func bitposIn(p []byte, r bitRange, bit, endGiven bool) int64 {
	if r.start > r.end {
		return -1
	}
	start, end := r.start, r.end
	nbytes := end - start + 1
	// Bits outside the range read as the opposite of bit, so that they
	// are never found.
	edge := func(b, mask byte) byte {
		if bit {
			return b &^ mask
		}
		return b | mask
	}
	var pos int64
	done := false
	if r.firstMask != 0 {
		c := edge(p[start], r.firstMask)
		if r.lastMask != 0 && nbytes == 1 {
			c = edge(c, r.lastMask)
		}
		pos = firstBit([]byte{c}, bit)
		if nbytes == 1 || (pos != -1 && pos != 8) {
			done = true
		} else {
			start++
			nbytes--
		}
	}
	if !done {
		cur := nbytes
		if r.lastMask != 0 {
			cur--
		}
		if cur > 0 {
			pos = firstBit(p[start:start+cur], bit)
			if nbytes == cur || (pos != -1 && pos != cur<<3) {
				done = true
			} else {
				start += cur
				nbytes -= cur
			}
		}
	}
	if !done {
		pos = firstBit([]byte{edge(p[end], r.lastMask)}, bit)
	}
	if endGiven && !bit && pos == nbytes<<3 {
		return -1
	}
	if pos != -1 {
		pos += start << 3
	}
	return pos
}

// bitop names BITOP's operations.
type bitop uint8

const (
	bitopAnd bitop = iota
	bitopOr
	bitopXor
	bitopNot
)

func cmdBitop(x *Ctx) {
	args := x.Args
	var op bitop
	switch {
	case equalFold(args[1], "and"):
		op = bitopAnd
	case equalFold(args[1], "or"):
		op = bitopOr
	case equalFold(args[1], "xor"):
		op = bitopXor
	case equalFold(args[1], "not"):
		op = bitopNot
	default:
		x.W.Error(errSyntax)
		return
	}
	if op == bitopNot && len(args) != 4 {
		x.W.Error("ERR BITOP NOT must be called with a single source key.")
		return
	}
	x.Update(func(tx *engine.Tx) {
		srcs := make([][]byte, len(args)-3)
		maxLen := 0
		for i, k := range args[3:] {
			e, found := tx.Get(k)
			if wrongType(x, e, found) {
				return
			}
			srcs[i] = e.Value
			maxLen = max(maxLen, len(e.Value))
		}
		if maxLen == 0 {
			if tx.Delete(args[2]) {
				tx.Notify(notify.Generic, "del", args[2])
			}
			x.W.Int(0)
			return
		}
		tx.Set(args[2], bitopResult(op, srcs, maxLen), 0)
		tx.Notify(notify.String, "set", args[2])
		x.W.Int(int64(maxLen))
	})
}

// bitopResult combines srcs with op into a new string of n bytes; a
// shorter source reads as zero bytes past its end.
func bitopResult(op bitop, srcs [][]byte, n int) []byte {
	res := make([]byte, n)
	copy(res, srcs[0])
	if op == bitopNot {
		for i := range res {
			res[i] = ^res[i]
		}
		return res
	}
	for _, s := range srcs[1:] {
		switch op {
		case bitopAnd:
			for i := range res {
				if i < len(s) {
					res[i] &= s[i]
				} else {
					res[i] = 0
				}
			}
		case bitopOr:
			for i, b := range s {
				res[i] |= b
			}
		case bitopXor:
			for i, b := range s {
				res[i] ^= b
			}
		}
	}
	return res
}

// BITFIELD's operations and overflow behaviours.
const (
	bfGet = iota
	bfSet
	bfIncrby
)

const (
	bfWrap = iota
	bfSat
	bfFail
)

// bitfieldOp is one parsed BITFIELD operation.
type bitfieldOp struct {
	offset   uint64
	value    int64
	opcode   int
	overflow int
	bits     uint64
	signed   bool
}

func cmdBitfield(x *Ctx) { bitfieldGeneric(x, false) }

func cmdBitfieldRO(x *Ctx) { bitfieldGeneric(x, true) }

// bitfieldTypeArg parses a bitfield type (i1..i64, u1..u63) like Redis's
// getBitfieldTypeFromArgument, which reads it as a C string.
func bitfieldTypeArg(x *Ctx, arg []byte) (signed bool, width uint64, ok bool) {
	for i, c := range arg {
		if c == 0 {
			arg = arg[:i]
			break
		}
	}
	if len(arg) > 0 && (arg[0] == 'i' || arg[0] == 'u') {
		signed = arg[0] == 'i'
		n, ok := ParseInt64(arg[1:])
		if ok && n >= 1 && (n <= 63 || (signed && n == 64)) {
			return signed, uint64(n), true
		}
	}
	x.W.Error(errBitfieldType)
	return false, 0, false
}

// parseBitfieldOps parses BITFIELD's operations, answering the error
// itself. It returns the ops, whether they only read, and the highest bit
// a write reaches.
func parseBitfieldOps(x *Ctx) (ops []bitfieldOp, readonly bool, highest uint64, ok bool) {
	args := x.Args
	overflow := bfWrap
	readonly = true
	for j := 2; j < len(args); j++ {
		remain := len(args) - j - 1
		sub := args[j]
		var opcode int
		switch {
		case equalFold(sub, "get") && remain >= 2:
			opcode = bfGet
		case equalFold(sub, "set") && remain >= 3:
			opcode = bfSet
		case equalFold(sub, "incrby") && remain >= 3:
			opcode = bfIncrby
		case equalFold(sub, "overflow") && remain >= 1:
			j++
			switch w := args[j]; {
			case equalFold(w, "wrap"):
				overflow = bfWrap
			case equalFold(w, "sat"):
				overflow = bfSat
			case equalFold(w, "fail"):
				overflow = bfFail
			default:
				x.W.Error("ERR Invalid OVERFLOW type specified")
				return nil, false, 0, false
			}
			continue
		default:
			x.W.Error(errSyntax)
			return nil, false, 0, false
		}
		signed, width, ok := bitfieldTypeArg(x, args[j+1])
		if !ok {
			return nil, false, 0, false
		}
		offset, ok := bitOffsetArg(x, args[j+2], true, int64(width))
		if !ok {
			return nil, false, 0, false
		}
		op := bitfieldOp{offset: offset, opcode: opcode, overflow: overflow, bits: width, signed: signed}
		if opcode != bfGet {
			readonly = false
			highest = max(highest, offset+width-1)
			if op.value, ok = intArg(x, j+3); !ok {
				return nil, false, 0, false
			}
			j++
		}
		ops = append(ops, op)
		j += 2
	}
	return ops, readonly, highest, true
}

func bitfieldGeneric(x *Ctx, roCommand bool) {
	ops, readonly, highest, ok := parseBitfieldOps(x)
	if !ok {
		return
	}
	key := x.Args[1]
	if readonly {
		value, _, ok := storedValue(x, key)
		if !ok {
			return
		}
		x.W.Array(len(ops))
		for _, op := range ops {
			x.W.Int(op.get(value))
		}
		return
	}
	if roCommand {
		x.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
		return
	}
	x.Update(func(tx *engine.Tx) {
		e, found := tx.Peek(key)
		if wrongType(x, e, found) {
			return
		}
		v := growCopy(e.Value, highest>>3+1)
		x.W.Array(len(ops))
		changes := 0
		for _, op := range ops {
			if op.opcode == bfGet {
				x.W.Int(op.get(v))
				continue
			}
			reply, write, ok := op.apply(getBitfield(v, op.offset, op.bits))
			if ok {
				x.W.Int(reply)
				setBitfield(v, op.offset, op.bits, write)
				changes++
			} else {
				x.W.Null()
			}
		}
		tx.Set(key, v, e.ExpireAt)
		if changes > 0 {
			tx.Notify(notify.String, "setbit", key)
		}
	})
}

// get reads op's field from s, zero past its end.
func (op bitfieldOp) get(s []byte) int64 {
	var buf [9]byte
	b := op.offset >> 3
	if b < uint64(len(s)) {
		copy(buf[:], s[b:])
	}
	u := getBitfield(buf[:], op.offset-b*8, op.bits)
	if op.signed {
		return signExtend(u, op.bits)
	}
	return int64(u)
}

// apply runs a SET or INCRBY on a field whose current raw bits are old:
// it returns the reply, the bits to store, and false when OVERFLOW FAIL
// refuses the change.
func (op bitfieldOp) apply(old uint64) (reply int64, write uint64, ok bool) {
	if op.signed {
		oldv := signExtend(old, op.bits)
		var nv, wrapped int64
		var overflow bool
		if op.opcode == bfIncrby {
			overflow, wrapped = signedOverflow(oldv, op.value, op.bits, op.overflow)
			nv = oldv + op.value
			if overflow {
				nv = wrapped
			}
			reply = nv
		} else {
			overflow, wrapped = signedOverflow(op.value, 0, op.bits, op.overflow)
			nv = op.value
			if overflow {
				nv = wrapped
			}
			reply = oldv
		}
		return reply, uint64(nv), !(overflow && op.overflow == bfFail)
	}
	var nv, wrapped uint64
	var overflow bool
	if op.opcode == bfIncrby {
		nv = old + uint64(op.value)
		overflow, wrapped = unsignedOverflow(old, op.value, op.bits, op.overflow)
		if overflow {
			nv = wrapped
		}
		reply = int64(nv)
	} else {
		nv = uint64(op.value)
		overflow, wrapped = unsignedOverflow(nv, 0, op.bits, op.overflow)
		if overflow {
			nv = wrapped
		}
		reply = int64(old)
	}
	return reply, nv, !(overflow && op.overflow == bfFail)
}

// getBitfield reads width bits of p from bit offset, most significant
// first; p must hold them.
func getBitfield(p []byte, offset, width uint64) uint64 {
	var v uint64
	for j := uint64(0); j < width; j++ {
		v <<= 1
		if p[offset>>3]&(0x80>>(offset&7)) != 0 {
			v |= 1
		}
		offset++
	}
	return v
}

// setBitfield writes the low width bits of v into p at bit offset.
func setBitfield(p []byte, offset, width, v uint64) {
	for j := uint64(0); j < width; j++ {
		mask := byte(0x80 >> (offset & 7))
		if v&(1<<(width-1-j)) != 0 {
			p[offset>>3] |= mask
		} else {
			p[offset>>3] &^= mask
		}
		offset++
	}
}

// signExtend reads the low width bits of u as a two's complement number.
func signExtend(u uint64, width uint64) int64 {
	v := int64(u)
	if width < 64 && u&(1<<(width-1)) != 0 {
		v |= -1 << width
	}
	return v
}

// unsignedOverflow is Redis's checkUnsignedBitfieldOverflow: whether
// value+incr leaves width bits, and the wrapped or saturated result.
func unsignedOverflow(value uint64, incr int64, width uint64, mode int) (bool, uint64) {
	maxv := uint64(1)<<width - 1
	maxIncr := int64(maxv - value)
	minIncr := -int64(value)
	var limit uint64
	switch {
	case value > maxv || (incr > 0 && incr > maxIncr):
		limit = maxv
	case incr < 0 && incr < minIncr:
		limit = 0
	default:
		return false, 0
	}
	if mode == bfWrap {
		limit = (value + uint64(incr)) &^ (math.MaxUint64 << width)
	}
	return true, limit
}

// signedOverflow is Redis's checkSignedBitfieldOverflow.
func signedOverflow(value, incr int64, width uint64, mode int) (bool, int64) {
	maxv := int64(math.MaxInt64)
	if width != 64 {
		maxv = 1<<(width-1) - 1
	}
	minv := -maxv - 1
	maxIncr := int64(uint64(maxv) - uint64(value))
	minIncr := minv - value
	var limit int64
	switch {
	case value > maxv || (width != 64 && incr > maxIncr) || (value >= 0 && incr > 0 && incr > maxIncr):
		limit = maxv
	case value < minv || (width != 64 && incr < minIncr) || (value < 0 && incr < 0 && incr < minIncr):
		limit = minv
	default:
		return false, 0
	}
	if mode == bfWrap {
		c := uint64(value) + uint64(incr)
		if width < 64 {
			mask := uint64(math.MaxUint64) << width
			if c&(1<<(width-1)) != 0 {
				c |= mask
			} else {
				c &^= mask
			}
		}
		limit = int64(c)
	}
	return true, limit
}
