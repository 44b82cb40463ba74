// Package resp is the Redis wire format, RESP2 and RESP3, and nothing else.
//
// A Reader parses requests from a byte stream: multibulk commands and
// inline commands, with Redis's limits and error texts (ProtocolError). It
// keeps ordinary traffic in a small connection buffer and reads every bulk
// of at least BigBulkThreshold bytes into its own allocation, which the
// command may keep, after taking its bytes from an optional BulkBudget.
//
// A Writer encodes replies in the protocol version the client chose: small
// replies are appended to a buffer, large bulks are queued by reference and
// go out with one vectored write when the destination is a BuffersWriter.
// Value is a reply tree for static replies (COMMAND INFO and DOCS) that
// must be encoded in either version.
//
// The package knows nothing of connections, commands or the store: package
// server owns the listener and clients and runs the commands; a test in
// this package keeps it that way.
package resp
