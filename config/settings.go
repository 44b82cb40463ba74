package config

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kvserver/kvserver/notify"
)

// Kind is how a setting's value is written and read.
type Kind int

// The kinds of settings.
const (
	// KindInt is a decimal integer.
	KindInt Kind = iota
	// KindSize is a byte count in Redis's size syntax ("512mb").
	KindSize
	// KindString is free text.
	KindString
	// KindEnum is one of Setting.Values, read case-insensitively.
	KindEnum
	// KindBool is Redis's yes or no.
	KindBool
	// KindOutputBufferLimits is client-output-buffer-limit's syntax.
	KindOutputBufferLimits
	// KindRenames is rename-command's OLD=NEW entries (a YAML map).
	KindRenames
	// KindUsers is a list of ACL user lines.
	KindUsers
)

// Rewrite says whether and when CONFIG REWRITE writes a setting.
type Rewrite int

// CONFIG REWRITE's treatment of a setting.
const (
	// NoRewrite leaves the setting as the file has it.
	NoRewrite Rewrite = iota
	// RewriteAlways writes the setting, adding it when the file lacks it.
	RewriteAlways
	// RewriteIfChanged updates the setting's line, and adds one only when
	// the value differs from the default (as Redis does for every setting).
	RewriteIfChanged
)

// Setting is one row of the settings table, Redis's static_configs[] in
// Go: everything about a setting that kvserver derives its flag, YAML key,
// KVSERVER_* variable, validation, CONFIG GET/SET/REWRITE parameter and
// documentation from.
type Setting struct {
	// Name is the flag (--Name), the YAML key, the CONFIG parameter, and
	// upper-cased with '-' as '_' after KVSERVER_, the environment variable.
	Name string
	// Alias is Redis's older name of the parameter ("hash-max-ziplist-
	// entries"), which CONFIG GET and SET accept as Redis 7.0 does.
	Alias string
	// Kind is the value's syntax.
	Kind Kind
	// Default is the value used when no source sets one, as written in
	// YAML and in CONFIG SET ("" for none).
	Default string
	// DefaultDoc is the README's default column where it is not Default
	// ("25% of RAM"); "" means Default, or "empty" when Default is "".
	DefaultDoc string
	// Min and Max bound KindInt and KindSize values, inclusive (for CONFIG
	// SET too). Max 0 means no upper bound.
	Min, Max int64
	// Values are the accepted values of a KindEnum, lower case; an
	// empty-string entry lets the zero Config through Validate.
	Values []string
	// Doc is the one-line meaning, for --help and the README's flag table.
	Doc string
	// Notes, when set, is the longer text configs/kvserver.yaml gives the
	// setting as its comment (lines without "# "), its default included;
	// without it the comment is Doc and the default.
	Notes string

	// ConfigOnly marks a Redis parameter that kvserver does not implement
	// but reports, and accepts only at, its Default, so that clients
	// written for Redis work: it is no flag, YAML key or variable.
	ConfigOnly bool
	// InConfig makes CONFIG GET report the setting (always with ConfigOnly).
	InConfig bool
	// Mutable lets CONFIG SET change it at run time.
	Mutable bool
	// Rewrite is how CONFIG REWRITE treats it.
	Rewrite Rewrite

	// field points into a Config at the setting's value, for the settings
	// that the binary wires by hand. nil for ConfigOnly rows and for rows
	// read by name (Config.Int, Live.Int): a new setting needs no field,
	// so that adding one is adding its row.
	field func(c *Config) any
	// check reports a problem of the value that bounds cannot express
	// (through bad, naming the key), or nothing.
	check func(c Config, bad func(key, format string, args ...any))
}

