package tests

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestDifferentialScripting pins EVAL, EVALSHA, EVAL_RO, EVALSHA_RO,
// SCRIPT, FUNCTION, FCALL and FCALL_RO to Redis 7.0's replies: the Lua to
// RESP conversions (floats truncated, nil as false, tables up to the first
// nil, status and error tables, RESP3 types under redis.setresp(3)), the
// RESP to Lua conversions of redis.call and redis.pcall, every error path
// with its "script: <sha>, on @user_script:<line>." suffix, the sandbox,
// script flags, the cjson and bit libraries, and function libraries. Each
// script runs in RESP2 and again in RESP3.
func TestDifferentialScripting(t *testing.T) {
	t.Parallel()
	runDifferential(t, scriptingScripts())
}

// eval is a step running EVAL of body with numkeys 0 and no arguments.
func eval(body string) step { return do("EVAL", body, "0") }

// scriptingScripts are the scripts of TestDifferentialScripting.
func scriptingScripts() []script {
	return []script{
		{"lua to resp conversions", []step{
			eval("return 'hello'"),
			eval("return 42"),
			eval("return 3.99"),
			eval("return -3.99"),
			eval("return 1e100"),
			eval("return -1e100"),
			eval("return true"),
			eval("return false"),
			eval("return nil"),
			eval("return"),
			eval("return {}"),
			eval("return {1, 2, 3.7, 'a', nil, 5}"),
			eval("return {1, {2, {3, 'x'}}, 'y'}"),
			eval("return {true, false, 'z'}"),
			eval("return {ok='fine'}"),
			eval("return {ok='two\\r\\nlines'}"),
			eval("return {err='MYERR custom'}"),
			eval("return {err='no code'}"),
			eval("return redis.status_reply('PONG')"),
			eval("return redis.error_reply('MY x')"),
			eval("return redis.error_reply('x')"),
			eval("return redis.error_reply('-CODE y')"),
			eval("return redis.status_reply(1)"),
			eval("return redis.error_reply()"),
			eval("return {double=3.5}"),
			eval("return {double=-0.25}"),
			eval("return {big_number='123456789012345678901234567890'}"),
			eval("return {verbatim_string={format='txt', string='hi there'}}"),
			eval("return {map={only=1}}"),
			eval("return {set={only=true}}"),
			eval("return {map={}}"),
			eval("return {{ok='in'}, {err='ERR inner'}, 7}"),
			eval("return function() end"),
			do("EVAL", "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", "2", "k1", "k2", "a1", "a2"),
			do("EVAL", "return ARGV", "0", "x", "y", "z"),
			do("EVAL", "return KEYS", "3", "a", "b", "c"),
		}},
		{"resp3 from scripts", []step{
			eval("redis.setresp(3); return true"),
			eval("redis.setresp(3); return false"),
			eval("redis.setresp(2); return true"),
			eval("redis.setresp(3); return redis.call('get', 'nokey')"),
			eval("redis.setresp(3); return type(redis.call('get', 'nokey'))"),
			eval("redis.setresp(2); return type(redis.call('get', 'nokey'))"),
			eval("return redis.setresp(4)"),
			eval("return redis.setresp()"),
			eval("redis.setresp(3); return {1, {double=2.5}, {map={a='b'}}}"),
			do("HSET", "h", "f", "v"),
			eval("redis.setresp(3); return redis.call('hgetall', 'h')"),
			eval("redis.setresp(3); return redis.call('hgetall', 'h').map.f"),
			eval("redis.setresp(2); return redis.call('hgetall', 'h')"),
			eval("redis.setresp(3); return type(redis.call('hgetall', 'nohash').map)"),
			eval("redis.setresp(3); return redis.call('hexists', 'h', 'f')"),
			eval("return redis.call('hget', 'h', 'nofield')"),
		}},
		{"redis.call and pcall", []step{
			eval("return redis.call('set', 'k', 'v')"),
			eval("return redis.call('get', 'k')"),
			eval("return redis.call('GET', 'k')"),
			eval("return redis.call('get', 'nokey')"),
			eval("return type(redis.call('get', 'nokey'))"),
			eval("return redis.call('set', 'k', 'v').ok"),
			eval("return redis.call('incr', 'n')"),
			eval("return redis.call('incrby', 'n', 10)"),
			eval("return redis.call('incrby', 'n', 2.5)"),
			eval("redis.call('set', 'f', 3.5); return redis.call('get', 'f')"),
			eval("redis.call('set', 'f', 1e20); return redis.call('get', 'f')"),
			eval("redis.call('set', 'f', 0.1); return redis.call('get', 'f')"),
			eval("return redis.call('mget', 'k', 'nokey', 'n')"),
			eval("return redis.call('exists', 'k', 'nokey')"),
			eval("return redis.call('del', 'k')"),
			eval("return redis.call('incr', 'nokey2') + redis.call('incr', 'nokey2')"),
			eval("return redis.call('set', 'big', string.rep('x', 100000))"),
			eval("return #redis.call('get', 'big')"),
			eval("return redis.call('nosuch')"),
			eval("return redis.call('get')"),
			eval("return redis.pcall('get')"),
			eval("return redis.call('client', 'nosuchsub')"),
			eval("return redis.call('client')"),
			eval("return redis.call('eval', 'return 1', 0)"),
			eval("return redis.call('multi')"),
			eval("return redis.call(1)"),
			eval("return redis.call({})"),
			eval("return redis.call('get', nil)"),
			eval("return redis.call()"),
			eval("return redis.pcall()"),
			eval("redis.call('set', 's', 'str'); return redis.call('incr', 's')"),
			eval("return redis.pcall('incr', 's')"),
			eval("local t = redis.pcall('incr', 's'); return t['err']"),
			eval("local t = redis.pcall('incr', 's'); local n = 0; for k, v in pairs(t) do n = n + 1 end; return n"),
			eval("return {pcall(redis.call, 'incr', 's')}"),
			eval("return {pcall(error, {err='X y'})}"),
			eval("return {pcall(function() error('inner') end)}"),
			eval("return {pcall(function() return 1, 2 end)}"),
			eval("local ok, e = pcall(redis.call, 'nosuch'); return e"),
			eval("redis.call('rpush', 'l', 'a', 'b', 'c'); return redis.call('lrange', 'l', 0, -1)"),
			eval("return redis.call('blpop', 'l', 0)"),
			eval("return redis.call('lpop', 'nolist')"),
			eval("redis.setresp(3); return redis.call('lpop', 'nolist')"),
			eval("return redis.pcall('nosuch')"),
		}},
		{"script errors", []step{
			eval("error('boom')"),
			eval("\n\nerror('on line three')"),
			eval("error({err='MY boom'})"),
			eval("error({err='plain'})"),
			eval("local t = redis.call('nosuch')"),
			eval("local x = 1\nreturn redis.call('incr', 'x', 'y')"),
			eval("redis.call('set', 's', 'str'); redis.call('incr', 's')"),
			eval("return foo"),
			eval("foo = 1"),
			eval("KEYS = 1"),
			eval("redis = nil"),
			eval("return os"),
			eval("return io"),
			eval("return loadfile"),
			eval("return dofile"),
			eval("return print"),
			eval("return require"),
			eval("return debug"),
			eval("return _G.nope"),
			eval("local f = function() return undefined_thing end; return f()"),
			eval("local function f() return 1 + f() end return f()"),
			eval("local t = {} for i = 1, 100000 do t[i] = i end return #{unpack(t)}"),
			eval("local t = {} for i = 1, 7000 do t[i] = i end return #{unpack(t)}"),
			eval("local t = {} t[1] = t return cjson.encode(t)"),
			eval("return select('#', unpack({1, 2, nil, 4}))"),
			eval("return {unpack({1, 2, 3}, 2)}"),
			do("EVAL", "return 1"),
			do("EVAL"),
			do("EVAL", "return 1", "-1"),
			do("EVAL", "return 1", "x"),
			do("EVAL", "return 1", "3", "a"),
			do("EVAL", "return 1", "99999999999999999999"),
			eval("#!lua flags=bad\nreturn 1"),
			eval("#!lua name=x\nreturn 1"),
			eval("#!luax\nreturn 1"),
			eval("#!lua flags=no-writes,allow-oom\nreturn 1"),
			eval("#!lua flags=\nreturn 2"),
		}},
		{"redis api", []step{
			eval("return redis.sha1hex('')"),
			eval("return redis.sha1hex('abc')"),
			eval("return redis.sha1hex()"),
			eval("return redis.log(redis.LOG_WARNING, 'from a script', 1)"),
			eval("return redis.log(1)"),
			eval("return redis.log('x', 'y')"),
			eval("return redis.log(9, 'y')"),
			eval("return redis.set_repl(redis.REPL_ALL)"),
			eval("return redis.set_repl(9)"),
			eval("return redis.set_repl()"),
			eval("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_SLAVE, redis.REPL_ALL}"),
			eval("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}"),
			eval("return redis.REDIS_VERSION"),
			eval("return redis.REDIS_VERSION_NUM"),
			eval("return redis.breakpoint()"),
			eval("return redis.debug('x')"),
			eval("return redis.acl_check_cmd('get', 'k')"),
			eval("return redis.acl_check_cmd('nosuch')"),
			eval("return type(math.random())"),
			eval("return math.random(1, 1)"),
			eval("return _VERSION"),
			eval("return loadstring('return 7')()"),
			eval("return tostring(12) .. tonumber('34')"),
			eval("return string.format('%d-%s', 5, 'x')"),
			eval("return table.concat({'a', 'b'}, ',')"),
			eval("return select('#', 1, 2, 3)"),
			eval("return unpack({1, 2})"),
			eval("local t = {}; setmetatable(t, {__index = function() return 5 end}); return t.x"),
			eval("return coroutine.wrap(function() coroutine.yield(9) end)()"),
		}},
		{"cjson, bit, struct and cmsgpack", []step{
			eval("return cjson.encode({1, 2, {a=1}})"),
			eval("return cjson.encode({key='va\"l\\\\ue/'})"),
			eval("return cjson.encode({})"),
			eval("return cjson.encode('tab\\tnew\\nline')"),
			eval("return cjson.encode({1.5, -2, 1e20, 0.1, true, false, cjson.null})"),
			eval("return cjson.encode({[1]=1, [2]=2, [4]=4})"),
			eval("return cjson.encode(nil)"),
			eval("return cjson.decode('[1,2,{\"a\":3.5}]')[3].a"),
			eval("return cjson.decode('{\"x\":[10,20]}').x[2]"),
			eval("return cjson.decode('\"\\\\u00e9\\\\n\"')"),
			eval("return cjson.decode('null') == cjson.null"),
			eval("return cjson.decode('[true,false]')[2]"),
			eval("return cjson.encode(cjson.decode('{\"k\":\"v\"}'))"),
			eval("return bit.band(7, 3)"),
			eval("return bit.bor(1, 2, 4)"),
			eval("return bit.bxor(5, 1)"),
			eval("return bit.bnot(0)"),
			eval("return bit.lshift(1, 31)"),
			eval("return bit.rshift(-1, 28)"),
			eval("return bit.arshift(-256, 4)"),
			eval("return bit.rol(1, 33)"),
			eval("return bit.ror(1, 1)"),
			eval("return bit.tobit(4294967297)"),
			eval("return bit.tohex(255)"),
			eval("return bit.tohex(255, -4)"),
			eval("return bit.tohex(-1, 2)"),
			eval("return bit.bswap(0x12345678)"),
			eval("return struct.pack('>I2', 258)"),
			eval("return {struct.unpack('<hH', struct.pack('<hH', -2, 65535))}"),
			eval("return struct.size('>iid')"),
			eval("return {struct.unpack('c0', struct.pack('b', 3) .. 'abc')}"),
			eval("return {struct.unpack('bc0', struct.pack('b', 3) .. 'abcd')}"),
			eval("return struct.pack('s', 'hi')"),
			eval("return {struct.unpack('>d', struct.pack('>d', 1.5))}"),
			eval("return struct.pack('q', 1)"),
			eval("return struct.size('s')"),
			eval("return struct.size('c0')"),
			eval("return {struct.unpack('!4 b i', struct.pack('!4 b i', 1, 2))}"),
			eval("return struct.pack('!4 b i', 1, 2)"),
			eval("return {struct.unpack('>I4', 'ab')}"),
			eval("return struct.pack('i40', 1)"),
			eval("return struct.pack('c3', 'ab')"),
			eval("return {struct.unpack('s', 'abc')}"),
			eval("return struct.pack('>i3', -2)"),
			eval("return {struct.unpack('>i3', struct.pack('>i3', -2))}"),
			eval("return cmsgpack.pack(1, -1, 200, -200, 70000, -70000, 5000000000, 1.5, 0.1, true, false, nil, 'abc', string.rep('x', 40), {1, 2, 3}, {a=1})"),
			eval("return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, {2}}, -5, 3.25))}"),
			eval("return cmsgpack.unpack('\\xc1')"),
			eval("return cmsgpack.unpack('\\xcd\\x01')"),
			eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}"),
			eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}"),
			eval("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 1)}"),
			eval("return {cmsgpack.unpack_limit(cmsgpack.pack(1), -1)}"),
			eval("return {cmsgpack.unpack_one(cmsgpack.pack(1), 9)}"),
			eval("return cmsgpack.pack({})"),
			eval("local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end return cmsgpack.pack(t)"),
			eval("return cmsgpack.pack(string.rep('y', 300))"),
			eval("return cmsgpack.pack({[1] = 1, [3] = 3})"),
			eval("return cmsgpack.pack()"),
		}},
		{"evalsha and script", []step{
			do("SCRIPT", "FLUSH"),
			do("SCRIPT", "LOAD", "return 'loaded'"),
			do("EVALSHA", "6de5d9bc3ec1b76ba8b0fa7e3a0b6e6d0ab0bb9f", "0"),
			do("EVALSHA", "6DE5D9BC3EC1B76BA8B0FA7E3A0B6E6D0AB0BB9F", "0"),
			do("EVALSHA_RO", "6de5d9bc3ec1b76ba8b0fa7e3a0b6e6d0ab0bb9f", "0"),
			do("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"),
			do("EVALSHA", "fff", "0"),
			do("EVALSHA", "6de5d9bc3ec1b76ba8b0fa7e3a0b6e6d0ab0bb9f", "x"),
			do("SCRIPT", "EXISTS", "6de5d9bc3ec1b76ba8b0fa7e3a0b6e6d0ab0bb9f", "ffffffffffffffffffffffffffffffffffffffff", "nothex"),
			// gopher-lua words compile errors its own way.
			errorPrefix("SCRIPT", "LOAD", "syntax error here"),
			do("SCRIPT", "LOAD", "#!lua flags=bad\nreturn 1"),
			eval("return 'cached by eval'"),
			do("SCRIPT", "EXISTS", "2b0b7d3cc6b1d05e4357298c84fcf1c0b36be7c5"),
			info("memory", "number_of_cached_scripts"),
			do("SCRIPT", "FLUSH", "ASYNC"),
			do("SCRIPT", "FLUSH", "SYNC"),
			do("SCRIPT", "FLUSH", "bad"),
			do("SCRIPT", "FLUSH", "sync", "async"),
			do("SCRIPT", "EXISTS", "6de5d9bc3ec1b76ba8b0fa7e3a0b6e6d0ab0bb9f"),
			do("EVALSHA", "6de5d9bc3ec1b76ba8b0fa7e3a0b6e6d0ab0bb9f", "0"),
			do("SCRIPT", "KILL"),
			do("FUNCTION", "KILL"),
			do("SCRIPT", "HELP"),
			do("SCRIPT"),
			do("SCRIPT", "NOSUCH"),
			do("SCRIPT", "LOAD"),
			do("SCRIPT", "EXISTS"),
			do("CONFIG", "SET", "lua-time-limit", "4000"),
			do("CONFIG", "GET", "busy-reply-threshold"),
			do("CONFIG", "GET", "lua-time-limit"),
			do("CONFIG", "SET", "busy-reply-threshold", "-1"),
			do("CONFIG", "SET", "busy-reply-threshold", "5000"),
			info("memory", "number_of_cached_scripts", "number_of_functions", "number_of_libraries"),
			do("SCRIPT", "DEBUG", "NO"),
			do("SCRIPT", "DEBUG", "maybe"),
		}},
		{"read-only scripts and flags", []step{
			do("SET", "k", "v"),
			do("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"),
			do("EVAL_RO", "return redis.call('set', KEYS[1], 'x')", "1", "k"),
			do("EVAL_RO", "return redis.pcall('set', KEYS[1], 'x')", "1", "k"),
			do("EVAL_RO", "#!lua\nreturn 1", "0"),
			do("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", "0"),
			eval("#!lua flags=no-writes\nreturn redis.call('set', 'k', 'w')"),
			eval("#!lua\nreturn redis.call('set', 'k', 'w')"),
			eval("#!lua flags=allow-oom,allow-stale,allow-cross-slot-keys\nreturn redis.call('get', 'k')"),
			eval("#!lua flags=no-cluster\nreturn 'standalone'"),
			do("GET", "k"),
		}},
		{"select inside a script", []step{
			eval("redis.call('select', 1); redis.call('set', 'x', 'in1'); return redis.call('get', 'x')"),
			do("GET", "x"),
			do("SELECT", "1"),
			do("GET", "x"),
			do("DEL", "x"),
			do("SELECT", "0"),
			eval("return redis.call('select', 99)"),
		}},
		{"scripts in transactions", []step{
			do("MULTI"),
			eval("return redis.call('set', 'a', '1')"),
			eval("return redis.call('incr', 'a')"),
			do("EVAL", "return redis.call('get', KEYS[1])", "1", "a"),
			do("EXEC"),
			do("MULTI"),
			do("EVAL", "return 1"),
			do("EXEC"),
		}},
		{"functions", []step{
			do("FUNCTION", "FLUSH"),
			do("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return redis.call('get', keys[1]) end)"),
			do("SET", "k", "v"),
			do("FCALL", "f1", "1", "k"),
			do("FCALL_RO", "f1", "1", "k"),
			do("FCALL", "nosuch", "0"),
			do("FCALL", "f1", "x"),
			do("FCALL", "nosuch", "x"),
			do("FCALL", "f1", "-1"),
			do("FCALL", "f1", "2", "k"),
			do("FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)"),
			do("FUNCTION", "LOAD", "REPLACE", "#!lua name=lib1\nredis.register_function{function_name='f1', callback=function(keys, args) return {keys[1], args[1]} end, flags={'no-writes'}, description='desc'}"),
			do("FCALL", "f1", "1", "kk", "aa"),
			do("FCALL_RO", "f1", "1", "kk", "aa"),
			do("FUNCTION", "LIST"),
			do("FUNCTION", "LIST", "WITHCODE"),
			do("FUNCTION", "LIST", "LIBRARYNAME", "lib*"),
			do("FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"),
			do("FUNCTION", "LIST", "bad"),
			do("FUNCTION", "LIST", "LIBRARYNAME"),
			do("FUNCTION", "LIST", "WITHCODE", "WITHCODE"),
			do("FUNCTION", "STATS"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f1', function() return 1 end)"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.call('get','x')"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nreturn 1"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nx = 1"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nerror('x')"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nlocal s = string.len('x')"),
			do("FUNCTION", "LOAD", "#!lua\nreturn 1"),
			do("FUNCTION", "LOAD", "return 1"),
			do("FUNCTION", "LOAD", "#!luax name=lib2\nreturn 1"),
			do("FUNCTION", "LOAD", "#!lua name=lib2 foo=bar\nreturn 1"),
			do("FUNCTION", "LOAD", "#!lua name=bad-name\nreturn 1"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f 1', function() return 1 end)"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='f3', callback=function() return 1 end, flags={'bad'}}"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('g', function() end)\nredis.register_function('g', function() end)"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function()"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('x')"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='x'}"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{callback=function() end}"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='x', callback=function() end, foo=1}"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('x', 1)"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='x', callback=1}"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function{function_name='x', callback=function() end, flags='no-writes'}"),
			do("FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('w', function() return redis.call('set', 'fk', 'fv') end)"),
			do("FCALL", "w", "0"),
			do("FCALL_RO", "w", "0"),
			do("FUNCTION", "LOAD", "#!lua name=lib3\nredis.register_function('e', function() error('boom') end)\nredis.register_function('u', function() return undefined_global end)"),
			do("FCALL", "e", "0"),
			do("FCALL", "u", "0"),
			do("FUNCTION", "LOAD", "replace"),
			do("FUNCTION", "LOAD", "foo", "#!lua name=a"),
			do("FUNCTION", "LOAD"),
			do("FUNCTION", "DELETE", "lib2"),
			do("FUNCTION", "DELETE", "lib3"),
			do("FUNCTION", "DELETE", "nosuch"),
			do("FCALL", "w", "0"),
			do("FUNCTION", "FLUSH", "bad"),
			do("FUNCTION", "FLUSH", "ASYNC"),
			do("FUNCTION", "LIST"),
			do("FUNCTION", "STATS"),
			do("FUNCTION", "RESTORE", "xx"),
			do("FUNCTION", "RESTORE", "xx", "bad"),
			do("FUNCTION", "RESTORE", "xx", "FLUSH", "extra"),
			do("FUNCTION", "HELP"),
			do("FUNCTION", "NOSUCH"),
		}},
		{"function dump and restore", []step{
			do("FUNCTION", "FLUSH"),
			do("FUNCTION", "LOAD", "#!lua name=short\nredis.register_function('s', function() return 's' end)"),
			do("FUNCTION", "DUMP"),
			do("FUNCTION", "LOAD", "#!lua name=long\nredis.register_function('l', function(keys, args) return 'a long enough library body to be compressed by LZF, long long long long long' end)"),
			do("FUNCTION", "DELETE", "short"),
			do("FUNCTION", "DUMP"),
			do("FUNCTION", "RESTORE", longLibraryDump),
			do("FUNCTION", "FLUSH"),
			do("FUNCTION", "RESTORE", longLibraryDump),
			do("FCALL", "l", "0"),
			do("FUNCTION", "RESTORE", longLibraryDump, "REPLACE"),
			do("FUNCTION", "RESTORE", longLibraryDump, "FLUSH"),
			do("FUNCTION", "RESTORE", longLibraryDump[:len(longLibraryDump)-1]+"x"),
			do("FUNCTION", "LIST", "WITHCODE"),
			do("FUNCTION", "FLUSH"),
		}},
	}
}

