package commands

import (
	"bytes"
	"strings"
	"time"

	"github.com/kvserver/kvserver/scripting"
)

// The scripting family: EVAL, EVALSHA and their read-only forms, SCRIPT,
// FUNCTION, FCALL and FCALL_RO (Redis's eval.c and functions.c). The Lua
// side lives in package scripting; package server runs a script alone,
// like EXEC (Spec.Exclusive), dispatches the commands it calls through the
// command table with Redis's checks for scripts, and kills it on SCRIPT
// KILL or FUNCTION KILL.

// Key specs of the script commands: the keys are declared by count, and
// Redis assumes the worst of what the script does with them.
var (
	scriptKeysRW = []KeySpec{{Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE",
		Flags: KeyRW | KeyAccess | KeyUpdate, Begin: Index(2), Find: KeyNum(0, 1, 1)}}
	scriptKeysRWNoNotes = []KeySpec{{Flags: KeyRW | KeyAccess | KeyUpdate, Begin: Index(2), Find: KeyNum(0, 1, 1)}}
	scriptKeysRO        = []KeySpec{{Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS",
		Flags: KeyRO | KeyAccess, Begin: Index(2), Find: KeyNum(0, 1, 1)}}
	scriptKeysRONoNotes = []KeySpec{{Flags: KeyRO | KeyAccess, Begin: Index(2), Find: KeyNum(0, 1, 1)}}
)

const scriptFlags = FlagNoscript | FlagStale | FlagSkipMonitor | FlagNoMandatoryKeys

// scriptingCommands are the scripting family's rows.
var scriptingCommands = []*Spec{
	// EVAL, EVALSHA and FCALL may write (CMD_MAY_REPLICATE): CLIENT PAUSE
	// WRITE holds them; the _RO forms run.
	{Name: "eval", Arity: -3, Flags: scriptFlags, ACL: "@slow @scripting", KeySpecs: scriptKeysRW, Exclusive: true, MayReplicate: true, Handler: cmdEval},
	{Name: "evalsha", Arity: -3, Flags: scriptFlags, ACL: "@slow @scripting", KeySpecs: scriptKeysRWNoNotes, Exclusive: true, MayReplicate: true, Handler: cmdEvalSHA},
	{Name: "eval_ro", Arity: -3, Flags: FlagReadonly | scriptFlags, ACL: "@slow @scripting", KeySpecs: scriptKeysRO, Exclusive: true, Handler: cmdEvalRO},
	{Name: "evalsha_ro", Arity: -3, Flags: FlagReadonly | scriptFlags, ACL: "@slow @scripting", KeySpecs: scriptKeysRONoNotes, Exclusive: true, Handler: cmdEvalSHARO},
	{Name: "fcall", Arity: -3, Flags: scriptFlags, ACL: "@slow @scripting", KeySpecs: scriptKeysRW, Exclusive: true, MayReplicate: true, Handler: cmdFCall},
	{Name: "fcall_ro", Arity: -3, Flags: FlagReadonly | scriptFlags, ACL: "@slow @scripting", KeySpecs: scriptKeysRO, Exclusive: true, Handler: cmdFCallRO},
	{Name: "script", Arity: -2, ACL: "@slow", Subcommands: []*Spec{
		{Name: "script|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow @scripting", Handler: cmdScriptHelp},
		{Name: "script|flush", Arity: -2, Flags: FlagNoscript, ACL: "@slow @scripting", Handler: cmdScriptFlush},
		{Name: "script|exists", Arity: -3, Flags: FlagNoscript, ACL: "@slow @scripting", Handler: cmdScriptExists},
		{Name: "script|kill", Arity: 2, Flags: FlagNoscript | FlagAllowBusy, ACL: "@slow @scripting", Handler: cmdScriptKill},
		{Name: "script|load", Arity: 3, Flags: FlagNoscript | FlagStale, ACL: "@slow @scripting", Handler: cmdScriptLoad},
		{Name: "script|debug", Arity: 3, Flags: FlagNoscript, ACL: "@slow @scripting", Handler: cmdScriptDebug},
	}},
	{Name: "function", Arity: -2, ACL: "@slow", Subcommands: []*Spec{
		{Name: "function|kill", Arity: 2, Flags: FlagNoscript | FlagAllowBusy, ACL: "@slow @scripting", Handler: cmdFunctionKill},
		{Name: "function|restore", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagNoscript, ACL: "@write @slow @scripting", Handler: cmdFunctionRestore},
		{Name: "function|load", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagNoscript, ACL: "@write @slow @scripting", Handler: cmdFunctionLoad},
		{Name: "function|flush", Arity: -2, Flags: FlagWrite | FlagNoscript, ACL: "@write @slow @scripting", Handler: cmdFunctionFlush},
		{Name: "function|list", Arity: -2, Flags: FlagNoscript, ACL: "@slow @scripting", Handler: cmdFunctionList},
		{Name: "function|delete", Arity: 3, Flags: FlagWrite | FlagNoscript, ACL: "@write @slow @scripting", Handler: cmdFunctionDelete},
		{Name: "function|dump", Arity: 2, Flags: FlagNoscript, ACL: "@slow @scripting", Handler: cmdFunctionDump},
		{Name: "function|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@slow @scripting", Handler: cmdFunctionHelp},
		{Name: "function|stats", Arity: 2, Flags: FlagNoscript | FlagAllowBusy, ACL: "@slow @scripting", Handler: cmdFunctionStats},
	}},
}

