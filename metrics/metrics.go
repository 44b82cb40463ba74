package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/kvserver/kvserver/cmdstats"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	namespace = "kvserver"

	// shutdownTimeout bounds how long Serve waits for in-flight requests.
	shutdownTimeout = 5 * time.Second
)

// durationBuckets returns the command latency histogram buckets in
// seconds: 1-2.5-5 steps from 10µs to 10s.
func durationBuckets() []float64 {
	return []float64{
		0.00001, 0.000025, 0.00005,
		0.0001, 0.00025, 0.0005,
		0.001, 0.0025, 0.005,
		0.01, 0.025, 0.05,
		0.1, 0.25, 0.5,
		1, 2.5, 5,
		10,
	}
}

// Source is what the metrics read from the keyspace engine at scrape time.
// Snapshot may be called from any goroutine, once per scrape.
type Source interface {
	Snapshot() Snapshot
}

// Snapshot is a point-in-time copy of the engine counters. The counters
// (Hits, Misses, ExpiredKeys, EvictedKeys) must only grow over the life of
// the process; the others are current values.
type Snapshot struct {
	Keys, KeysWithExpiry, UsedMemoryBytes, MaxMemoryBytes int64
	Hits, Misses, ExpiredKeys, EvictedKeys                int64
	// Tiers has one entry per storage tier, exported with a tier label.
	Tiers []TierSnapshot
	// Chunks counts the stored LMCache chunks by model, dtype and format.
	Chunks []ChunkSnapshot
	// LeasedGroups and PinnedGroups count chunk groups under a live lease
	// or pin.
	LeasedGroups, PinnedGroups int64
}

// ChunkSnapshot is the count of one class of stored chunks.
type ChunkSnapshot struct {
	Model, DType, Format string
	Chunks, Bytes        int64
}

// TierSnapshot is one storage tier's counters.
type TierSnapshot struct {
	Name                             string // "memory" or "disk"
	Keys, Bytes, MaxBytes            int64
	Hits, Misses                     int64
	Demotions, Promotions, Evictions int64
	Corrupt                          int64
	// IOErrors counts writes and background jobs the tier's storage
	// refused; Unavailable is set while the tier does not take writes
	// (disk full, read-only, failing).
	IOErrors    int64
	Unavailable bool
}

// CommandSource is what the per-command metrics read at scrape time: the
// server's command statistics (package cmdstats), which INFO commandstats
// and latencystats print too.
type CommandSource interface {
	// Commands calls fn with the name and statistics of every command;
	// unknown commands come as "unknown".
	Commands(fn func(name string, st *cmdstats.Command))
}

// Metrics records the server's events. All methods are safe for concurrent
// use; create it with New.
type Metrics struct {
	// commands is the CommandSource, once the server has given it.
	commands atomic.Pointer[CommandSource]

	bytesIn, bytesOut        prometheus.Counter
	connsCurrent             prometheus.Gauge
	connsTotal, connsRefused prometheus.Counter
}

// New creates the server's metrics and registers them, a collector reading
// src at each scrape, and the Go and process collectors on reg. src may be
// nil, in which case no keyspace metrics are exported. New panics if reg
// already holds any of these collectors, for example when called twice with
// the same registry.
func New(reg *prometheus.Registry, src Source) *Metrics {
	m := &Metrics{
		bytesIn:      counter("net_input_bytes_total", "Bytes read from client connections."),
		bytesOut:     counter("net_output_bytes_total", "Bytes written to client connections."),
		connsCurrent: prometheus.NewGauge(prometheus.GaugeOpts(opts("connections_current", "Client connections open now."))),
		connsTotal:   counter("connections_total", "Client connections accepted."),
		connsRefused: counter("connections_rejected_total", "Client connections refused, for example over maxclients."),
	}
	reg.MustRegister(
		newCommandCollector(m),
		m.bytesIn, m.bytesOut,
		m.connsCurrent, m.connsTotal, m.connsRefused,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	if src != nil {
		reg.MustRegister(newKeyspaceCollector(src))
	}
	return m
}

// opts names a metric of the server's namespace.
func opts(name, help string) prometheus.Opts {
	return prometheus.Opts{Namespace: namespace, Name: name, Help: help}
}

// counter is a counter of the server's namespace.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts(opts(name, help)))
}

// SetCommandSource gives the metrics the server's command statistics;
// until then no per-command series are exported.
func (m *Metrics) SetCommandSource(src CommandSource) { m.commands.Store(&src) }

// commandCollector exports the command statistics at each scrape: calls
// (run or refused), errors (refused, or answered with an error), and the
// run calls' durations as a histogram of durationBuckets.
type commandCollector struct {
	m                        *Metrics
	calls, errors, durations *prometheus.Desc
	bounds                   []float64
	boundsNanos              []int64
}

