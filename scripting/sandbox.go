package scripting

import (
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Redis 7.0's sandbox on gopher-lua. Redis's Lua marks every table
// reachable from the globals when a Lua state is built (the libraries, the
// redis table, their metatables, the string metatable) read only: any
// write, by assignment, rawset, setmetatable or table.insert, fails with
// "Attempt to modify a readonly table", so that no script changes what the
// next one sees (luaSetTableProtectionRecursively). gopher-lua has no such
// flag, so each protected table is replaced by a proxy: an empty table
// whose metatable reads through to the real one (__index) and refuses
// every write (__newindex). The real tables are never handed to a script:
// the base functions that would see through a proxy (rawget, rawset,
// next, pairs, getmetatable, setmetatable, table.insert) are replaced by
// versions that know the proxies.

// errReadonly is the error of a write to a protected table.
const errReadonly = "Attempt to modify a readonly table"

// sandbox is the protected tables of one Lua state.
type sandbox struct {
	// real maps a proxy to the table it protects, proxy the other way.
	real, proxy map[*lua.LTable]*lua.LTable
	// deny is the proxies' __newindex.
	deny *lua.LFunction
	// next is the base library's next; pairsNext is the same function,
	// another object, which pairs returns (as in Lua 5.1).
	next, pairsNext *lua.LFunction
}

func newSandbox(L *lua.LState) *sandbox {
	sb := &sandbox{real: map[*lua.LTable]*lua.LTable{}, proxy: map[*lua.LTable]*lua.LTable{}}
	sb.deny = L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonly)
		return 0
	})
	sb.next = L.NewFunction(sb.baseNext)
	sb.pairsNext = L.NewFunction(sb.baseNext)
	return sb
}

// protect returns the proxy of t, making one for t, for every table t
// holds and for its metatable (the real tables then hold proxies).
func (sb *sandbox) protect(L *lua.LState, t *lua.LTable) *lua.LTable {
	if p := sb.proxy[t]; p != nil {
		return p
	}
	if sb.real[t] != nil {
		return t
	}
	p := L.NewTable()
	sb.proxy[t], sb.real[p] = p, t
	meta := L.NewTable()
	meta.RawSetString("__index", t)
	meta.RawSetString("__newindex", sb.deny)
	p.Metatable = meta
	var keys []lua.LValue
	t.ForEach(func(k, v lua.LValue) {
		if _, ok := v.(*lua.LTable); ok {
			keys = append(keys, k)
		}
	})
	for _, k := range keys {
		t.RawSet(k, sb.protect(L, t.RawGet(k).(*lua.LTable)))
	}
	if mt, ok := t.Metatable.(*lua.LTable); ok {
		sb.protect(L, mt)
	}
	return p
}

// unwrap returns the table a proxy protects, or t itself.
func (sb *sandbox) unwrap(t *lua.LTable) *lua.LTable {
	if r := sb.real[t]; r != nil {
		return r
	}
	return t
}

// install protects globals, replacing the base functions that see through
// proxies, and the string metatable; it returns the globals' proxy, which
// is _G and the environment of every script.
func (sb *sandbox) install(L *lua.LState, globals *lua.LTable) *lua.LTable {
	for name, fn := range map[string]lua.LGFunction{
		"rawget":       sb.baseRawGet,
		"rawset":       sb.baseRawSet,
		"pairs":        sb.basePairs,
		"getmetatable": sb.baseGetMetatable,
		"setmetatable": sb.baseSetMetatable,
	} {
		globals.RawSetString(name, L.NewFunction(fn))
	}
	globals.RawSetString("next", sb.next)
	table := globals.RawGetString("table").(*lua.LTable)
	insert := table.RawGetString("insert").(*lua.LFunction)
	table.RawSetString("insert", L.NewFunction(func(L *lua.LState) int {
		if sb.real[L.CheckTable(1)] != nil {
			readonlyError(L)
		}
		return insert.GFunction(L)
	}))
	table.RawSetString("foreach", L.NewFunction(sb.tableForeach))
	table.RawSetString("foreachi", L.NewFunction(tableForeachi))
	table.RawSetString("setn", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("'setn' is obsolete")
		return 0
	}))
	// gopher-lua's string metatable is the string table itself, with an
	// __index field scripts would see; Redis's is a table of its own.
	str := globals.RawGetString("string").(*lua.LTable)
	str.RawSetString("__index", lua.LNil)
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", str)
	L.SetMetatable(lua.LString(""), strMeta)
	sb.protect(L, strMeta)

	globals.RawSetString("_G", globals)
	return sb.protect(L, globals)
}

