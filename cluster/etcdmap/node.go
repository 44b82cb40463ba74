package etcdmap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
	"go.uber.org/zap"

	"github.com/kvserver/kvserver/cluster"
)

// Options configure a Node. Endpoints, Name, Dir and Addr are required.
type Options struct {
	// Endpoints are etcd's client URLs.
	Endpoints []string
	// Name is the cluster's key prefix in etcd (--cluster-name).
	Name string
	// Dir is the node's data directory: its id and last map live there.
	Dir string
	// Addr is host:port, where clients reach this node
	// (--cluster-announce-addr).
	Addr string
	// TTL is the lease that keeps the node a member; whole seconds, at
	// least one. Zero means 5 s.
	TTL time.Duration
	// Grace is how long a member whose lease expired keeps its slots.
	Grace time.Duration
	// Logger gets membership, election and map changes; nil discards.
	Logger *slog.Logger
}

// Stats are a node's view of the cluster, for INFO and metrics.
type Stats struct {
	// Epoch is the epoch of the map in effect (0 before any).
	Epoch int64
	// Session reports whether the node holds a live lease.
	Session bool
	// Reconciler reports whether this node is the elected reconciler.
	Reconciler bool
	// MapsApplied counts the maps from etcd handed to the server.
	MapsApplied int64
}

// Node is one kvserver's membership in an etcd cluster: its lease, its
// turn at reconciling and its watch of the slot map. Run does the work;
// Leave hands the node's slots to the others before it stops.
type Node struct {
	opts   Options
	id     string
	cli    *clientv3.Client
	log    *slog.Logger
	prefix string

	// leaving is set by Leave: a registration marks the node leaving.
	leaving atomic.Bool
	// lease is the current session's lease, 0 without a session.
	lease atomic.Int64

	mu sync.Mutex
	// applied is the last map handed to apply; changed is closed and
	// replaced whenever it changes.
	applied *cluster.Map
	changed chan struct{}
	stats   Stats
}

// New makes the node: its id from Dir (made at the first start) and an
// etcd client, which connects lazily. It returns the map to serve until
// etcd's arrives: the last one this node applied, or one in which this
// node has no slots.
func New(opts Options) (*Node, *cluster.Map, error) {
	if len(opts.Endpoints) == 0 || opts.Name == "" || opts.Dir == "" || opts.Addr == "" {
		return nil, nil, errors.New("etcdmap: Endpoints, Name, Dir and Addr are required")
	}
	if opts.TTL == 0 {
		opts.TTL = 5 * time.Second
	}
	if opts.TTL < time.Second {
		return nil, nil, fmt.Errorf("etcdmap: TTL %v is under a second", opts.TTL)
	}
	if _, _, err := cluster.ParseAddr(opts.Addr); err != nil {
		return nil, nil, fmt.Errorf("announce address: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	id, err := NodeID(opts.Dir)
	if err != nil {
		return nil, nil, err
	}
	n := &Node{opts: opts, id: id, log: log.With("node_id", id),
		prefix: "/" + strings.Trim(opts.Name, "/") + "/", changed: make(chan struct{})}
	initial, err := n.initialMap()
	if err != nil {
		return nil, nil, err
	}
	n.applied = initial
	n.stats.Epoch = initial.CurrentEpoch()
	n.cli, err = clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: 5 * time.Second,
		// Without keep-alives a dead etcd is noticed only when a request
		// times out. etcd refuses pings more often than every 5 s
		// (--grpc-keepalive-min-time) by closing the connection, which
		// would cost the lease.
		DialKeepAliveTime:    10 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		// The client's own zap logs would interleave JSON with the
		// server's slog lines; what matters is logged here.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("etcd client for %v: %w", opts.Endpoints, err)
	}
	return n, initial, nil
}

// ID is the node's id (CLUSTER MYID).
func (n *Node) ID() string { return n.id }

// Stats returns the node's view of the cluster.
func (n *Node) Stats() Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.stats
	s.Session = n.lease.Load() != 0
	return s
}

