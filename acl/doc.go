// Package acl holds kvserver's users and what each may do, in Redis 7.0's
// ACL model reduced to what a KV-cache store needs: a user has a name, is
// on or off, has SHA-256 password hashes (or nopass), a set of allowed
// commands and a list of key patterns. Users are written in Redis's ACL
// rule syntax ("alice on #<sha256 hex> ~cache:* +@read +@write
// -@dangerous"), the same text as a redis.conf `user` line.
//
// Commands come from a Catalog, built once from the server's command table:
// full names ("get", "config|get") and their ACL categories. Key patterns
// are matched by a function the caller supplies, so that they follow the
// same glob rules as the rest of the server.
//
// It is not the protocol: it knows nothing of RESP, AUTH or error replies,
// and it does not extract keys from a command's arguments. It has no ACL
// SETUSER, ACL LOG, selectors, pub/sub channels (channel rules are
// accepted and only echoed by Describe) or read/write key permissions
// (%R~, %W~).
package acl