// settings is the table. Its order is the order of --help, of
// configs/kvserver.yaml, of the README's flag table and of CONFIG GET's
// pattern replies.
var settings = []Setting{
	{Name: "port", Kind: KindInt, Default: "6379", Min: 0, Max: math.MaxUint16,
		Doc: "client port",
		Notes: "TCP port on which clients speak the Redis protocol, 0..65535.\n" +
			"Default: 6379.", InConfig: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.Port }},
	{Name: "bind", Kind: KindString, Default: "127.0.0.1",
		Doc: "listen address",
		Notes: "Address the client port listens on. Use 0.0.0.0 to listen on every IPv4\n" +
			"interface; only do so together with requirepass.\n" +
			"Default: 127.0.0.1.", InConfig: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.Bind }, check: notEmpty("bind", func(c Config) string { return c.Bind })},
	{Name: "unixsocket", Kind: KindString, Default: "", DefaultDoc: "none",
		Doc: "Unix socket path to listen on as well (`redis-cli -s PATH`)",
		Notes: "Path of a Unix domain socket on which clients speak the Redis protocol,\n" +
			"beside (or, with port: 0, instead of) the TCP port. A stale socket file\n" +
			"left at the path is replaced. Empty means no Unix socket.\n" +
			"Default: \"\" (none).", InConfig: true},
	{Name: "unixsocketperm", Kind: KindString, Default: "0",
		Doc: "octal permissions of the Unix socket; 0 keeps the umask's",
		Notes: "Permissions of the unixsocket file, in octal as in Redis (700, 770); 0\n" +
			"leaves those the process's umask gives.\n" +
			"Default: 0.", InConfig: true,
		check: checkSocketPerm},
	{Name: "dir", Kind: KindString, Default: "./data",
		Doc: "data directory (the disk tier lives here)",
		Notes: "Directory where kvserver keeps its data files.\n" +
			"Default: ./data (relative to the working directory).", InConfig: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.Dir }, check: notEmpty("dir", func(c Config) string { return c.Dir })},
	{Name: "maxmemory", Kind: KindSize, Default: "0", DefaultDoc: "25% of RAM",
		Notes: "Memory limit for the dataset, as a size. 0 or empty means 25% of the\n" +
			"machine's physical memory (MemTotal from /proc/meminfo; 1gb when that\n" +
			"cannot be read).\n" +
			"Default: 0.", Min: 0, Max: math.MaxInt64,
		Doc: "memory bound, Redis size syntax (`64mb`, `4gb`)", InConfig: true, Mutable: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.MaxMemory },
		check: func(c Config, bad func(string, string, ...any)) {
			if c.MaxMemory < 1 {
				bad("maxmemory", "%d bytes is below 1 (Load turns 0 into 25%% of RAM)", c.MaxMemory)
			}
		}},
	{Name: "maxmemory-policy", Kind: KindEnum, Default: "allkeys-lru",
		Values: []string{"volatile-lru", "volatile-lfu", "allkeys-lru", "allkeys-lfu", "noeviction"},
		Doc:    "which chunk groups memory pressure demotes and a full disk (or memory, without a disk tier) evicts",
		Notes: "Redis's eviction policy, applied to chunk groups. Memory pressure demotes\n" +
			"groups to the disk tier (their keys stay readable): the least recently used\n" +
			"under *-lru, the least frequently used (Redis's LFU counter, compared among\n" +
			"the 16 least recently used groups) under *-lfu. Eviction, which drops keys\n" +
			"(a full disk tier, or full memory without one), chooses the same way among\n" +
			"all groups (allkeys-*) or among groups with a TTL (volatile-*); noeviction\n" +
			"evicts nothing and answers OOM instead. OBJECT FREQ needs an *-lfu policy,\n" +
			"OBJECT IDLETIME one of the others. volatile-random, volatile-ttl and\n" +
			"allkeys-random are not implemented.\n" +
			"Default: allkeys-lru.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "lfu-log-factor", Kind: KindInt, Default: "10", Min: 0, Max: math.MaxInt32,
		Doc: "how slowly the LFU access counter grows (Redis's lfu-log-factor)",
		Notes: "Logarithm factor of the LFU access counter: an access increments a counter c\n" +
			"above 5 with probability 1/((c-5)*factor+1); 0 increments on every access.\n" +
			"Default: 10.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "lfu-decay-time", Kind: KindInt, Default: "1", Min: 0, Max: math.MaxInt32,
		Doc: "minutes per decrement of an idle key's LFU counter; 0 never decays",
		Notes: "Minutes of idleness per decrement of a key's LFU access counter (Redis's\n" +
			"lfu-decay-time); 0 never decays.\n" +
			"Default: 1.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "maxmemory-samples", Kind: KindInt, Default: "5", ConfigOnly: true, InConfig: true, Mutable: true,
		Doc: "Redis's LRU sample count; reported only"},
	{Name: "metrics-port", Kind: KindInt, Default: "9121", Min: 0, Max: math.MaxUint16,
		Doc: "Prometheus `/metrics` and `/debug/pprof/`; 0 disables",
		Notes: "TCP port of the HTTP endpoint serving /metrics (Prometheus) and\n" +
			"/debug/pprof/, 0..65535. 0 disables the endpoint.\n" +
			"Default: 9121.",
		field: func(c *Config) any { return &c.MetricsPort },
		check: func(c Config, bad func(string, string, ...any)) {
			if c.MetricsPort != 0 && c.MetricsPort == c.Port {
				bad("metrics-port", "%d is also the client port", c.MetricsPort)
			}
		}},
	{Name: "requirepass", Kind: KindString, Default: "",
		Doc: "password for `AUTH` / `HELLO … AUTH`",
		Notes: "Password clients must send with AUTH before other commands. Empty means no\n" +
			"password. Quote it so YAML keeps it a string (requirepass: \"0123\").\n" +
			"Default: \"\" (no password).", InConfig: true, Mutable: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.RequirePass }},
	{Name: "proto-max-bulk-len", Kind: KindSize, Default: "512mb", Min: minProtoMaxBulkLen, Max: math.MaxInt64,
		Doc: "largest bulk a client may send",
		Notes: "Largest bulk string a client may send in one request, as a size. Like\n" +
			"Redis, at least 1mb.\n" +
			"Default: 512mb.", InConfig: true, Mutable: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.ProtoMaxBulkLen }},
	{Name: "maxclients", Kind: KindInt, Default: "10000", Min: 1, Max: math.MaxUint32,
		Doc: "concurrent connections",
		Notes: "Most clients connected at once; further connections are refused. At least 1.\n" +
			"Default: 10000.", InConfig: true, Mutable: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.MaxClients }},
	{Name: "io-threads", Kind: KindInt, Default: "1", Min: 1, Max: 128,
		Doc: "event loops serving the connections; above 1, commands of different connections may run out of arrival order",
		Notes: "Event loops that serve idle TCP and Unix-socket connections, each on its own\n" +
			"goroutine. With one, as in Redis, commands run in the order their bytes\n" +
			"arrived, across connections: a SUBSCRIBE sent on one connection and then a\n" +
			"PUBLISH or PUBSUB NUMSUB on another find the subscription made (go-redis's\n" +
			"suite relies on it; with two loops it failed about 2 times in 5). More loops\n" +
			"serve more on many cores (README, \"Many cores\"; past four the engine lock\n" +
			"they share costs more than they give), but commands that arrive on two\n" +
			"connections within a few microseconds of each other may then run in either\n" +
			"order. On two cores that the clients share, one loop serves as much as two.\n" +
			"Between 1 and 128.\n" +
			"Default: 1.", InConfig: true},
	{Name: "databases", Kind: KindInt, Default: "16", Min: 1,
		Doc: "numbered databases",
		Notes: "Number of logical databases (SELECT 0 .. databases-1). At least 1.\n" +
			"Default: 16.", InConfig: true, Rewrite: RewriteAlways,
		field: func(c *Config) any { return &c.Databases }},
	{Name: "save", Kind: KindString, Default: "", ConfigOnly: true, InConfig: true, Mutable: true,
		Doc: "Redis's snapshot schedule; kvserver takes no snapshots"},
	{Name: "appendonly", Kind: KindBool, Default: "no", ConfigOnly: true, InConfig: true, Mutable: true,
		Doc: "Redis's AOF; kvserver has none"},
	{Name: "log-level", Kind: KindEnum, Default: "info", Values: []string{"debug", "info", "warn", "error"},
		Doc: "debug, info, warn, error",
		Notes: "Least severe log messages written: debug, info, warn or error.\n" +
			"Default: info.",
		field: func(c *Config) any { return &c.LogLevel }},
	{Name: "maxdisk", Kind: KindSize, Default: "0", DefaultDoc: "80% of free space",
		Notes: "Size limit of the disk tier (Pebble under dir), as a size. When it is\n" +
			"reached the coldest chunk groups are evicted from disk. 0 means 80% of the\n" +
			"free space of dir's file system when the server starts.\n" +
			"Default: 0.", Min: 0, Max: math.MaxInt64,
		Doc:   "disk tier bound, Redis size syntax",
		field: func(c *Config) any { return &c.MaxDisk }},
	{Name: "disk-compression", Kind: KindEnum, Default: "none", Values: []string{"none", "s2", "zstd"},
		Doc: "none, s2 or zstd for the disk tier",
		Notes: "Lossless compression of the disk tier: none, s2 or zstd. fp16/bf16 KV\n" +
			"chunks (recognised by their LMCache metadata) are byte-plane shuffled\n" +
			"first. Measurements behind the default are in disktier/doc.go.\n" +
			"Default: none (zstd+shuffle stores ~71% of bf16 KV bytes but halves disk write speed; see disktier/doc.go).",
		field: func(c *Config) any { return &c.DiskCompression }},
	{Name: "busy-reply-threshold", Alias: "lua-time-limit", Kind: KindInt, Default: "5000", Min: 0, Max: math.MaxInt64,
		Doc: "milliseconds a script runs before other clients get BUSY and SCRIPT KILL may stop it; 0 never",
		Notes: "Milliseconds an EVAL script or FCALL function may run before the server\n" +
			"answers other clients' commands with BUSY and SCRIPT KILL or FUNCTION KILL\n" +
			"may stop it (Redis's busy-reply-threshold, alias lua-time-limit). 0 means\n" +
			"never: scripts cannot be killed.\n" +
			"Default: 5000.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "exists-lease-ms", Kind: KindInt, Default: "2000", Min: 0,
		Doc: "lease an `EXISTS` hit grants the chunk; 0 disables",
		Notes: "Milliseconds for which an EXISTS hit protects the key's chunk group from\n" +
			"eviction, so that the GET an LMCache client sends next cannot miss\n" +
			"(Mooncake's store does the same). 0 disables the implicit lease.\n" +
			"Default: 2000."},
	{Name: "max-pin-seconds", Kind: KindInt, Default: "86400", Min: 1,
		Doc: "longest `KVC.PIN`",
		Notes: "Longest lifetime, in seconds, that KVC.PIN accepts for pinning hot chunk\n" +
			"groups (system prompts) against eviction.\n" +
			"Default: 86400 (24 hours)."},
	{Name: "max-lease-ms", Kind: KindInt, Default: "60000", Min: 1, Max: math.MaxInt32,
		Doc: "longest lease `KVC.PROBE LEASE` grants; longer ones are clamped to it",
		Notes: "Longest lease, in milliseconds, that KVC.PROBE LEASE grants: a longer one\n" +
			"is clamped to it, so that a client allowed only to read cannot protect\n" +
			"chunk groups from eviction for longer than this (KVC.PIN, a write, is\n" +
			"bounded by max-pin-seconds). CONFIG SET max-lease-ms changes it at run\n" +
			"time; leases already granted keep their deadline.\n" +
			"Default: 60000 (one minute).", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "kv-quant", Kind: KindEnum, Default: "off", Values: []string{"off", "int8", "fp8", "int4"},
		Doc: "off, int8, fp8, int4: quantized storage of fp16/bf16 KV chunks (lossy unless off)",
		Notes: "Quantized storage of fp16/bf16 KV chunks whose LMCache metadata names a KV\n" +
			"format: off, int8, fp8 or int4. Anything but off is lossy (bounded error,\n" +
			"see codec/doc.go); GET still returns the original dtype and length.\n" +
			"Default: off (every byte comes back exactly).",
		field: func(c *Config) any { return &c.KVQuant }},
	{Name: "cluster-config", Kind: KindString, Default: "", DefaultDoc: "none",
		Notes: "Redis Cluster mode: a YAML file mapping the 16384 hash slots to nodes\n" +
			"(format in README.md, \"Cluster mode\"). Every node is started with the same\n" +
			"file and finds itself in it by bind and port. Keys of other nodes' slots\n" +
			"are answered with MOVED, multi-key commands across slots with CROSSSLOT.\n" +
			"SIGHUP re-reads the file. Empty runs a standalone server.\n" +
			"Default: \"\" (standalone).",
		Doc:   "slot map that turns on Redis Cluster mode (see Cluster mode)",
		field: func(c *Config) any { return &c.ClusterConfig }},
	{Name: "cluster-etcd", Kind: KindString, Default: "", DefaultDoc: "none",
		Doc: "comma-separated etcd endpoints that turn on Redis Cluster mode with etcd membership (see Scale-out on etcd)",
		Notes: "Redis Cluster mode without a slot file: nodes register in etcd on a lease,\n" +
			"one of them (elected through etcd) computes the slot map and every node\n" +
			"applies it. Comma-separated client URLs, e.g. http://10.0.0.9:2379.\n" +
			"Cannot be combined with cluster-config.\n" +
			"Default: \"\" (off).",
		field: func(c *Config) any { return &c.ClusterEtcd },
		check: func(c Config, bad func(string, string, ...any)) {
			if c.ClusterEtcd != "" && c.ClusterConfig != "" {
				bad("cluster-etcd", "cannot be combined with cluster-config (choose a static file or etcd)")
			}
		}},
	{Name: "cluster-name", Kind: KindString, Default: "kvserver",
		Doc:   "the cluster's key prefix in etcd, so that clusters can share one etcd",
		field: func(c *Config) any { return &c.ClusterName },
		check: notEmpty("cluster-name", func(c Config) string { return c.ClusterName })},
	{Name: "cluster-announce-addr", Kind: KindString, Default: "", DefaultDoc: "bind:port",
		Doc: "host:port that clients are sent to for this node (with cluster-etcd)",
		Notes: "Address other nodes put in MOVED replies and CLUSTER SLOTS for this node\n" +
			"(with cluster-etcd). Set it when bind is a wildcard or clients reach the\n" +
			"node through another address.\n" +
			"Default: \"\" (bind:port)."},
	{Name: "cluster-node-ttl", Kind: KindInt, Default: "5", Min: 1, Max: 3600,
		Doc: "seconds of the etcd lease that keeps a node a member (with cluster-etcd)"},
	{Name: "cluster-grace", Kind: KindInt, Default: "10", Min: 0, Max: 86400,
		Doc: "seconds after a node's lease expired before its slots move to the others (with cluster-etcd)"},
	{Name: "timeout", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxInt32,
		Doc: "close clients idle this many seconds (counted from the last byte received); 0 never",
		Notes: "---------------------------------------------------------------------------\n" +
			"Security and client limits. These follow Redis 7.0's settings of the same\n" +
			"names; README.md (\"Security\") has a worked example.\n" +
			"Seconds a client may stay idle (no request, no progress reading a reply)\n" +
			"before it is disconnected, 0..2147483647. 0 never closes idle clients.\n" +
			"CONFIG SET timeout changes it at run time.\n" +
			"Default: 0.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged,
		field: func(c *Config) any { return &c.Timeout }},
	{Name: "lazyfree-lazy-user-flush", Kind: KindBool, Default: "no", ConfigOnly: true, InConfig: true, Mutable: true,
		Doc: "Redis's lazy FLUSHALL; kvserver flushes at once"},
	{Name: "notify-keyspace-events", Kind: KindString, Default: "",
		Doc: "keyspace notifications to publish, Redis's class letters (`KEA`, `Ex`...); empty none",
		Notes: "Keyspace notifications, as in Redis: K publishes on __keyspace@<db>__:<key>,\n" +
			"E on __keyevent@<db>__:<event>, and the classes g (generic: del, expire,\n" +
			"rename...), $ (strings), x (expired), e (evicted), n (new keys), m (key\n" +
			"misses) and A (g$lshzxetd) choose which events. CONFIG SET changes it at run\n" +
			"time; CONFIG GET reports Redis's canonical form.\n" +
			"Default: \"\" (none).", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged,
		field: func(c *Config) any { return &c.NotifyKeyspaceEvents }, check: checkNotifyClasses},
	{Name: "kvcache-events", Kind: KindBool, Default: "no",
		Doc: "publish LMCache chunk events on `__kvcache__@<db>__:<model>` (see KV-cache events)",
		Notes: "KV-cache events for prefix-aware routers: a message on\n" +
			"__kvcache__@<db>__:<model> when a chunk becomes whole (both keys stored),\n" +
			"is demoted to disk, promoted back, evicted or deleted. Payload:\n" +
			"\"<event> <chunk hash> <tier> <bytes>\" (README.md, KV-cache events). CONFIG\n" +
			"SET changes it at run time.\n" +
			"Default: no.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "slowlog-log-slower-than", Kind: KindInt, Default: "10000", Min: -1, Max: math.MaxInt64,
		Doc: "SLOWLOG records commands slower than this many microseconds; -1 none, 0 all", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "slowlog-max-len", Kind: KindInt, Default: "128", Min: 0, Max: math.MaxInt64,
		Doc: "SLOWLOG keeps at most this many entries, dropping the oldest", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "acllog-max-len", Kind: KindInt, Default: "128", Min: 0, Max: math.MaxInt64,
		Doc: "ACL LOG keeps at most this many entries, dropping the oldest", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "hash-max-listpack-entries", Alias: "hash-max-ziplist-entries", Kind: KindInt, Default: "512", Min: 0, Max: math.MaxInt64,
		Doc: "a hash with more fields than this is stored as a hash table (OBJECT ENCODING hashtable) instead of a listpack, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "hash-max-listpack-value", Alias: "hash-max-ziplist-value", Kind: KindInt, Default: "64", Min: 0, Max: math.MaxInt64,
		Doc: "a hash with a field or value longer than this many bytes is stored as a hash table instead of a listpack, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "list-max-listpack-size", Alias: "list-max-ziplist-size", Kind: KindInt, Default: "-2", Min: math.MinInt32, Max: math.MaxInt32,
		Doc: "elements per chunk of a list: a positive count, or -1..-5 for chunks of 4, 8, 16, 32 or 64 KiB, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "list-compress-depth", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxInt32, ConfigOnly: true, InConfig: true, Mutable: true,
		Doc: "Redis's LZF compression of a list's inner chunks; kvserver keeps list chunks uncompressed in memory (the disk tier compresses)"},
	{Name: "hll-sparse-max-bytes", Kind: KindSize, Default: "3000", Min: 0, Max: math.MaxInt64,
		Doc: "largest sparse HyperLogLog, header included, before PFADD makes it dense",
		Notes: "Largest sparse HyperLogLog value in bytes, header included: a PFADD or\n" +
			"PFMERGE that would make a sparse value longer turns it dense (12304\n" +
			"bytes). As in Redis; values above 16000 make little sense.\n" +
			"Default: 3000.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "tracking-table-max-keys", Kind: KindInt, Default: "1000000", Min: 0, Max: math.MaxInt64,
		Doc: "most keys the client-side caching table remembers (0: no bound); past it, random keys are forgotten and invalidated for their readers, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "zset-max-listpack-entries", Kind: KindInt, Default: "128", Min: 0, Max: math.MaxInt64,
		Doc: "a sorted set with more members than this is stored as a skiplist (OBJECT ENCODING skiplist) instead of a listpack, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "zset-max-listpack-value", Kind: KindInt, Default: "64", Min: 0, Max: math.MaxInt64,
		Doc: "a sorted set with a member longer than this many bytes is stored as a skiplist instead of a listpack, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "stream-node-max-bytes", Kind: KindInt, Default: "4096", Min: 0, Max: math.MaxInt64,
		Doc: "a stream starts a new node (what approximate trimming removes whole) once its last one holds this many bytes, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "stream-node-max-entries", Kind: KindInt, Default: "100", Min: 0, Max: math.MaxInt64,
		Doc: "a stream starts a new node (what approximate trimming removes whole) once its last one holds this many entries, deleted ones included, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "latency-tracking", Kind: KindBool, Default: "yes",
		Doc: "keep each command's latency histogram for INFO latencystats, as Redis's latency tracking", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "latency-tracking-info-percentiles", Kind: KindString, Default: "50 99 99.9",
		Doc: "the percentiles INFO latencystats prints, space-separated numbers from 0 to 100 (empty: none)", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged,
		check: checkLatencyPercentiles},
	{Name: "latency-monitor-threshold", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxInt64,
		Doc: "Redis's latency monitor threshold in milliseconds; kvserver records no latency events", ConfigOnly: true, InConfig: true, Mutable: true},
	{Name: "set-max-intset-entries", Kind: KindInt, Default: "512", Min: 0, Max: math.MaxInt64,
		Doc: "a set of integers with more members than this is stored as a hash table (OBJECT ENCODING hashtable) instead of an intset, as in Redis", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "protected-mode", Kind: KindBool, Default: "yes",
		Doc: "refuse non-loopback clients while the default user has no password",
		Notes: "yes: while the default user has no password (no requirepass, and no\n" +
			"`user: [\"default ...\"]` line giving it one), connections from addresses\n" +
			"other than loopback are answered with Redis's -DENIED error and closed.\n" +
			"It only matters with a non-loopback bind. CONFIG SET protected-mode no\n" +
			"turns it off at run time.\n" +
			"Default: yes.", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged,
		field: func(c *Config) any { return &c.ProtectedMode }},
	{Name: "enable-debug-command", Kind: KindEnum, Default: "no", Values: []string{"", "no", "yes", "local"},
		Doc: "who may run `DEBUG`: no, yes, or local (loopback clients), as in Redis 7",
		Notes: "Who may run DEBUG, as in Redis 7: no (nobody), yes (every client), or\n" +
			"local (clients connected over loopback). Refused clients get Redis's\n" +
			"\"ERR DEBUG command not allowed...\" error. Fixed at start.\n" +
			"Default: no.", InConfig: true,
		field: func(c *Config) any { return &c.EnableDebugCommand }},
	{Name: "enable-module-command", Kind: KindEnum, Default: "no", Values: []string{"", "no", "yes", "local"},
		Doc: "who may run `MODULE LOAD`, `LOADEX` and `UNLOAD`: no, yes, or local, as in Redis 7 (kvserver loads no Redis modules)",
		Notes: "Who may run MODULE LOAD, LOADEX and UNLOAD, as in Redis 7: no, yes or\n" +
			"local. kvserver cannot load Redis modules (they are C shared objects\n" +
			"written against Redis's internals): an allowed MODULE LOAD answers\n" +
			"Redis's \"Error loading the extension\" and logs why. Fixed at start.\n" +
			"Default: no.", InConfig: true,
		field: func(c *Config) any { return &c.EnableModuleCommand }},
	{Name: "tls-port", Kind: KindInt, Default: "0", Min: 0, Max: math.MaxUint16,
		Doc: "TLS client port; with `--port 0` the only one",
		Notes: "TCP port for TLS clients, 0..65535; 0 disables TLS. It may run beside the\n" +
			"plain port, or alone with `port: 0`. Needs tls-cert-file and tls-key-file.\n" +
			"Default: 0.", InConfig: true,
		field: func(c *Config) any { return &c.TLSPort }, check: checkTLS},
	{Name: "tls-cert-file", Kind: KindString, Default: "",
		Doc: "PEM file of the server certificate",
		Notes: "PEM file of the server certificate, with any intermediate certificates\n" +
			"after it.\n" +
			"Default: \"\".", InConfig: true,
		field: func(c *Config) any { return &c.TLSCertFile }},
	{Name: "tls-key-file", Kind: KindString, Default: "",
		Doc: "PEM file of the server certificate's private key",
		Notes: "PEM file of the private key of tls-cert-file.\n" +
			"Default: \"\".", InConfig: true,
		field: func(c *Config) any { return &c.TLSKeyFile }},
	{Name: "tls-ca-cert-file", Kind: KindString, Default: "",
		Doc: "PEM file of the CA that client certificates must chain to",
		Notes: "PEM file of the CA certificates that client certificates must chain to.\n" +
			"Required unless tls-auth-clients is no.\n" +
			"Default: \"\".", InConfig: true,
		field: func(c *Config) any { return &c.TLSCACertFile }},
	{Name: "tls-auth-clients", Kind: KindEnum, Default: "yes", Values: []string{"", "yes", "no", "optional"},
		Doc: "client certificates: yes (required), optional, no",
		Notes: "Client certificates on the TLS port: yes (required, the handshake fails\n" +
			"without one), optional (checked when sent) or no (not asked for).\n" +
			"Default: yes (like Redis).", InConfig: true,
		field: func(c *Config) any { return &c.TLSAuthClients }},
	{Name: "client-output-buffer-limit", Kind: KindOutputBufferLimits, Default: "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60", DefaultDoc: "`normal 0 0 0 …`",
		Notes: "Output buffer limits in Redis's syntax: \"<class> <hard> <soft>\n" +
			"<soft-seconds>\" per class (normal, replica, pubsub), sizes in Redis syntax.\n" +
			"A normal client whose pending reply reaches <hard> bytes, or stays at or\n" +
			"above <soft> bytes for <soft-seconds>, is disconnected and the event is\n" +
			"logged. Replies of stored values count in full, so one GET of a value\n" +
			"larger than <hard> closes the client (as in Redis): keep <hard> above\n" +
			"the largest value. 0 disables a limit. kvserver writes a client's replies\n" +
			"before reading its next request, so a slow reader holds at most one\n" +
			"batch of replies (1 MiB plus the last value); these limits bound how long.\n" +
			"A client with pub/sub subscriptions is a pubsub client: the messages\n" +
			"waiting for it count too, and past the pubsub limits it is disconnected\n" +
			"without ever holding up a publisher. replica limits are only reported.\n" +
			"Default: \"normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60\".",
		Doc: "Redis syntax; hard/soft limits on a client's pending replies", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged,
		field: func(c *Config) any { return &c.ClientOutputBufferLimit }},
	{Name: "client-stall-grace-ms", Kind: KindInt, Default: "2000", Min: 100, Max: math.MaxInt32,
		Doc: "how long a client holding memory budget may leave its replies unread while others wait before it is closed", InConfig: true, Mutable: true, Rewrite: RewriteIfChanged},
	{Name: "rename-command", Kind: KindRenames, DefaultDoc: "none",
		Notes: "Commands to rename or disable, by their original name (case-insensitive):\n" +
			"a map OLD: NEW, with \"\" disabling the command, which then answers like an\n" +
			"unknown command. On the command line: --rename-command OLD=NEW (repeat it);\n" +
			"in the environment: KVSERVER_RENAME_COMMAND=\"FLUSHALL= CONFIG=CONFIG_x9\".\n" +
			"Flags or the environment replace the file's whole map.\n" +
			"ACL rules keep naming commands by their original names.\n" +
			"Example: rename-command: {FLUSHALL: \"\", CONFIG: \"CONFIG_x9\"}\n" +
			"Default: {} (none).",
		Doc:   "`OLD=NEW` renames, `OLD=` disables a command (repeatable)",
		field: func(c *Config) any { return &c.RenameCommand }, check: checkRenames},
	{Name: "user", Kind: KindUsers, DefaultDoc: "none",
		Notes: "ACL users, one Redis ACL user line each: a name, then rules. on|off;\n" +
			"#<sha256 hex> (or >password) adds a password, nopass allows any;\n" +
			"~pattern allows keys (~* or allkeys: every key); +@category, -@category,\n" +
			"+command, -command, +command|subcommand (+@all, -@all; categories as in\n" +
			"ACL CAT: read, write, keyspace, string, fast, slow, admin, dangerous,\n" +
			"connection, ...). Rules apply left to right. Clients log in with\n" +
			"AUTH <user> <password> or HELLO 3 AUTH <user> <password>.\n" +
			"The default user is \"on nopass ~* &* +@all\", with requirepass as its\n" +
			"password when set; a line for default replaces that entirely. To make\n" +
			"every client log in as a named user, add \"default off\".\n" +
			"On the command line: --user \"alice on #... ~cache:* +@read\" (repeat it);\n" +
			"in the environment: KVSERVER_USER with lines separated by ';'. Flags or the\n" +
			"environment replace the file's whole list. Rules are separated by spaces,\n" +
			"so give a password containing spaces as its #hash.\n" +
			"Example:\n" +
			"  user:\n" +
			"    - \"lmcache on #<sha256 hex of the password> ~* +@read +@write -@dangerous\"\n" +
			"    - \"ops on #<sha256 hex> ~* +@all\"\n" +
			"    - \"default off\"\n" +
			"Default: [] (only the default user).",
		Doc:   "an ACL user, Redis syntax (repeatable); see [Security](#security)",
		field: func(c *Config) any { return &c.Users }},
}

