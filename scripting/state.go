package scripting

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// luaState is one Lua state with Redis's globals: the libraries, the
// redis table, and a read-only global table.
type luaState struct {
	e *Engine
	L *lua.LState
	// env is the global table scripts see: empty, with a metatable that
	// reads through to globals and refuses writes (Redis 7.0's read-only
	// globals).
	env *lua.LTable
	// globals holds the real globals.
	globals *lua.LTable
	// run is the script running, nil between runs.
	run *Run
	// source is the chunk name errors cite ("user_script").
	source string
	// handler is the error handler every run is called with.
	handler *lua.LFunction
	// broken is set when gopher-lua panicked out of a run, leaving the
	// state unusable: the engine replaces it.
	broken bool
	// keys and argv are the KEYS and ARGV tables of the last EVAL run,
	// reused by the next (fillArray).
	keys, argv *lua.LTable
	// args, argBuf and argEnds hold redis.call's arguments, reused from
	// one call to the next (commandArgs).
	args    [][]byte
	argBuf  []byte
	argEnds []int
}

// newLuaState builds a Lua state for scripts compiled as source; eval adds
// what only EVAL scripts have (KEYS and ARGV are set per run).
func newLuaState(e *Engine, source string, eval bool) *luaState {
	L := lua.NewState(lua.Options{
		SkipOpenLibs: true,
		// Room for Lua 5.1's 8000 stack slots (unpack's limit) and
		// more, grown on demand; past it a script fails, never the
		// server.
		RegistrySize:     256 * 20,
		RegistryMaxSize:  1 << 17,
		RegistryGrowStep: 256,
	})
	st := &luaState{e: e, L: L, source: source}
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	g := L.G.Global
	// What Redis leaves out of the sandbox, or never loads.
	for _, name := range []string{"dofile", "loadfile", "print", "require", "module", "package", "os", "io", "debug", "_printregs", "channel"} {
		g.RawSetString(name, lua.LNil)
	}
	st.globals = g
	g.RawSetString("cjson", openCJSON(L))
	g.RawSetString("bit", openBit(L))
	g.RawSetString("struct", openStruct(L))
	g.RawSetString("cmsgpack", openCmsgpack(L))
	g.RawSetString("pcall", L.NewFunction(luaPcall))
	g.RawSetString("unpack", L.NewFunction(luaUnpack))
	math := g.RawGetString("math").(*lua.LTable)
	math.RawSetString("random", L.NewFunction(st.mathRandom))
	math.RawSetString("randomseed", L.NewFunction(st.mathRandomSeed))
	g.RawSetString("redis", st.redisTable(eval))

	st.env = readOnly(L, g)
	g.RawSetString("_G", st.env)
	L.Env = st.env
	st.handler = L.NewFunction(st.errorHandler)
	return st
}

// readOnly returns Redis 7.0's read-only global table over globals: an
// empty table whose __newindex refuses every write and whose __index is
// globals itself, which in turn raises an error for a name it lacks. Reads
// of existing names are plain table lookups, with no Go call.
func readOnly(L *lua.LState, globals *lua.LTable) *lua.LTable {
	missing := L.NewTable()
	missing.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", lua.LVAsString(L.Get(2)))
		return 0
	}))
	L.SetMetatable(globals, missing)
	t := L.NewTable()
	meta := L.NewTable()
	meta.RawSetString("__index", globals)
	meta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Attempt to modify a readonly table")
		return 0
	}))
	meta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(t, meta)
	return t
}

// fillArray sets the global name (KEYS or ARGV) to a table of the strings
// of vals, and returns it. The table t of the previous run is reused when
// the script left it a plain array (no metatable, no other keys; globals
// being read-only, a script cannot have kept it anywhere but in its
// locals): its elements are overwritten, those past vals cleared, and an
// element already equal to its value is left as it is, which saves the
// string (a lock script called again and again with the same key and
// token allocates nothing here).
func (st *luaState) fillArray(t *lua.LTable, name string, vals [][]byte) *lua.LTable {
	if !plainArray(t) {
		t = st.L.CreateTable(len(vals), 0)
	}
	n := t.MaxN()
	for i, v := range vals {
		if old, ok := t.RawGetInt(i + 1).(lua.LString); ok && string(old) == string(v) {
			continue
		}
		t.RawSetInt(i+1, lua.LString(v))
	}
	for i := len(vals) + 1; i <= n; i++ {
		t.RawSetInt(i, lua.LNil)
	}
	st.globals.RawSetString(name, t)
	return t
}

// plainArray reports whether t is a table with no metatable and no key
// but 1..n.
func plainArray(t *lua.LTable) bool {
	if t == nil || t.Metatable != lua.LNil {
		return false
	}
	var k lua.LValue = lua.LNil
	if n := t.MaxN(); n > 0 {
		k = lua.LNumber(n)
	}
	k, _ = t.Next(k)
	return k == lua.LNil
}

// call calls the function on the stack top with nargs arguments below it
// for run r, under the error handler, and writes the result (or the error)
// as the reply.
func (st *luaState) call(r *Run, nargs int) {
	L := st.L
	r.proto = 2
	st.run = r
	if r.Ctx != nil {
		L.SetContext(r.Ctx)
	}
	err := st.pcall(nargs)
	if r.Ctx != nil {
		L.RemoveContext()
	}
	st.run = nil
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		st.writeError(r, obj)
		return
	}
	v := L.Get(-1)
	L.Pop(1)
	writeLua(r.W, v, r.proto, 0)
}

