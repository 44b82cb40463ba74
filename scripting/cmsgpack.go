package scripting

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack table: lua-cmsgpack 0.4 as Redis bundles it.
// cmsgpack.pack(v, ...) encodes each argument and concatenates them;
// cmsgpack.unpack(s) decodes every object of s; unpack_one(s [, offset])
// and unpack_limit(s, n [, offset]) decode at most one or n objects and
// return the offset after them first (-1 at the end of s). Integers use the
// smallest MessagePack encoding, other numbers float 32 when exact, strings
// fixstr/str8/16/32, tables arrays when their keys are 1..n and maps
// otherwise, nested at most 16 deep (deeper tables encode as nil).

// cmsgpackMaxNesting is LUACMSGPACK_MAX_NESTING.
const cmsgpackMaxNesting = 16

func openCmsgpack(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(msgpackPack))
	t.RawSetString("unpack", L.NewFunction(func(L *lua.LState) int { return msgpackUnpack(L, 0, 0, false) }))
	t.RawSetString("unpack_one", L.NewFunction(func(L *lua.LState) int {
		return msgpackUnpack(L, 1, L.OptInt(2, 0), true)
	}))
	t.RawSetString("unpack_limit", L.NewFunction(func(L *lua.LState) int {
		return msgpackUnpack(L, L.CheckInt(2), L.OptInt(3, 0), true)
	}))
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

func msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = msgpackEncode(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func msgpackEncode(b []byte, v lua.LValue, depth int) []byte {
	switch v := v.(type) {
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		f := float64(v)
		if f == math.Trunc(f) && !math.IsInf(f, 0) && f >= math.MinInt64 && f < math.MaxInt64 {
			return msgpackInt(b, int64(f))
		}
		if float64(float32(f)) == f || math.IsNaN(f) {
			b = append(b, 0xca)
			return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f)))
		}
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	case lua.LString:
		n := len(v)
		switch {
		case n < 32:
			b = append(b, 0xa0|byte(n))
		case n <= 0xff:
			b = append(b, 0xd9, byte(n))
		case n <= 0xffff:
			b = append(b, 0xda)
			b = binary.BigEndian.AppendUint16(b, uint16(n))
		default:
			b = append(b, 0xdb)
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		return append(b, v...)
	case *lua.LTable:
		if depth >= cmsgpackMaxNesting {
			return append(b, 0xc0)
		}
		if n, ok := msgpackArrayLen(v); ok {
			b = msgpackHeader(b, n, 0x90, 0xdc, 0xdd)
			for i := 1; i <= n; i++ {
				b = msgpackEncode(b, v.RawGetInt(i), depth+1)
			}
			return b
		}
		n := 0
		v.ForEach(func(lua.LValue, lua.LValue) { n++ })
		b = msgpackHeader(b, n, 0x80, 0xde, 0xdf)
		v.ForEach(func(k, val lua.LValue) {
			b = msgpackEncode(b, k, depth+1)
			b = msgpackEncode(b, val, depth+1)
		})
		return b
	}
	return append(b, 0xc0)
}

// msgpackArrayLen is table_is_an_array: every key a positive integer and
// the largest equal to their count.
func msgpackArrayLen(t *lua.LTable) (int, bool) {
	count, max, array := integerKeys(t)
	return count, array && max == count
}

func msgpackHeader(b []byte, n int, fix, h16, h32 byte) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, h16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, h32), uint32(n))
}

func msgpackInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(int8(n)))
	case n >= -128:
		return append(b, 0xd0, byte(int8(n)))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(int16(n)))
	case n >= -2147483648:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// msgpackDecoder decodes MessagePack; a truncated input or an unknown type
// byte sets err.
type msgpackDecoder struct {
	L   *lua.LState
	b   []byte
	i   int
	err string
}

func (d *msgpackDecoder) need(n int) bool {
	if d.err == "" && d.i+n > len(d.b) {
		d.err = "Missing bytes in input."
	}
	return d.err == ""
}

