package tests

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// mountTmpfs mounts a tmpfs of the given size on a fresh directory, so a
// test can fill a real file system. It needs root (CI runs as root); the
// mount is lazily detached when the test ends, after the server stops.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI and the dev machines run as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskFullKeepsTheMemoryTierServing fills the real file system under
// the disk tier (a 64 MiB tmpfs, with --maxdisk far above it so that only
// the file system says no) with 1 MiB chunk pairs through a 16 MiB memory
// tier. Every write must still succeed, every pair the server still holds
// must be whole and byte-exact, the fault must show in INFO, in /metrics
// and (a few lines, not one per retry) in the log, and once space is freed
// the disk tier must take writes again.
func TestDiskFullKeepsTheMemoryTierServing(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier")
	}
	mnt := mountTmpfs(t, "64m")
	// Ballast the test deletes later to give the disk tier room again.
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 24<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	metricsPort := freePort(t)
	s := startKVServer(t, "--dir", mnt, "--maxmemory", "16mb", "--maxdisk", "1gb",
		"--metrics-port", strconv.Itoa(metricsPort))
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rdb.Close()

	const pairs = 120 // 120 MiB through a 40 MiB file system
	value := func(i int) []byte { return randomBytes(uint64(1000+i), 1<<20) }
	meta := func(i int) []byte { return []byte(fmt.Sprintf("meta-%04d-%s", i, strings.Repeat("m", 18))) }
	key := func(i int) string { return fmt.Sprintf("model@1@0@%08x@bfloat16", i) }
	for i := 0; i < pairs; i++ {
		if err := rdb.Set(ctx, key(i)+"kv_bytes", value(i), 0).Err(); err != nil {
			t.Fatalf("SET kv_bytes %d with the disk filling up: %v", i, err)
		}
		if err := rdb.Set(ctx, key(i)+"metadata", meta(i), 0).Err(); err != nil {
			t.Fatalf("SET metadata %d with the disk filling up: %v", i, err)
		}
	}
	c := dialRaw(t, s.Addr)
	tiers, err := infoFields(c, "tiers")
	if err != nil {
		t.Fatal(err)
	}
	if tiers["tier_disk_status"] != "unavailable" || tiers["tier_disk_io_errors"] == "0" ||
		!strings.Contains(tiers["tier_disk_last_io_error"], "no space left on device") {
		t.Fatalf("INFO tiers after filling the disk: status %q, io_errors %q, last error %q",
			tiers["tier_disk_status"], tiers["tier_disk_io_errors"], tiers["tier_disk_last_io_error"])
	}
	if n, _ := strconv.Atoi(tiers["tier_memory_evictions"]); n == 0 {
		t.Fatalf("no memory-tier evictions although the disk refused demotions: %v", tiers)
	}
	code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	if v, ok := metricValue(body, `kvserver_tier_available{tier="disk"}`); !ok || v != 0 {
		t.Errorf(`kvserver_tier_available{tier="disk"} = %v (found %v), want 0`, v, ok)
	}
	if v, ok := metricValue(body, `kvserver_tier_io_errors_total{tier="disk"}`); !ok || v < 1 {
		t.Errorf(`kvserver_tier_io_errors_total{tier="disk"} = %v (found %v), want >= 1`, v, ok)
	}

	// The newest pairs fit in memory and are all there; everything the
	// server still holds is whole and exact.
	for i := pairs - 4; i < pairs; i++ {
		if got, err := rdb.Get(ctx, key(i)+"kv_bytes").Bytes(); err != nil || !bytes.Equal(got, value(i)) {
			t.Fatalf("newest pair %d not held after the disk filled: %v", i, err)
		}
	}
	present := verifyPairs(t, rdb, pairs, key, value, meta)
	t.Logf("disk full: %d of %d pairs still held, INFO tiers: status=%s io_errors=%s memory_evictions=%s disk_keys=%s",
		present, pairs, tiers["tier_disk_status"], tiers["tier_disk_io_errors"], tiers["tier_memory_evictions"], tiers["tier_disk_keys"])
	if lines := strings.Count(s.Output(), "disk tier"); lines > 20 {
		t.Errorf("the log has %d lines about the disk tier: it must not log every retry", lines)
	}

	// Free space: the disk tier takes writes again by itself.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(45 * time.Second)
	for i := pairs; ; i++ {
		// Keep writing so the demoter keeps trying the disk.
		if err := rdb.Set(ctx, key(i)+"kv_bytes", value(i), 0).Err(); err != nil {
			t.Fatalf("SET after freeing space: %v", err)
		}
		if err := rdb.Set(ctx, key(i)+"metadata", meta(i), 0).Err(); err != nil {
			t.Fatalf("SET after freeing space: %v", err)
		}
		tiers, err = infoFields(c, "tiers")
		if err != nil {
			t.Fatal(err)
		}
		if tiers["tier_disk_status"] == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the disk tier did not recover within 45 s of freeing space: %v", tiers)
		}
		time.Sleep(200 * time.Millisecond)
	}
	verifyPairs(t, rdb, pairs, key, value, meta)
	if !strings.Contains(s.Output(), "disk tier available again") {
		t.Errorf("no log line for the recovery:\n%s", tail(s.Output(), 2000))
	}
}

// verifyPairs checks that each of the first n pairs is whole and exact or
// absent as a whole, and returns how many are present.
func verifyPairs(t *testing.T, rdb *redis.Client, n int, key func(int) string, value func(int) []byte, meta func(int) []byte) int {
	t.Helper()
	ctx := context.Background()
	present := 0
	for i := 0; i < n; i++ {
		kv, errKV := rdb.Get(ctx, key(i)+"kv_bytes").Bytes()
		md, errMD := rdb.Get(ctx, key(i)+"metadata").Bytes()
		switch {
		case errKV == redis.Nil && errMD == redis.Nil:
		case errKV != nil || errMD != nil:
			t.Fatalf("pair %d is half present or unreadable: kv_bytes %v, metadata %v", i, errKV, errMD)
		case !bytes.Equal(kv, value(i)) || !bytes.Equal(md, meta(i)):
			t.Fatalf("pair %d has wrong bytes", i)
		default:
			present++
		}
	}
	return present
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