// readonlyError raises the error of a write to a protected table from a
// Go function: Lua's runtime error, which has no position when raised
// outside Lua code.
func readonlyError(L *lua.LState) {
	L.Error(lua.LString(errReadonly), 0)
}

func (sb *sandbox) baseRawGet(L *lua.LState) int {
	t := sb.unwrap(L.CheckTable(1))
	L.Push(t.RawGet(L.CheckAny(2)))
	return 1
}

func (sb *sandbox) baseRawSet(L *lua.LState) int {
	t := L.CheckTable(1)
	k, v := L.CheckAny(2), L.CheckAny(3)
	if sb.real[t] != nil {
		readonlyError(L)
	}
	L.RawSet(t, k, v)
	L.SetTop(1)
	return 1
}

func (sb *sandbox) baseNext(L *lua.LState) int {
	t := sb.unwrap(L.CheckTable(1))
	k, v := t.Next(L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

// basePairs is Lua 5.1's pairs: next (its own copy), the table and nil.
func (sb *sandbox) basePairs(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(sb.pairsNext)
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

// metatable is v's metatable as a script may see it: a protected one as
// its proxy.
func (sb *sandbox) metatable(L *lua.LState, v lua.LValue) lua.LValue {
	var mt lua.LValue
	if t, ok := v.(*lua.LTable); ok {
		mt = sb.unwrap(t).Metatable
	} else {
		mt = L.GetMetatable(v)
	}
	if t, ok := mt.(*lua.LTable); ok {
		if p := sb.proxy[t]; p != nil {
			return p
		}
	}
	return mt
}

// baseGetMetatable is Lua 5.1's getmetatable: a metatable's __metatable
// field when it has one.
func (sb *sandbox) baseGetMetatable(L *lua.LState) int {
	mt := sb.metatable(L, L.CheckAny(1))
	if t, ok := mt.(*lua.LTable); ok {
		if f := sb.unwrap(t).RawGetString("__metatable"); f != lua.LNil {
			mt = f
		}
	}
	L.Push(mt)
	return 1
}

// baseSetMetatable is Lua 5.1's setmetatable, for tables only (gopher-lua's
// also sets the metatable shared by all strings or numbers).
func (sb *sandbox) baseSetMetatable(L *lua.LState) int {
	t := L.CheckTable(1)
	var mt lua.LValue
	switch v := L.Get(2).(type) {
	case *lua.LNilType:
		mt = lua.LNil
	case *lua.LTable:
		// A proxy set as a metatable works as the table it protects,
		// whose fields the VM reads raw; getmetatable answers the proxy.
		mt = sb.unwrap(v)
	default:
		L.ArgError(2, "nil or table expected")
	}
	if old, ok := sb.unwrap(t).Metatable.(*lua.LTable); ok && old.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	if sb.real[t] != nil {
		readonlyError(L)
	}
	t.Metatable = mt
	L.SetTop(1)
	return 1
}

// tableForeach is Lua 5.1's table.foreach: f(k, v) for each pair until f
// returns a value, which it returns.
func (sb *sandbox) tableForeach(L *lua.LState) int {
	t := sb.unwrap(L.CheckTable(1))
	f := L.CheckFunction(2)
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		L.Push(f)
		L.Push(k)
		L.Push(v)
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

// tableForeachi is Lua 5.1's table.foreachi: f(i, t[i]) for i = 1..#t until
// f returns a value, which it returns.
func tableForeachi(L *lua.LState) int {
	t := L.CheckTable(1)
	f := L.CheckFunction(2)
	for i, n := 1, t.Len(); i <= n; i++ {
		L.Push(f)
		L.Push(lua.LNumber(i))
		L.Push(t.RawGetInt(i))
		L.Call(2, 1)
		if r := L.Get(-1); r != lua.LNil {
			return 1
		}
		L.Pop(1)
	}
	return 0
}

// chunkID is how Lua 5.1 names a chunk in messages (luaO_chunkid): "=name"
// as name, "@file" as file, a loaded string as [string "its first
// line"], cut to fit 60 bytes.
func chunkID(source string) string {
	if name, ok := strings.CutPrefix(source, "="); ok {
		return truncate(name, 59)
	}
	if name, ok := strings.CutPrefix(source, "@"); ok {
		return name
	}
	const room = 60 - len(` [string "..."] `) - 1
	n := strings.IndexAny(source, "\r\n")
	if n < 0 {
		n = len(source)
	}
	n = min(n, room)
	if n < len(source) {
		return `[string "` + source[:n] + `..."]`
	}
	return `[string "` + source + `"]`
}
