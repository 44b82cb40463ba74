// Command kvserver runs the kvserver RESP server: a Redis-compatible store
// for the KV cache that LLM inference engines offload.
//
// Settings come from the embedded defaults (configs/kvserver.yaml), a YAML
// file (--config), KVSERVER_* environment variables and flags, in rising
// priority; see --help.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/kvserver/kvserver/codec"
	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/disktier"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/gctune"
	"github.com/kvserver/kvserver/metrics"
	"github.com/kvserver/kvserver/server"
	"github.com/kvserver/kvserver/tlsconf"
)

// memProfileRate is the heap profile's sampling interval. At Go's default
// (512 KiB) every request value of 1 MiB or more is sampled, each with a
// stack walk: runtime.profilealloc took 1.75% of the server's CPU under
// 1 MiB SETs. The heap profile (/debug/pprof/heap on the metrics port)
// scales its samples by the rate, so its figures stay estimates of the
// whole heap.
const memProfileRate = 16 << 20

func main() {
	runtime.MemProfileRate = memProfileRate
	cfg, err := config.Load(os.Args[1:], os.Environ())
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Print(config.Usage())
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvserver:", err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("kvserver stopped", "err", err)
		os.Exit(1)
	}
}

// goMemoryLimit is the Go runtime's soft memory limit for a memory bound:
// the dataset plus a margin for connection buffers, in-flight request
// values (server.Options.InFlightBulkBytes, 256 MiB) and the disk tier's
// caches and memtables (about 300 MiB).
func goMemoryLimit(maxMemory int64) int64 {
	return maxMemory + max(maxMemory/4, 512<<20)
}

// gcSlack is the most garbage the heap may hold above its live bytes before
// a collection (package gctune; a server allocating slowly holds less, and
// an idle one returns its free memory to the system). Go's plain GOGC=100 measured best for large
// values (at GOGC=20, collections ran almost back to back under a stream of
// 4 MiB SETs: SET/GET fell from 1.27x/1.42x Redis to 1.07x/0.93x), but with
// a small live heap it collected about 150 times a second under pipelined
// 4 KiB SETs. The slack is within the memory limit's margin above
// --maxmemory (goMemoryLimit), which still caps the heap.
const gcSlack = gctune.DefaultSlack

// engineStats adapts the engine's counters to what the metrics read.
type engineStats struct{ eng *engine.Engine }

func (e engineStats) Snapshot() metrics.Snapshot {
	st := e.eng.Stats()
	prot := e.eng.Protection()
	var chunks []metrics.ChunkSnapshot
	for c, n := range e.eng.ChunkStats() {
		chunks = append(chunks, metrics.ChunkSnapshot{Model: c.Model, DType: c.DType, Format: c.Format,
			Chunks: n.Chunks, Bytes: n.Bytes})
	}
	return metrics.Snapshot{
		Chunks:          chunks,
		LeasedGroups:    prot.LeasedGroups,
		PinnedGroups:    prot.PinnedGroups,
		Keys:            st.Keys,
		KeysWithExpiry:  st.Expires,
		UsedMemoryBytes: st.UsedMemory,
		MaxMemoryBytes:  st.MaxMemory,
		Hits:            st.Hits,
		Misses:          st.Misses,
		ExpiredKeys:     st.ExpiredKeys,
		EvictedKeys:     st.EvictedKeys,
		Tiers: []metrics.TierSnapshot{{
			Name: "memory", Keys: st.Memory.Keys, Bytes: st.Memory.Bytes, MaxBytes: st.MaxMemory,
			Hits: st.Memory.Hits, Misses: st.Disk.Hits + st.Misses,
			Demotions: st.Memory.Demotions, Evictions: st.Memory.Evictions,
		}, {
			Name: "disk", Keys: st.Disk.Keys, Bytes: st.Disk.Bytes, MaxBytes: st.Disk.Capacity,
			Hits: st.Disk.Hits, Misses: st.Misses,
			Promotions: st.Disk.Promotions, Evictions: st.Disk.Evictions, Corrupt: st.Disk.Corrupt,
			IOErrors: st.Disk.Errors, Unavailable: st.Disk.Unavailable,
		}},
	}
}

