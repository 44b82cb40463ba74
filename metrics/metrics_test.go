package metrics

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvserver/kvserver/cmdstats"
	"github.com/prometheus/client_golang/prometheus"
)

// fakeSource is a Source returning a fixed Snapshot and counting calls.
type fakeSource struct {
	snap  Snapshot
	calls atomic.Int64
}

func (f *fakeSource) Snapshot() Snapshot {
	f.calls.Add(1)
	return f.snap
}

// scrape fetches path from h and returns the status and body.
func scrape(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// scrapeMetrics returns the text exposition of reg, failing on non-200.
func scrapeMetrics(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	code, body := scrape(t, Handler(reg), "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d:\n%s", code, body)
	}
	return body
}

// hasLine reports whether body has a line equal to want.
func hasLine(body, want string) bool {
	for _, line := range strings.Split(body, "\n") {
		if line == want {
			return true
		}
	}
	return false
}

func TestScrapeExportsRecordedEvents(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := New(reg, &fakeSource{})
	cmds := newTableSource("get", "set", "del")
	m.SetCommandSource(cmds)
	for _, c := range []struct {
		name   string
		d      time.Duration
		failed bool
	}{{"get", 2 * time.Millisecond, false}, {"get", 20 * time.Microsecond, false}, {"set", time.Millisecond, true}} {
		cmds.stat(c.name).Record(c.d, c.failed)
		cmds.stat(c.name).RecordLatency(c.d)
	}
	cmds.stat("set").Reject()
	m.AddBytesRead(100)
	m.AddBytesRead(-5)
	m.AddBytesWritten(40)
	m.AddBytesWritten(0)
	m.ConnectionOpened()
	m.ConnectionOpened()
	m.ConnectionClosed()
	m.ConnectionRejected()

	body := scrapeMetrics(t, reg)
	for _, want := range []string{
		`# TYPE kvserver_commands_total counter`,
		`kvserver_commands_total{command="get"} 2`,
		`kvserver_commands_total{command="set"} 2`,
		`kvserver_command_errors_total{command="set"} 2`,
		`kvserver_command_errors_total{command="get"} 0`,
		`# TYPE kvserver_command_duration_seconds histogram`,
		`kvserver_command_duration_seconds_bucket{command="get",le="1e-05"} 0`,
		`kvserver_command_duration_seconds_bucket{command="get",le="2.5e-05"} 1`,
		`kvserver_command_duration_seconds_bucket{command="get",le="0.0025"} 2`,
		`kvserver_command_duration_seconds_bucket{command="get",le="10"} 2`,
		`kvserver_command_duration_seconds_count{command="get"} 2`,
		`kvserver_command_duration_seconds_sum{command="get"} 0.00202`,
		`kvserver_command_duration_seconds_count{command="set"} 1`,
		`kvserver_net_input_bytes_total 100`,
		`kvserver_net_output_bytes_total 40`,
		`# TYPE kvserver_connections_current gauge`,
		`kvserver_connections_current 1`,
		`kvserver_connections_total 2`,
		`kvserver_connections_rejected_total 1`,
	} {
		if !hasLine(body, want) {
			t.Errorf("scrape lacks line %q", want)
		}
	}
	if strings.Contains(body, `command="del"`) {
		t.Errorf("a command never called is exported:\n%s", body)
	}
}

func TestScrapeReadsSourceOncePerScrape(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	src := &fakeSource{snap: Snapshot{
		Keys: 10, KeysWithExpiry: 3, UsedMemoryBytes: 4096, MaxMemoryBytes: 1 << 30,
		Hits: 7, Misses: 2, ExpiredKeys: 5, EvictedKeys: 1,
	}}
	New(reg, src)

	body := scrapeMetrics(t, reg)
	if got := src.calls.Load(); got != 1 {
		t.Errorf("Snapshot called %d times in one scrape, want 1", got)
	}
	for _, want := range []string{
		`# TYPE kvserver_keys_current gauge`,
		`kvserver_keys_current 10`,
		`kvserver_keys_with_expiry_current 3`,
		`kvserver_memory_used_bytes 4096`,
		`kvserver_memory_max_bytes 1.073741824e+09`,
		`# TYPE kvserver_keyspace_hits_total counter`,
		`kvserver_keyspace_hits_total 7`,
		`kvserver_keyspace_misses_total 2`,
		`kvserver_expired_keys_total 5`,
		`kvserver_evicted_keys_total 1`,
	} {
		if !hasLine(body, want) {
			t.Errorf("scrape lacks line %q", want)
		}
	}
}

func TestScrapeIncludesGoAndProcessCollectors(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	New(reg, nil)
	body := scrapeMetrics(t, reg)
	for _, want := range []string{"# TYPE go_goroutines gauge", "# TYPE process_cpu_seconds_total counter"} {
		if !hasLine(body, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

func TestNilSourceExportsNoKeyspaceMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	New(reg, nil)
	if body := scrapeMetrics(t, reg); strings.Contains(body, "kvserver_keys_current") {
		t.Errorf("nil source exported keyspace metrics:\n%s", body)
	}
}

func TestNewTwiceOnOneRegistryPanics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	New(reg, nil)
	defer func() {
		if recover() == nil {
			t.Error("second New on the same registry did not panic")
		}
	}()
	New(reg, nil)
}

// tableSource is a CommandSource over a real cmdstats.Table, as the
// server gives one.
type tableSource struct {
	names []string
	tab   *cmdstats.Table
}

func newTableSource(names ...string) *tableSource {
	return &tableSource{names: names, tab: cmdstats.NewTable(len(names))}
}

func (s *tableSource) stat(name string) *cmdstats.Command {
	return s.tab.At(slices.Index(s.names, name))
}

func (s *tableSource) Commands(fn func(name string, st *cmdstats.Command)) {
	for i, n := range s.names {
		fn(n, s.tab.At(i))
	}
}

func TestNoCommandSeriesBeforeTheSource(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	New(reg, nil)
	if body := scrapeMetrics(t, reg); strings.Contains(body, "kvserver_commands_total{") {
		t.Errorf("command series without a source:\n%s", body)
	}
}

func TestHandlerServesPprof(t *testing.T) {
	t.Parallel()
	h := Handler(prometheus.NewRegistry())
	for _, path := range []string{
		"/debug/pprof/",
		"/debug/pprof/cmdline",
		"/debug/pprof/symbol",
		"/debug/pprof/heap",
		"/debug/pprof/goroutine?debug=1",
		"/debug/pprof/trace?seconds=0.01",
	} {
		if code, body := scrape(t, h, path); code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200:\n%.300s", path, code, body)
		}
	}
	if code, _ := scrape(t, h, "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope = %d, want 404", code)
	}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestServeAnswersUntilContextCancelled(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	New(reg, nil)
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, addr, reg, nil) }()

	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "kvserver_connections_total") {
				t.Fatalf("GET /metrics = %d:\n%s", resp.StatusCode, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Serve never answered: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("endpoint still answers after Serve returned")
	}
}

func TestServeReportsListenFailure(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	err = Serve(context.Background(), ln.Addr().String(), prometheus.NewRegistry(), nil)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("Serve on a busy port = %v, want a listen error", err)
	}
}