// longLibraryDump is redis-server 7.0.15's FUNCTION DUMP of the "long"
// library, whose code it compresses with LZF.
const longLibraryDump = "\xf5\xc3@\x88@\x9c\x1f#!lua name=long\x0aredis.register_f\x0cunction('l', \xe0\x00\x0d\x15keys, args) return 'a @@\x1f enough library body to be compr\x0cessed by LZF,\x801`6\xe0\x05\x04\x00' F\x01d)\x0a\x00\x015\xd6\xb2\x04~]z"

// TestDifferentialBusyScript runs a script past busy-reply-threshold on
// both servers and checks, byte for byte, the BUSY replies other clients
// get, SCRIPT KILL and FUNCTION KILL's answers, and the error the killed
// script's caller gets; then the same for a function and for a script that
// wrote (UNKILLABLE).
func TestDifferentialBusyScript(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	type result struct{ busy, stats, killWrong, kill, caller, after []byte }
	run := func(s *server, start []string, killWrong, kill []string) result {
		c, other := dialRaw(t, s.Addr), dialRaw(t, s.Addr)
		other.Do("CONFIG", "SET", "busy-reply-threshold", "200")
		other.Do("FUNCTION", "FLUSH")
		other.Do("FUNCTION", "LOAD", "#!lua name=spin\nredis.register_function('spin', function() while true do end end)")
		c.Send(encodeCommand(start))
		var r result
		deadline := time.Now().Add(10 * time.Second)
		for {
			r.busy = other.Do("PING")
			if strings.HasPrefix(string(r.busy), "-BUSY") || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// FUNCTION STATS answers while the script runs; the duration
		// differs, so it is compared up to it.
		r.stats = other.Do("FUNCTION", "STATS")
		if i := bytes.Index(r.stats, []byte("duration_ms")); i >= 0 {
			r.stats = r.stats[:i]
		}
		r.killWrong = other.Do(killWrong...)
		r.kill = other.Do(kill...)
		c.Timeout = 10 * time.Second
		r.caller, _ = c.ReadReply()
		r.after = other.Do("PING")
		return r
	}
	for _, tc := range []struct {
		name            string
		start           []string
		killWrong, kill []string
	}{
		{"eval", []string{"EVAL", "while true do end", "0"}, []string{"FUNCTION", "KILL"}, []string{"SCRIPT", "KILL"}},
		{"eval with pcall", []string{"EVAL", "while true do pcall(function() while true do end end) end", "0"}, []string{"FUNCTION", "KILL"}, []string{"SCRIPT", "KILL"}},
		{"fcall", []string{"FCALL", "spin", "0"}, []string{"SCRIPT", "KILL"}, []string{"FUNCTION", "KILL"}},
		// A script that wrote cannot be killed; this one stops by itself.
		{"unkillable", []string{"EVAL", "redis.call('set', 'x', '1'); local s = redis.call('time')[1]; while redis.call('time')[1] - s < 2 do end", "0"},
			[]string{"FUNCTION", "KILL"}, []string{"SCRIPT", "KILL"}},
	} {
		a, b := run(ref, tc.start, tc.killWrong, tc.kill), run(kv, tc.start, tc.killWrong, tc.kill)
		for _, f := range []struct {
			what string
			a, b []byte
		}{{"PING while busy", a.busy, b.busy}, {"FUNCTION STATS while busy", a.stats, b.stats}, {strings.Join(tc.killWrong, " "), a.killWrong, b.killWrong},
			{strings.Join(tc.kill, " "), a.kill, b.kill}, {"killed caller", a.caller, b.caller}, {"PING after", a.after, b.after}} {
			if string(f.a) != string(f.b) {
				t.Errorf("%s: %s: redis %q, kvserver %q", tc.name, f.what, f.a, f.b)
			}
		}
	}
}