// Settings returns a copy of the settings table, in its order.
func Settings() []Setting {
	out := slices.Clone(settings)
	for i := range out {
		out[i].Values = slices.Clone(out[i].Values)
	}
	return out
}

// Configurable reports whether the setting is a flag, YAML key and
// environment variable (every setting but Redis's ConfigOnly parameters).
func (s Setting) Configurable() bool { return !s.ConfigOnly }

// DefaultText is the README's default column: DefaultDoc, or Default, or
// "empty".
func (s Setting) DefaultText() string {
	switch {
	case s.DefaultDoc != "":
		return s.DefaultDoc
	case s.Default != "":
		return s.Default
	}
	return "empty"
}

// markdownLink matches a Markdown link, "[text](target)".
var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// Usage is the doc line as plain text for --help: without Markdown code
// quotes (pflag would take the first `word` for the value's name) and
// with links reduced to their text; a size whose default is computed
// says how.
func (s Setting) Usage() string {
	u := strings.ReplaceAll(markdownLink.ReplaceAllString(s.Doc, "$1"), "`", "")
	if s.Kind == KindSize && s.DefaultDoc != "" {
		u += "; " + s.Default + " means " + s.DefaultDoc
	}
	return u
}

// EnvName is the environment variable that sets the setting.
func (s Setting) EnvName() string { return envName(s.Name) }

