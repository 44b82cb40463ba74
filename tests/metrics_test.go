package tests

// The Prometheus and pprof endpoint served on --metrics-port.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// httpGet fetches url, retrying connection errors until the endpoint is up
// (it starts beside the RESP listener) or 5 s pass.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(5 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			if rerr != nil {
				t.Fatalf("GET %s: reading body: %v", url, rerr)
			}
			return resp.StatusCode, string(body)
		}
		cancel()
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metricValue returns the value of the sample whose name and labels are
// exactly series (e.g. `kvserver_commands_total{command="set"}`).
func metricValue(body, series string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, series+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// TestMetricsEndpoint runs a few commands and reads them back from
// /metrics; /debug/pprof/ must answer too.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	if diffAgainstRedis() {
		t.Skip("redis-server has no metrics endpoint")
	}
	port := freePort(t)
	s := startKVServer(t, "--metrics-port", strconv.Itoa(port))
	c := dialRaw(t, s.Addr)
	expectReply(t, c, "+OK\r\n", "SET", "m:a", "1234567890")
	expectReply(t, c, "+OK\r\n", "SET", "m:b", "v")
	expectReply(t, c, "$10\r\n1234567890\r\n", "GET", "m:a")
	expectReply(t, c, "$-1\r\n", "GET", "m:missing")
	expectReply(t, c, ":1\r\n", "DEL", "m:b")
	expectReply(t, c, ":1\r\n", "EXISTS", "m:a")

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	code, body := httpGet(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: status %d\n%s", code, body)
	}
	exact := []struct {
		series string
		want   float64
	}{
		{`kvserver_commands_total{command="set"}`, 2},
		{`kvserver_commands_total{command="get"}`, 2},
		{`kvserver_commands_total{command="del"}`, 1},
		{`kvserver_commands_total{command="exists"}`, 1},
		{"kvserver_keys_current", 1},
	}
	for _, m := range exact {
		if v, ok := metricValue(body, m.series); !ok || v != m.want {
			t.Errorf("%s = %v (found %v), want %v", m.series, v, ok, m.want)
		}
	}
	atLeast := []struct {
		series string
		min    float64
	}{
		{"kvserver_memory_used_bytes", 10}, // at least the value of m:a
		{"kvserver_connections_current", 1},
		{"kvserver_keyspace_hits_total", 1},   // GET m:a (Redis counts EXISTS too)
		{"kvserver_keyspace_misses_total", 1}, // GET m:missing
		{"kvserver_connections_total", 2},     // the harness's probe and c
		{"kvserver_net_input_bytes_total", 1},
		{"kvserver_net_output_bytes_total", 1},
	}
	for _, m := range atLeast {
		if v, ok := metricValue(body, m.series); !ok || v < m.min {
			t.Errorf("%s = %v (found %v), want >= %v", m.series, v, ok, m.min)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}

	code, body = httpGet(t, base+"/debug/pprof/")
	if code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("GET /debug/pprof/: status %d, body %s", code, quoteTrunc([]byte(body)))
	}
}

// TestTierMetricsFollowDemotionAndPromotion pushes chunks out of a small
// memory tier and reads them back, then checks the per-tier series and the
// INFO tiers section agree on what moved.
func TestTierMetricsFollowDemotionAndPromotion(t *testing.T) {
	t.Parallel()
	if diffAgainstRedis() {
		t.Skip("redis-server has no tiers")
	}
	port := freePort(t)
	s := startKVServer(t, "--maxmemory", "4mb", "--metrics-port", strconv.Itoa(port))
	c := dialRaw(t, s.Addr)
	const chunks, size = 24, 512 << 10
	for i := range chunks {
		if err := putChunk(c, i, size); err != nil {
			t.Fatal(err)
		}
	}
	for i := range chunks {
		if st := chunkState(c, i, size); st != "whole" {
			t.Fatalf("chunk %d is %s", i, st)
		}
	}
	_, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	atLeast := []struct {
		series string
		min    float64
	}{
		{`kvserver_tier_keys{tier="memory"}`, 1},
		{`kvserver_tier_keys{tier="disk"}`, 2},
		{`kvserver_tier_bytes{tier="disk"}`, size},
		{`kvserver_tier_max_bytes{tier="memory"}`, 4 << 20},
		{`kvserver_tier_max_bytes{tier="disk"}`, 1},
		{`kvserver_tier_hits_total{tier="memory"}`, 1},
		{`kvserver_tier_hits_total{tier="disk"}`, 1},
		{`kvserver_tier_misses_total{tier="memory"}`, 1},
		{`kvserver_tier_demotions_total{tier="memory"}`, 1},
		{`kvserver_tier_promotions_total{tier="disk"}`, 1},
	}
	for _, m := range atLeast {
		if v, ok := metricValue(body, m.series); !ok || v < m.min {
			t.Errorf("%s = %v (found %v), want >= %v", m.series, v, ok, m.min)
		}
	}
	for _, series := range []string{`kvserver_tier_evictions_total{tier="disk"}`, `kvserver_tier_corrupt_records_total{tier="disk"}`, `kvserver_tier_misses_total{tier="disk"}`} {
		if v, ok := metricValue(body, series); !ok || v != 0 {
			t.Errorf("%s = %v (found %v), want 0", series, v, ok)
		}
	}
	tiers, err := infoFields(c, "tiers")
	if err != nil {
		t.Fatal(err)
	}
	if tiers["tiers"] != "memory,disk" {
		t.Errorf("INFO tiers tiers = %q", tiers["tiers"])
	}
	for _, f := range []string{"tier_memory_keys", "tier_memory_bytes", "tier_memory_hits", "tier_memory_demotions",
		"tier_memory_promotions", "tier_disk_keys", "tier_disk_bytes", "tier_disk_max_bytes", "tier_disk_hits"} {
		if n, err := strconv.ParseInt(tiers[f], 10, 64); err != nil || n <= 0 {
			t.Errorf("INFO tiers %s = %q, want > 0", f, tiers[f])
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
}
