package scripting

import "github.com/kvserver/kvserver/rdb"

// FUNCTION DUMP's payload is Redis 7.0's (package rdb): kvserver writes
// the same bytes as redis-server and reads its payloads, so libraries move
// between the two both ways.

// RestorePolicy is FUNCTION RESTORE's handling of libraries that exist.
type RestorePolicy int

// The restore policies.
const (
	// RestoreAppend fails on a library or function that exists.
	RestoreAppend RestorePolicy = iota
	// RestoreReplace replaces libraries of the same name.
	RestoreReplace
	// RestoreFlush drops every library first.
	RestoreFlush
)

// FunctionDump serializes every library (FUNCTION DUMP).
func (e *Engine) FunctionDump() []byte {
	libs := e.Libraries(nil)
	codes := make([][]byte, len(libs))
	for i, lib := range libs {
		codes[i] = []byte(lib.Code)
	}
	return rdb.DumpFunctions(codes)
}

// FunctionRestore loads the libraries of a FUNCTION DUMP payload (FUNCTION
// RESTORE); it returns the error reply, "" when they were restored.
func (e *Engine) FunctionRestore(payload []byte, policy RestorePolicy) string {
	codes, err := rdb.RestoreFunctions(payload)
	if err != nil {
		return "ERR " + err.Error()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.recount()
	// Load into a fresh state first: a payload that fails leaves the
	// libraries as they were.
	fresh := newFunctionState(e)
	for _, code := range codes {
		if _, msg := fresh.load(string(code), false); msg != "" {
			fresh.st.L.Close()
			return msg
		}
	}
	if policy == RestoreFlush {
		e.lib.st.L.Close()
		e.lib = fresh
		return ""
	}
	// Join: the current libraries' code is loaded into the fresh state
	// too, so that every function lives in one Lua state.
	for _, lib := range e.lib.libs {
		if fresh.libs[lib.Name] != nil {
			if policy != RestoreReplace {
				fresh.st.L.Close()
				return "ERR Library " + lib.Name + " already exists"
			}
			continue
		}
		if _, msg := fresh.load(lib.Code, false); msg != "" {
			fresh.st.L.Close()
			return msg
		}
	}
	e.lib.st.L.Close()
	e.lib = fresh
	return ""
}