// pcall is L.PCall under the error handler, made safe: gopher-lua can
// panic out of PCall itself (an error while it pushes the error handler
// on a full stack); that fails the script, and marks the state broken so
// that the engine replaces it.
func (st *luaState) pcall(nargs int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			st.broken = true
			msg := fmt.Sprint(p)
			if ae, ok := p.(*lua.ApiError); ok {
				msg = lua.LVAsString(ae.Object)
			}
			msg, _, _ = strings.Cut(msg, "\nstack traceback:")
			err = errors.New(msg)
		}
	}()
	return st.L.PCall(nargs, 1, st.handler)
}

// luaUnpack is Lua 5.1's unpack, with its limit of 8000 results
// (LUAI_MAXCSTACK).
func luaUnpack(L *lua.LState) int {
	t := L.CheckTable(1)
	i := L.OptInt(2, 1)
	j := L.OptInt(3, t.Len())
	if i > j {
		return 0
	}
	if n := int64(j) - int64(i) + 1; n >= 8000 {
		L.RaiseError("too many results to unpack")
	}
	for k := i; k <= j; k++ {
		L.Push(t.RawGetInt(k))
	}
	return j - i + 1
}

// writeError answers the error a run ended with, like luaCallFunction:
// "<msg> script: <name>, on <source>:<line>.".
func (st *luaState) writeError(r *Run, obj lua.LValue) {
	t, ok := obj.(*lua.LTable)
	if !ok {
		// The error handler could not run (the call stack was full):
		// the place is still in the message, "user_script:<line>: ...".
		msg := lua.LVAsString(obj)
		rest, found := strings.CutPrefix(msg, st.source+":")
		line, _, lineFound := strings.Cut(rest, ":")
		if !found || !lineFound || line == "" || strings.Trim(line, "0123456789") != "" {
			r.W.Error(sanitizeError("ERR Error running script " + r.Name + ", " + truncate(msg, 100)))
			return
		}
		t = st.L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+msg))
		t.RawSetString("source", lua.LString("@"+st.source))
		t.RawSetString("line", lua.LString(line))
	}
	msg := "-" + lua.LVAsString(t.RawGetString("err"))
	src, line := t.RawGetString("source"), t.RawGetString("line")
	if src != lua.LNil && line != lua.LNil {
		msg += " script: " + r.Name + ", on " + lua.LVAsString(src) + ":" + lua.LVAsString(line) + "."
	}
	r.W.Error(sanitizeError(msg)[1:])
}

// errorHandler is Redis's __redis__err__handler: it turns a string error
// into {err="ERR ..."} and records where it was raised (the Lua function
// that called a Go function such as redis.call, not the Go function).
func (st *luaState) errorHandler(L *lua.LState) int {
	errv := L.Get(1)
	if r := st.run; r != nil && r.Ctx != nil && r.Ctx.Err() != nil {
		errv = errorTable(L, "Script killed by user with SCRIPT KILL...")
	}
	t, ok := errv.(*lua.LTable)
	if !ok {
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+lua.LVAsString(errv)))
	}
	dbg, ok := L.GetStack(1)
	if ok {
		L.GetInfo("Sl", dbg, lua.LNil)
		if dbg.What == "G" {
			if dbg, ok = L.GetStack(2); ok {
				L.GetInfo("Sl", dbg, lua.LNil)
			}
		}
	}
	if ok && dbg.CurrentLine >= 0 {
		t.RawSetString("source", lua.LString("@"+dbg.Source))
		t.RawSetString("line", lua.LNumber(dbg.CurrentLine))
	}
	L.Push(t)
	return 1
}

// sanitizeError makes msg one line (an error reply cannot hold CR or LF),
// as Redis's addReplyErrorFormat does.
func sanitizeError(msg string) string {
	b := []byte(msg)
	for i, c := range b {
		if c == '\r' || c == '\n' {
			b[i] = ' '
		}
	}
	return string(b)
}

// truncate cuts s to n bytes (C's %.100s).
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// luaPcall is Redis's pcall: Lua's, except that an error table with an err
// field is caught as its message, as scripts written for Redis 6 expect.
func luaPcall(L *lua.LState) int {
	nargs := L.GetTop()
	if nargs == 0 {
		L.ArgError(1, "value expected")
	}
	err := L.PCall(nargs-1, lua.MultRet, nil)
	if err == nil {
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	if t, ok := obj.(*lua.LTable); ok {
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			obj = s
		}
	}
	L.SetTop(0)
	L.Push(lua.LFalse)
	L.Push(obj)
	return 2
}

// errorTable is an error as redis.call raises it: {err="CODE msg"}, from
// "-CODE msg" or "msg" (luaPushErrorBuff).
func errorTable(L *lua.LState, msg string) *lua.LTable {
	t := L.NewTable()
	t.RawSetString("err", lua.LString(errorText(msg)))
	return t
}

// errorText normalises an error to "CODE msg": "-CODE msg" loses its dash,
// a message without one gets the code ERR, and CR/LF at the ends go.
func errorText(msg string) string {
	code := "ERR"
	if len(msg) > 0 && msg[0] == '-' {
		msg = msg[1:]
		for i := 0; i < len(msg); i++ {
			if msg[i] == ' ' {
				code, msg = msg[:i], msg[i+1:]
				break
			}
		}
	}
	for len(msg) > 0 && (msg[0] == '\r' || msg[0] == '\n') {
		msg = msg[1:]
	}
	for len(msg) > 0 && (msg[len(msg)-1] == '\r' || msg[len(msg)-1] == '\n') {
		msg = msg[:len(msg)-1]
	}
	return code + " " + msg
}
