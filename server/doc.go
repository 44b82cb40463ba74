// Package server is kvserver's Redis-compatible front end: everything
// between an accepted connection and the engine.
//
// Server accepts TCP and TLS connections (listener.go) and
// keeps one Client per connection (client.go): its protocol version,
// database, user, name and buffers. Each client's goroutine reads a
// command with a resp.Reader, admits it (authentication, ACL, protected
// mode, cluster routing, memory limits; admission.go), dispatches it
// through the command table (package commands; dispatch.go) and writes the reply
// with a resp.Writer, within the output-buffer limits (outbuf.go) and the
// budget that bounds the large values in flight (budget.go,
// budgetwatch.go).
//
// The command families and their handlers are in package commands, which
// never sees the server: each handler gets a commands.Ctx whose narrow
// services (Session, Clients, Users, Config, Stats, Lifecycle, Cluster,
// KeyspaceConfig, KVCache) are implemented here on session, one file a
// family (session_*.go). What stays here is the state behind them: the
// client registry, ACL checks, the slot map, CONFIG's parameter table and
// YAML rewriter (server.go) and INFO's counters (errorstats.go).
//
// The engine knows nothing of RESP; this package turns requests into
// engine calls and engine results into replies.
package server
