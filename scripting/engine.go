package scripting

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	lua "github.com/yuin/gopher-lua"

	"github.com/kvserver/kvserver/resp"
)

// Caller runs the commands a script calls, with the checks Redis makes for
// commands from scripts (script.c's scriptCall).
type Caller interface {
	// Call runs args (the command name first) for the script run r,
	// encoding the reply in RESP version proto, and returns its bytes. A
	// command refused before it ran returns the refusal instead, as an
	// error message with its code ("ERR This Redis command is not allowed
	// from script").
	Call(r *Run, args [][]byte, proto int) (reply []byte, refusal string)
}

// Run is one EVAL or FCALL: what the caller passes in and what the
// Caller learns while the script runs.
type Run struct {
	// Ctx ends when the script is to stop (SCRIPT KILL, FUNCTION KILL,
	// shutdown); the script then fails with Redis's "Script killed"
	// error.
	Ctx context.Context
	// W is the calling client's reply writer.
	W *resp.Writer
	// Caller runs the script's commands.
	Caller Caller
	// Keys and Args are the KEYS and ARGV of the call.
	Keys, Args [][]byte
	// ReadOnly is EVAL_RO, EVALSHA_RO or FCALL_RO.
	ReadOnly bool
	// Check, when set, is asked before the script runs, with its flags,
	// for the server's own refusals (no-cluster, OOM); it returns the
	// error reply, "" to run.
	Check func(Flags) string

	// Flags are the running script's flags; NoWrites is set when write
	// commands must fail in it (a read-only call or FlagNoWrites).
	Flags    Flags
	NoWrites bool
	// Function is true for FCALL; Name is the function's name or the
	// script's SHA1.
	Function bool
	Name     string
	// proto is the RESP version redis.setresp chose for command replies.
	proto int
	// gcKiB is what gcinfo first answered in the run; 0 before.
	gcKiB int64
}

// Engine is a server's scripting: the EVAL scripts it knows (by SHA1), the
// function libraries loaded, and the Lua states they run in. It is safe for
// concurrent use; scripts run one at a time.
type Engine struct {
	mu  sync.Mutex
	log *slog.Logger

	eval *luaState
	// scripts are the EVAL scripts by lower-case SHA1.
	scripts map[string]*evalScript
	// scriptCount and scriptBytes are the number of scripts and the size
	// of their bodies (INFO's number_of_cached_scripts and
	// used_memory_scripts_eval), read without waiting for a script.
	scriptCount, scriptBytes atomic.Int64

	lib *functionState
	// libCount and funcCount are the libraries and functions loaded, for
	// FUNCTION STATS, which must answer while a script runs (and holds
	// mu).
	libCount, funcCount atomic.Int64

	rand lrand48
}

// evalScript is one EVAL script, compiled.
type evalScript struct {
	fn    *lua.LFunction
	body  string
	sha   string
	flags Flags
	// hoisted are the constants that hold KEYS and ARGV (hoist.go), and
	// boundKeys and boundArgv the tables they hold.
	hoisted              []hoisted
	boundKeys, boundArgv *lua.LTable
}

// New returns an Engine with no scripts and no functions.
func New(log *slog.Logger) *Engine {
	e := &Engine{log: log}
	e.rand.seed(0)
	e.resetEval()
	e.lib = newFunctionState(e)
	return e
}

// Close releases the Lua states.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.eval.L.Close()
	e.lib.st.L.Close()
}

// resetEval starts a fresh Lua state for EVAL scripts, forgetting them all.
func (e *Engine) resetEval() {
	if e.eval != nil {
		e.eval.L.Close()
	}
	e.eval = newLuaState(e, "user_script", true)
	e.scripts = make(map[string]*evalScript)
	e.scriptCount.Store(0)
	e.scriptBytes.Store(0)
}

// SHA1Hex is the lower-case hex SHA1 of b, the name EVALSHA knows a script
// by.
func SHA1Hex(b []byte) string {
	sum := sha1.Sum(b)
	return hex.EncodeToString(sum[:])
}

// ScriptLoad compiles body and keeps it (SCRIPT LOAD); it returns the
// script's SHA1, or an error reply.
func (e *Engine) ScriptLoad(body []byte) (string, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, sha, msg := e.loadScript(body)
	if s == nil {
		return "", msg
	}
	return sha, ""
}

// loadScript finds or compiles the script body.
func (e *Engine) loadScript(body []byte) (*evalScript, string, string) {
	sha := SHA1Hex(body)
	if s := e.scripts[sha]; s != nil {
		return s, sha, ""
	}
	flags, start, msg := evalFlags(body)
	if msg != "" {
		return nil, sha, msg
	}
	fn, err := e.eval.L.Load(strings.NewReader(string(body[start:])), "user_script")
	if err != nil {
		return nil, sha, "ERR Error compiling script (new function): " + compileError(err, "user_script", body[start:])
	}
	fn.Env = e.eval.env
	noArgTable(fn)
	s := &evalScript{fn: fn, body: string(body), sha: sha, flags: flags, hoisted: e.eval.hoistGlobals(fn.Proto)}
	e.scripts[sha] = s
	e.scriptCount.Add(1)
	e.scriptBytes.Add(int64(len(body)))
	return s, sha, ""
}

