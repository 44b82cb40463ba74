package scripting

import (
	"sort"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/kvserver/kvserver/glob"
)

// Library is a function library as FUNCTION LOAD loaded it.
type Library struct {
	// Name is the library's name (#!lua name=...); Code its source.
	Name, Code string
	// Functions are the library's functions, by name.
	Functions []*Function
}

// Function is one function a library registered.
type Function struct {
	Name        string
	Description string
	// HasDescription tells an empty description from none.
	HasDescription bool
	Flags          Flags
	fn             *lua.LFunction
	lib            *Library
}

// functionState is the functions' Lua state and the libraries loaded into
// it (Redis 7.0's functions.c with function_lua.c's engine).
type functionState struct {
	e     *Engine
	st    *luaState
	libs  map[string]*Library
	funcs map[string]*Function
	// loading is the library FUNCTION LOAD is running the code of, which
	// redis.register_function adds to; nil otherwise.
	loading *Library
	// loadRedis is the redis table library code sees while it loads.
	loadEnv *lua.LTable
}

func newFunctionState(e *Engine) *functionState {
	f := &functionState{e: e, libs: map[string]*Library{}, funcs: map[string]*Function{}}
	f.st = newLuaState(e, "user_function", false)
	f.loadEnv = f.newLoadEnv()
	return f
}

// newLoadEnv builds the globals library code runs with while it loads: only
// a redis table with register_function, log and the constants; like the
// runtime globals, both are read-only.
func (f *functionState) newLoadEnv() *lua.LTable {
	L := f.st.L
	api := L.NewTable()
	api.RawSetString("register_function", L.NewFunction(f.registerFunction))
	rt := f.st.sb.unwrap(f.st.globals.RawGetString("redis").(*lua.LTable))
	for _, name := range []string{"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION", "REDIS_VERSION_NUM"} {
		api.RawSetString(name, rt.RawGetString(name))
	}
	api.Metatable = missingGlobal(L)
	globals := L.NewTable()
	globals.RawSetString("redis", api)
	globals.Metatable = missingGlobal(L)
	return f.st.sb.protect(L, globals)
}

// validName is Redis's functionsVerifyName: letters, digits and
// underscores, at least one.
func validName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const errBadName = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// libraryMeta reads a library's shebang ("#!lua name=<lib>"), like
// functionExtractLibMetaData: the name, where the code starts, or an error
// reply.
func libraryMeta(code string) (string, int, string) {
	if !strings.HasPrefix(code, "#!") {
		return "", 0, "ERR Missing library metadata"
	}
	end := strings.IndexByte(code, '\n')
	if end < 0 {
		end = len(code)
	}
	parts := strings.Fields(code[2:end])
	if len(parts) == 0 {
		return "", 0, "ERR Engine '' not found"
	}
	if !strings.EqualFold(parts[0], "lua") {
		return "", 0, "ERR Engine '" + parts[0] + "' not found"
	}
	name := ""
	for _, p := range parts[1:] {
		v, ok := strings.CutPrefix(p, "name=")
		if !ok {
			return "", 0, "ERR Invalid metadata value given: " + p
		}
		name = v
	}
	if name == "" {
		return "", 0, "ERR Library name was not given"
	}
	return name, end, ""
}

// FunctionLoad loads a library (FUNCTION LOAD [REPLACE]) and returns its
// name, or an error reply.
func (e *Engine) FunctionLoad(code []byte, replace bool) (string, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.recount()
	return e.lib.load(string(code), replace)
}

// recount publishes the library and function counts; under mu.
func (e *Engine) recount() {
	e.libCount.Store(int64(len(e.lib.libs)))
	e.funcCount.Store(int64(len(e.lib.funcs)))
}

func (f *functionState) load(code string, replace bool) (string, string) {
	name, start, msg := libraryMeta(code)
	if msg != "" {
		return "", msg
	}
	if !validName(name) {
		return "", "ERR " + errBadName
	}
	old := f.libs[name]
	if old != nil && !replace {
		return "", "ERR Library '" + name + "' already exists"
	}
	L := f.st.L
	fn, err := L.Load(strings.NewReader(code[start:]), "user_function")
	if err != nil {
		return "", "ERR Error compiling function: " + compileError(err, "user_function", []byte(code[start:]))
	}
	fn.Env = f.loadEnv
	noArgTable(fn)
	lib := &Library{Name: name, Code: code}
	f.loading = lib
	L.Push(fn)
	err = L.PCall(0, 0, nil)
	f.loading = nil
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		text := "ERR " + lua.LVAsString(obj)
		if t, ok := obj.(*lua.LTable); ok {
			text = lua.LVAsString(t.RawGetString("err"))
		}
		return "", "ERR Error registering functions: " + text
	}
	if len(lib.Functions) == 0 {
		return "", "ERR No functions registered"
	}
	for _, fn := range lib.Functions {
		if other := f.funcs[fn.Name]; other != nil && other.lib != old {
			return "", "ERR Function " + fn.Name + " already exists"
		}
	}
	if old != nil {
		f.remove(old)
	}
	f.libs[name] = lib
	for _, fn := range lib.Functions {
		f.funcs[fn.Name] = fn
	}
	return name, ""
}