func newCommandCollector(m *Metrics) *commandCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, []string{"command"}, nil)
	}
	c := &commandCollector{
		m:         m,
		calls:     desc("commands_total", "Commands processed (run or refused), by command name."),
		errors:    desc("command_errors_total", "Commands refused or answered with an error, by command name."),
		durations: desc("command_duration_seconds", "Time spent executing a command, by command name."),
		bounds:    durationBuckets(),
	}
	for _, b := range c.bounds {
		c.boundsNanos = append(c.boundsNanos, int64(b*1e9))
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *commandCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.calls
	ch <- c.errors
	ch <- c.durations
}

// Collect implements prometheus.Collector.
func (c *commandCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.commands.Load()
	if src == nil {
		return
	}
	(*src).Commands(func(name string, st *cmdstats.Command) {
		n := st.Read()
		if n.Calls+n.Rejected == 0 {
			return
		}
		ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(n.Calls+n.Rejected), name)
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(n.Rejected+n.Failed), name)
		h := st.Latency()
		if h == nil {
			return
		}
		counts, total := h.Cumulative(c.boundsNanos)
		buckets := make(map[float64]uint64, len(c.bounds))
		for i, b := range c.bounds {
			buckets[b] = counts[i]
		}
		ch <- prometheus.MustNewConstHistogram(c.durations, total, float64(n.Nanos)/1e9, buckets, name)
	})
}

// AddBytesRead adds n bytes read from clients; n <= 0 is ignored.
func (m *Metrics) AddBytesRead(n int) {
	if n > 0 {
		m.bytesIn.Add(float64(n))
	}
}

// AddBytesWritten adds n bytes written to clients; n <= 0 is ignored.
func (m *Metrics) AddBytesWritten(n int) {
	if n > 0 {
		m.bytesOut.Add(float64(n))
	}
}

// ConnectionOpened records an accepted client connection.
func (m *Metrics) ConnectionOpened() {
	m.connsCurrent.Inc()
	m.connsTotal.Inc()
}

// ConnectionClosed records the end of a connection counted by
// ConnectionOpened.
func (m *Metrics) ConnectionClosed() {
	m.connsCurrent.Dec()
}

// ConnectionRejected records a connection refused before being served; it
// is not counted by ConnectionOpened and needs no ConnectionClosed.
func (m *Metrics) ConnectionRejected() {
	m.connsRefused.Inc()
}

// keyspaceCollector exports a Source's Snapshot, taken once per scrape.
type keyspaceCollector struct {
	src Source

	keys, keysWithExpiry, memUsed, memMax *prometheus.Desc
	hits, misses, expired, evicted        *prometheus.Desc

	tierKeys, tierBytes, tierMaxBytes, tierHits, tierMisses   *prometheus.Desc
	tierDemotions, tierPromotions, tierEvictions, tierCorrupt *prometheus.Desc
	tierIOErrors, tierAvailable                               *prometheus.Desc

	chunks, chunkBytes, leased, pinned *prometheus.Desc
}

// newKeyspaceCollector describes the metrics read from src.
func newKeyspaceCollector(src Source) *keyspaceCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, nil, nil)
	}
	return &keyspaceCollector{
		src:            src,
		keys:           desc("keys_current", "Keys stored, over all databases."),
		keysWithExpiry: desc("keys_with_expiry_current", "Keys stored that have a time to live."),
		memUsed:        desc("memory_used_bytes", "Memory the keyspace accounts as used."),
		memMax:         desc("memory_max_bytes", "Configured memory limit (maxmemory)."),
		hits:           desc("keyspace_hits_total", "Key lookups that found the key."),
		misses:         desc("keyspace_misses_total", "Key lookups that did not find the key."),
		expired:        desc("expired_keys_total", "Keys removed because their time to live passed."),
		evicted:        desc("evicted_keys_total", "Keys removed to stay under maxmemory."),
		tierKeys:       tierDesc("tier_keys", "Keys whose value the tier holds."),
		tierBytes:      tierDesc("tier_bytes", "Value bytes the tier holds (disk: as stored)."),
		tierMaxBytes:   tierDesc("tier_max_bytes", "The tier's size bound (maxmemory, maxdisk)."),
		tierHits:       tierDesc("tier_hits_total", "Lookups served by the tier."),
		tierMisses:     tierDesc("tier_misses_total", "Lookups the tier could not serve (memory: served by disk or missing; disk: missing)."),
		tierDemotions:  tierDesc("tier_demotions_total", "Chunk groups moved out of the tier to the one below."),
		tierPromotions: tierDesc("tier_promotions_total", "Keys moved out of the tier to the one above."),
		tierEvictions:  tierDesc("tier_evictions_total", "Chunk groups dropped from the server by the tier's bound."),
		tierCorrupt:    tierDesc("tier_corrupt_records_total", "Records that failed verification, were deleted and served as misses."),
		tierIOErrors:   tierDesc("tier_io_errors_total", "Writes and background jobs the tier's storage refused (disk full, read-only, I/O error)."),
		tierAvailable:  tierDesc("tier_available", "1 while the tier takes writes, 0 while its storage refuses them (the memory tier then evicts instead of demoting)."),
		chunks: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "chunks_current"),
			"LMCache chunks stored (recognised by their metadata key), by model, dtype and format.",
			[]string{"model", "dtype", "format"}, nil),
		chunkBytes: prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "chunk_data_bytes"),
			"Data bytes of the stored LMCache chunks, as their metadata states, by model, dtype and format.",
			[]string{"model", "dtype", "format"}, nil),
		leased: desc("leased_groups_current", "Chunk groups under a live lease (KVC.PROBE LEASE, EXISTS hits)."),
		pinned: desc("pinned_groups_current", "Chunk groups under a live pin (KVC.PIN)."),
	}
}

