package server

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/resp"
)

// kvserverVersion is kvserver's own version, reported by INFO kvserver.
const kvserverVersion = "0.1.0"

// infoSection is one section of INFO: the lower-case name clients ask for,
// the header line, and the writer of its "field:value" lines.
type infoSection struct {
	name, title string
	// inDefault marks the sections INFO prints without arguments.
	inDefault bool
	write     func(s *Server, w *infoWriter)
}

// infoSections are Redis 7's sections that apply to kvserver, in Redis's
// order, followed by kvserver's own section. Commandstats and latencystats
// are not kept.
var infoSections = []infoSection{
	{"server", "Server", true, (*Server).infoServer},
	{"clients", "Clients", true, (*Server).infoClients},
	{"memory", "Memory", true, (*Server).infoMemory},
	{"persistence", "Persistence", true, (*Server).infoPersistence},
	{"stats", "Stats", true, (*Server).infoStats},
	{"replication", "Replication", true, (*Server).infoReplication},
	{"cpu", "CPU", true, (*Server).infoCPU},
	{"modules", "Modules", true, func(*Server, *infoWriter) {}},
	{"errorstats", "Errorstats", true, (*Server).infoErrorstats},
	{"cluster", "Cluster", true, (*Server).infoCluster},
	{"keyspace", "Keyspace", true, (*Server).infoKeyspace},
	{"kvserver", "Kvserver", true, (*Server).infoKvserver},
	{"tiers", "Tiers", true, (*Server).infoTiers},
	{"kvcache", "Kvcache", true, (*Server).infoKVCache},
}

// infoWriter is commands.InfoWriter under the names INFO's sections use.
type infoWriter struct{ commands.InfoWriter }

func (w *infoWriter) str(k, v string)       { w.Str(k, v) }
func (w *infoWriter) int(k string, n int64) { w.Int(k, n) }

// cmdInfo implements INFO [section ...]: section names are
// case-insensitive, "default", "all" and "everything" select groups,
// unknown names select nothing, and sections come out in the fixed order
// whatever the order asked. RESP3 gets a verbatim string.
func (s *Server) cmdInfo(c *Client, args [][]byte) {
	want := make(map[string]bool)
	if len(args) == 1 {
		want["default"] = true
	}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := want["all"] || want["everything"]
	var w infoWriter
	for _, sec := range infoSections {
		if !all && !want[sec.name] && !(want["default"] && sec.inDefault) {
			continue
		}
		w.Section(sec.title)
		sec.write(s, &w)
	}
	c.w.Verbatim(w.String())
}

// serverID derives a stable 40-hex-digit identifier for this server
// instance (run_id, master_replid) from the process and start time.
func (s *Server) serverID(salt string) string {
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(os.Getpid()))
	binary.LittleEndian.PutUint64(buf[8:], uint64(s.started.UnixNano()))
	sum := sha1.Sum(append(buf[:], salt...))
	return hex.EncodeToString(sum[:])
}

func (s *Server) infoServer(w *infoWriter) {
	opts := s.options()
	now := time.Now()
	uptime := int64(now.Sub(s.started) / time.Second)
	exe, _ := os.Executable()
	cfg := opts.ConfigFile
	if cfg != "" {
		if abs, err := filepath.Abs(cfg); err == nil {
			cfg = abs
		}
	}
	w.str("redis_version", redisCompatVersion)
	w.str("redis_git_sha1", "00000000")
	w.str("redis_git_dirty", "0")
	w.str("redis_mode", s.redisMode())
	w.str("os", osName())
	w.int("arch_bits", int64(strconv.IntSize))
	w.str("process_id", strconv.Itoa(os.Getpid()))
	w.str("process_supervised", "no")
	w.str("run_id", s.serverID("run_id"))
	w.int("tcp_port", int64(opts.Port))
	w.int("server_time_usec", now.UnixMicro())
	w.int("uptime_in_seconds", uptime)
	w.int("uptime_in_days", uptime/86400)
	w.int("hz", 10)
	w.int("configured_hz", 10)
	w.str("executable", exe)
	w.str("config_file", cfg)
	w.int("io_threads_active", 0)
}

