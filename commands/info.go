package commands

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kvserver/kvserver/cmdstats"
	"github.com/kvserver/kvserver/pubsub"

	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/engine"
)

// infoCommands is INFO's row (Redis's genRedisInfoString).
var infoCommands = []*Spec{
	{Name: "info", Arity: -1, Flags: FlagLoading | FlagStale, ACL: "@slow @dangerous", Handler: cmdInfo},
}

// Version is kvserver's own version, reported by INFO kvserver.
const Version = "0.1.0"

// Stats is what INFO reports of the server beyond the engine, and where
// SAVE and BGSAVE record their time.
type Stats interface {
	// Started is when the server started: uptime and the run id.
	Started() time.Time
	// Settings are the settings INFO reports, as in effect now.
	Settings() InfoSettings
	// ClusterEnabled reports whether the server runs in cluster mode.
	ClusterEnabled() bool
	// ConnectedClients is the number of open client connections.
	ConnectedClients() int
	// Counters are the server's connection, command and traffic counters.
	Counters() Counters
	// UsedMemory is the engine's accounted memory, the quantity maxmemory
	// bounds, and the highest value observed, which it moves along.
	UsedMemory() (used, peak int64)
	// ClientMemory is what clients hold of the memory budget: large
	// request values, values loaded for replies and queued replies.
	ClientMemory() int64
	// Errors are the error replies counted by code, sorted by code.
	Errors() []ErrorCount
	// CommandStats are the statistics of the commands that ran or were
	// refused since the start or CONFIG RESETSTAT.
	CommandStats() []CommandStat
	// CommandLatency is the latency histogram of a command of the table,
	// nil when none of its calls was tracked.
	CommandLatency(spec *Spec) *cmdstats.Histogram
	// LastSave is the unix time of the last SAVE or BGSAVE (the start
	// until one runs).
	LastSave() int64
	// Saved records a save at the unix time t.
	Saved(t int64)
}

// InfoSettings are the settings INFO reports.
type InfoSettings struct {
	// Port is the TCP port the server listens on.
	Port int
	// ConfigFile is the absolute path of the config file, "" for none.
	ConfigFile string
	// MaxClients is maxclients.
	MaxClients int
	// ExistsLeaseMs, MaxPinSeconds, MaxLeaseMs and KVQuant are the KV
	// cache settings.
	ExistsLeaseMs, MaxPinSeconds, MaxLeaseMs int64
	KVQuant                                  string
	// LatencyTracking is latency-tracking, and LatencyPercentiles are the
	// percentiles INFO latencystats prints.
	LatencyTracking    bool
	LatencyPercentiles []float64
}

// Counters are the server's counters INFO stats reports.
type Counters struct {
	ConnectionsReceived, RejectedConnections int64
	CommandsProcessed                        int64
	NetInputBytes, NetOutputBytes            int64
	// EvictedClients counts clients closed for holding the memory budget
	// without progress while others waited.
	EvictedClients int64
	// ErrorReplies counts every error reply (total_error_replies).
	ErrorReplies int64
}

// CommandStat is one command's statistics (INFO commandstats and
// latencystats).
type CommandStat struct {
	// Name is the command's name, "parent|sub" for a subcommand.
	Name string
	cmdstats.Counts
	// Latency holds the durations of its calls; nil when none ran.
	Latency *cmdstats.Histogram
}

// ErrorCount is how many error replies began with one error code.
type ErrorCount struct {
	Code  string
	Count int64
}

// infoSection is one section of INFO: the lower-case name clients ask for,
// the header line, and the writer of its "field:value" lines.
type infoSection struct {
	name, title string
	// inDefault marks the sections INFO prints without arguments.
	inDefault bool
	write     func(x *Ctx, w *InfoWriter)
}

