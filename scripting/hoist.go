package scripting

import (
	lua "github.com/yuin/gopher-lua"
)

// Global reads as constants. An EVAL script's globals are read through the
// read-only global table: a miss in the empty table the script sees, its
// metatable's __index, then the real globals, two map lookups and a
// metatable lookup for every read of KEYS, ARGV or redis, a tenth of a
// small script's time. Scripts cannot change the globals, so a compiled
// script's reads of the globals it names are rewritten into loads of
// constants holding their values (GETGLOBAL into LOADK, same registers,
// same instruction count, so line numbers are kept); KEYS and ARGV, whose
// tables a run may replace (fillArray), are constants patched before a run
// whenever their table changed. A name no global has stays a read, to
// fail as Redis fails. (Redis's sandbox has no setfenv: a script cannot
// read its globals through another table.)

// hoisted is one constant that holds KEYS or ARGV in a compiled script.
type hoisted struct {
	proto *lua.FunctionProto
	idx   int
	argv  bool
}

// perRun are the globals whose value a run may change.
const (
	keysGlobal = "KEYS"
	argvGlobal = "ARGV"
)

// hoistGlobals rewrites the global reads of p and of the functions it
// defines, and returns the constants that hold KEYS and ARGV.
func (st *luaState) hoistGlobals(p *lua.FunctionProto) []hoisted {
	var out []hoisted
	st.hoistProto(p, &out)
	return out
}

// maxConstants is the most constants an ABx instruction can address.
const maxConstants = 1 << 18

func (st *luaState) hoistProto(p *lua.FunctionProto, out *[]hoisted) {
	added := map[string]int{}
	for pc, inst := range p.Code {
		if int(inst>>26) != lua.OP_GETGLOBAL {
			continue
		}
		name, ok := p.Constants[inst&(maxConstants-1)].(lua.LString)
		if !ok {
			continue
		}
		idx, ok := added[string(name)]
		if !ok {
			var v lua.LValue = lua.LNil
			perRun := name == keysGlobal || name == argvGlobal
			if !perRun {
				v = st.globals.RawGetString(string(name))
				if v == lua.LNil {
					continue
				}
			}
			if len(p.Constants) >= maxConstants {
				return
			}
			idx = len(p.Constants)
			p.Constants = append(p.Constants, v)
			added[string(name)] = idx
			if perRun {
				*out = append(*out, hoisted{proto: p, idx: idx, argv: name == argvGlobal})
			}
		}
		p.Code[pc] = uint32(lua.OP_LOADK)<<26 | inst&(0xff<<18) | uint32(idx)
	}
	for _, sub := range p.FunctionPrototypes {
		st.hoistProto(sub, out)
	}
}

// bindRunGlobals points the script's KEYS and ARGV constants at the state's
// tables, if they are not already.
func (st *luaState) bindRunGlobals(s *evalScript) {
	if s.boundKeys == st.keys && s.boundArgv == st.argv {
		return
	}
	for _, h := range s.hoisted {
		if h.argv {
			h.proto.Constants[h.idx] = st.argv
		} else {
			h.proto.Constants[h.idx] = st.keys
		}
	}
	s.boundKeys, s.boundArgv = st.keys, st.argv
}