func (n *Node) memberKey(id string) string { return n.prefix + "members/" + id }
func (n *Node) membersPrefix() string      { return n.prefix + "members/" }
func (n *Node) mapKey() string             { return n.prefix + "map" }
func (n *Node) electionPrefix() string     { return n.prefix + "election" }

// initialMap is the last map saved in Dir, or a map of this node alone
// without slots (epoch 1) when there is none.
func (n *Node) initialMap() (*cluster.Map, error) {
	sm, ok, err := loadSavedMap(n.opts.Dir)
	if err != nil {
		n.log.Warn("ignoring the saved slot map", "err", err)
		ok = false
	}
	if ok {
		m, err := sm.Map.clusterMap(n.id, n.opts.Addr, sm.Epoch)
		if err == nil {
			n.log.Info("serving the last slot map until etcd's arrives", "epoch", sm.Epoch)
			return m, nil
		}
		n.log.Warn("ignoring the saved slot map", "err", err)
	}
	return mapRecord{}.clusterMap(n.id, n.opts.Addr, 1)
}

// Run keeps the node a member and its server's map current until ctx
// ends: it watches the map, handing each newer one to apply (never
// concurrently), keeps a lease with the member key on it (registering
// again whenever the lease is lost) and campaigns to reconcile. etcd being
// away is logged and retried, never returned: the server keeps serving
// its last map. Run closes the etcd client when it returns.
func (n *Node) Run(ctx context.Context, apply func(*cluster.Map)) {
	// Closing the client as soon as ctx ends also ends the calls the
	// client library makes under its own context, such as the Resign
	// with which an interrupted Campaign cleans up: with etcd away that
	// call would wait for it forever.
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		<-ctx.Done()
		n.cli.Close()
	}()
	defer func() { <-closed }()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.watchMap(ctx, apply)
	}()
	// After Leave the node does not register again.
	for ctx.Err() == nil && !n.leaving.Load() {
		if err := n.session(ctx); err != nil && ctx.Err() == nil && !n.leaving.Load() {
			n.log.Warn("etcd session ended; registering again", "err", err)
			sleep(ctx, time.Second)
		}
	}
	<-ctx.Done()
	wg.Wait()
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// session is one lease: register on it, campaign, and reconcile while
// elected, until the lease is lost or ctx ends.
func (n *Node) session(ctx context.Context) error {
	sess, err := concurrency.NewSession(n.cli, concurrency.WithTTL(int(n.opts.TTL/time.Second)), concurrency.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("open lease: %w", err)
	}
	defer sess.Orphan()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-sess.Done():
			cancel()
		case <-sctx.Done():
		}
	}()
	if err := n.register(sctx, sess.Lease()); err != nil {
		return err
	}
	n.lease.Store(int64(sess.Lease()))
	defer n.lease.Store(0)
	n.log.Info("registered in etcd", "addr", n.opts.Addr, "lease", fmt.Sprintf("%x", sess.Lease()))

	el := concurrency.NewElection(sess, n.electionPrefix())
	if err := el.Campaign(sctx, n.id); err != nil {
		if sctx.Err() != nil && ctx.Err() == nil {
			return errors.New("lease lost")
		}
		return fmt.Errorf("campaign: %w", err)
	}
	n.setReconciler(true)
	defer n.setReconciler(false)
	n.log.Info("elected reconciler")
	err = n.reconcile(sctx, el)
	if ctx.Err() == nil && sctx.Err() != nil {
		return errors.New("lease lost")
	}
	return err
}

// register puts the member key on lease.
func (n *Node) register(ctx context.Context, lease clientv3.LeaseID) error {
	val, err := json.Marshal(member{Addr: n.opts.Addr, Leaving: n.leaving.Load()})
	if err != nil {
		return err
	}
	if _, err := n.cli.Put(ctx, n.memberKey(n.id), string(val), clientv3.WithLease(lease)); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	return nil
}

