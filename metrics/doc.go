// Package metrics exposes kvserver's Prometheus metrics and the pprof
// profiling endpoints over HTTP.
//
// New registers every collector on a registry the caller owns; the server
// reports per-command timings, network bytes and connection events through
// the returned *Metrics, and keyspace figures are read from a Source at
// scrape time. Handler and Serve publish /metrics and /debug/pprof/.
// Metric names follow kvserver_<noun>_<unit>.
//
// It is not for the Redis INFO command (it keeps no readable totals for it)
// and it never touches prometheus.DefaultRegisterer or
// http.DefaultServeMux. Importing it does link net/http/pprof, whose init
// registers on http.DefaultServeMux; kvserver never serves that mux.
package metrics