// FlagTable renders the README's flag table from the settings table: one
// row per configurable setting (flag, default, whether CONFIG SET changes
// it at run time, meaning), then --config.
func FlagTable() string {
	var b strings.Builder
	b.WriteString("| flag | default | `CONFIG SET` | meaning |\n|---|---|---|---|\n")
	for _, s := range settings {
		if s.Configurable() {
			set := "no"
			if s.Mutable {
				set = "yes"
			}
			b.WriteString("| `--" + s.Name + "` | " + s.DefaultText() + " | " + set + " | " + s.Doc + " |\n")
		}
	}
	b.WriteString("| `--" + keyConfig + "` | none | no | " + configDoc + " |\n")
	return b.String()
}

// configDoc is the meaning of --config, the one flag that is not a setting.
const configDoc = "YAML file with any of the keys above"

// fileKeys returns the keys a YAML file may set, in table order.
func fileKeys() []string {
	var keys []string
	for _, s := range settings {
		if s.Configurable() {
			keys = append(keys, s.Name)
		}
	}
	return keys
}

// notEmpty is a check that the string setting key is set.
func notEmpty(key string, get func(Config) string) func(Config, func(string, string, ...any)) {
	return func(c Config, bad func(string, string, ...any)) {
		if get(c) == "" {
			bad(key, "must not be empty")
		}
	}
}