// ScriptCall is one script command's request to RunScript: a value, so
// that running a script allocates no closure.
type ScriptCall struct {
	// Kind is which engine entry point runs it.
	Kind ScriptKind
	// ReadOnly: EVAL_RO, EVALSHA_RO, FCALL_RO.
	ReadOnly bool
	// Target is EVAL's script body, EVALSHA's digest or FCALL's function
	// name.
	Target []byte
	// Keys and Args are the command's keys and other arguments.
	Keys, Args [][]byte
}

// ScriptKind is which scripting.Engine entry point a ScriptCall runs.
type ScriptKind uint8

// The kinds of ScriptCall.
const (
	ScriptEval    ScriptKind = iota // Engine.Eval: EVAL, EVAL_RO
	ScriptEvalSHA                   // Engine.EvalSHA: EVALSHA, EVALSHA_RO
	ScriptFCall                     // Engine.FCall: FCALL, FCALL_RO
)

// Run runs call on r with lua's matching entry point.
func (call *ScriptCall) Run(lua *scripting.Engine, r *scripting.Run) {
	switch call.Kind {
	case ScriptEvalSHA:
		lua.EvalSHA(r, call.Target)
	case ScriptFCall:
		lua.FCall(r, call.Target)
	default:
		lua.Eval(r, call.Target)
	}
}

// Scripting is the server's side of scripts: its engine, the one script
// that runs at a time, and SCRIPT KILL / FUNCTION KILL.
type Scripting interface {
	// Lua is the server's scripting engine.
	Lua() *scripting.Engine
	// FunctionsChanged keeps the function libraries as they are now (a
	// FUNCTION LOAD, DELETE, FLUSH or RESTORE changed them) where they
	// outlive a restart, as Redis keeps them in its RDB and AOF.
	FunctionsChanged()
	// RunScript runs call for this connection with a Run the server
	// prepared (the reply writer, the Caller that dispatches the script's
	// commands, the context SCRIPT KILL cancels) and call's keys, args and
	// read-only flag filled in. The dispatcher already holds every other
	// client's command off (Spec.Exclusive).
	RunScript(call ScriptCall)
	// KillScript stops the running script, for SCRIPT KILL (function
	// false) or FUNCTION KILL (true); it returns the error reply, "" when
	// the script was told to stop.
	KillScript(function bool) string
	// RunningScript describes the script running now, for FUNCTION
	// STATS; ok is false when none runs.
	RunningScript() (r RunningScript, ok bool)
	// MonitorScriptCommand shows the script command args (EVAL, FCALL
	// and their kin, which dispatch leaves out: skip_monitor) to the
	// monitors before anything else, as Redis's evalCommand does, so that
	// the commands the script runs follow it in the feed.
	MonitorScriptCommand(args [][]byte)
}

