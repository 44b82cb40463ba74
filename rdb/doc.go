// Package rdb reads and writes the value payloads of Redis 7.0's DUMP and
// RESTORE: one value in the RDB serialization (RDB version 10), then the
// version and a CRC64 of the payload, so that values move between
// redis-server and kvserver in both directions.
//
// Dump writes what redis-server 7.0 writes for the same value, byte for
// byte where Redis's own encoding is deterministic (strings, with their
// integer and LZF encodings; small hashes as listpacks; streams, whose
// nodes kvserver keeps as Redis's listpacks, with their consumer
// groups). Restore reads every encoding Redis 7.0 writes or still loads
// for the kinds kvserver stores (listpacks, ziplists, intsets, plain RDB
// types, streams of Redis 5 to 7).
//
// DumpFunctions and RestoreFunctions do the same for FUNCTION DUMP and
// FUNCTION RESTORE's payloads of function libraries' code.
package rdb
