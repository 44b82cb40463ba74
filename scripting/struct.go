package scripting

import (
	"encoding/binary"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct table: Roberto Ierusalimschy's struct library as Redis bundles
// it, struct.pack(fmt, ...), struct.unpack(fmt, s [, i]) and
// struct.size(fmt). Formats: '>' big and '<' little endian, '!n' alignment,
// 'x' padding, 'b'/'B' char, 'h'/'H' short, 'l'/'L' long, 'T' size_t,
// 'i'/'I'n int of n bytes, 'f' float, 'd' double, 's' zero-terminated
// string, 'c'n n chars ('c0': as long as the string when packing, the
// preceding number when unpacking), ' ' ignored.

// structMaxIntSize is the largest integer size a format may ask for.
const structMaxIntSize = 32

// structFormat walks a format string.
type structFormat struct {
	L *lua.LState
	// fn is the struct function running, for argument errors.
	fn     string
	f      string
	i      int
	little bool
	align  int
}

func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("pack", L.NewFunction(structPack))
	t.RawSetString("unpack", L.NewFunction(structUnpack))
	t.RawSetString("size", L.NewFunction(structSize))
	return t
}

// number reads the optional size after an option, def when there is none.
func (sf *structFormat) number(def int) int {
	if sf.i >= len(sf.f) || sf.f[sf.i] < '0' || sf.f[sf.i] > '9' {
		return def
	}
	n := 0
	for sf.i < len(sf.f) && sf.f[sf.i] >= '0' && sf.f[sf.i] <= '9' {
		n = n*10 + int(sf.f[sf.i]-'0')
		sf.i++
	}
	return n
}

// next reads one option and its size (0 for the options without one);
// ok is false at the end of the format.
func (sf *structFormat) next() (opt byte, size int, ok bool) {
	for sf.i < len(sf.f) {
		opt = sf.f[sf.i]
		sf.i++
		switch opt {
		case ' ':
			continue
		case '>':
			sf.little = false
			continue
		case '<':
			sf.little = true
			continue
		case '!':
			sf.align = sf.number(8)
			continue
		case 'x', 'b', 'B':
			return opt, 1, true
		case 'h', 'H':
			return opt, 2, true
		case 'l', 'L', 'T', 'd':
			return opt, 8, true
		case 'f':
			return opt, 4, true
		case 'i', 'I':
			n := sf.number(4)
			if n > structMaxIntSize {
				sf.L.RaiseError("integral size %d is larger than limit of %d", n, structMaxIntSize)
			}
			return opt, n, true
		case 'c':
			return opt, sf.number(1), true
		case 's':
			return opt, 0, true
		default:
			sf.argError(1, "invalid format option '"+string(opt)+"'")
		}
	}
	return 0, 0, false
}

// pad is the padding before a value of size at offset under '!'.
func (sf *structFormat) pad(opt byte, size, offset int) int {
	if opt == 'c' || opt == 's' || opt == 'x' {
		return 0
	}
	a := min(size, sf.align)
	if a <= 1 {
		return 0
	}
	if a&(a-1) != 0 {
		sf.argError(1, "alignment must be power of 2")
	}
	return (a - offset&(a-1)) & (a - 1)
}

func newStructFormat(L *lua.LState, fn string) *structFormat {
	return &structFormat{L: L, fn: fn, f: L.CheckString(1), little: true, align: 1}
}

// argError raises Lua 5.1's luaL_argerror message.
func (sf *structFormat) argError(n int, msg string) { argError(sf.L, n, sf.fn, msg) }

// argError raises luaL_argerror's message for argument n of the library
// function fn (gopher-lua's ArgError words it without the quotes).
func argError(L *lua.LState, n int, fn, msg string) {
	L.RaiseError("bad argument #%d to '%s' (%s)", n, fn, msg)
}

// putInt appends v as an integer of size bytes.
func (sf *structFormat) putInt(b []byte, v uint64, size int, negative bool) []byte {
	buf := make([]byte, size)
	for i := 0; i < size; i++ {
		var byt byte
		if i < 8 {
			byt = byte(v >> (8 * i))
		} else if negative {
			byt = 0xff
		}
		if sf.little {
			buf[i] = byt
		} else {
			buf[size-1-i] = byt
		}
	}
	return append(b, buf...)
}