// RunningScript is the script or function running now.
type RunningScript struct {
	// Function is true for FCALL; Name is then the function's name and
	// Command the FCALL that called it.
	Function bool
	Name     string
	Command  [][]byte
	// Took is how long it has run so far.
	Took time.Duration
}

// Redis 7.0's BUSY replies while a script (shared.slowevalerr) or a
// function (shared.slowscripterr) runs past busy-reply-threshold.
const (
	ErrBusyScript   = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	ErrBusyFunction = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)

// scriptArgs splits EVAL's and FCALL's arguments after the script into
// keys and args, answering the errors of a bad key count (notInt for one
// that is no integer).
func scriptArgs(x *Ctx, notInt string) (keys, args [][]byte, ok bool) {
	n, isInt := ParseInt64(x.Args[2])
	switch {
	case !isInt:
		x.W.Error(notInt)
		return nil, nil, false
	case n < 0:
		x.W.Error("ERR Number of keys can't be negative")
		return nil, nil, false
	case n > int64(len(x.Args)-3):
		x.W.Error("ERR Number of keys can't be greater than number of args")
		return nil, nil, false
	}
	return x.Args[3 : 3+n], x.Args[3+n:], true
}

// evalGeneric runs EVAL's family: the script by body or by SHA1,
// read-only or not.
func evalGeneric(x *Ctx, bySHA, readOnly bool) {
	x.Scripting.MonitorScriptCommand(x.Args)
	keys, args, ok := scriptArgs(x, errNotInteger)
	if !ok {
		return
	}
	kind := ScriptEval
	if bySHA {
		kind = ScriptEvalSHA
	}
	x.Scripting.RunScript(ScriptCall{Kind: kind, ReadOnly: readOnly, Target: x.Args[1], Keys: keys, Args: args})
}

func cmdEval(x *Ctx)       { evalGeneric(x, false, false) }
func cmdEvalSHA(x *Ctx)    { evalGeneric(x, true, false) }
func cmdEvalRO(x *Ctx)     { evalGeneric(x, false, true) }
func cmdEvalSHARO(x *Ctx)  { evalGeneric(x, true, true) }
func cmdFCall(x *Ctx)      { fcallGeneric(x, false) }
func cmdFCallRO(x *Ctx)    { fcallGeneric(x, true) }
func cmdScriptKill(x *Ctx) { replyKill(x, false) }
func cmdFunctionKill(x *Ctx) {
	replyKill(x, true)
}

// fcallGeneric is FCALL and FCALL_RO; like Redis it looks the function up
// before it reads the key count.
func fcallGeneric(x *Ctx, readOnly bool) {
	x.Scripting.MonitorScriptCommand(x.Args)
	name := x.Args[1]
	if !x.Scripting.Lua().HasFunction(name) {
		x.W.Error("ERR Function not found")
		return
	}
	keys, args, ok := scriptArgs(x, "ERR Bad number of keys provided")
	if !ok {
		return
	}
	x.Scripting.RunScript(ScriptCall{Kind: ScriptFCall, ReadOnly: readOnly, Target: name, Keys: keys, Args: args})
}

func replyKill(x *Ctx, function bool) {
	if msg := x.Scripting.KillScript(function); msg != "" {
		x.W.Error(msg)
		return
	}
	x.W.OK()
}

func cmdScriptHelp(x *Ctx) {
	writeHelp(x, "SCRIPT",
		"DEBUG (YES|SYNC|NO)",
		"    Set the debug mode for subsequent scripts executed.",
		"EXISTS <sha1> [<sha1> ...]",
		"    Return information about the existence of the scripts in the script cache.",
		"FLUSH [ASYNC|SYNC]",
		"    Flush the Lua scripts cache. Very dangerous on replicas.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the scripts cache.",
		"    * SYNC: Synchronously flush the scripts cache.",
		"KILL",
		"    Kill the currently executing Lua script.",
		"LOAD <script>",
		"    Load a script into the scripts cache without executing it.",
	)
}

