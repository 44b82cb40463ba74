package scripting

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/resp"
)

// eval runs body as EVAL with no keys against e and returns the reply
// bytes in RESP proto.
func eval(t *testing.T, e *Engine, body string, proto int) string {
	t.Helper()
	return evalKeys(t, e, body, proto, nil, nil)
}

// evalKeys runs body as EVAL with keys and args and returns the reply in
// RESP proto.
func evalKeys(t *testing.T, e *Engine, body string, proto int, keys, args []string) string {
	t.Helper()
	var out bytes.Buffer
	w := resp.NewWriter(&out)
	w.SetProto(proto)
	toBytes := func(ss []string) [][]byte {
		b := make([][]byte, len(ss))
		for i, s := range ss {
			b[i] = []byte(s)
		}
		return b
	}
	e.Eval(&Run{Ctx: context.Background(), W: w, Keys: toBytes(keys), Args: toBytes(args)}, []byte(body))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestScriptResultsBecomeRedisReplies pins the Lua to RESP conversion of
// script results (script_lua.c's luaReplyToRedisReply) in both protocols.
func TestScriptResultsBecomeRedisReplies(t *testing.T) {
	e := New(nil)
	defer e.Close()
	tests := []struct{ body, resp2, resp3 string }{
		{"return 'x'", "$1\r\nx\r\n", "$1\r\nx\r\n"},
		{"return 3.99", ":3\r\n", ":3\r\n"},
		{"return -3.99", ":-3\r\n", ":-3\r\n"},
		{"return 1e300", ":-9223372036854775808\r\n", ":-9223372036854775808\r\n"},
		{"return true", ":1\r\n", ":1\r\n"},
		{"return false", "$-1\r\n", "_\r\n"},
		{"return nil", "$-1\r\n", "_\r\n"},
		{"redis.setresp(3) return false", ":0\r\n", "#f\r\n"},
		{"return {1, 'a', nil, 3}", "*2\r\n:1\r\n$1\r\na\r\n", "*2\r\n:1\r\n$1\r\na\r\n"},
		{"return {ok='fine'}", "+fine\r\n", "+fine\r\n"},
		{"return {err='CODE msg'}", "-CODE msg\r\n", "-CODE msg\r\n"},
		{"return redis.error_reply('x')", "-ERR x\r\n", "-ERR x\r\n"},
		{"return {double=1.5}", "$3\r\n1.5\r\n", ",1.5\r\n"},
		{"return {big_number='12'}", "$2\r\n12\r\n", "(12\r\n"},
		{"return {map={a=1}}", "*2\r\n$1\r\na\r\n:1\r\n", "%1\r\n$1\r\na\r\n:1\r\n"},
		{"return {set={a=true}}", "*1\r\n$1\r\na\r\n", "~1\r\n$1\r\na\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", "$2\r\nhi\r\n", "=6\r\ntxt:hi\r\n"},
		{"local t = {}; t[1] = t; return t", "", ""},
	}
	for _, tc := range tests {
		for proto, want := range map[int]string{2: tc.resp2, 3: tc.resp3} {
			got := eval(t, e, tc.body, proto)
			if want == "" {
				// A table that contains itself ends in the depth error.
				if !bytes.Contains([]byte(got), []byte("-ERR reached lua stack limit\r\n")) {
					t.Errorf("%q RESP%d = %q, want the stack limit error", tc.body, proto, got)
				}
				continue
			}
			if got != want {
				t.Errorf("%q RESP%d = %q, want %q", tc.body, proto, got, want)
			}
		}
	}
}

// TestRedisRepliesBecomeLuaValues pins redis.call's conversion of replies
// (redisProtocolToLuaType), by converting and converting back.
func TestRedisRepliesBecomeLuaValues(t *testing.T) {
	e := New(nil)
	defer e.Close()
	L := e.eval.L
	tests := []struct{ reply, back string }{
		{":7\r\n", ":7\r\n"},
		{"$3\r\nabc\r\n", "$3\r\nabc\r\n"},
		{"$-1\r\n", "$-1\r\n"},
		{"*-1\r\n", "$-1\r\n"},
		{"_\r\n", "$-1\r\n"},
		{"+OK\r\n", "+OK\r\n"},
		{"-WRONGTYPE bad\r\n", "-WRONGTYPE bad\r\n"},
		{"-noCode\r\n", "-ERR noCode\r\n"},
		{"*2\r\n:1\r\n$1\r\nx\r\n", "*2\r\n:1\r\n$1\r\nx\r\n"},
		{"#t\r\n", ":1\r\n"},
		{",2.5\r\n", "$3\r\n2.5\r\n"},
		{"(123\r\n", "$3\r\n123\r\n"},
		{"%1\r\n$1\r\nk\r\n:1\r\n", "*2\r\n$1\r\nk\r\n:1\r\n"},
		{"~1\r\n$1\r\nm\r\n", "*1\r\n$1\r\nm\r\n"},
		{"=7\r\ntxt:abc\r\n", "$3\r\nabc\r\n"},
		{"|1\r\n$1\r\na\r\n:1\r\n:9\r\n", ":9\r\n"},
	}
	for _, tc := range tests {
		v, rest := parseReply(L, []byte(tc.reply))
		if len(rest) != 0 {
			t.Errorf("%q: %q left over", tc.reply, rest)
		}
		var out bytes.Buffer
		w := resp.NewWriter(&out)
		writeLua(w, v, 2, 0)
		w.Flush()
		if out.String() != tc.back {
			t.Errorf("%q converted back = %q, want %q", tc.reply, out.String(), tc.back)
		}
	}
}

// TestScriptErrorsCarryTheirPlace pins the error replies of failing
// scripts and the sandbox's refusals.
func TestScriptErrorsCarryTheirPlace(t *testing.T) {
	e := New(nil)
	defer e.Close()
	tests := []struct{ body, want string }{
		{"error('boom')", "-ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on @user_script:1.\r\n"},
		{"error({err='MY boom'})", "-MY boom script: 4c2ee35ef37c857625d6ec6d812eab72377cfa97, on @user_script:1.\r\n"},
		{"return foo", "-ERR user_script:1: Script attempted to access nonexistent global variable 'foo' script: 47e30a5d10d5694f99208f9adc4fe3bf2450edbd, on @user_script:1.\r\n"},
		{"foo=1", "-ERR user_script:1: Attempt to modify a readonly table script: 5bddd8336e5f711bfa499383fc73c17560c6250b, on @user_script:1.\r\n"},
		{"return redis.setresp(4)", "-ERR RESP version must be 2 or 3. script: 921c0a48021d97dfd5884aeea41875972c7804d9, on @user_script:1.\r\n"},
		{"#!lua flags=bad\nreturn 1", "-ERR Unexpected flag in script shebang: bad\r\n"},
		{"#!lua name=x\nreturn 1", "-ERR Unknown lua shebang option: name=x\r\n"},
		{"#!luax\nreturn 1", "-ERR Unexpected engine in script shebang: #!luax\r\n"},
		{"return os", "-ERR user_script:1: Script attempted to access nonexistent global variable 'os' script: f03b5ad6e7d58786b6a5e879efbea4a4408f5c2f, on @user_script:1.\r\n"},
	}
	for _, tc := range tests {
		if got := eval(t, e, tc.body, 2); got != tc.want {
			t.Errorf("%q = %q\nwant %q", tc.body, got, tc.want)
		}
	}
}

// TestLibrariesScriptsRelyOn checks cjson and bit against the values
// Redis's Lua CJSON and LuaBitOp give.
func TestLibrariesScriptsRelyOn(t *testing.T) {
	e := New(nil)
	defer e.Close()
	tests := []struct{ body, want string }{
		{"return cjson.encode({1, 2, {a=1}})", `[1,2,{"a":1}]`},
		{"return cjson.encode({1e20, 0.1, 1.5e-7, 123456789012345678})", `[1e+20,0.1,1.5e-07,1.2345678901235e+17]`},
		{`return cjson.encode('a/"\\')`, `"a\/\"\\"`},
		{`return cjson.decode('[1,{"a":[true,null]}]')[2].a[2] == cjson.null and 'null' or 'other'`, "null"},
		{`return cjson.decode('"\\u00e9"')`, "é"},
		{"return bit.tohex(bit.bnot(0)) .. bit.tohex(255, -2)", "ffffffffFF"},
		{"return tostring(bit.lshift(1, 31))", "-2147483648"},
		{"return tostring(bit.arshift(-256, 4))", "-16"},
		{"return tostring(bit.bswap(0x12345678))", "2018915346"},
	}
	for _, tc := range tests {
		var out bytes.Buffer
		w := resp.NewWriter(&out)
		e.Eval(&Run{W: w}, []byte(tc.body))
		w.Flush()
		want := "$" + strconv.Itoa(len(tc.want)) + "\r\n" + tc.want + "\r\n"
		if out.String() != want {
			t.Errorf("%s = %q, want %q", tc.body, out.String(), want)
		}
	}
}

// redisLongDump is redis-server 7.0.15's FUNCTION DUMP of one library,
// whose code it compressed with LZF.
const redisLongDump = "\xf5\xc3@\x88@\x9c\x1f#!lua name=long\x0aredis.register_f\x0cunction('l', \xe0\x00\x0d\x15keys, args) return 'a @@\x1f enough library body to be compr\x0cessed by LZF,\x801`6\xe0\x05\x04\x00' F\x01d)\x0a\x00\x015\xd6\xb2\x04~]z"

// TestFunctionPayloadsMoveBetweenServers restores Redis's payload, dumps
// it again, byte for byte as Redis does, and restores that.
func TestFunctionPayloadsMoveBetweenServers(t *testing.T) {
	e := New(nil)
	defer e.Close()
	if msg := e.FunctionRestore([]byte(redisLongDump), RestoreAppend); msg != "" {
		t.Fatalf("restoring Redis's payload: %s", msg)
	}
	libs := e.Libraries(nil)
	if len(libs) != 1 || libs[0].Name != "long" || len(libs[0].Functions) != 1 || libs[0].Functions[0].Name != "l" {
		t.Fatalf("restored %+v", libs)
	}
	code := libs[0].Code
	dump := e.FunctionDump()
	if string(dump) != redisLongDump {
		t.Errorf("FUNCTION DUMP = %q\nRedis's     %q", dump, redisLongDump)
	}
	if msg := e.FunctionRestore(dump, RestoreAppend); msg != "ERR Library long already exists" {
		t.Errorf("APPEND over an existing library = %q", msg)
	}
	e.FunctionFlush()
	if msg := e.FunctionRestore(dump, RestoreAppend); msg != "" {
		t.Fatalf("restoring kvserver's own payload: %s", msg)
	}
	if got := e.Libraries(nil); len(got) != 1 || got[0].Code != code {
		t.Errorf("round trip changed the library: %+v", got)
	}
	bad := append([]byte(nil), dump...)
	bad[0] ^= 1
	if msg := e.FunctionRestore(bad, RestoreFlush); msg != "ERR DUMP payload version or checksum are wrong" {
		t.Errorf("corrupt payload = %q", msg)
	}
	if libs, funcs := e.FunctionCounts(); libs != 1 || funcs != 1 {
		t.Errorf("counts after a failed restore = %d, %d, want 1, 1", libs, funcs)
	}
}

// TestShebangFlags pins the parsing of "#!lua flags=...".
func TestShebangFlags(t *testing.T) {
	tests := []struct {
		body  string
		flags Flags
		start int
		msg   string
	}{
		{"return 1", FlagEvalCompat, 0, ""},
		{"#!lua\nreturn 1", 0, 5, ""},
		{"#!lua flags=no-writes,allow-oom\nreturn 1", FlagNoWrites | FlagAllowOOM, 31, ""},
		{"#!lua flags=\nreturn 1", 0, 12, ""},
		{"#!lua flags=nope\n", 0, 0, "ERR Unexpected flag in script shebang: nope"},
		{"#!python\n", 0, 0, "ERR Unexpected engine in script shebang: #!python"},
	}
	for _, tc := range tests {
		flags, start, msg := evalFlags([]byte(tc.body))
		if flags != tc.flags || start != tc.start || msg != tc.msg {
			t.Errorf("%q = %v, %d, %q; want %v, %d, %q", tc.body, flags, start, msg, tc.flags, tc.start, tc.msg)
		}
	}
}

// TestBrokenLuaStateIsReplaced breaks the EVAL Lua state (gopher-lua
// panics out of PCall when a call fills its stack) and checks that the
// script fails, the server's scripts survive in a fresh state, and both
// the stack limits of Lua 5.1 answer errors.
func TestBrokenLuaStateIsReplaced(t *testing.T) {
	e := New(nil)
	defer e.Close()
	sha, msg := e.ScriptLoad([]byte("return 'kept'"))
	if msg != "" {
		t.Fatal(msg)
	}
	if got := eval(t, e, "return #{string.byte(string.rep('x', 200000), 1, -1)}", 2); got !=
		"-ERR user_script:1: registry overflow script: a329e2a6216531de186d74c6b316234b2ae87cda, on @user_script:1.\r\n" {
		t.Errorf("filling the stack = %q", got)
	}
	var out bytes.Buffer
	w := resp.NewWriter(&out)
	e.EvalSHA(&Run{W: w}, []byte(sha))
	w.Flush()
	if out.String() != "$4\r\nkept\r\n" {
		t.Errorf("EVALSHA after the rebuild = %q", out.String())
	}
	if got := eval(t, e, "local function f() return 1 + f() end return f()", 2); got !=
		"-ERR user_script:1: stack overflow script: 2c347ae0c7feaa40c62d8208d59e954ee9ff79ff, on @user_script:1.\r\n" {
		t.Errorf("deep recursion = %q", got)
	}
	if got := eval(t, e, "local t = {} for i = 1, 9000 do t[i] = i end return unpack(t)", 2); !bytes.Contains([]byte(got), []byte("too many results to unpack")) {
		t.Errorf("unpack of 9000 = %q", got)
	}
}

// TestKeysAndArgvAreFreshForEveryRun pins down that reusing the KEYS and
// ARGV tables between runs is invisible: whatever a script did to them
// (more elements, other keys, a metatable, other values), the next run
// sees exactly its own keys and arguments.
func TestKeysAndArgvAreFreshForEveryRun(t *testing.T) {
	e := New(nil)
	defer e.Close()
	const show = "return {#KEYS, #ARGV, tostring(KEYS.x), tostring(KEYS[3]), tostring(getmetatable(ARGV)), KEYS[1] or '-', ARGV[1] or '-', ARGV[2] or '-'}"
	runEvalSteps(t, e, false, []evalStep{
		{show, []string{"a", "b"}, []string{"1", "2"}, "*8\r\n:2\r\n:2\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n"},
		{"KEYS[1] = 'changed' KEYS[3] = 'c' KEYS[10] = 'j' ARGV[2] = nil return 1", []string{"a", "b"}, []string{"1", "2"}, ":1\r\n"},
		{show, []string{"a"}, []string{"1", "2"}, "*8\r\n:1\r\n:2\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n2\r\n"},
		{"KEYS.x = 'y' setmetatable(ARGV, {}) return 1", []string{"a"}, []string{"1"}, ":1\r\n"},
		{show, []string{"a"}, []string{"1"}, "*8\r\n:1\r\n:1\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\n-\r\n"},
		{"KEYS[0] = 'zero' KEYS[1.5] = 'half' return 1", []string{"a"}, nil, ":1\r\n"},
		{"local n = 0 for k in pairs(KEYS) do n = n + 1 end return n", []string{"a", "b", "c"}, nil, ":3\r\n"},
		{show, nil, nil, "*8\r\n:0\r\n:0\r\n$3\r\nnil\r\n$3\r\nnil\r\n$3\r\nnil\r\n$1\r\n-\r\n$1\r\n-\r\n$1\r\n-\r\n"},
	})
}

// evalStep is one EVAL with its keys and arguments and the RESP2 reply
// it must get.
type evalStep struct {
	body       string
	keys, args []string
	want       string
}

// runEvalSteps runs the steps in order on e; with prefix, a reply need
// only start with its want.
func runEvalSteps(t *testing.T, e *Engine, prefix bool, steps []evalStep) {
	t.Helper()
	for i, st := range steps {
		got := evalKeys(t, e, st.body, 2, st.keys, st.args)
		if got != st.want && !(prefix && strings.HasPrefix(got, st.want)) {
			t.Errorf("step %d: %q keys %q args %q = %q, want %q", i, st.body, st.keys, st.args, got, st.want)
		}
	}
}

// TestGlobalReadsAreConstants pins down the compiled scripts' global reads
// turned into constants (hoist.go): KEYS and ARGV follow every run, in
// nested functions too and after a script replaced their tables; a name
// no global has still fails; there is no setfenv to give a script globals
// of its own; a chunk loadstring compiled reads the globals of the run.
func TestGlobalReadsAreConstants(t *testing.T) {
	e := New(nil)
	defer e.Close()
	const nested = "local function f() return KEYS[1] .. ARGV[1] end return {f(), type(redis.call), type(cjson)}"
	runEvalSteps(t, e, true, []evalStep{
		{nested, []string{"a"}, []string{"1"}, "*3\r\n$2\r\na1\r\n$8\r\nfunction\r\n$5\r\ntable\r\n"},
		{nested, []string{"b"}, []string{"2"}, "*3\r\n$2\r\nb2\r\n$8\r\nfunction\r\n$5\r\ntable\r\n"},
		{"setmetatable(KEYS, {}) setmetatable(ARGV, {}) return 1", []string{"x"}, []string{"y"}, ":1\r\n"},
		{nested, []string{"c"}, []string{"3"}, "*3\r\n$2\r\nc3\r\n$8\r\nfunction\r\n$5\r\ntable\r\n"},
		{"return nosuch", nil, nil, "-ERR user_script:1: Script attempted to access nonexistent global variable 'nosuch' script: "},
		{"setfenv(1, {KEYS = {'own'}}) return KEYS[1]", []string{"d"}, nil, "-ERR user_script:1: Script attempted to access nonexistent global variable 'setfenv' script: "},
		{"return loadstring('return KEYS[1]')()", []string{"e"}, nil, "$1\r\ne\r\n"},
		{"return loadstring('return KEYS[1]')()", []string{"f"}, nil, "$1\r\nf\r\n"},
		{"KEYS = {} return 1", nil, nil, "-ERR user_script:1: Attempt to modify a readonly table script: "},
	})
}

// TestSandboxKeepsEveryLibraryAsItWas pins down Redis 7.0's read-only
// tables (sandbox.go): every way of writing to a library table, the
// globals, a metatable reachable from them or the string metatable fails,
// and the next script sees the libraries unchanged.
func TestSandboxKeepsEveryLibraryAsItWas(t *testing.T) {
	e := New(nil)
	defer e.Close()
	const readonly = "-ERR user_script:1: Attempt to modify a readonly table script: "
	var steps []evalStep
	for _, write := range []string{
		"string.len = nil", "string.foo = 1", "redis.call = nil", "table.insert = nil", "_G.x = 1",
		"x = 1", "cjson.null = 1", "getmetatable('').__index = nil", "getmetatable('').__index.len = nil",
		"getmetatable(_G).__index = nil",
		"local mt = getmetatable(setmetatable({}, getmetatable(''))) mt.__index = nil",
	} {
		steps = append(steps, evalStep{write, nil, nil, readonly})
	}
	for _, write := range []string{"rawset(_G, 'x', 1)", "rawset(string, 'len', 1)", "table.insert(redis, 1)", "setmetatable(_G, nil)", "setmetatable(string, {})"} {
		steps = append(steps, evalStep{write, nil, nil, "-ERR Attempt to modify a readonly table script: "})
	}
	steps = append(steps,
		evalStep{"return {string.len('abc'), ('ab'):len(), type(redis.call), type(table.insert), tostring(rawget(_G, 'x')), tostring(rawget(string, 'foo')), type(cjson.null)}", nil, nil,
			"*7\r\n:3\r\n:2\r\n$8\r\nfunction\r\n$8\r\nfunction\r\n$3\r\nnil\r\n$3\r\nnil\r\n$8\r\nuserdata\r\n"},
		evalStep{"local n = 0 for k in pairs(string) do n = n + 1 end return {n, next(string) ~= nil}", nil, nil, "*2\r\n:15\r\n:1\r\n"},
		evalStep{"return setfenv", nil, nil, "-ERR user_script:1: Script attempted to access nonexistent global variable 'setfenv' script: "},
	)
	runEvalSteps(t, e, true, steps)
}

// TestGcinfoHoldsStillWithinARun: the Go heap gcinfo reports is shared
// with every other client, so a run answers every call with its first
// reading, whatever others allocate meanwhile; a new run reads again.
func TestGcinfoHoldsStillWithinARun(t *testing.T) {
	e := New(nil)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // another client, allocating all the while
		defer close(done)
		var keep [][]byte
		for {
			select {
			case <-stop:
				return
			default:
			}
			keep = append(keep, make([]byte, 64<<10))
			if len(keep) > 64 {
				keep = keep[:0]
			}
		}
	}()
	defer func() { close(stop); <-done }()
	const body = `local a = gcinfo()
local t = {}
for i = 1, 20000 do t[i] = tostring(i) end
return {a == gcinfo(), math.floor(a) == a, a > 0}`
	for range 20 {
		if got := eval(t, e, body, 2); got != "*3\r\n:1\r\n:1\r\n:1\r\n" {
			t.Fatalf("gcinfo within a run: %q, want three trues", got)
		}
	}
}