// decode reads the setting's value x (from YAML, the environment, a flag
// or the defaults) into its field of c.
func (s Setting) decode(x any, c *Config) error {
	switch dst := s.ptr(c).(type) {
	case *int:
		n, err := toInt(x)
		if err == nil && (n < math.MinInt || n > math.MaxInt) {
			err = fmt.Errorf("%d is out of range", n)
		}
		if err != nil {
			return err
		}
		*dst = int(n)
	case *int64:
		conv := toSize
		if s.Kind == KindInt {
			conv = toInt
		}
		n, err := conv(x)
		if err != nil {
			return err
		}
		*dst = n
	case *string:
		str, err := toString(x)
		if err != nil {
			return err
		}
		if s.Kind == KindEnum {
			str = strings.ToLower(str)
			if slices.Contains(s.Values, "yes") { // YAML 1.1 reads yes/no as booleans
				switch str {
				case "true":
					str = "yes"
				case "false":
					str = "no"
				}
			}
		}
		*dst = str
	case *bool:
		str, err := toString(x)
		if err != nil {
			return err
		}
		switch strings.ToLower(str) {
		case "yes", "true":
			*dst = true
		case "no", "false":
			*dst = false
		default:
			return fmt.Errorf("%q is not yes or no", str)
		}
	case *OutputBufferLimits:
		str, err := toString(x)
		if err != nil {
			return err
		}
		lim, err := ParseOutputBufferLimits(str, DefaultOutputBufferLimits)
		if err != nil {
			return err
		}
		*dst = lim
	case *map[string]string:
		m, err := toRenames(x)
		if err != nil {
			return err
		}
		*dst = m
	case *[]string:
		lines, err := toUserLines(x)
		if err != nil {
			return err
		}
		*dst = lines
	default:
		return fmt.Errorf("setting %s: field of unknown type %T", s.Name, dst)
	}
	return nil
}

