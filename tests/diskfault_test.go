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

// startOnSmallDisk starts kvserver on a 64 MiB tmpfs holding 24 MiB of
// ballast (the path returned; the test deletes it to give the disk tier
// room again), with a 16 MiB memory tier and --maxdisk far above the file
// system, so that only the file system says no.
func startOnSmallDisk(t *testing.T, extraArgs ...string) (*server, string) {
	t.Helper()
	mnt := mountTmpfs(t, "64m")
	ballast := filepath.Join(mnt, "ballast")
	if err := os.WriteFile(ballast, make([]byte, 24<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--dir", mnt, "--maxmemory", "16mb", "--maxdisk", "1gb"}, extraArgs...)
	return startKVServer(t, args...), ballast
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
	metricsPort := freePort(t)
	s, ballast := startOnSmallDisk(t, "--metrics-port", strconv.Itoa(metricsPort))
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

// TestDiskFullRecoversAndDeletesStayDeleted fills the real file system
// under the disk tier (a tmpfs with ballast), deletes pairs that are on
// disk while it is full, then frees the space with writes still coming. The
// disk tier must keep retrying while full (io_errors grows), be back to ok
// within 15 s of the space returning, apply the deletes it had to defer,
// and after a kill -9 and a restart the deleted pairs must stay deleted
// while the others are whole or absent, never half. The kill -9 comes once
// the disk is back, or while it is still full.
func TestDiskFullRecoversAndDeletesStayDeleted(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier")
	}
	t.Run("kill -9 after recovery", func(t *testing.T) { diskFullDeletes(t, false) })
	t.Run("kill -9 while full", func(t *testing.T) { diskFullDeletes(t, true) })
}

func diskFullDeletes(t *testing.T, crashWhileFull bool) {
	s, ballast := startOnSmallDisk(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rdb.Close()
	c := dialRaw(t, s.Addr)
	tiersNow := func() map[string]string {
		t.Helper()
		tiers, err := infoFields(c, "tiers")
		if err != nil {
			t.Fatal(err)
		}
		return tiers
	}
	value := func(i int) []byte { return randomBytes(uint64(5000+i), 1<<20) }
	meta := func(i int) []byte { return []byte(fmt.Sprintf("meta-%04d-%s", i, strings.Repeat("m", 18))) }
	key := func(i int) string { return fmt.Sprintf("model@1@0@%08x@bfloat16", i) }
	setPair := func(i int) {
		t.Helper()
		if err := rdb.Set(ctx, key(i)+"kv_bytes", value(i), 0).Err(); err != nil {
			t.Fatalf("SET kv_bytes %d: %v", i, err)
		}
		if err := rdb.Set(ctx, key(i)+"metadata", meta(i), 0).Err(); err != nil {
			t.Fatalf("SET metadata %d: %v", i, err)
		}
	}

	// 20 pairs first, left long enough to be written back and flushed:
	// they are durable on disk before it fills.
	const durable = 20
	next := 0
	for ; next < durable; next++ {
		setPair(next)
	}
	time.Sleep(5 * time.Second)
	// Fill: 1 MiB pairs through a 16 MiB memory tier until the disk says no.
	for ; tiersNow()["tier_disk_status"] != "unavailable"; next++ {
		if next == 200 {
			t.Fatalf("the disk tier never became unavailable: %v", tiersNow())
		}
		setPair(next)
	}
	// Delete, while the disk is full, the durable pairs still held.
	var deleted []int
	for i := 0; i < durable; i++ {
		n, err := rdb.Del(ctx, key(i)+"kv_bytes", key(i)+"metadata").Result()
		if err != nil {
			t.Fatalf("DEL pair %d with the disk full: %v", i, err)
		}
		if n == 2 {
			deleted = append(deleted, i)
		}
	}
	if len(deleted) < 10 {
		t.Fatalf("only %d pairs were held to delete: %v", len(deleted), tiersNow())
	}
	// Ordinary small keys keep coming from another client from now on:
	// their write-behind keeps the disk tier busy with small writes.
	smallCtx, stopSmall := context.WithCancel(ctx)
	smallDone := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			err := rdb.Set(smallCtx, fmt.Sprintf("user:%d", i), "small value", 0).Err()
			if smallCtx.Err() != nil {
				smallDone <- nil
				return
			}
			if err != nil {
				smallDone <- err
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	stopSmallWriter := func() {
		if smallCtx.Err() == nil {
			stopSmall()
			if err := <-smallDone; err != nil {
				t.Errorf("SET of a small key: %v", err)
			}
		}
	}
	defer stopSmallWriter()
	full := tiersNow()
	if full["tier_disk_status"] != "unavailable" {
		t.Fatalf("the disk recovered before space was freed: %v", full)
	}
	if crashWhileFull {
		// kill -9 before any space returns: only the delete log has the
		// deletes. Space returns before the restart.
		stopSmallWriter()
		s.Crash()
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
		s.Relaunch(t)
	} else {
		// While full, the disk tier retries by itself: io_errors grows.
		errsFull, _ := strconv.Atoi(full["tier_disk_io_errors"])
		deadline := time.Now().Add(20 * time.Second)
		for {
			n, _ := strconv.Atoi(tiersNow()["tier_disk_io_errors"])
			if n > errsFull {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("tier_disk_io_errors stayed at %d for 20 s of a full disk: no retries", n)
			}
			setPair(next)
			next++
			time.Sleep(100 * time.Millisecond)
		}

		// Free space with writes still coming.
		if err := os.Remove(ballast); err != nil {
			t.Fatal(err)
		}
		freed := time.Now()
		var recovered time.Duration
		for recovered == 0 {
			setPair(next)
			next++
			tiers := tiersNow()
			if tiers["tier_disk_status"] == "ok" {
				recovered = time.Since(freed)
				break
			}
			if time.Since(freed) > 15*time.Second {
				t.Fatalf("the disk tier was not back to ok within 15 s of space returning: %v", tiers)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for {
			tiers := tiersNow()
			if tiers["tier_disk_deferred_deletes"] == "0" {
				break
			}
			if time.Since(freed) > 30*time.Second {
				t.Fatalf("deferred deletes not applied 30 s after space returned: %v", tiers)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("disk back to ok %v after space returned; %d pairs deleted while full; INFO tiers: %v",
			recovered.Round(time.Millisecond), len(deleted), tiersNow())

		stopSmallWriter()
		s.Crash()
		s.Relaunch(t)
	}
	rdb2 := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rdb2.Close()
	back := 0
	for _, i := range deleted {
		if n, err := rdb2.Exists(ctx, key(i)+"kv_bytes", key(i)+"metadata").Result(); err != nil {
			t.Fatal(err)
		} else if n > 0 {
			back++
		}
	}
	if back > 0 {
		t.Fatalf("%d of %d pairs deleted while the disk was full came back after kill -9", back, len(deleted))
	}
	present := verifyPairs(t, rdb2, next, key, value, meta)
	t.Logf("after kill -9: 0 of %d deleted pairs back, %d of %d pairs held, all whole", len(deleted), present, next)
}