// tierDesc describes a per-tier series, labelled tier="memory"|"disk".
func tierDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, []string{"tier"}, nil)
}

// Describe implements prometheus.Collector.
func (k *keyspaceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		k.keys, k.keysWithExpiry, k.memUsed, k.memMax,
		k.hits, k.misses, k.expired, k.evicted,
		k.tierKeys, k.tierBytes, k.tierMaxBytes, k.tierHits, k.tierMisses,
		k.tierDemotions, k.tierPromotions, k.tierEvictions, k.tierCorrupt,
		k.tierIOErrors, k.tierAvailable,
		k.chunks, k.chunkBytes, k.leased, k.pinned,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector, calling Snapshot once.
func (k *keyspaceCollector) Collect(ch chan<- prometheus.Metric) {
	s := k.src.Snapshot()
	emit := func(d *prometheus.Desc, kind prometheus.ValueType, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, kind, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v int64, labels ...string) { emit(d, prometheus.GaugeValue, v, labels...) }
	counter := func(d *prometheus.Desc, v int64, labels ...string) { emit(d, prometheus.CounterValue, v, labels...) }
	gauge(k.keys, s.Keys)
	gauge(k.keysWithExpiry, s.KeysWithExpiry)
	gauge(k.memUsed, s.UsedMemoryBytes)
	gauge(k.memMax, s.MaxMemoryBytes)
	counter(k.hits, s.Hits)
	counter(k.misses, s.Misses)
	counter(k.expired, s.ExpiredKeys)
	counter(k.evicted, s.EvictedKeys)
	for _, t := range s.Tiers {
		gauge(k.tierKeys, t.Keys, t.Name)
		gauge(k.tierBytes, t.Bytes, t.Name)
		gauge(k.tierMaxBytes, t.MaxBytes, t.Name)
		counter(k.tierHits, t.Hits, t.Name)
		counter(k.tierMisses, t.Misses, t.Name)
		counter(k.tierDemotions, t.Demotions, t.Name)
		counter(k.tierPromotions, t.Promotions, t.Name)
		counter(k.tierEvictions, t.Evictions, t.Name)
		counter(k.tierCorrupt, t.Corrupt, t.Name)
		counter(k.tierIOErrors, t.IOErrors, t.Name)
		available := int64(1)
		if t.Unavailable {
			available = 0
		}
		gauge(k.tierAvailable, available, t.Name)
	}
	for _, c := range s.Chunks {
		gauge(k.chunks, c.Chunks, c.Model, c.DType, c.Format)
		gauge(k.chunkBytes, c.Bytes, c.Model, c.DType, c.Format)
	}
	gauge(k.leased, s.LeasedGroups)
	gauge(k.pinned, s.PinnedGroups)
}

// Handler returns an http.Handler serving reg at /metrics and the Go
// profiler at /debug/pprof/ (index, named profiles, cmdline, profile,
// symbol, trace), on its own mux.
func Handler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// Serve listens on addr and serves Handler(reg) until ctx is cancelled,
// then shuts down gracefully, giving in-flight requests up to 5 seconds.
// It returns nil after a shutdown caused by ctx, and an error if it cannot
// listen or serving fails. A nil log discards log output.
func Serve(ctx context.Context, addr string, reg *prometheus.Registry, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           Handler(reg),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: /debug/pprof/profile and trace stream for as
		// long as the client asks.
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("metrics endpoint listening", "addr", ln.Addr().String())

	select {
	case err := <-served:
		return fmt.Errorf("metrics: serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if err != nil {
		err = errors.Join(err, srv.Close())
		err = fmt.Errorf("metrics: shut down %s: %w", addr, err)
	}
	if serveErr := <-served; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("metrics: serve on %s: %w", addr, serveErr))
	}
	if err == nil {
		log.Info("metrics endpoint stopped", "addr", ln.Addr().String())
	}
	return err
}