// ptr points at the setting's value in c: its field, or for a row without
// one, its entry in c.byName, made on first use with the type its kind
// reads into (int64, string or bool).
func (s Setting) ptr(c *Config) any {
	if s.field != nil {
		return s.field(c)
	}
	if p, ok := c.byName[s.Name]; ok {
		return p
	}
	var p any
	switch s.Kind {
	case KindInt, KindSize:
		p = new(int64)
	case KindBool:
		p = new(bool)
	case KindString, KindEnum:
		p = new(string)
	default:
		panic("config: setting " + s.Name + " of kind " + strconv.Itoa(int(s.Kind)) + " needs a Config field")
	}
	if c.byName == nil {
		c.byName = make(map[string]any)
	}
	c.byName[s.Name] = p
	return p
}

// validate reports, through bad, a value of c outside the setting's bounds
// or list, and what its check finds.
func (s Setting) validate(c *Config, bad func(key, format string, args ...any)) {
	var n int64
	switch p := s.ptr(c).(type) {
	case *int:
		n = int64(*p)
	case *int64:
		n = *p
	case *string:
		if s.Kind == KindEnum && !slices.Contains(s.Values, *p) {
			bad(s.Name, "%q is not one of %s", *p, strings.Join(slices.DeleteFunc(slices.Clone(s.Values), func(v string) bool { return v == "" }), ", "))
		}
	}
	switch {
	case s.Kind == KindSize && n < s.Min:
		bad(s.Name, "%d bytes is below %s", n, SizeText(s.Min))
	case s.Kind == KindInt && s.Max == 0 && n < s.Min:
		bad(s.Name, "%d is below %d", n, s.Min)
	case s.Kind == KindInt && s.Max != 0 && (n < s.Min || n > s.Max):
		bad(s.Name, "%d is outside %d..%d", n, s.Min, s.Max)
	}
	if s.check != nil {
		s.check(*c, bad)
	}
}

