// Package commands is kvserver's command layer: the command table and the
// handlers, one file per command family (strings.go, keyspace.go,
// connection.go, server.go, config.go, info.go, cluster.go, acl.go,
// kvcache.go, command.go, transactions.go, scripting.go), after Redis's t_*.c files and
// Kvrocks's src/commands.
//
// Each command is described once, by its Spec row beside its handler:
// name, arity, flags, ACL categories, key specs (where its keys are and
// what it does to them, including which stored values it reads) or a
// get-keys function, and the handler. Everything that needs to know about
// commands derives from that row: dispatch's arity checks, ACL key checks
// and cluster routing (Spec.Keys), loading values that are only on disk
// before the handler runs (Spec.ValueKeys), COMMAND INFO/DOCS/GETKEYS/COUNT
// and ACL CAT.
//
// A handler gets a *Ctx: the arguments, the reply writer, transactions on
// the client's database, and the few narrow services its family needs,
// each an interface declared in that family's file (KeyspaceConfig,
// KVCache, Clients, Users, Config, Stats, Lifecycle, Cluster,
// Transaction, Diagnostics) besides the connection's own Session. It never
// sees the server: package server builds one Ctx per connection and
// implements those interfaces
// (server/session*.go). The engine stays unaware of RESP.
package commands
