// Package respclient is the client half of a RESP connection, and only
// that: it encodes commands and reads replies on a connection the caller
// owns (dials, deadlines, pooling and retries are the caller's).
//
// Commands are RESP2 multibulk arrays. A Batch pipelines many of them into
// one vectored write in which large values are referenced, not copied.
// A Reader reads the replies in order: typed readers for the hot path
// (ReadOK, ReadInt, ReadBulkLen followed by ReadBody, which reads a bulk's
// body straight into a buffer the caller supplies, so a 32 MiB value is
// copied once, from the socket into its destination, and nothing is
// allocated per reply), and ReadReply, which reads any RESP2 or RESP3 reply
// into a tree together with its exact bytes, for tests and tools that
// compare replies byte for byte.
//
// The server side of the protocol is package resp; the two share nothing
// because a server must guard against hostile clients (limits, budgets,
// inline commands) while a client trusts its server and wants no copy.
package respclient