// flushMode checks FLUSH's optional SYNC|ASYNC (both flush at once here:
// the old Lua state is left to the garbage collector either way).
func flushMode(x *Ctx, i int, msg string) bool {
	if len(x.Args) > i+1 || len(x.Args) == i+1 &&
		!strings.EqualFold(string(x.Args[i]), "sync") && !strings.EqualFold(string(x.Args[i]), "async") {
		x.W.Error(msg)
		return false
	}
	return true
}

func cmdScriptFlush(x *Ctx) {
	if !flushMode(x, 2, "ERR SCRIPT FLUSH only support SYNC|ASYNC option") {
		return
	}
	x.Scripting.Lua().ScriptFlush()
	x.W.OK()
}

func cmdScriptExists(x *Ctx) {
	found := x.Scripting.Lua().ScriptExists(x.Args[2:])
	x.W.Array(len(found))
	for _, f := range found {
		if f {
			x.W.Int(1)
		} else {
			x.W.Int(0)
		}
	}
}

func cmdScriptLoad(x *Ctx) {
	sha, msg := x.Scripting.Lua().ScriptLoad(x.Args[2])
	if msg != "" {
		x.W.Error(msg)
		return
	}
	x.W.BulkString(sha)
}

// cmdScriptDebug is SCRIPT DEBUG: kvserver has no Lua debugger, so only NO
// (the default) is accepted.
func cmdScriptDebug(x *Ctx) {
	switch strings.ToLower(string(x.Args[2])) {
	case "no":
		x.W.OK()
	case "yes", "sync":
		x.W.Error("ERR kvserver has no Lua debugger: SCRIPT DEBUG YES and SYNC are not supported")
	default:
		x.W.Error("ERR Use SCRIPT DEBUG YES/SYNC/NO")
	}
}

func cmdFunctionHelp(x *Ctx) {
	writeHelp(x, "FUNCTION",
		"LOAD [REPLACE] <FUNCTION CODE>",
		"    Create a new library with the given library name and code.",
		"DELETE <LIBRARY NAME>",
		"    Delete the given library.",
		"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
		"    Return general information on all the libraries:",
		"    * Library name",
		"    * The engine used to run the Library",
		"    * Library description",
		"    * Functions list",
		"    * Library code (if WITHCODE is given)",
		"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
		"STATS",
		"    Return information about the current function running:",
		"    * Function name",
		"    * Command used to run the function",
		"    * Duration in MS that the function is running",
		"    If no function is running, return nil",
		"    In addition, returns a list of available engines.",
		"KILL",
		"    Kill the current running function.",
		"FLUSH [ASYNC|SYNC]",
		"    Delete all the libraries.",
		"    When called without the optional mode argument, the behavior is determined by the",
		"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
		"    * ASYNC: Asynchronously flush the libraries.",
		"    * SYNC: Synchronously flush the libraries.",
		"DUMP",
		"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
		"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
		"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
		"    control how to handle existing libraries (default APPEND):",
		"    * FLUSH: delete all existing libraries.",
		"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
		"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
		"      libraries with the new libraries (notice that even on this option there is a chance of failure",
		"      in case of functions name collision with another library).",
	)
}

// cmdFunctionLoad is FUNCTION LOAD [REPLACE] code.
func cmdFunctionLoad(x *Ctx) {
	replace := false
	i := 2
	for ; i < len(x.Args)-1; i++ {
		if !strings.EqualFold(string(x.Args[i]), "replace") {
			x.W.Error("ERR Unknown option given: " + string(x.Args[i]))
			return
		}
		replace = true
	}
	if i != len(x.Args)-1 {
		x.W.Error("ERR Function code was not given")
		return
	}
	name, msg := x.Scripting.Lua().FunctionLoad(x.Args[i], replace)
	if msg != "" {
		x.W.Error(msg)
		return
	}
	x.Scripting.FunctionsChanged()
	x.W.BulkString(name)
}

func cmdFunctionDelete(x *Ctx) {
	if !x.Scripting.Lua().FunctionDelete(x.Args[2]) {
		x.W.Error("ERR Library not found")
		return
	}
	x.Scripting.FunctionsChanged()
	x.W.OK()
}