// infoSections are Redis 7's sections that apply to kvserver, in Redis's
// order, followed by kvserver's own sections.
var infoSections = []infoSection{
	{"server", "Server", true, infoServer},
	{"clients", "Clients", true, infoClients},
	{"memory", "Memory", true, infoMemory},
	{"persistence", "Persistence", true, infoPersistence},
	{"stats", "Stats", true, infoStats},
	{"replication", "Replication", true, infoReplication},
	{"cpu", "CPU", true, infoCPU},
	{"modules", "Modules", true, func(*Ctx, *InfoWriter) {}},
	{"commandstats", "Commandstats", false, infoCommandstats},
	{"errorstats", "Errorstats", true, infoErrorstats},
	{"latencystats", "Latencystats", false, infoLatencystats},
	{"cluster", "Cluster", true, infoCluster},
	{"keyspace", "Keyspace", true, infoKeyspace},
	{"kvserver", "Kvserver", true, infoKvserver},
	{"tiers", "Tiers", true, infoTiers},
	{"kvcache", "Kvcache", true, infoKVCache},
}

// cmdInfo implements INFO [section ...]: section names are
// case-insensitive, "default", "all" and "everything" select groups,
// unknown names select nothing, and sections come out in the fixed order
// whatever the order asked. RESP3 gets a verbatim string.
func cmdInfo(x *Ctx) {
	want := make(map[string]bool)
	if len(x.Args) == 1 {
		want["default"] = true
	}
	for _, a := range x.Args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := want["all"] || want["everything"]
	var w InfoWriter
	for _, sec := range infoSections {
		if !all && !want[sec.name] && !(want["default"] && sec.inDefault) {
			continue
		}
		w.Section(sec.title)
		sec.write(x, &w)
	}
	x.W.Verbatim(w.String())
}

// serverID derives a stable 40-hex-digit identifier for this server
// instance (run_id, master_replid) from the process and start time.
func serverID(x *Ctx, salt string) string {
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(os.Getpid()))
	binary.LittleEndian.PutUint64(buf[8:], uint64(x.Stats.Started().UnixNano()))
	sum := sha1.Sum(append(buf[:], salt...))
	return hex.EncodeToString(sum[:])
}

// redisMode is INFO's redis_mode.
func redisMode(x *Ctx) string {
	if x.Stats.ClusterEnabled() {
		return "cluster"
	}
	return "standalone"
}