// osName is Redis's "sysname release machine" (uname), read from /proc so
// that it needs no platform-specific system call.
func osName() string {
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	sys, rel := read("/proc/sys/kernel/ostype"), read("/proc/sys/kernel/osrelease")
	if sys == "" {
		sys = runtime.GOOS
	}
	machine := runtime.GOARCH
	switch machine {
	case "amd64":
		machine = "x86_64"
	case "arm64":
		machine = "aarch64"
	case "386":
		machine = "i686"
	}
	return strings.Join(strings.Fields(sys+" "+rel+" "+machine), " ")
}

func (s *Server) infoClients(w *infoWriter) {
	w.int("connected_clients", int64(s.clientCount()))
	w.int("cluster_connections", 0)
	w.int("maxclients", int64(s.options().MaxClients))
	w.int("blocked_clients", 0)
	w.int("tracking_clients", 0)
	w.int("clients_in_timeout_table", 0)
}

// residentMemory is the resident set size from /proc/self/statm, 0 where
// that file does not exist.
func residentMemory() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// usedMemory is the engine's accounted memory, the quantity maxmemory
// bounds, and it moves the observed peak along.
func (s *Server) usedMemory() (used, peak int64) {
	used = s.eng.Stats().UsedMemory
	for {
		peak = s.stats.memPeak.Load()
		if used <= peak || s.stats.memPeak.CompareAndSwap(peak, used) {
			return used, max(peak, used)
		}
	}
}

func (s *Server) infoMemory(w *infoWriter) {
	used, peak := s.usedMemory()
	rss := residentMemory()
	maxmem := s.eng.MaxMemory()
	sysMem, _ := config.PhysicalMemory()
	w.int("used_memory", used)
	w.str("used_memory_human", config.FormatSize(used))
	w.int("used_memory_rss", rss)
	w.str("used_memory_rss_human", config.FormatSize(rss))
	w.int("used_memory_peak", peak)
	w.str("used_memory_peak_human", config.FormatSize(peak))
	w.str("used_memory_peak_perc", percent(used, peak))
	w.int("used_memory_dataset", used)
	w.int("total_system_memory", sysMem)
	w.str("total_system_memory_human", config.FormatSize(sysMem))
	w.int("maxmemory", maxmem)
	w.str("maxmemory_human", config.FormatSize(maxmem))
	w.str("maxmemory_policy", "allkeys-lru")
	ratio := 0.0
	if used > 0 {
		ratio = float64(rss) / float64(used)
	}
	w.str("mem_fragmentation_ratio", strconv.FormatFloat(ratio, 'f', 2, 64))
	w.int("mem_fragmentation_bytes", rss-used)
	// What clients hold of the budget (budget.go): large request values,
	// values loaded for replies and queued replies.
	w.int("mem_clients_normal", s.bulks.inUse())
	w.str("mem_allocator", "go-"+runtime.Version())
	w.int("lazyfree_pending_objects", 0)
}

// percent formats part/whole like Redis's "%.2f%%".
func percent(part, whole int64) string {
	if whole <= 0 {
		return "0.00%"
	}
	return strconv.FormatFloat(float64(part)*100/float64(whole), 'f', 2, 64) + "%"
}

// infoPersistence reports the state of a server whose memory tier has
// nothing to snapshot: never loading, no AOF, SAVE only records the time.
func (s *Server) infoPersistence(w *infoWriter) {
	w.int("loading", 0)
	w.int("async_loading", 0)
	w.int("rdb_changes_since_last_save", 0)
	w.int("rdb_bgsave_in_progress", 0)
	w.int("rdb_last_save_time", s.stats.lastSave.Load())
	w.str("rdb_last_bgsave_status", "ok")
	w.int("rdb_last_bgsave_time_sec", -1)
	w.int("rdb_current_bgsave_time_sec", -1)
	w.int("aof_enabled", 0)
	w.int("aof_rewrite_in_progress", 0)
	w.int("aof_rewrite_scheduled", 0)
	w.int("aof_last_rewrite_time_sec", -1)
	w.int("aof_current_rewrite_time_sec", -1)
	w.str("aof_last_bgrewrite_status", "ok")
	w.str("aof_last_write_status", "ok")
}