// checkNotifyClasses rejects a notify-keyspace-events value with a letter
// Redis does not know.
func checkNotifyClasses(c Config, bad func(string, string, ...any)) {
	if _, ok := notify.Parse(c.NotifyKeyspaceEvents); !ok {
		bad("notify-keyspace-events", "%q: invalid event class character, use 'Ag$lshzxeKEtmdn'", c.NotifyKeyspaceEvents)
	}
}

// checkSocketPerm rejects a unixsocketperm that is not octal permission
// bits. It reads the value from c.byName rather than through Config.String,
// which looks rows up in this table and would make its initialization
// circular.
func checkSocketPerm(c Config, bad func(string, string, ...any)) {
	p, ok := c.byName["unixsocketperm"].(*string)
	if !ok {
		return
	}
	if _, err := ParseSocketPerm(*p); err != nil {
		bad("unixsocketperm", "%v", err)
	}
}

// checkLatencyPercentiles rejects a latency-tracking-info-percentiles
// value that ParsePercentiles refuses.
func checkLatencyPercentiles(c Config, bad func(string, string, ...any)) {
	p, ok := c.byName["latency-tracking-info-percentiles"].(*string)
	if !ok {
		return
	}
	if _, reason := ParsePercentiles(*p); reason != "" {
		bad("latency-tracking-info-percentiles", "%q: %s", *p, reason)
	}
}