// listen opens the client ports: the plain one unless port is 0, the TLS
// one when tls-port is set, and the Unix socket when unixsocket names one.
// Like Redis, a configuration that listens nowhere is an error.
func listen(cfg config.Config, tlsCfg *tls.Config) ([]net.Listener, string, error) {
	socket := cfg.String("unixsocket")
	if cfg.Port == 0 && cfg.TLSPort == 0 && socket == "" {
		return nil, "", errors.New("configured to not listen anywhere: port and tls-port are both 0 and unixsocket is empty")
	}
	var lns []net.Listener
	var addrs []string
	open := func(port int, tlsCfg *tls.Config) error {
		addr := net.JoinHostPort(cfg.Bind, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", addr, err)
		}
		name := ln.Addr().String()
		if tlsCfg != nil {
			ln = tls.NewListener(ln, tlsCfg)
			name += " (tls)"
		}
		lns = append(lns, ln)
		addrs = append(addrs, name)
		return nil
	}
	if cfg.Port != 0 {
		if err := open(cfg.Port, nil); err != nil {
			return nil, "", err
		}
	}
	closeAll := func() {
		for _, ln := range lns {
			ln.Close()
		}
	}
	if cfg.TLSPort != 0 {
		if err := open(cfg.TLSPort, tlsCfg); err != nil {
			closeAll()
			return nil, "", err
		}
	}
	if socket != "" {
		ln, err := listenUnix(socket, cfg.String("unixsocketperm"))
		if err != nil {
			closeAll()
			return nil, "", err
		}
		lns = append(lns, ln)
		addrs = append(addrs, socket+" (unix)")
	}
	return lns, strings.Join(addrs, ", "), nil
}

// listenUnix listens on a Unix socket at path, replacing a socket file a
// previous run left there (as Redis does), and gives it perm (octal, "0"
// keeps the umask's). The listener removes the file when it is closed.
func listenUnix(path, perm string) (net.Listener, error) {
	mode, err := config.ParseSocketPerm(perm)
	if err != nil {
		return nil, fmt.Errorf("unixsocketperm: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSocket != 0 {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove stale unix socket %s: %w", path, err)
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on unix socket %s: %w", path, err)
	}
	if mode != 0 {
		if err := os.Chmod(path, os.FileMode(mode)); err != nil {
			ln.Close()
			return nil, fmt.Errorf("chmod unix socket %s to %o: %w", path, mode, err)
		}
	}
	return ln, nil
}

