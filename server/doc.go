// Package server is kvserver's Redis-compatible front end: everything
// between an accepted connection and the engine.
//
// Server accepts TCP and TLS connections (listener.go) and
// keeps one Client per connection (client.go): its protocol version,
// database, user, name and buffers. Each client's goroutine reads a
// command with a resp.Reader, admits it (authentication, ACL, protected
// mode, cluster routing, memory limits; admission.go), dispatches it
// through the command table (commands.go, dispatch.go) and writes the reply
// with a resp.Writer, within the output-buffer limits (outbuf.go) and the
// budget that bounds the large values in flight (budget.go,
// budgetwatch.go).
//
// The command families live here too for now: strings, keyspace,
// connection and CLIENT, server (CONFIG, DEBUG, SHUTDOWN and the YAML
// rewriter), INFO, COMMAND INFO/DOCS (commanddocs.go, with data generated
// from a real redis-server by internal/gencommands), ACL, CLUSTER and the
// KV-cache extensions (kvcache.go).
//
// The engine knows nothing of RESP; this package turns requests into
// engine calls and engine results into replies.
package server