func (s *Server) infoStats(w *infoWriter) {
	st := s.eng.Stats()
	w.int("total_connections_received", s.stats.connectionsReceived.Load())
	w.int("total_commands_processed", s.stats.commandsProcessed.Load())
	w.int("total_net_input_bytes", s.stats.netInput.Load())
	w.int("total_net_output_bytes", s.stats.netOutput.Load())
	w.int("rejected_connections", s.stats.rejectedConnections.Load())
	w.int("expired_keys", st.ExpiredKeys)
	w.int("evicted_keys", st.EvictedKeys)
	w.int("evicted_clients", s.stats.evictedClients.Load())
	w.int("keyspace_hits", st.Hits)
	w.int("keyspace_misses", st.Misses)
	w.int("pubsub_channels", 0)
	w.int("pubsub_patterns", 0)
	w.int("total_error_replies", s.stats.errors.total.Load())
}

func (s *Server) infoReplication(w *infoWriter) {
	w.str("role", "master")
	w.int("connected_slaves", 0)
	w.str("master_failover_state", "no-failover")
	w.str("master_replid", s.serverID("master_replid"))
	w.str("master_replid2", strings.Repeat("0", 40))
	w.int("master_repl_offset", 0)
	w.int("second_repl_offset", -1)
	w.int("repl_backlog_active", 0)
	w.int("repl_backlog_size", 1048576)
	w.int("repl_backlog_first_byte_offset", 0)
	w.int("repl_backlog_histlen", 0)
}

func (s *Server) infoCPU(w *infoWriter) {
	tv := func(t syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", int64(t.Sec), int64(t.Usec))
	}
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	w.str("used_cpu_sys", tv(self.Stime))
	w.str("used_cpu_user", tv(self.Utime))
	w.str("used_cpu_sys_children", tv(children.Stime))
	w.str("used_cpu_user_children", tv(children.Utime))
}

func (s *Server) infoErrorstats(w *infoWriter) {
	for _, e := range s.stats.errors.snapshot() {
		w.str("errorstat_"+e.prefix, "count="+strconv.FormatInt(e.count, 10))
	}
}

func (s *Server) infoCluster(w *infoWriter) {
	enabled := int64(0)
	if s.ClusterEnabled() {
		enabled = 1
	}
	w.int("cluster_enabled", enabled)
}

