// Package scripting runs Redis's Lua scripts (EVAL, EVALSHA and their _RO
// forms) and Redis 7 functions (FUNCTION LOAD, FCALL) on gopher-lua, a Lua
// 5.1 written in Go, with Redis 7.0's API and rules: the redis.* table
// (call, pcall, error_reply, status_reply, sha1hex, log, setresp, set_repl,
// breakpoint, debug), KEYS and ARGV, the RESP <-> Lua conversions in both
// directions for RESP2 and RESP3 (script_lua.c), the error formats
// ("... script: <sha>, on @user_script:<line>."), script flags from the
// "#!lua flags=..." shebang, the sandbox (only the globals Redis has, and
// every table reachable from them read only, sandbox.go), and the cjson, bit,
// struct and cmsgpack libraries scripts rely on (this package's own
// implementations).
//
// It is not the command table nor the server: the commands a script runs
// go through a Caller that the server implements with its own dispatch
// checks (noscript, ACL, write in a read-only script, OOM, cluster slot),
// and the server decides when a script runs (alone, like EXEC) and when it
// is killed (by cancelling the run's context). One Engine per server holds
// one Lua state for EVAL scripts and one for functions, like Redis; SCRIPT
// FLUSH and FUNCTION FLUSH replace them, which is what bounds their memory.
//
// Known differences from Redis 7.0, which runs the reference Lua 5.1 in C:
// messages of errors the Lua VM itself raises (gopher-lua words "attempt to
// concatenate" and friends its own way), tostring of non-integer numbers
// (Go's shortest representation, not %.14g), math.random's sequence, an
// argument error's "got nil" for a missing argument (Lua: "got no value"),
// string.dump (gopher-lua has no bytecode), cjson's configuration functions
// (encode_keep_buffer and friends), and string.rep past 512 MiB, which
// fails ("not enough memory") rather than take the server's memory.
package scripting