func cmdFunctionFlush(x *Ctx) {
	if !flushMode(x, 2, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option") {
		return
	}
	x.Scripting.Lua().FunctionFlush()
	x.Scripting.FunctionsChanged()
	x.W.OK()
}

// cmdFunctionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func cmdFunctionList(x *Ctx) {
	var pattern []byte
	withCode := false
	for i := 2; i < len(x.Args); i++ {
		switch a := string(x.Args[i]); {
		case !withCode && strings.EqualFold(a, "withcode"):
			withCode = true
		case pattern == nil && strings.EqualFold(a, "libraryname"):
			if i+1 >= len(x.Args) {
				x.W.Error("ERR library name argument was not given")
				return
			}
			i++
			pattern = x.Args[i]
		default:
			x.W.Error("ERR Unknown argument " + a)
			return
		}
	}
	libs := x.Scripting.Lua().Libraries(pattern)
	x.W.Array(len(libs))
	for _, lib := range libs {
		n := 3
		if withCode {
			n = 4
		}
		x.W.Map(n)
		x.W.BulkString("library_name")
		x.W.BulkString(lib.Name)
		x.W.BulkString("engine")
		x.W.BulkString("LUA")
		x.W.BulkString("functions")
		x.W.Array(len(lib.Functions))
		for _, fn := range lib.Functions {
			x.W.Map(3)
			x.W.BulkString("name")
			x.W.BulkString(fn.Name)
			x.W.BulkString("description")
			if fn.HasDescription {
				x.W.BulkString(fn.Description)
			} else {
				x.W.Null()
			}
			x.W.BulkString("flags")
			flags := fn.Flags.Names()
			x.W.Set(len(flags))
			for _, f := range flags {
				x.W.Simple(f)
			}
		}
		if withCode {
			x.W.BulkString("library_code")
			x.W.BulkString(lib.Code)
		}
	}
}

// cmdFunctionStats is FUNCTION STATS: the running function, if any, and
// the engine's counts. Like Redis it is BUSY while an EVAL script runs.
func cmdFunctionStats(x *Ctx) {
	run, running := x.Scripting.RunningScript()
	if running && !run.Function {
		x.W.Error(ErrBusyScript)
		return
	}
	x.W.Map(2)
	x.W.BulkString("running_script")
	if running {
		x.W.Map(3)
		x.W.BulkString("name")
		x.W.BulkString(run.Name)
		x.W.BulkString("command")
		x.W.Array(len(run.Command))
		for _, a := range run.Command {
			x.W.Bulk(a)
		}
		x.W.BulkString("duration_ms")
		x.W.Int(run.Took.Milliseconds())
	} else {
		x.W.Null()
	}
	libs, funcs := x.Scripting.Lua().FunctionCounts()
	x.W.BulkString("engines")
	x.W.Map(1)
	x.W.BulkString("LUA")
	x.W.Map(2)
	x.W.BulkString("libraries_count")
	x.W.Int(int64(libs))
	x.W.BulkString("functions_count")
	x.W.Int(int64(funcs))
}

func cmdFunctionDump(x *Ctx) {
	x.W.Bulk(x.Scripting.Lua().FunctionDump())
}

// cmdFunctionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE].
func cmdFunctionRestore(x *Ctx) {
	if len(x.Args) > 4 {
		x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + Sanitize(Truncate(string(x.Args[1]), 128)) + "'. Try FUNCTION HELP.")
		return
	}
	policy := scripting.RestoreAppend
	if len(x.Args) == 4 {
		switch p := x.Args[3]; {
		case bytes.EqualFold(p, []byte("flush")):
			policy = scripting.RestoreFlush
		case bytes.EqualFold(p, []byte("append")):
		case bytes.EqualFold(p, []byte("replace")):
			policy = scripting.RestoreReplace
		default:
			x.W.Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.")
			return
		}
	}
	if msg := x.Scripting.Lua().FunctionRestore(x.Args[2], policy); msg != "" {
		x.W.Error(msg)
		return
	}
	x.Scripting.FunctionsChanged()
	x.W.OK()
}