func structPack(L *lua.LState) int {
	sf := newStructFormat(L, "pack")
	var out []byte
	arg := 2
	for {
		opt, size, ok := sf.next()
		if !ok {
			break
		}
		out = append(out, make([]byte, sf.pad(opt, size, len(out)))...)
		switch opt {
		case 'x':
			out = append(out, 0)
		case 'b', 'h', 'l', 'i':
			n := float64(L.CheckNumber(arg))
			arg++
			v := int64(n)
			out = sf.putInt(out, uint64(v), size, v < 0)
		case 'B', 'H', 'L', 'T', 'I':
			n := float64(L.CheckNumber(arg))
			arg++
			var v uint64
			if n < 0 {
				v = uint64(int64(n))
			} else {
				v = uint64(n)
			}
			out = sf.putInt(out, v, size, false)
		case 'f':
			f := float32(L.CheckNumber(arg))
			arg++
			out = sf.putInt(out, uint64(math.Float32bits(f)), 4, false)
		case 'd':
			f := float64(L.CheckNumber(arg))
			arg++
			out = sf.putInt(out, math.Float64bits(f), 8, false)
		case 'c', 's':
			s := L.CheckString(arg)
			arg++
			n := len(s)
			if opt == 'c' && size != 0 {
				if size > n {
					// struct.c names the argument after the string.
					sf.argError(arg, "string too short")
				}
				n = size
			}
			out = append(out, s[:n]...)
			if opt == 's' {
				out = append(out, 0)
			}
		}
	}
	L.Push(lua.LString(out))
	return 1
}

// getInt reads an integer of size bytes from b.
func (sf *structFormat) getInt(b []byte, signed bool) float64 {
	size := len(b)
	var v uint64
	for i := 0; i < size && i < 8; i++ {
		var byt byte
		if sf.little {
			byt = b[i]
		} else {
			byt = b[size-1-i]
		}
		v |= uint64(byt) << (8 * i)
	}
	if size > 8 {
		size = 8
	}
	if signed && size < 8 && v&(1<<(8*size-1)) != 0 {
		v |= ^uint64(0) << (8 * size)
	}
	if signed {
		return float64(int64(v))
	}
	return float64(v)
}

func structUnpack(L *lua.LState) int {
	sf := newStructFormat(L, "unpack")
	data := L.CheckString(2)
	pos := L.OptInt(3, 1) - 1
	if pos < 0 {
		sf.argError(3, "offset must be 1 or greater")
	}
	n := 0
	last := -1.0
	for {
		opt, size, ok := sf.next()
		if !ok {
			break
		}
		pos += sf.pad(opt, size, pos)
		if opt == 'c' && size == 0 {
			// The size is the number unpacked just before, which is
			// consumed.
			if n == 0 || last < 0 {
				L.RaiseError("format 'c0' needs a previous size")
			}
			size = int(last)
			L.Pop(1)
			n--
		}
		if opt != 's' && pos+size > len(data) {
			sf.argError(2, "data string too short")
		}
		switch opt {
		case 'x':
		case 'b', 'h', 'l', 'i', 'B', 'H', 'L', 'T', 'I':
			last = sf.getInt([]byte(data[pos:pos+size]), strings.IndexByte("bhli", opt) >= 0)
			L.Push(lua.LNumber(last))
			n++
		case 'f':
			bits := uint32(sf.getInt([]byte(data[pos:pos+4]), false))
			L.Push(lua.LNumber(math.Float32frombits(bits)))
			n++
		case 'd':
			b := []byte(data[pos : pos+8])
			var bits uint64
			if sf.little {
				bits = binary.LittleEndian.Uint64(b)
			} else {
				bits = binary.BigEndian.Uint64(b)
			}
			L.Push(lua.LNumber(math.Float64frombits(bits)))
			n++
		case 'c':
			L.Push(lua.LString(data[pos : pos+size]))
			n++
		case 's':
			end := strings.IndexByte(data[pos:], 0)
			if end < 0 {
				L.RaiseError("unfinished string in data")
			}
			L.Push(lua.LString(data[pos : pos+end]))
			n++
			size = end + 1
		}
		pos += size
	}
	L.Push(lua.LNumber(pos + 1))
	return n + 1
}

func structSize(L *lua.LState) int {
	sf := newStructFormat(L, "size")
	pos := 0
	for {
		opt, size, ok := sf.next()
		if !ok {
			break
		}
		if opt == 's' {
			sf.argError(1, "option 's' has no fixed size")
		}
		if opt == 'c' && size == 0 {
			sf.argError(1, "option 'c0' has no fixed size")
		}
		pos += sf.pad(opt, size, pos) + size
	}
	L.Push(lua.LNumber(pos))
	return 1
}
