// Package hll is Redis's HyperLogLog (src/hyperloglog.c) in Go, function
// for function, over the same bytes: a value built or changed here is the
// string redis-server 7.0 would hold after the same operations, and a
// string written by redis-server is read here unchanged.
//
// A value is a 16-byte header ("HYLL", the encoding byte, three unused
// bytes, the cached cardinality as a little-endian uint64 whose top bit
// marks it stale) followed by the registers: 16384 registers of 6 bits,
// either dense (12288 bytes, each register 6 bits from the least
// significant bit up) or sparse (a run-length code of ZERO, XZERO and VAL
// opcodes, used until a register exceeds 32 or the value would exceed
// hll-sparse-max-bytes).
//
// Functions that change a value take a slice the caller owns and return
// the slice to keep (it may have moved): stored values are never changed in
// place. The reference is redis-server 7.0.15 as Debian ships it, which
// carries the fix for CVE-2025-32023: a sparse value whose opcodes run past
// the last register is corrupt however it is read. The package knows nothing of keys, RESP or the engine; the
// commands PFADD, PFCOUNT, PFMERGE and PFDEBUG live in package commands.
package hll
