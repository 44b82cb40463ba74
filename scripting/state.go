package scripting

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// luaState is one Lua state with Redis's globals: the libraries, the
// redis table, and a read-only global table.
type luaState struct {
	e *Engine
	L *lua.LState
	// env is the global table scripts see: the globals' proxy (sandbox.go).
	env *lua.LTable
	sb  *sandbox
	// chunks are the sources of the chunks loadstring and load compiled,
	// by the names messages give them, for the error handler.
	chunks map[string]string
	// globals holds the real globals.
	globals *lua.LTable
	// run is the script running, nil between runs.
	run *Run
	// source is the chunk name errors cite ("user_script").
	source string
	// handler is the error handler every run is called with.
	handler *lua.LFunction
	// goErrorHandler is pcall's error handler when it calls a Go
	// function (goCalleeError).
	goErrorHandler *lua.LFunction
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
	st := &luaState{e: e, L: L, source: source, chunks: map[string]string{}}
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
	st.globals = g
	g.RawSetString("cjson", openCJSON(L))
	g.RawSetString("bit", openBit(L))
	g.RawSetString("struct", openStruct(L))
	g.RawSetString("cmsgpack", openCmsgpack(L))
	st.goErrorHandler = L.NewFunction(goCalleeError)
	g.RawSetString("pcall", L.NewFunction(st.luaPcall))
	g.RawSetString("error", L.NewFunction(luaError))
	toNumberBase := g.RawGetString("tonumber").(*lua.LFunction).GFunction
	g.RawSetString("tonumber", L.NewFunction(func(L *lua.LState) int {
		// Base 10 is Lua's own string to number conversion (strtod: an
		// exponent without a dot, hex, inf); gopher-lua's misses some.
		if base := L.Get(2); base == lua.LNil || base == lua.LNumber(10) {
			n, ok := toNumber(L.CheckAny(1))
			if !ok {
				L.Push(lua.LNil)
				return 1
			}
			L.Push(n)
			return 1
		}
		return toNumberBase(L)
	}))
	g.RawSetString("unpack", L.NewFunction(luaUnpack))
	g.RawSetString("loadstring", L.NewFunction(st.loadString))
	g.RawSetString("load", L.NewFunction(st.load))
	g.RawSetString("gcinfo", L.NewFunction(st.gcinfo))
	g.RawSetString("collectgarbage", L.NewFunction(collectGarbage))
	mathLib := g.RawGetString("math").(*lua.LTable)
	mathLib.RawSetString("random", L.NewFunction(st.mathRandom))
	mathLib.RawSetString("randomseed", L.NewFunction(st.mathRandomSeed))
	str := g.RawGetString("string").(*lua.LTable)
	str.RawSetString("rep", L.NewFunction(strRep))
	g.RawSetString("redis", st.redisTable(eval))
	st.handler = L.NewFunction(st.errorHandler)
	if eval {
		g.RawSetString("__redis__err__handler", st.handler)
	}
	// Only the globals Redis has (its allow list): gopher-lua's others
	// (print, dofile, setfenv, require, newproxy...) go.
	var drop []string
	g.ForEach(func(k, _ lua.LValue) {
		if name := lua.LVAsString(k); !allowedGlobals[name] {
			drop = append(drop, name)
		}
	})
	for _, name := range drop {
		g.RawSetString(name, lua.LNil)
	}
	g.Metatable = missingGlobal(L)
	st.sb = newSandbox(L)
	st.env = st.sb.install(L, g)
	L.Env = st.env
	return st
}

// missingGlobal is the globals' metatable: reading a global that does not
// exist is an error (luaSetErrorMetatable).
func missingGlobal(L *lua.LState) *lua.LTable {
	mt := L.NewTable()
	mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("Script attempted to access nonexistent global variable '%s'", lua.LVAsString(L.Get(2)))
		return 0
	}))
	return mt
}

