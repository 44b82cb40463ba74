package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/cluster/etcdmap"
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/config"
	"github.com/kvserver/kvserver/server"
)

// loadClusterMap reads --cluster-config and finds this server in it by
// --bind and --port; nil without cluster mode.
func loadClusterMap(cfg config.Config, log *slog.Logger) (*cluster.Map, error) {
	if cfg.ClusterConfig == "" {
		return nil, nil
	}
	m, err := cluster.Load(cfg.ClusterConfig, cfg.Bind, cfg.Port)
	if err != nil {
		return nil, fmt.Errorf("cluster-config: %w", err)
	}
	logClusterMap(log, "cluster mode", cfg.ClusterConfig, m)
	return m, nil
}

func logClusterMap(log *slog.Logger, msg, path string, m *cluster.Map) {
	self := m.Self()
	log.Info(msg, "file", path, "node", self.Addr(), "id", self.ID, "slots", self.SlotCount(),
		"nodes", len(m.Nodes()), "slots_assigned", m.Assigned())
	if m.Assigned() < cluster.Slots {
		log.Warn("cluster map leaves slots without a node; their keys get CLUSTERDOWN",
			"unassigned", cluster.Slots-m.Assigned())
	}
}

// reloadClusterOnSIGHUP re-reads the cluster config on every SIGHUP until
// ctx ends and the returned stop function has been called. A file that
// does not load is logged and the map in effect is kept. SIGHUP is caught
// from the moment this returns, so it never kills the server.
func reloadClusterOnSIGHUP(ctx context.Context, srv *server.Server, cfg config.Config, log *slog.Logger) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			m, err := cluster.Load(cfg.ClusterConfig, cfg.Bind, cfg.Port)
			if err == nil {
				err = srv.SetClusterMap(m)
			}
			if err != nil {
				log.Error("cluster-config reload failed; keeping the previous slot map", "err", err)
				continue
			}
			logClusterMap(log, "cluster-config reloaded", cfg.ClusterConfig, m)
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// newEtcdMember sets up --cluster-etcd mode (package cluster/etcdmap): the
// node's membership and the map to serve until etcd's arrives. Both are
// nil without the mode.
func newEtcdMember(cfg config.Config, log *slog.Logger) (*etcdmap.Node, *cluster.Map, error) {
	if cfg.ClusterEtcd == "" {
		return nil, nil, nil
	}
	addr := cfg.String("cluster-announce-addr")
	if addr == "" {
		if ip := net.ParseIP(cfg.Bind); ip != nil && ip.IsUnspecified() {
			return nil, nil, fmt.Errorf("cluster-etcd: bind %s is no address clients can be sent to: set cluster-announce-addr", cfg.Bind)
		}
		addr = net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.Port))
	}
	var endpoints []string
	for _, e := range strings.Split(cfg.ClusterEtcd, ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	node, initial, err := etcdmap.New(etcdmap.Options{
		Endpoints: endpoints,
		Name:      cfg.ClusterName,
		Dir:       cfg.Dir,
		Addr:      addr,
		TTL:       time.Duration(cfg.Int("cluster-node-ttl")) * time.Second,
		Grace:     time.Duration(cfg.Int("cluster-grace")) * time.Second,
		Logger:    log.With("cluster", cfg.ClusterName),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cluster-etcd: %w", err)
	}
	log.Info("cluster mode on etcd", "etcd", endpoints, "cluster", cfg.ClusterName, "node_id", node.ID(), "addr", addr)
	return node, initial, nil
}

// leaveDrain is how long a node that handed its slots over keeps
// answering (with MOVED) before it stops listening.
const leaveDrain = 500 * time.Millisecond

// runEtcdMember keeps node a member and srv's slot map current until the
// returned stop is called. The returned context is the one to serve
// clients under: when ctx ends (SIGTERM, SIGINT) the node first hands its
// slots to the others (at most one lease TTL) and answers with MOVED for
// leaveDrain more, and only then does the serving context end, so clients
// are redirected before the node stops listening.
func runEtcdMember(ctx context.Context, node *etcdmap.Node, srv *server.Server, cfg config.Config, log *slog.Logger) (context.Context, func()) {
	memberCtx, stopMember := context.WithCancel(context.Background())
	memberDone := make(chan struct{})
	go func() {
		defer close(memberDone)
		node.Run(memberCtx, func(m *cluster.Map) {
			if err := srv.SetClusterMap(m); err != nil {
				log.Error("apply slot map from etcd", "err", err)
			}
		})
	}()
	serveCtx, stopServing := context.WithCancelCause(context.WithoutCancel(ctx))
	leaveDone := make(chan struct{})
	go func() {
		defer close(leaveDone)
		select {
		case <-ctx.Done():
		case <-serveCtx.Done():
			return
		}
		leaveCtx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.Int("cluster-node-ttl"))*time.Second)
		defer cancel()
		if err := node.Leave(leaveCtx); err != nil {
			log.Warn("could not hand this node's slots to the others before stopping; they move after the grace", "err", err)
		} else {
			log.Info("handed this node's slots to the others")
			// Clients that have not refreshed their map yet get MOVED
			// for a moment more rather than a refused connection.
			time.Sleep(leaveDrain)
		}
		stopServing(context.Cause(ctx))
	}()
	return serveCtx, func() {
		stopServing(context.Canceled)
		<-leaveDone
		stopMember()
		<-memberDone
	}
}

// membershipReport is INFO cluster's view of node, nil without
// --cluster-etcd.
func membershipReport(node *etcdmap.Node) func() commands.Membership {
	if node == nil {
		return nil
	}
	return func() commands.Membership {
		st := node.Stats()
		return commands.Membership{Session: st.Session, Reconciler: st.Reconciler, MapsApplied: st.MapsApplied}
	}
}

// registerEtcdMetrics exports node's standing in etcd to Prometheus.
func registerEtcdMetrics(reg *prometheus.Registry, node *etcdmap.Node) {
	gauge := func(name, help string, v func(etcdmap.Stats) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return v(node.Stats()) })
	}
	reg.MustRegister(
		gauge("kvserver_cluster_epoch", "Epoch (etcd revision) of the slot map in effect.",
			func(s etcdmap.Stats) float64 { return float64(s.Epoch) }),
		gauge("kvserver_cluster_etcd_session", "1 while this node holds a live etcd lease.",
			func(s etcdmap.Stats) float64 { return b2f(s.Session) }),
		gauge("kvserver_cluster_reconciler", "1 while this node is the elected reconciler.",
			func(s etcdmap.Stats) float64 { return b2f(s.Reconciler) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "kvserver_cluster_maps_applied_total",
			Help: "Slot maps from etcd applied by this node."},
			func() float64 { return float64(node.Stats().MapsApplied) }),
	)
}

// b2f is 1 for true, 0 for false.
func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
