package scripting

import (
	"context"
	"log/slog"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Redis 7.0.15, as scripts see it (redis.REDIS_VERSION and _NUM).
const (
	redisVersion    = "7.0.15"
	redisVersionNum = 0x07000f
)

// Replication flags of redis.set_repl (PROPAGATE_AOF, PROPAGATE_REPL).
const (
	replAOF     = 1
	replReplica = 2
)

// redisTable builds the redis table (luaRegisterRedisAPI).
func (st *luaState) redisTable(eval bool) *lua.LTable {
	L := st.L
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"call":          func(L *lua.LState) int { return st.redisCall(L, true) },
		"pcall":         func(L *lua.LState) int { return st.redisCall(L, false) },
		"sha1hex":       redisSHA1Hex,
		"error_reply":   redisErrorReply,
		"status_reply":  redisStatusReply,
		"log":           st.redisLog,
		"setresp":       st.redisSetResp,
		"set_repl":      st.redisSetRepl,
		"acl_check_cmd": st.redisACLCheckCmd,
	}
	if eval {
		// Only EVAL scripts have these (the debugger's and Redis 5's).
		fns["breakpoint"] = func(L *lua.LState) int { L.Push(lua.LFalse); return 1 }
		fns["debug"] = func(L *lua.LState) int { return 0 }
		fns["replicate_commands"] = func(L *lua.LState) int {
			L.Push(lua.LTrue)
			return 1
		}
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	for name, v := range map[string]lua.LValue{
		"LOG_DEBUG": lua.LNumber(0), "LOG_VERBOSE": lua.LNumber(1),
		"LOG_NOTICE": lua.LNumber(2), "LOG_WARNING": lua.LNumber(3),
		"REPL_NONE": lua.LNumber(0), "REPL_AOF": lua.LNumber(replAOF),
		"REPL_SLAVE": lua.LNumber(replReplica), "REPL_REPLICA": lua.LNumber(replReplica),
		"REPL_ALL":      lua.LNumber(replAOF | replReplica),
		"REDIS_VERSION": lua.LString(redisVersion), "REDIS_VERSION_NUM": lua.LNumber(redisVersionNum),
	} {
		t.RawSetString(name, v)
	}
	return t
}

// raise raises the error redis.* functions raise: {err="CODE msg"}.
func raise(L *lua.LState, msg string) int {
	L.Error(errorTable(L, msg), 0)
	return 0
}

// commandArgs converts redis.call's arguments (luaArgsToRedisArgv): strings
// as they are, numbers with %.17g (Lua's own conversion loses precision);
// anything else is an error. The arguments are written into the state's
// reusable buffer (argBuf, args): they are valid until the next call, which
// is all a command may assume of its arguments (it copies, with Own, what
// it keeps).
func (st *luaState) commandArgs(L *lua.LState) ([][]byte, string) {
	n := L.GetTop()
	if n == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	buf, ends := st.argBuf[:0], st.argEnds[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = strconv.AppendFloat(buf, float64(v), 'g', 17, 64)
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
		ends = append(ends, len(buf))
	}
	args, start := st.args[:0], 0
	for _, end := range ends {
		// The capacity ends with the argument: appending to one cannot
		// overwrite the next.
		args = append(args, buf[start:end:end])
		start = end
	}
	if cap(buf) <= maxKeptArgBytes {
		st.argBuf, st.argEnds, st.args = buf, ends, args
	} else {
		st.argBuf = nil
	}
	return args, ""
}

// maxKeptArgBytes bounds the argument buffer a Lua state keeps between
// calls: a script that once SET a large value does not hold its size.
const maxKeptArgBytes = 64 << 10

// redisCall is redis.call (raise true) and redis.pcall
// (luaRedisGenericCommand).
func (st *luaState) redisCall(L *lua.LState, raiseErr bool) int {
	r := st.run
	if r == nil {
		return raise(L, "redis.call/pcall can only be called inside a script invocation")
	}
	args, msg := st.commandArgs(L)
	L.SetTop(0)
	if msg != "" {
		if raiseErr {
			return raise(L, msg)
		}
		L.Push(errorTable(L, msg))
		return 1
	}
	reply, refusal := r.Caller.Call(r, args, r.proto)
	if refusal != "" {
		t := errorTable(L, "-"+refusal)
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		if raiseErr {
			L.Error(t, 0)
			return 0
		}
		L.Push(t)
		return 1
	}
	v, _ := parseReply(L, reply)
	if raiseErr && len(reply) > 0 && reply[0] == '-' {
		L.Error(v, 0)
		return 0
	}
	L.Push(v)
	return 1
}

func redisSHA1Hex(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "wrong number of arguments")
	}
	L.Push(lua.LString(SHA1Hex([]byte(lua.LVAsString(L.Get(1))))))
	return 1
}

func redisErrorReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	msg := string(s)
	if len(msg) == 0 || msg[0] != '-' {
		msg = "-" + msg
	}
	L.Push(errorTable(L, msg))
	return 1
}

func redisStatusReply(L *lua.LState) int {
	s, ok := L.Get(1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, "wrong number or type of arguments"))
		return 1
	}
	t := L.NewTable()
	t.RawSetString("ok", s)
	L.Push(t)
	return 1
}

// redisLog is redis.log(level, msg, ...): the server's log at the level.
func (st *luaState) redisLog(L *lua.LState) int {
	n := L.GetTop()
	if n < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	lv, ok := toNumber(L.Get(1))
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	level := int(lv)
	if level < 0 || level > 3 {
		return raise(L, "Invalid debug level.")
	}
	var msg []byte
	for i := 2; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString, lua.LNumber:
			if i != 2 {
				msg = append(msg, ' ')
			}
			msg = append(msg, lua.LVAsString(v)...)
		}
	}
	slevel := [...]slog.Level{slog.LevelDebug, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}[level]
	if st.e.log != nil {
		st.e.log.Log(context.Background(), slevel, string(msg), "source", "script")
	}
	return 0
}

// toNumber is lua_isnumber/lua_tonumber: numbers and numeric strings.
func toNumber(v lua.LValue) (lua.LNumber, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return v, true
	case lua.LString:
		n, err := parseLuaNumber(string(v))
		return n, err == nil
	}
	return 0, false
}

// parseLuaNumber is Lua's string-to-number conversion: decimal or hex,
// surrounded by spaces.
func parseLuaNumber(s string) (lua.LNumber, error) {
	s = strings.TrimSpace(s)
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		n, err := strconv.ParseUint(h, 16, 64)
		return lua.LNumber(n), err
	}
	f, err := strconv.ParseFloat(s, 64)
	return lua.LNumber(f), err
}

func (st *luaState) redisSetResp(L *lua.LState) int {
	r := st.run
	if r == nil {
		return raise(L, "redis.setresp can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	n, _ := toNumber(L.Get(1))
	if p := int(n); p != 2 && p != 3 {
		return raise(L, "RESP version must be 2 or 3.")
	} else {
		r.proto = p
	}
	return 0
}

func (st *luaState) redisSetRepl(L *lua.LState) int {
	if st.run == nil {
		return raise(L, "redis.set_repl can only be called inside a script invocation")
	}
	if L.GetTop() != 1 {
		return raise(L, "redis.set_repl() requires two arguments.")
	}
	n, _ := toNumber(L.Get(1))
	if int(n)&^(replAOF|replReplica) != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	// kvserver has no replication or AOF: there is nothing to switch.
	return 0
}

// ACLChecker is a Caller that can also answer redis.acl_check_cmd.
type ACLChecker interface {
	// ACLCheck reports whether the command args names exists and whether
	// the script's user may run it with these arguments.
	ACLCheck(args [][]byte) (known, allowed bool)
}

func (st *luaState) redisACLCheckCmd(L *lua.LState) int {
	r := st.run
	if r == nil {
		return raise(L, "redis.acl_check_cmd can only be called inside a script invocation")
	}
	args, msg := st.commandArgs(L)
	if msg != "" {
		return raise(L, msg)
	}
	chk, ok := r.Caller.(ACLChecker)
	known, allowed := false, false
	if ok {
		known, allowed = chk.ACLCheck(args)
	}
	if !known {
		return raise(L, "Invalid command passed to redis.acl_check_cmd()")
	}
	L.Push(lua.LBool(allowed))
	return 1
}