// allowedGlobals are the globals a script sees in Redis 7.0 (script_lua.c's
// allow lists, less what it removes after start: debug, setfenv,
// getfenv, newproxy), besides KEYS, ARGV and __redis__err__handler, which
// only EVAL scripts have.
var allowedGlobals = map[string]bool{
	"_G": true, "_VERSION": true, "__redis__err__handler": true,
	"assert": true, "collectgarbage": true, "error": true, "gcinfo": true,
	"getmetatable": true, "ipairs": true, "load": true, "loadstring": true,
	"next": true, "pairs": true, "pcall": true, "rawequal": true, "rawget": true,
	"rawset": true, "select": true, "setmetatable": true, "tonumber": true,
	"tostring": true, "type": true, "unpack": true, "xpcall": true,
	"bit": true, "cjson": true, "cmsgpack": true, "coroutine": true, "math": true,
	"redis": true, "string": true, "struct": true, "table": true,
}

// loadString is Lua 5.1's loadstring(s [, chunkname]): the chunk is named
// s itself unless named otherwise.
func (st *luaState) loadString(L *lua.LState) int {
	s := L.CheckString(1)
	return st.loadChunk(L, s, L.OptString(2, s))
}

// load is Lua 5.1's load(f [, chunkname]): the chunk is the concatenation
// of f's results up to the first nil or empty string.
func (st *luaState) load(L *lua.LState) int {
	f := L.CheckFunction(1)
	name := L.OptString(2, "=(load)")
	var b strings.Builder
	for {
		L.Push(f)
		L.Call(0, 1)
		v := L.Get(-1)
		L.Pop(1)
		if v == lua.LNil {
			break
		}
		s, ok := v.(lua.LString)
		if !ok {
			L.Push(lua.LNil)
			L.Push(lua.LString("reader function must return a string"))
			return 2
		}
		if s == "" {
			break
		}
		b.WriteString(string(s))
	}
	return st.loadChunk(L, b.String(), name)
}

// loadChunk compiles code as the chunk source, with the read-only globals
// (lua_load gives a chunk the thread's globals); it pushes the function,
// or nil and the error.
func (st *luaState) loadChunk(L *lua.LState, code, source string) int {
	id := chunkID(source)
	fn, err := L.Load(strings.NewReader(code), id)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(compileError(err, id, []byte(code))))
		return 2
	}
	fn.Env = st.env
	noArgTable(fn)
	if id != source {
		if len(st.chunks) >= maxChunkNames {
			clear(st.chunks)
		}
		st.chunks[id] = source
	}
	L.Push(fn)
	return 1
}

// maxChunkNames bounds the chunk names a state remembers the sources of.
const maxChunkNames = 256

// gcinfo is Lua 5.1's gcinfo: the memory in use, in KiB. Lua counts a
// state's own memory, which only the script changes; the Go heap is every
// client's, so a run reads it once (ReadMemStats stops the world, too) and
// answers every later call of the run with that: two calls a moment apart
// differed once another client allocated between them.
func (st *luaState) gcinfo(L *lua.LState) int {
	r := st.run
	if r == nil || r.gcKiB == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		kib := max(int64(m.HeapAlloc>>10), 1)
		if r == nil {
			L.Push(lua.LNumber(kib))
			return 1
		}
		r.gcKiB = kib
	}
	L.Push(lua.LNumber(r.gcKiB))
	return 1
}