// ParsePercentiles reads latency-tracking-info-percentiles as Redis 7.0
// does: numbers separated by single spaces, each from 0 to 100, "" for
// none. The reason is Redis's CONFIG SET message, "" when the value is
// good.
func ParsePercentiles(s string) ([]float64, string) {
	if s == "" {
		return nil, ""
	}
	var out []float64
	for _, f := range strings.Split(s, " ") {
		num := f
		if h := strings.TrimLeft(f, "+-"); (strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X")) && !strings.ContainsAny(h, "pP") {
			num += "p0" // strtod's hexadecimal needs no exponent; Go's does
		}
		p, err := strconv.ParseFloat(num, 64)
		// As Redis's string2d: an overflow, NaN or anything but a
		// number is no percentile (strtod takes no '_').
		if err != nil || math.IsNaN(p) || strings.Contains(f, "_") {
			return nil, "Invalid latency-tracking-info-percentiles parameters"
		}
		if p > 100 || p < 0 {
			return nil, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
		}
		out = append(out, p)
	}
	return out, ""
}

// FormatPercentile writes a percentile as Redis does (printf's %f with
// the trailing zeros and point trimmed: "99.9", "50", "-0").
func FormatPercentile(p float64) string {
	t := strconv.FormatFloat(p, 'f', 6, 64)
	t = strings.TrimRight(t, "0")
	return strings.TrimSuffix(t, ".")
}

// FormatPercentiles writes percentiles as CONFIG GET shows them.
func FormatPercentiles(ps []float64) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = FormatPercentile(p)
	}
	return strings.Join(parts, " ")
}

// ParseSocketPerm reads unixsocketperm's octal permission bits ("700").
func ParseSocketPerm(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return 0, fmt.Errorf("%q is not octal permission bits (0..777)", s)
	}
	return uint32(n), nil
}

// SizeText writes a byte count in Redis's CONFIG REWRITE style: the
// largest of gb, mb, kb that divides it, plain bytes otherwise.
func SizeText(n int64) string {
	switch {
	case n == 0:
		return "0"
	case n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "gb"
	case n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "mb"
	case n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "kb"
	}
	return strconv.FormatInt(n, 10)
}