// run serves until ctx is cancelled (SIGINT, SIGTERM) or a client runs
// SHUTDOWN.
func run(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(goMemoryLimit(cfg.MaxMemory))
	}
	// Settings that can only be checked against the command table, and
	// the TLS files, fail the start before the disk tier is opened.
	if err := (server.Options{Users: cfg.Users, RenameCommands: cfg.RenameCommand}).Validate(); err != nil {
		return err
	}
	var tlsCfg *tls.Config
	if cfg.TLSPort != 0 {
		var err error
		if tlsCfg, err = tlsconf.Server(cfg.TLSCertFile, cfg.TLSKeyFile, cfg.TLSCACertFile, cfg.TLSAuthClients); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	clusterMap, err := loadClusterMap(cfg, log)
	if err != nil {
		return err
	}
	member, initialMap, err := newEtcdMember(cfg, log)
	if err != nil {
		return err
	}
	if member != nil {
		clusterMap = initialMap
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	compression, err := disktier.ParseCompression(cfg.DiskCompression)
	if err != nil {
		return fmt.Errorf("disk-compression: %w", err)
	}
	quant, err := codec.ParseMode(cfg.KVQuant)
	if err != nil {
		return fmt.Errorf("kv-quant: %w", err)
	}
	storeDir := filepath.Join(cfg.Dir, "pebble")
	store, err := disktier.Open(ctx, disktier.Options{
		Dir:         storeDir,
		MaxDisk:     cfg.MaxDisk,
		Compression: compression,
		Logger:      log,
		// A cache serves empty rather than refusing to start on damaged
		// files; the damaged store is kept next to the new one.
		MoveAsideDamaged: true,
	})
	if err != nil {
		return fmt.Errorf("open disk tier in %s: %w", storeDir, err)
	}
	defer func() {
		if err := store.Close(); err != nil {
			log.Error("close disk tier", "err", err)
		}
	}()
	eng, err := engine.Open(ctx, engine.Options{
		Databases: cfg.Databases,
		MaxMemory: cfg.MaxMemory,
		Cold:      store,
		KVQuant:   quant,
		Logger:    log,
	})
	if err != nil {
		return err
	}
	// Set after the index rebuild, which allocates the whole index at once
	// and would only be slowed by frequent collections.
	if os.Getenv("GOGC") == "" {
		tuner := gctune.New(gctune.Options{Slack: gcSlack, Logger: log})
		go tuner.Run(ctx)
	}
	engCtx, stopEngine := context.WithCancel(context.Background())
	engDone := make(chan struct{})
	go func() {
		defer close(engDone)
		eng.Run(engCtx)
	}()
	// On the way out, after the last client is gone: stop background work,
	// then write the memory tier to disk so that a restart has everything.
	defer func() {
		stopEngine()
		<-engDone
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		start := time.Now()
		if err := eng.Close(closeCtx); err != nil {
			log.Error("write memory tier to disk", "err", err)
			return
		}
		log.Info("memory tier written to disk", "elapsed", time.Since(start).String())
	}()

	// Without the endpoint (metrics-port 0, which CONFIG SET cannot
	// change) nothing could read the metrics: the server counts none,
	// instead of a clock reading and a histogram update per command.
	var m *metrics.Metrics
	if cfg.MetricsPort != 0 {
		reg := prometheus.NewRegistry()
		m = metrics.New(reg, engineStats{eng})
		if member != nil {
			registerEtcdMetrics(reg, member)
		}
		addr := net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.MetricsPort))
		go func() {
			if err := metrics.Serve(ctx, addr, reg, log); err != nil {
				log.Error("metrics endpoint stopped", "addr", addr, "err", err)
			}
		}()
	}

	srv := server.New(eng, server.Options{
		RequirePass:     cfg.RequirePass,
		MaxClients:      cfg.MaxClients,
		ProtoMaxBulkLen: cfg.ProtoMaxBulkLen,
		Port:            cfg.Port,
		Bind:            cfg.Bind,
		Dir:             cfg.Dir,
		ConfigFile:      cfg.ConfigFile,
		KVQuant:         quant.String(),
		OnMaxMemory: func(n int64) {
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(goMemoryLimit(n))
			}
		},
		Logger:            log,
		Metrics:           m,
		Cluster:           clusterMap,
		ClusterMembership: membershipReport(member),
		Settings:          cfg,

		Users:               cfg.Users,
		RenameCommands:      cfg.RenameCommand,
		ProtectedModeOff:    !cfg.ProtectedMode,
		EnableDebugCommand:  cfg.EnableDebugCommand,
		EnableModuleCommand: cfg.EnableModuleCommand,
		Timeout:             int64(cfg.Timeout),
		OutputBufferLimits:  cfg.ClientOutputBufferLimit,
		TLS: server.TLSInfo{Port: cfg.TLSPort, CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile,
			CACertFile: cfg.TLSCACertFile, AuthClients: cfg.TLSAuthClients},
	})
	if cfg.ClusterConfig != "" {
		defer reloadClusterOnSIGHUP(ctx, srv, cfg, log)()
	}
	serveCtx := ctx
	if member != nil {
		var stopMember func()
		serveCtx, stopMember = runEtcdMember(ctx, member, srv, cfg, log)
		defer stopMember()
	}
	lns, addrs, err := listen(cfg, tlsCfg)
	if err != nil {
		return err
	}
	log.Info("kvserver ready", "addr", addrs, "maxmemory", cfg.MaxMemory,
		"databases", cfg.Databases, "dir", cfg.Dir, "metrics_port", cfg.MetricsPort)
	err = srv.Serve(serveCtx, lns...)
	if errors.Is(err, server.ErrShutdown) {
		log.Info("shutdown requested by a client")
		return nil
	}
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("kvserver stopped", "reason", context.Cause(serveCtx))
	return nil
}