func (n *Node) setReconciler(on bool) {
	n.mu.Lock()
	n.stats.Reconciler = on
	n.mu.Unlock()
}

// reconcilePoll bounds how long a vanished member's grace can overrun
// when nothing in etcd changes.
const reconcilePoll = 250 * time.Millisecond

// reconcile runs while this node is elected: on every change under the
// cluster's prefix, and every reconcilePoll for the graces, it computes
// the map and writes it when it differs.
func (n *Node) reconcile(ctx context.Context, el *concurrency.Election) error {
	// vanished holds when each map node was first seen without a member
	// key; a new reconciler starts every grace afresh, which only delays
	// a move.
	vanished := map[string]time.Time{}
	wch := n.cli.Watch(clientv3.WithRequireLeader(ctx), n.prefix, clientv3.WithPrefix())
	tick := time.NewTicker(reconcilePoll)
	defer tick.Stop()
	for {
		if err := n.reconcileOnce(ctx, el, vanished); err != nil && ctx.Err() == nil {
			n.log.Warn("reconcile", "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		case _, ok := <-wch:
			if !ok {
				sleep(ctx, reconcilePoll)
				wch = n.cli.Watch(clientv3.WithRequireLeader(ctx), n.prefix, clientv3.WithPrefix())
			}
		}
	}
}

// reconcileOnce reads the members and the map, and writes the map the
// members call for if it differs, on the condition that the map is
// unchanged since the read and this node still holds the election.
func (n *Node) reconcileOnce(ctx context.Context, el *concurrency.Election, vanished map[string]time.Time) error {
	resp, err := n.cli.Txn(ctx).Then(
		clientv3.OpGet(n.membersPrefix(), clientv3.WithPrefix()),
		clientv3.OpGet(n.mapKey()),
	).Commit()
	if err != nil {
		return fmt.Errorf("read members and map: %w", err)
	}
	alive := map[string]member{}
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		var m member
		if err := json.Unmarshal(kv.Value, &m); err != nil {
			n.log.Warn("ignoring a member key", "key", string(kv.Key), "err", err)
			continue
		}
		alive[strings.TrimPrefix(string(kv.Key), n.membersPrefix())] = m
	}
	var cur mapRecord
	var curRev int64
	var curVal []byte
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
		curRev, curVal = kvs[0].ModRevision, kvs[0].Value
		if cur, err = decodeMap(curVal); err != nil {
			n.log.Warn("replacing an unreadable slot map", "err", err)
			cur = mapRecord{}
		}
	}
	now := time.Now()
	addrs := map[string]string{}
	failing := map[string]bool{}
	var members []string
	for id, m := range alive {
		delete(vanished, id)
		if !m.Leaving {
			members = append(members, id)
			addrs[id] = m.Addr
		}
	}
	inMap := map[string]bool{}
	for _, node := range cur.Nodes {
		inMap[node.ID] = true
		if _, ok := alive[node.ID]; ok || len(node.Slots) == 0 {
			continue
		}
		since, seen := vanished[node.ID]
		if !seen {
			since = now
			vanished[node.ID] = now
			n.log.Warn("member vanished; its slots move after the grace", "member", node.ID, "addr", node.Addr,
				"grace", n.opts.Grace.String())
		}
		if now.Sub(since) < n.opts.Grace {
			members = append(members, node.ID)
			addrs[node.ID] = node.Addr
			failing[node.ID] = true
		}
	}
	for id := range vanished {
		if !inMap[id] {
			delete(vanished, id)
		}
	}
	next := buildRecord(Assign(cur.owners(), members), addrs, failing)
	val, err := json.Marshal(next)
	if err != nil {
		return err
	}
	if bytes.Equal(val, curVal) {
		return nil
	}
	txn, err := n.cli.Txn(ctx).If(
		clientv3.Compare(clientv3.ModRevision(n.mapKey()), "=", curRev),
		clientv3.Compare(clientv3.CreateRevision(el.Key()), "=", el.Rev()),
	).Then(clientv3.OpPut(n.mapKey(), string(val))).Commit()
	if err != nil {
		return fmt.Errorf("write slot map: %w", err)
	}
	if !txn.Succeeded {
		// The map changed or another node was elected: read again.
		return nil
	}
	n.log.Info("slot map written", "epoch", txn.Header.Revision, "nodes", len(next.Nodes),
		"moved_slots", Moved(cur.owners(), next.owners()))
	return nil
}

