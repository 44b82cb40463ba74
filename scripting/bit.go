package scripting

import (
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// openBit builds the bit table: LuaBitOp's operations on 32-bit integers,
// which return signed 32-bit results.
func openBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	unary := func(f func(uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			L.Push(bitResult(f(bitArg(L, 1))))
			return 1
		}
	}
	fold := func(f func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			acc := bitArg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				acc = f(acc, bitArg(L, i))
			}
			L.Push(bitResult(acc))
			return 1
		}
	}
	shift := func(f func(x uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			x, n := bitArg(L, 1), bitArg(L, 2)
			L.Push(bitResult(f(x, uint(n&31))))
			return 1
		}
	}
	for name, fn := range map[string]lua.LGFunction{
		"tobit": unary(func(x uint32) uint32 { return x }),
		"bnot":  unary(func(x uint32) uint32 { return ^x }),
		"bswap": unary(func(x uint32) uint32 {
			return x>>24 | (x>>8)&0xff00 | (x&0xff00)<<8 | x<<24
		}),
		"band":    fold(func(a, b uint32) uint32 { return a & b }),
		"bor":     fold(func(a, b uint32) uint32 { return a | b }),
		"bxor":    fold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  shift(func(x uint32, n uint) uint32 { return x << n }),
		"rshift":  shift(func(x uint32, n uint) uint32 { return x >> n }),
		"arshift": shift(func(x uint32, n uint) uint32 { return uint32(int32(x) >> n) }),
		"rol":     shift(func(x uint32, n uint) uint32 { return x<<n | x>>(32-n) }),
		"ror":     shift(func(x uint32, n uint) uint32 { return x>>n | x<<(32-n) }),
		"tohex":   bitToHex,
	} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg is LuaBitOp's barg: the number rounded to an integer (ties to
// even) and taken modulo 2^32.
func bitArg(L *lua.LState, i int) uint32 {
	n := float64(L.CheckNumber(i))
	return uint32(int64(math.RoundToEven(math.Mod(n, 1<<32))))
}

func bitResult(x uint32) lua.LNumber { return lua.LNumber(int32(x)) }

// bitToHex is bit.tohex(x [, n]): n hex digits (8 by default), upper case
// when n is negative.
func bitToHex(L *lua.LState) int {
	x := bitArg(L, 1)
	n := 8
	if L.GetTop() >= 2 {
		n = int(int32(bitArg(L, 2)))
	}
	digits := "0123456789abcdef"
	if n < 0 {
		n = -n
		digits = strings.ToUpper(digits)
	}
	if n > 8 {
		n = 8
	}
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[x&15]
		x >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}