// noArgTable stops gopher-lua from building Lua 5.0's arg table for every
// call of a compiled chunk: the chunk is a vararg function, and gopher-lua
// marks it as needing arg where Lua 5.1 does not (its main chunk has no
// arg), which costs a table per EVALSHA.
func noArgTable(fn *lua.LFunction) { fn.Proto.IsVarArg &^= lua.VarArgNeedsArg }

// compileError words a gopher-lua compile error the way Lua 5.1 does,
// "user_script:<line>: <what> near '<token>'", as far as it can: the
// position and token are the same, gopher-lua's description of the
// problem ("syntax error") is its own.
func compileError(err error, source string, code []byte) string {
	msg := strings.TrimSpace(err.Error())
	rest, ok := strings.CutPrefix(msg, source+" ")
	if !ok {
		return msg
	}
	line, near := "", ""
	if after, ok := strings.CutPrefix(rest, "at EOF:"); ok {
		line, near, rest = strconv.Itoa(bytes.Count(code, []byte("\n"))+1), "'<eof>'", after
	} else if after, ok := strings.CutPrefix(rest, "line:"); ok {
		i := strings.IndexByte(after, '(')
		j := strings.Index(after, "near ")
		k := strings.LastIndex(after, ":")
		if i < 0 || j < 0 || k < j {
			return msg
		}
		line, near, rest = after[:i], strings.TrimSpace(after[j+5:k]), after[k+1:]
	} else {
		return msg
	}
	return source + ":" + line + ": " + strings.TrimSpace(rest) + " near " + near
}

// ScriptExists reports, per SHA1, whether the script is known.
func (e *Engine) ScriptExists(shas [][]byte) []bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]bool, len(shas))
	for i, sha := range shas {
		_, out[i] = e.scripts[strings.ToLower(string(sha))]
	}
	return out
}

// ScriptFlush forgets every EVAL script and starts a fresh Lua state for
// them (SCRIPT FLUSH).
func (e *Engine) ScriptFlush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.resetEval()
}

// ScriptsMemory reports the number of EVAL scripts and their bodies' size,
// without waiting for a running script.
func (e *Engine) ScriptsMemory() (n, bytes int64) {
	return e.scriptCount.Load(), e.scriptBytes.Load()
}

// Eval runs the script body (EVAL), compiling and keeping it first, and
// writes its reply to r.W.
func (e *Engine) Eval(r *Run, body []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, sha, msg := e.loadScript(body)
	if s == nil {
		r.W.Error(msg)
		return
	}
	e.runScript(r, s, sha)
}

// EvalSHA runs the script known by sha (EVALSHA), writing its reply to
// r.W, or NOSCRIPT.
func (e *Engine) EvalSHA(r *Run, sha []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.scripts[string(sha)]
	if s == nil {
		s = e.scripts[strings.ToLower(string(sha))]
	}
	if s == nil || len(sha) != 40 {
		r.W.Error("NOSCRIPT No matching script. Please use EVAL.")
		return
	}
	e.runScript(r, s, s.sha)
}

// prepare applies Redis's scriptPrepareForRun to the script's flags; it
// returns the error reply that refuses the run, "" to run.
func prepare(r *Run, flags Flags) string {
	r.Flags = flags
	if flags&FlagEvalCompat == 0 && flags&FlagNoWrites == 0 && r.ReadOnly {
		return "ERR Can not execute a script with write flag using *_ro command."
	}
	if r.Check != nil {
		if msg := r.Check(flags); msg != "" {
			return msg
		}
	}
	r.NoWrites = r.ReadOnly || (flags&FlagEvalCompat == 0 && flags&FlagNoWrites != 0)
	return ""
}

func (e *Engine) runScript(r *Run, s *evalScript, sha string) {
	if msg := prepare(r, s.flags); msg != "" {
		r.W.Error(msg)
		return
	}
	r.Name = sha
	st := e.eval
	L := st.L
	st.keys = st.fillArray(st.keys, "KEYS", r.Keys)
	st.argv = st.fillArray(st.argv, "ARGV", r.Args)
	st.bindRunGlobals(s)
	L.Push(s.fn)
	st.call(r, 0)
	if st.broken {
		e.rebuildEval()
	}
}

// rebuildEval replaces a broken EVAL Lua state with a fresh one holding
// the same scripts.
func (e *Engine) rebuildEval() {
	old := e.scripts
	e.resetEval()
	for _, s := range old {
		e.loadScript([]byte(s.body))
	}
	if e.log != nil {
		e.log.Warn("Lua state for EVAL scripts rebuilt after a script broke it", "scripts", len(old))
	}
}