func (d *msgpackDecoder) uint(n int) uint64 {
	if !d.need(n) {
		return 0
	}
	var v uint64
	for _, c := range d.b[d.i : d.i+n] {
		v = v<<8 | uint64(c)
	}
	d.i += n
	return v
}

func (d *msgpackDecoder) str(n int) lua.LValue {
	if !d.need(n) {
		return lua.LNil
	}
	s := lua.LString(d.b[d.i : d.i+n])
	d.i += n
	return s
}

func (d *msgpackDecoder) array(n int) lua.LValue {
	t := d.L.CreateTable(n, 0)
	for i := 1; i <= n && d.err == ""; i++ {
		t.RawSetInt(i, d.value())
	}
	return t
}

func (d *msgpackDecoder) table(n int) lua.LValue {
	t := d.L.NewTable()
	for i := 0; i < n && d.err == ""; i++ {
		k := d.value()
		v := d.value()
		if k != lua.LNil {
			t.RawSet(k, v)
		}
	}
	return t
}

func (d *msgpackDecoder) value() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	c := d.b[d.i]
	d.i++
	switch {
	case c <= 0x7f:
		return lua.LNumber(c)
	case c >= 0xe0:
		return lua.LNumber(int8(c))
	case c&0xf0 == 0x80:
		return d.table(int(c & 0x0f))
	case c&0xf0 == 0x90:
		return d.array(int(c & 0x0f))
	case c&0xe0 == 0xa0:
		return d.str(int(c & 0x1f))
	}
	switch c {
	case 0xc0:
		return lua.LNil
	case 0xc2:
		return lua.LFalse
	case 0xc3:
		return lua.LTrue
	case 0xca:
		return lua.LNumber(math.Float32frombits(uint32(d.uint(4))))
	case 0xcb:
		return lua.LNumber(math.Float64frombits(d.uint(8)))
	case 0xcc:
		return lua.LNumber(d.uint(1))
	case 0xcd:
		return lua.LNumber(d.uint(2))
	case 0xce:
		return lua.LNumber(d.uint(4))
	case 0xcf:
		return lua.LNumber(d.uint(8))
	case 0xd0:
		return lua.LNumber(int8(d.uint(1)))
	case 0xd1:
		return lua.LNumber(int16(d.uint(2)))
	case 0xd2:
		return lua.LNumber(int32(d.uint(4)))
	case 0xd3:
		return lua.LNumber(int64(d.uint(8)))
	case 0xd9, 0xc4:
		return d.str(int(d.uint(1)))
	case 0xda, 0xc5:
		return d.str(int(d.uint(2)))
	case 0xdb, 0xc6:
		return d.str(int(d.uint(4)))
	case 0xdc:
		return d.array(int(d.uint(2)))
	case 0xdd:
		return d.array(int(d.uint(4)))
	case 0xde:
		return d.table(int(d.uint(2)))
	case 0xdf:
		return d.table(int(d.uint(4)))
	}
	d.err = "Bad data format in input."
	return lua.LNil
}

// msgpackUnpack decodes up to limit objects (0: all) from offset; with
// withOffset the offset after them comes first.
func msgpackUnpack(L *lua.LState, limit, offset int, withOffset bool) int {
	s := L.CheckString(1)
	// lua-cmsgpack prints the input's length as the limit.
	if offset < 0 || limit < 0 {
		L.RaiseError("Invalid request to unpack with offset of %d and limit of %d.", offset, len(s))
	}
	if offset > len(s) {
		L.RaiseError("Start offset %d greater than input length %d.", offset, len(s))
	}
	d := &msgpackDecoder{L: L, b: []byte(s), i: offset}
	var vals []lua.LValue
	for d.i < len(d.b) && (limit == 0 || len(vals) < limit) {
		v := d.value()
		if d.err != "" {
			L.RaiseError("%s", d.err)
		}
		vals = append(vals, v)
	}
	if withOffset {
		next := d.i
		if next >= len(d.b) {
			next = -1
		}
		L.Push(lua.LNumber(next))
	}
	for _, v := range vals {
		L.Push(v)
	}
	n := len(vals)
	if withOffset {
		n++
	}
	return n
}