// cInt64 converts f as x86-64's C does: a value out of range (or NaN)
// becomes the smallest int64.
func cInt64(f float64) int64 {
	if !(f >= -(1<<63) && f < 1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// maxRepBytes bounds string.rep's result: past it the script fails (Lua's
// out-of-memory error) rather than the server.
const maxRepBytes = 512 << 20

// strRep is Lua 5.1's string.rep(s, n), with C's conversion of n to an int
// (a count past 2^31 wraps, as in Redis); there is no separator argument.
func strRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := int(int32(cInt64(float64(L.CheckNumber(2)))))
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	if int64(len(s))*int64(n) > maxRepBytes {
		L.RaiseError("not enough memory")
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
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
	r.proto, r.gcKiB = 2, 0
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
		t.RawSetString("err", lua.LString("ERR "+luaMessage(L.ToStringMeta(errv).String())))
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
		src, found := st.chunks[dbg.Source]
		if !found {
			src = "@" + dbg.Source
		}
		t.RawSetString("source", lua.LString(src))
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
func (st *luaState) luaPcall(L *lua.LState) int {
	nargs := L.GetTop()
	if nargs == 0 {
		L.ArgError(1, "value expected")
	}
	var handler *lua.LFunction
	// A Go closure with upvalues may run Lua code of its own (a
	// coroutine.wrap function) whose errors keep their position.
	if fn, ok := L.Get(1).(*lua.LFunction); ok && fn.IsG && len(fn.Upvalues) == 0 {
		handler = st.goErrorHandler
	}
	err := L.PCall(nargs-1, lua.MultRet, handler)
	if err == nil {
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}
	var obj lua.LValue = lua.LString(err.Error())
	if ae, ok := err.(*lua.ApiError); ok {
		obj = ae.Object
	}
	switch v := obj.(type) {
	case *lua.LTable:
		if s, ok := v.RawGetString("err").(lua.LString); ok {
			obj = s
		}
	case lua.LString:
		obj = lua.LString(luaMessage(string(v)))
	}
	L.SetTop(0)
	L.Push(lua.LFalse)
	L.Push(obj)
	return 2
}

// badArgument matches gopher-lua's wording of an argument error, "bad
// argument #1 to rep (...)".
var badArgument = regexp.MustCompile(`bad argument #([0-9]+) to ([^' ]+) \(`)

// luaMessage words an error message of gopher-lua's as Lua 5.1 does where
// they differ in form: an argument error names the function in quotes,
// '?' when it has no name.
func luaMessage(msg string) string {
	if !strings.Contains(msg, "bad argument #") {
		return msg
	}
	return badArgument.ReplaceAllStringFunc(msg, func(m string) string {
		sub := badArgument.FindStringSubmatch(m)
		name := sub[2]
		if name == "(anonymous)" {
			name = "?"
		}
		return "bad argument #" + sub[1] + " to '" + name + "' ("
	})
}

// collectGarbage is Lua 5.1's collectgarbage(opt [, arg]). Go's collector
// manages the memory: "collect" and "step" collect nothing (a script
// cannot make the server stop the world), "count" is the heap in use in
// KiB.
func collectGarbage(L *lua.LState) int {
	switch opt := L.OptString(1, "collect"); opt {
	case "collect", "stop", "restart":
		L.Push(lua.LNumber(0))
	case "count":
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		L.Push(lua.LNumber(float64(m.HeapAlloc) / 1024))
	case "step":
		L.Push(lua.LFalse)
	case "setpause", "setstepmul":
		L.Push(lua.LNumber(200))
	default:
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

// goCalleeError is the error handler of pcall calling a Go function
// (pcall(cjson.decode, s)): an error that function raised itself is, in
// Lua, placed at the function that called it, pcall, a C function, which
// gives no position; gopher-lua skips Go frames up to the script's
// line. That position goes.
func goCalleeError(L *lua.LState) int {
	msg, ok := L.Get(1).(lua.LString)
	if !ok {
		return 1
	}
	raiser, ok1 := L.GetStack(1)
	caller, ok2 := L.GetStack(2)
	if !ok1 || !ok2 {
		return 1
	}
	L.GetInfo("S", raiser, lua.LNil)
	L.GetInfo("S", caller, lua.LNil)
	if raiser.What != "G" || caller.What != "G" {
		return 1
	}
	for level := 3; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			return 1
		}
		L.GetInfo("Sl", dbg, lua.LNil)
		if dbg.What == "G" {
			continue
		}
		prefix := fmt.Sprintf("%s:%d: ", dbg.Source, dbg.CurrentLine)
		if rest, ok := strings.CutPrefix(string(msg), prefix); ok {
			L.Push(lua.LString(rest))
		}
		return 1
	}
}

// luaError is Lua 5.1's error(msg [, level]): a position is added to a
// string (or number) message only, and error() raises nil.
func luaError(L *lua.LState) int {
	level := L.OptInt(2, 1)
	v := L.Get(1)
	switch v.(type) {
	case lua.LString, lua.LNumber:
		if level > 0 {
			L.Error(lua.LString(lua.LVAsString(v)), level)
		}
	}
	L.Error(v, 0)
	return 0
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
