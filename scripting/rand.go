package scripting

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// lrand48 is Redis's redisLrand48 (rand.c): the 48-bit linear congruential
// generator of POSIX lrand48, so math.random gives a sequence that does not
// depend on the platform.
type lrand48 struct{ x uint64 }

const (
	lrandA    = 0x5DEECE66D
	lrandC    = 0xB
	lrandMask = 1<<48 - 1
	// lrandMax is REDIS_LRAND48_MAX.
	lrandMax = math.MaxInt32
)

// seed is redisSrand48.
func (r *lrand48) seed(v int32) { r.x = uint64(uint32(v))<<16 | 0x330E }

// next is redisLrand48: the top 31 bits of the next state.
func (r *lrand48) next() int32 {
	r.x = (lrandA*r.x + lrandC) & lrandMask
	return int32(r.x >> 17)
}

// mathRandom is Redis's math.random: Lua's, on lrand48.
func (st *luaState) mathRandom(L *lua.LState) int {
	r := float64(st.e.rand.next()%lrandMax) / lrandMax
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := L.CheckInt(1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := L.CheckInt(1), L.CheckInt(2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (st *luaState) mathRandomSeed(L *lua.LState) int {
	st.e.rand.seed(int32(L.CheckInt(1)))
	return 0
}
