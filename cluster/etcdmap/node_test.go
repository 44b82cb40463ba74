package etcdmap

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/kvserver/kvserver/cluster"
	"github.com/kvserver/kvserver/cluster/etcdmap/etcdtest"
)

// newTestNode makes a node of cluster "t" on etcd at endpoint.
func newTestNode(t *testing.T, endpoint, addr string) *Node {
	t.Helper()
	n, initial, err := New(Options{Endpoints: []string{endpoint}, Name: "t", Dir: t.TempDir(), Addr: addr,
		TTL: 2 * time.Second, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if initial.Self().SlotCount() != 0 || initial.Self().ID != n.ID() {
		t.Fatalf("a new node's initial map gives it %d slots and id %q, want none and %q",
			initial.Self().SlotCount(), initial.Self().ID, n.ID())
	}
	return n
}

// TestStaleReconcilerCannotWrite pins down that a node that lost the
// election (a paused reconciler, say) cannot write the map even when its
// read of the map is current: the write is conditional on holding the
// election as well as on the map's revision.
func TestStaleReconcilerCannotWrite(t *testing.T) {
	e := etcdtest.Start(t)
	n := newTestNode(t, e.Endpoint, "127.0.0.1:7001")
	defer n.cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := n.cli.Put(ctx, n.memberKey(n.ID()), `{"addr":"127.0.0.1:7001"}`); err != nil {
		t.Fatal(err)
	}
	elect := func(val string) (*concurrency.Election, *concurrency.Session) {
		s, err := concurrency.NewSession(n.cli, concurrency.WithTTL(5))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		el := concurrency.NewElection(s, n.electionPrefix())
		if err := el.Campaign(ctx, val); err != nil {
			t.Fatal(err)
		}
		return el, s
	}
	// The old reconciler's lease ends (as when it was paused past its
	// TTL) while it still believes it is elected.
	old, oldSession := elect("old")
	if err := oldSession.Close(); err != nil {
		t.Fatal(err)
	}
	current, _ := elect("current")

	mapRev := func() int64 {
		resp, err := n.cli.Get(ctx, n.mapKey())
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Kvs) == 0 {
			return 0
		}
		return resp.Kvs[0].ModRevision
	}
	if err := n.reconcileOnce(ctx, old, map[string]time.Time{}); err != nil {
		t.Fatal(err)
	}
	if rev := mapRev(); rev != 0 {
		t.Fatalf("a resigned reconciler wrote the map (revision %d)", rev)
	}
	if err := n.reconcileOnce(ctx, current, map[string]time.Time{}); err != nil {
		t.Fatal(err)
	}
	rev := mapRev()
	if rev == 0 {
		t.Fatal("the elected reconciler did not write the map")
	}
	// Nothing changed: a second pass writes nothing.
	if err := n.reconcileOnce(ctx, current, map[string]time.Time{}); err != nil {
		t.Fatal(err)
	}
	if again := mapRev(); again != rev {
		t.Fatalf("an unchanged membership rewrote the map (revision %d -> %d)", rev, again)
	}
}

// mapLog records the maps a node applies.
type mapLog struct {
	mu   sync.Mutex
	last *cluster.Map
}

func (l *mapLog) apply(m *cluster.Map) {
	l.mu.Lock()
	l.last = m
	l.mu.Unlock()
}

// slots is the number of slots the node has in its last map.
func (l *mapLog) slots() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		return -1
	}
	return l.last.Self().SlotCount()
}

func waitSlots(t *testing.T, what string, l *mapLog, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for l.slots() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d slots, want %d", what, l.slots(), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNodesShareSlotsAndLeave runs two nodes: they split the slots, and
// when one leaves the other takes them all before Leave returns.
func TestNodesShareSlotsAndLeave(t *testing.T) {
	e := etcdtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		stopped := make(chan struct{})
		go func() {
			wg.Wait()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-time.After(15 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("Run did not return within 15 s of its context's end:\n%s", buf[:runtime.Stack(buf, true)])
		}
	}()
	a, b := newTestNode(t, e.Endpoint, "127.0.0.1:7001"), newTestNode(t, e.Endpoint, "127.0.0.1:7002")
	var la, lb mapLog
	for _, r := range []struct {
		n *Node
		l *mapLog
	}{{a, &la}, {b, &lb}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.n.Run(ctx, r.l.apply)
		}()
	}
	waitSlots(t, "node a", &la, cluster.Slots/2)
	waitSlots(t, "node b", &lb, cluster.Slots/2)
	if sa, sb := a.Stats(), b.Stats(); sa.Reconciler == sb.Reconciler || !sa.Session || !sb.Session {
		t.Fatalf("stats a %+v, b %+v: want both in session, exactly one reconciling", sa, sb)
	}

	leaveCtx, leaveCancel := context.WithTimeout(ctx, 10*time.Second)
	defer leaveCancel()
	if err := b.Leave(leaveCtx); err != nil {
		t.Fatalf("leave: %v", err)
	}
	if got := lb.slots(); got != 0 {
		t.Fatalf("after Leave the leaving node still has %d slots", got)
	}
	waitSlots(t, "the remaining node", &la, cluster.Slots)
	resp, err := a.cli.Get(ctx, b.memberKey(b.ID()), clientv3.WithCountOnly())
	if err != nil || resp.Count != 0 {
		t.Fatalf("the leaving node's member key is still there (%v, %v)", resp, err)
	}
}