func infoServer(x *Ctx, w *InfoWriter) {
	settings := x.Stats.Settings()
	now := time.Now()
	uptime := int64(now.Sub(x.Stats.Started()) / time.Second)
	exe, _ := os.Executable()
	w.Str("redis_version", RedisCompatVersion)
	w.Str("redis_git_sha1", "00000000")
	w.Str("redis_git_dirty", "0")
	w.Str("redis_mode", redisMode(x))
	w.Str("os", osName())
	w.Int("arch_bits", int64(strconv.IntSize))
	w.Str("process_id", strconv.Itoa(os.Getpid()))
	w.Str("process_supervised", "no")
	w.Str("run_id", serverID(x, "run_id"))
	w.Int("tcp_port", int64(settings.Port))
	w.Int("server_time_usec", now.UnixMicro())
	w.Int("uptime_in_seconds", uptime)
	w.Int("uptime_in_days", uptime/86400)
	w.Int("hz", 10)
	w.Int("configured_hz", 10)
	w.Str("executable", exe)
	w.Str("config_file", settings.ConfigFile)
	w.Int("io_threads_active", 0)
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

func infoClients(x *Ctx, w *InfoWriter) {
	w.Int("connected_clients", int64(x.Stats.ConnectedClients()))
	w.Int("cluster_connections", 0)
	w.Int("maxclients", int64(x.Stats.Settings().MaxClients))
	blocked, withTimeout := x.Clients.Blocked()
	w.Int("blocked_clients", int64(blocked))
	w.Int("tracking_clients", int64(x.Tracking.TrackingStats().Clients))
	w.Int("clients_in_timeout_table", int64(withTimeout))
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

func infoMemory(x *Ctx, w *InfoWriter) {
	used, peak := x.Stats.UsedMemory()
	rss := residentMemory()
	maxmem := x.Engine.MaxMemory()
	sysMem, _ := config.PhysicalMemory()
	w.Int("used_memory", used)
	w.Str("used_memory_human", config.FormatSize(used))
	w.Int("used_memory_rss", rss)
	w.Str("used_memory_rss_human", config.FormatSize(rss))
	w.Int("used_memory_peak", peak)
	w.Str("used_memory_peak_human", config.FormatSize(peak))
	w.Str("used_memory_peak_perc", percent(used, peak))
	w.Int("used_memory_dataset", used)
	if x.Scripting != nil {
		scripts, scriptBytes := x.Scripting.Lua().ScriptsMemory()
		libs, funcs := x.Scripting.Lua().FunctionCounts()
		w.Int("used_memory_scripts_eval", scriptBytes)
		w.Int("number_of_cached_scripts", scripts)
		w.Int("number_of_functions", int64(funcs))
		w.Int("number_of_libraries", int64(libs))
	}
	w.Int("total_system_memory", sysMem)
	w.Str("total_system_memory_human", config.FormatSize(sysMem))
	w.Int("maxmemory", maxmem)
	w.Str("maxmemory_human", config.FormatSize(maxmem))
	w.Str("maxmemory_policy", x.Diagnostics.Setting("maxmemory-policy"))
	ratio := 0.0
	if used > 0 {
		ratio = float64(rss) / float64(used)
	}
	w.Str("mem_fragmentation_ratio", strconv.FormatFloat(ratio, 'f', 2, 64))
	w.Int("mem_fragmentation_bytes", rss-used)
	w.Int("mem_clients_normal", x.Stats.ClientMemory())
	w.Str("mem_allocator", "go-"+runtime.Version())
	w.Int("lazyfree_pending_objects", 0)
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
func infoPersistence(x *Ctx, w *InfoWriter) {
	w.Int("loading", 0)
	w.Int("async_loading", 0)
	w.Int("rdb_changes_since_last_save", 0)
	w.Int("rdb_bgsave_in_progress", 0)
	w.Int("rdb_last_save_time", x.Stats.LastSave())
	w.Str("rdb_last_bgsave_status", "ok")
	w.Int("rdb_last_bgsave_time_sec", -1)
	w.Int("rdb_current_bgsave_time_sec", -1)
	w.Int("aof_enabled", 0)
	w.Int("aof_rewrite_in_progress", 0)
	w.Int("aof_rewrite_scheduled", 0)
	w.Int("aof_last_rewrite_time_sec", -1)
	w.Int("aof_current_rewrite_time_sec", -1)
	w.Str("aof_last_bgrewrite_status", "ok")
	w.Str("aof_last_write_status", "ok")
}

func infoStats(x *Ctx, w *InfoWriter) {
	st := x.Engine.Stats()
	n := x.Stats.Counters()
	w.Int("total_connections_received", n.ConnectionsReceived)
	w.Int("total_commands_processed", n.CommandsProcessed)
	w.Int("total_net_input_bytes", n.NetInputBytes)
	w.Int("total_net_output_bytes", n.NetOutputBytes)
	w.Int("rejected_connections", n.RejectedConnections)
	w.Int("expired_keys", st.ExpiredKeys)
	w.Int("evicted_keys", st.EvictedKeys)
	w.Int("evicted_clients", n.EvictedClients)
	w.Int("keyspace_hits", st.Hits)
	w.Int("keyspace_misses", st.Misses)
	w.Int("pubsub_channels", int64(x.PubSub.NumChannels(pubsub.Channel)))
	w.Int("pubsub_patterns", int64(x.PubSub.NumPat()))
	w.Int("pubsubshard_channels", int64(x.PubSub.NumChannels(pubsub.Shard)))
	ts := x.Tracking.TrackingStats()
	w.Int("tracking_total_keys", int64(ts.Keys))
	w.Int("tracking_total_items", int64(ts.Items))
	w.Int("tracking_total_prefixes", int64(ts.Prefixes))
	w.Int("total_error_replies", n.ErrorReplies)
}

func infoReplication(x *Ctx, w *InfoWriter) {
	w.Str("role", "master")
	w.Int("connected_slaves", 0)
	w.Str("master_failover_state", "no-failover")
	w.Str("master_replid", serverID(x, "master_replid"))
	w.Str("master_replid2", strings.Repeat("0", 40))
	w.Int("master_repl_offset", 0)
	w.Int("second_repl_offset", -1)
	w.Int("repl_backlog_active", 0)
	w.Int("repl_backlog_size", 1048576)
	w.Int("repl_backlog_first_byte_offset", 0)
	w.Int("repl_backlog_histlen", 0)
}

func infoCPU(_ *Ctx, w *InfoWriter) {
	tv := func(t syscall.Timeval) string {
		return fmt.Sprintf("%d.%06d", int64(t.Sec), int64(t.Usec))
	}
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	w.Str("used_cpu_sys", tv(self.Stime))
	w.Str("used_cpu_user", tv(self.Utime))
	w.Str("used_cpu_sys_children", tv(children.Stime))
	w.Str("used_cpu_user_children", tv(children.Utime))
}

// infoCommandstats prints each command's line as Redis 7.0's
// genRedisInfoString does, usec_per_call computed in single precision as
// there.
func infoCommandstats(x *Ctx, w *InfoWriter) {
	for _, c := range x.Stats.CommandStats() {
		usec := c.Nanos / 1000
		var perCall float32
		if c.Calls > 0 {
			perCall = float32(usec) / float32(c.Calls)
		}
		w.Str("cmdstat_"+c.Name, fmt.Sprintf("calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=%d,failed_calls=%d",
			c.Calls, usec, perCall, c.Rejected, c.Failed))
	}
}

// infoLatencystats prints the latency percentiles, in microseconds, of
// each command that ran, as Redis 7.0's fillPercentileDistributionLatencies
// (nothing while latency-tracking is off).
func infoLatencystats(x *Ctx, w *InfoWriter) {
	settings := x.Stats.Settings()
	if !settings.LatencyTracking {
		return
	}
	for _, c := range x.Stats.CommandStats() {
		if c.Latency == nil {
			continue
		}
		var b strings.Builder
		values := c.Latency.ValuesAtPercentiles(settings.LatencyPercentiles)
		for i, p := range settings.LatencyPercentiles {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "p%s=%.3f", config.FormatPercentile(p), float64(values[i])/1000)
		}
		w.Str("latency_percentiles_usec_"+c.Name, b.String())
	}
}

func infoErrorstats(x *Ctx, w *InfoWriter) {
	for _, e := range x.Stats.Errors() {
		w.Str("errorstat_"+e.Code, "count="+strconv.FormatInt(e.Count, 10))
	}
}

func infoCluster(x *Ctx, w *InfoWriter) {
	enabled := int64(0)
	if x.Stats.ClusterEnabled() {
		enabled = 1
	}
	w.Int("cluster_enabled", enabled)
	m := x.Cluster.SlotMap()
	if m == nil {
		return
	}
	// kvserver's own fields: the map in effect, and with --cluster-etcd
	// the node's standing there.
	w.Int("cluster_current_epoch", m.CurrentEpoch())
	w.Int("cluster_known_nodes", int64(len(m.Nodes())))
	w.Int("cluster_owned_slots", int64(m.Self().SlotCount()))
	if ms, ok := x.Cluster.Membership(); ok {
		w.Int("cluster_etcd_session", boolInt(ms.Session))
		w.Int("cluster_etcd_reconciler", boolInt(ms.Reconciler))
		w.Int("cluster_maps_applied", ms.MapsApplied)
	}
}

// boolInt is 1 for true, 0 for false.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func infoKeyspace(x *Ctx, w *InfoWriter) {
	for i, db := range x.Engine.DBStats() {
		if db.Keys == 0 {
			continue
		}
		w.Str("db"+strconv.Itoa(i), fmt.Sprintf("keys=%d,expires=%d,avg_ttl=0", db.Keys, db.Expires))
	}
}

// infoKvserver is kvserver's own section: its version and build.
func infoKvserver(_ *Ctx, w *InfoWriter) {
	w.Str("kvserver_version", Version)
	w.Str("go_version", runtime.Version())
}

// infoTiers reports, per storage tier, what it holds and how reads, moves
// and evictions fared. A hit is counted on the tier that served it.
func infoTiers(x *Ctx, w *InfoWriter) {
	st := x.Engine.Stats()
	tiers := "memory"
	if st.HasDisk {
		tiers = "memory,disk"
	}
	w.Str("tiers", tiers)
	w.Int("tier_memory_keys", st.Memory.Keys)
	w.Int("tier_memory_bytes", st.Memory.Bytes)
	w.Int("tier_memory_used_bytes", st.UsedMemory)
	w.Int("tier_memory_max_bytes", st.MaxMemory)
	w.Int("tier_memory_hits", st.Memory.Hits)
	w.Int("tier_memory_evictions", st.Memory.Evictions)
	w.Int("tier_memory_demotions", st.Memory.Demotions)
	w.Int("tier_memory_promotions", st.Memory.Promotions)
	w.Int("engine_lock_max_hold_us", st.LockMaxHold.Microseconds())
	if p := x.Engine.ValuePool(); p != nil {
		ps := p.Stats()
		w.Int("value_pool_free_bytes", ps.FreeBytes)
		w.Int("value_pool_reused", ps.Reused)
		w.Int("value_pool_allocated", ps.Allocated)
		w.Int("value_pool_reading", int64(ps.Reading))
	}
	if st.HasDisk {
		w.Int("tier_disk_keys", st.Disk.Keys)
		w.Int("tier_disk_index_bytes", st.IndexBytes)
		w.Int("tier_disk_bytes", st.Disk.Bytes)
		w.Int("tier_disk_max_bytes", st.Disk.Capacity)
		w.Int("tier_disk_hits", st.Disk.Hits)
		w.Int("tier_disk_evictions", st.Disk.Evictions)
		w.Int("tier_disk_corrupt_records", st.Disk.Corrupt)
		status := "ok"
		if st.Disk.Unavailable {
			status = "unavailable"
		}
		w.Str("tier_disk_status", status)
		w.Int("tier_disk_io_errors", st.Disk.Errors)
		w.Str("tier_disk_last_io_error", Sanitize(st.Disk.LastError))
		w.Int("tier_disk_deferred_deletes", st.Disk.DeferredDeletes)
		w.Int("tier_disk_unsaved_groups", st.Disk.Unsaved)
		w.Str("tier_disk_recovered_from", Sanitize(st.Disk.RecoveredFrom))
	}
	w.Int("tier_misses", st.Misses)
	w.Int("keys_total", st.Keys)
}

// infoKVCache reports what kvserver knows of the KV cache it stores: chunks
// and their data bytes by model, dtype and format (from LMCache metadata),
// leases and pins, and the settings behind them.
func infoKVCache(x *Ctx, w *InfoWriter) {
	stats := x.Engine.ChunkStats()
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
	prot := x.Engine.Protection()
	settings := x.Stats.Settings()
	w.Int("chunks", chunks)
	w.Int("chunk_bytes", bytes)
	w.Int("leased_groups", prot.LeasedGroups)
	w.Int("pinned_groups", prot.PinnedGroups)
	w.Int("exists_lease_ms", settings.ExistsLeaseMs)
	w.Int("max_pin_seconds", settings.MaxPinSeconds)
	w.Int("max_lease_ms", settings.MaxLeaseMs)
	w.Str("kv_quant", settings.KVQuant)
	w.Int("quantized_chunks", x.Engine.Stats().QuantizedChunks)
	for i, c := range classes {
		n := stats[c]
		w.Str("chunkclass"+strconv.Itoa(i), fmt.Sprintf("model=%s,dtype=%s,format=%s,chunks=%d,bytes=%d",
			c.Model, c.DType, c.Format, n.Chunks, n.Bytes))
	}
}