func (f *functionState) remove(lib *Library) {
	for _, fn := range lib.Functions {
		delete(f.funcs, fn.Name)
	}
	delete(f.libs, lib.Name)
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=..., callback=..., flags={...},
// description=...} while a library loads.
func (f *functionState) registerFunction(L *lua.LState) int {
	lib := f.loading
	if lib == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	fn := &Function{lib: lib}
	var name lua.LValue = lua.LNil
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			return raise(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var bad string
		t.ForEach(func(k, v lua.LValue) {
			if bad != "" {
				return
			}
			switch lua.LVAsString(k) {
			case "function_name":
				if !isStringy(v) {
					bad = "function_name argument given to redis.register_function must be a string"
				}
				name = v
			case "description":
				if !isStringy(v) {
					bad = "description argument given to redis.register_function must be a string"
				}
				fn.Description, fn.HasDescription = lua.LVAsString(v), true
			case "callback":
				cb, ok := v.(*lua.LFunction)
				if !ok {
					bad = "callback argument given to redis.register_function must be a function"
				}
				fn.fn = cb
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					bad = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				for i := 1; ft.RawGetInt(i) != lua.LNil; i++ {
					flag, ok := flagByName(lua.LVAsString(ft.RawGetInt(i)))
					if !ok {
						bad = "unknown flag given"
						return
					}
					fn.Flags |= flag
				}
			default:
				bad = "unknown argument given to redis.register_function"
			}
		})
		if bad != "" {
			return raise(L, bad)
		}
		if name == lua.LNil {
			return raise(L, "redis.register_function must get a function name argument")
		}
		if fn.fn == nil {
			return raise(L, "redis.register_function must get a callback argument")
		}
	case 2:
		name = L.Get(1)
		if !isStringy(name) {
			return raise(L, "function_name argument given to redis.register_function must be a string")
		}
		cb, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return raise(L, "second argument to redis.register_function must be a function")
		}
		fn.fn = cb
	default:
		return raise(L, "wrong number of arguments to redis.register_function")
	}
	fn.Name = lua.LVAsString(name)
	if !validName(fn.Name) {
		return raise(L, errBadName)
	}
	for _, other := range lib.Functions {
		if other.Name == fn.Name {
			return raise(L, "Function already exists in the library")
		}
	}
	fn.fn.Env = f.st.env
	lib.Functions = append(lib.Functions, fn)
	return 0
}

// isStringy is lua_isstring: strings and numbers.
func isStringy(v lua.LValue) bool {
	switch v.(type) {
	case lua.LString, lua.LNumber:
		return true
	}
	return false
}

// FCall runs the function name (FCALL, FCALL_RO), writing its reply to r.W.
func (e *Engine) FCall(r *Run, name []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn := e.lib.funcs[string(name)]
	if fn == nil {
		r.W.Error("ERR Function not found")
		return
	}
	if msg := prepare(r, fn.Flags); msg != "" {
		r.W.Error(msg)
		return
	}
	r.Function, r.Name = true, fn.Name
	st := e.lib.st
	L := st.L
	keys := L.CreateTable(len(r.Keys), 0)
	for i, k := range r.Keys {
		keys.RawSetInt(i+1, lua.LString(k))
	}
	args := L.CreateTable(len(r.Args), 0)
	for i, a := range r.Args {
		args.RawSetInt(i+1, lua.LString(a))
	}
	L.Push(fn.fn)
	L.Push(keys)
	L.Push(args)
	st.call(r, 2)
	if st.broken {
		e.rebuildFunctions()
	}
}

// rebuildFunctions replaces a broken functions Lua state with a fresh one
// holding the same libraries.
func (e *Engine) rebuildFunctions() {
	old := e.lib
	e.lib = newFunctionState(e)
	for _, lib := range old.libs {
		e.lib.load(lib.Code, false)
	}
	e.recount()
	if e.log != nil {
		e.log.Warn("Lua state for functions rebuilt after a function broke it", "libraries", len(old.libs))
	}
}

// HasFunction reports whether a library registered the function name.
func (e *Engine) HasFunction(name []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lib.funcs[string(name)] != nil
}

// FunctionDelete removes a library; false when there is none by that
// name.
func (e *Engine) FunctionDelete(name []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	lib := e.lib.libs[string(name)]
	if lib == nil {
		return false
	}
	e.lib.remove(lib)
	e.recount()
	return true
}

// FunctionFlush removes every library and starts a fresh Lua state for
// functions.
func (e *Engine) FunctionFlush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lib.st.L.Close()
	e.lib = newFunctionState(e)
	e.recount()
}

// Libraries returns the libraries whose names match pattern (all for
// nil), by name, each with its functions by name.
func (e *Engine) Libraries(pattern []byte) []*Library {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*Library
	for _, lib := range e.lib.libs {
		if pattern != nil && !glob.MatchFold(pattern, []byte(lib.Name)) {
			continue
		}
		fns := append([]*Function(nil), lib.Functions...)
		sort.Slice(fns, func(i, j int) bool { return fns[i].Name < fns[j].Name })
		out = append(out, &Library{Name: lib.Name, Code: lib.Code, Functions: fns})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// FunctionCounts reports the number of libraries and functions loaded,
// without waiting for a running script.
func (e *Engine) FunctionCounts() (libs, funcs int) {
	return int(e.libCount.Load()), int(e.funcCount.Load())
}
