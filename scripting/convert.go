package scripting

import (
	"bytes"
	"strconv"

	lua "github.com/yuin/gopher-lua"

	"github.com/kvserver/kvserver/resp"
)

// parseReply converts one RESP2 or RESP3 reply, as a command wrote it, to
// the Lua value redis.call returns (script_lua.c's redisProtocolToLuaType):
// integers to numbers, bulks to strings, null bulks and null arrays to
// false, RESP3 null to nil, status to {ok=...}, errors to {err=...},
// arrays to tables, maps to {map={...}}, sets to {set={k=true}}, doubles
// to {double=n}, big numbers to {big_number="..."}, verbatim strings to
// {verbatim_string={format=..., string=...}}; attributes are skipped. It
// returns the value and the bytes after the reply. The reply is the
// server's own, so it is trusted to be well formed.
func parseReply(L *lua.LState, b []byte) (lua.LValue, []byte) {
	if len(b) < 3 {
		return lua.LNil, nil
	}
	typ := b[0]
	eol := bytes.IndexByte(b, '\n')
	line := b[1 : eol-1]
	rest := b[eol+1:]
	num := func() int64 { return atoi(line) }
	switch typ {
	case ':':
		return lua.LNumber(num()), rest
	case '$', '=':
		n := num()
		if n < 0 {
			return lua.LFalse, rest
		}
		body := rest[:n]
		rest = rest[n+2:]
		if typ == '$' {
			return lua.LString(body), rest
		}
		t := L.NewTable()
		inner := L.NewTable()
		inner.RawSetString("string", lua.LString(body[4:]))
		inner.RawSetString("format", lua.LString(body[:3]))
		t.RawSetString("verbatim_string", inner)
		return t, rest
	case '+':
		t := L.NewTable()
		t.RawSetString("ok", lua.LString(line))
		return t, rest
	case '-':
		t := errorTable(L, "-"+string(line))
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t, rest
	case '*':
		n := num()
		if n < 0 {
			return lua.LFalse, rest
		}
		t := L.CreateTable(int(n), 0)
		for i := int64(1); i <= n; i++ {
			var v lua.LValue
			v, rest = parseReply(L, rest)
			t.RawSetInt(int(i), v)
		}
		return t, rest
	case '%', '~':
		n := num()
		inner := L.NewTable()
		for i := int64(0); i < n; i++ {
			var k, v lua.LValue
			k, rest = parseReply(L, rest)
			if typ == '%' {
				v, rest = parseReply(L, rest)
			} else {
				v = lua.LTrue
			}
			if k != lua.LNil {
				inner.RawSet(k, v)
			}
		}
		t := L.NewTable()
		if typ == '%' {
			t.RawSetString("map", inner)
		} else {
			t.RawSetString("set", inner)
		}
		return t, rest
	case '_':
		return lua.LNil, rest
	case '#':
		return lua.LBool(len(line) > 0 && line[0] == 't'), rest
	case ',':
		f, _ := strconv.ParseFloat(string(line), 64)
		switch string(line) {
		case "inf":
			f = posInf
		case "-inf":
			f = negInf
		}
		t := L.NewTable()
		t.RawSetString("double", lua.LNumber(f))
		return t, rest
	case '(':
		t := L.NewTable()
		t.RawSetString("big_number", lua.LString(line))
		return t, rest
	case '|':
		n := num()
		for i := int64(0); i < 2*n; i++ {
			_, rest = parseReply(L, rest)
		}
		return parseReply(L, rest)
	}
	return lua.LNil, nil
}

// atoi parses the decimal integer of a reply line the server wrote.
func atoi(b []byte) int64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// maxReplyDepth bounds the nesting of a script's reply, as the Lua C stack
// bounds Redis's (a table that contains itself would recurse for ever).
const maxReplyDepth = 200

// writeLua writes a script's result as the reply (luaReplyToRedisReply):
// strings as bulks, numbers truncated to integers, true as :1 and false as
// null under RESP2 (booleans under RESP3, per redis.setresp), tables with
// err, ok, double, big_number, verbatim_string, map or set fields as those
// replies, other tables as arrays up to the first nil, anything else as
// null.
func writeLua(w *resp.Writer, v lua.LValue, proto, depth int) {
	if depth > maxReplyDepth {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.Bulk([]byte(v))
	case lua.LBool:
		switch {
		case proto == 3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(luaToInt(v))
	case *lua.LTable:
		writeTable(w, v, proto, depth)
	default:
		w.Null()
	}
}

func writeTable(w *resp.Writer, t *lua.LTable, proto, depth int) {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		w.Error(sanitizeError(string(s)))
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Simple(sanitizeError(string(s)))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(n))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		big := sanitizeError(string(s))
		if w.Proto() == 3 {
			w.Raw([]byte("(" + big + "\r\n"))
		} else {
			w.BulkString(big)
		}
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		format, fok := vt.RawGetString("format").(lua.LString)
		str, sok := vt.RawGetString("string").(lua.LString)
		if fok && sok {
			if w.Proto() == 3 {
				f := (string(format) + "???")[:3]
				w.Raw([]byte("=" + strconv.Itoa(len(str)+4) + "\r\n" + f + ":" + string(str) + "\r\n"))
			} else {
				w.Bulk([]byte(str))
			}
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		n := 0
		m.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Map(n)
		m.ForEach(func(k, v lua.LValue) {
			writeLua(w, k, proto, depth+1)
			writeLua(w, v, proto, depth+1)
		})
		return
	}
	if s, ok := t.RawGetString("set").(*lua.LTable); ok {
		n := 0
		s.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Set(n)
		s.ForEach(func(k, _ lua.LValue) { writeLua(w, k, proto, depth+1) })
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		writeLua(w, t.RawGetInt(i), proto, depth+1)
	}
}

// luaToInt is C's (long long) cast of a Lua number: truncation toward zero,
// and LLONG_MIN for what does not fit (x86's answer).
func luaToInt(n lua.LNumber) int64 {
	f := float64(n)
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return -9223372036854775808
	}
	return int64(f)
}

var (
	posInf = func() float64 { f, _ := strconv.ParseFloat("+Inf", 64); return f }()
	negInf = -posInf
)