// watchMap hands every newer map to apply until ctx ends, reading the key
// afresh whenever the watch breaks (etcd restarted, lost its leader, or
// compacted the revision the watch was at).
func (n *Node) watchMap(ctx context.Context, apply func(*cluster.Map)) {
	for ctx.Err() == nil {
		resp, err := n.cli.Get(ctx, n.mapKey())
		if err != nil {
			if ctx.Err() == nil {
				n.log.Warn("read slot map; serving the last one", "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		if len(resp.Kvs) > 0 {
			n.applyKV(resp.Kvs[0].Value, resp.Kvs[0].ModRevision, apply)
		}
		wch := n.cli.Watch(clientv3.WithRequireLeader(ctx), n.mapKey(), clientv3.WithRev(resp.Header.Revision+1))
		for wr := range wch {
			if err := wr.Err(); err != nil {
				n.log.Warn("slot map watch broke; reading again", "err", err)
				break
			}
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypePut {
					n.applyKV(ev.Kv.Value, ev.Kv.ModRevision, apply)
				}
			}
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// applyKV hands the map stored at epoch to apply unless it is not newer
// than the one in effect, and keeps it in Dir.
func (n *Node) applyKV(val []byte, epoch int64, apply func(*cluster.Map)) {
	n.mu.Lock()
	stale := epoch <= n.stats.Epoch && n.stats.MapsApplied > 0
	n.mu.Unlock()
	if stale {
		return
	}
	rec, err := decodeMap(val)
	var m *cluster.Map
	if err == nil {
		m, err = rec.clusterMap(n.id, n.opts.Addr, epoch)
	}
	if err != nil {
		n.log.Error("ignoring a slot map from etcd", "epoch", epoch, "err", err)
		return
	}
	apply(m)
	if err := storeMap(n.opts.Dir, epoch, rec); err != nil {
		n.log.Warn("keep the slot map in the data directory", "err", err)
	}
	n.mu.Lock()
	n.applied = m
	n.stats.Epoch = epoch
	n.stats.MapsApplied++
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
	n.log.Info("slot map applied", "epoch", epoch, "owned_slots", m.Self().SlotCount(), "nodes", len(m.Nodes()))
}

// Leave hands this node's slots to the others: it marks the member key
// leaving, waits until a map in which this node has no slots is in effect
// (applied through Run's apply), then revokes the lease, and the node does
// not register again. The last member leaves the map empty. It returns
// early, with an error, when ctx ends first or no session is up; the
// slots then move after the grace.
func (n *Node) Leave(ctx context.Context) error {
	n.leaving.Store(true)
	lease := clientv3.LeaseID(n.lease.Load())
	if lease == 0 {
		return errors.New("no etcd session: the slots move after the grace")
	}
	if err := n.register(ctx, lease); err != nil {
		return err
	}
	for {
		n.mu.Lock()
		m, changed := n.applied, n.changed
		n.mu.Unlock()
		if m.Self().SlotCount() == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for a map without this node's slots: %w", context.Cause(ctx))
		case <-changed:
		}
	}
	if _, err := n.cli.Revoke(ctx, lease); err != nil {
		return fmt.Errorf("revoke lease: %w", err)
	}
	return nil
}