func (s *Server) infoKeyspace(w *infoWriter) {
	for i, db := range s.eng.DBStats() {
		if db.Keys == 0 {
			continue
		}
		w.str("db"+strconv.Itoa(i), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", db.Keys, db.Expires))
	}
}

// infoKvserver is kvserver's own section: its version and build.
func (s *Server) infoKvserver(w *infoWriter) {
	w.str("kvserver_version", kvserverVersion)
	w.str("go_version", runtime.Version())
}

// infoTiers reports, per storage tier, what it holds and how reads, moves
// and evictions fared. A hit is counted on the tier that served it.
func (s *Server) infoTiers(w *infoWriter) {
	st := s.eng.Stats()
	tiers := "memory"
	if st.HasDisk {
		tiers = "memory,disk"
	}
	w.str("tiers", tiers)
	w.int("tier_memory_keys", st.Memory.Keys)
	w.int("tier_memory_bytes", st.Memory.Bytes)
	w.int("tier_memory_used_bytes", st.UsedMemory)
	w.int("tier_memory_max_bytes", st.MaxMemory)
	w.int("tier_memory_hits", st.Memory.Hits)
	w.int("tier_memory_evictions", st.Memory.Evictions)
	w.int("tier_memory_demotions", st.Memory.Demotions)
	w.int("tier_memory_promotions", st.Memory.Promotions)
	w.int("engine_lock_max_hold_us", st.LockMaxHold.Microseconds())
	if st.HasDisk {
		w.int("tier_disk_keys", st.Disk.Keys)
		w.int("tier_disk_index_bytes", st.IndexBytes)
		w.int("tier_disk_bytes", st.Disk.Bytes)
		w.int("tier_disk_max_bytes", st.Disk.Capacity)
		w.int("tier_disk_hits", st.Disk.Hits)
		w.int("tier_disk_evictions", st.Disk.Evictions)
		w.int("tier_disk_corrupt_records", st.Disk.Corrupt)
		status := "ok"
		if st.Disk.Unavailable {
			status = "unavailable"
		}
		w.str("tier_disk_status", status)
		w.int("tier_disk_io_errors", st.Disk.Errors)
		w.str("tier_disk_last_io_error", sanitize(st.Disk.LastError))
		w.int("tier_disk_deferred_deletes", st.Disk.DeferredDeletes)
		w.str("tier_disk_recovered_from", sanitize(st.Disk.RecoveredFrom))
	}
	w.int("tier_misses", st.Misses)
	w.int("keys_total", st.Keys)
}

// infoKVCache reports what kvserver knows of the KV cache it stores: chunks
// and their data bytes by model, dtype and format (from LMCache metadata),
// leases and pins, and the settings behind them.
func (s *Server) infoKVCache(w *infoWriter) {
	stats := s.eng.ChunkStats()
	classes := make([]engine.ChunkClass, 0, len(stats))
	var chunks, bytes int64
	for c, n := range stats {
		classes = append(classes, c)
		chunks += n.Chunks
		bytes += n.Bytes
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := classes[i], classes[j]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.DType != b.DType {
			return a.DType < b.DType
		}
		return a.Format < b.Format
	})
	prot := s.eng.Protection()
	opts := s.options()
	w.int("chunks", chunks)
	w.int("chunk_bytes", bytes)
	w.int("leased_groups", prot.LeasedGroups)
	w.int("pinned_groups", prot.PinnedGroups)
	w.int("exists_lease_ms", opts.ExistsLeaseMs)
	w.int("max_pin_seconds", opts.MaxPinSeconds)
	w.int("max_lease_ms", opts.MaxLeaseMs)
	w.str("kv_quant", opts.KVQuant)
	w.int("quantized_chunks", s.eng.Stats().QuantizedChunks)
	for i, c := range classes {
		n := stats[c]
		w.str("chunkclass"+strconv.Itoa(i), fmt.Sprintf("model=%s,dtype=%s,format=%s,chunks=%d,bytes=%d",
			c.Model, c.DType, c.Format, n.Chunks, n.Bytes))
	}
}

// maxErrorPrefixes bounds the distinct error codes INFO errorstats tracks,
// like Redis's ERROR_STATS_NUMBER: past it, errors are only counted in
// total_error_replies.
const maxErrorPrefixes = 128

// errorStats counts error replies by their code (the first word after the
// '-'), for INFO errorstats and total_error_replies.
type errorStats struct {
	total  atomic.Int64
	mu     sync.Mutex
	counts map[string]int64
}

type errorCount struct {
	prefix string
	count  int64
}

func (e *errorStats) add(prefix string) {
	e.total.Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = make(map[string]int64)
	}
	if _, ok := e.counts[prefix]; ok || len(e.counts) < maxErrorPrefixes {
		e.counts[prefix]++
	}
}

func (e *errorStats) reset() {
	e.total.Store(0)
	e.mu.Lock()
	e.counts = nil
	e.mu.Unlock()
}

// snapshot returns the counts sorted by code, the order of Redis's rax.
func (e *errorStats) snapshot() []errorCount {
	e.mu.Lock()
	out := make([]errorCount, 0, len(e.counts))
	for p, n := range e.counts {
		out = append(out, errorCount{p, n})
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(a, b errorCount) int { return strings.Compare(a.prefix, b.prefix) })
	return out
}

// countErrorReply records in INFO errorstats the error, if any, that the
// command just dispatched replied with.
func (s *Server) countErrorReply(c *Client, m resp.ReplyMark) {
	if code, ok := c.w.ErrorCodeSince(m); ok {
		s.stats.errors.add(code)
	}
}
