package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kvserver/kvserver/cluster"
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
