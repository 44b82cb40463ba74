package tests

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestFunctionLibrariesOutliveRestartsAndCrashes checks that FUNCTION LOAD,
// DELETE, FLUSH and RESTORE are kept on disk as Redis keeps them in its RDB
// and AOF: after a clean restart, and after a kill -9 that comes a couple
// of seconds after the change (the disk tier's flush interval, the keys'
// own promise), the libraries are the ones the last change left.
func TestFunctionLibrariesOutliveRestartsAndCrashes(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("redis-server here runs without persistence")
	}
	t.Parallel()
	ctx := context.Background()
	s := startKVServer(t)
	connect := func() *redis.Client {
		rdb := newGoRedis(t, s.Addr, 2, 1)
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	libs := func(rdb *redis.Client) []string {
		t.Helper()
		list, err := rdb.FunctionList(ctx, redis.FunctionListQuery{}).Result()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, l := range list {
			names = append(names, l.Name)
		}
		slices.Sort(names)
		return names
	}
	call := func(rdb *redis.Client, fn string) string {
		t.Helper()
		v, err := rdb.FCall(ctx, fn, nil).Text()
		if err != nil {
			return "error: " + err.Error()
		}
		return v
	}
	lib := func(name, fn, reply string) string {
		return "#!lua name=" + name + "\nredis.register_function('" + fn + "', function() return '" + reply + "' end)"
	}
	// afterFlush waits past the disk tier's flush (once a second).
	afterFlush := func() { time.Sleep(2500 * time.Millisecond) }
	// settle waits out the flush that follows a start (which removes the
	// clean-shutdown mark), so that a change made next is on disk only
	// if saving it asked for a flush of its own.
	settle := func() { time.Sleep(1500 * time.Millisecond) }
	// crash kills the server with -9 once the change is past the flush,
	// starts it again and connects; restart stops it cleanly first.
	crash := func() *redis.Client {
		afterFlush()
		s.Crash()
		s.Relaunch(t)
		return connect()
	}
	restart := func() *redis.Client {
		s.Restart(t)
		return connect()
	}

	rdb := connect()
	settle()
	if err := rdb.FunctionLoad(ctx, lib("one", "f1", "v1")).Err(); err != nil {
		t.Fatal(err)
	}
	rdb = crash()
	if got := call(rdb, "f1"); got != "v1" {
		t.Fatalf("after kill -9 FCALL f1 = %q, want v1", got)
	}
	rdb = restart()
	if got := call(rdb, "f1"); got != "v1" {
		t.Fatalf("after a restart FCALL f1 = %q, want v1", got)
	}
	settle()

	if err := rdb.FunctionLoadReplace(ctx, lib("one", "f1", "v2")).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.FunctionLoad(ctx, lib("two", "f2", "w")).Err(); err != nil {
		t.Fatal(err)
	}
	rdb = crash()
	if got, want := libs(rdb), []string{"one", "two"}; !slices.Equal(got, want) {
		t.Fatalf("after kill -9 the libraries are %v, want %v", got, want)
	}
	if got := call(rdb, "f1"); got != "v2" {
		t.Fatalf("after kill -9 FCALL f1 = %q, want the replaced v2", got)
	}
	dump, err := rdb.FunctionDump(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	settle()

	if err := rdb.FunctionDelete(ctx, "two").Err(); err != nil {
		t.Fatal(err)
	}
	rdb = crash()
	if got, want := libs(rdb), []string{"one"}; !slices.Equal(got, want) {
		t.Fatalf("after DELETE and kill -9 the libraries are %v, want %v", got, want)
	}

	if err := rdb.FunctionFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	rdb = restart()
	if got := libs(rdb); len(got) != 0 {
		t.Fatalf("after FLUSH and a restart the libraries are %v, want none", got)
	}

	if err := rdb.FunctionRestore(ctx, dump).Err(); err != nil {
		t.Fatal(err)
	}
	rdb = restart()
	if got, want := libs(rdb), []string{"one", "two"}; !slices.Equal(got, want) {
		t.Fatalf("after RESTORE and a restart the libraries are %v, want %v", got, want)
	}
	if got := call(rdb, "f2"); got != "w" {
		t.Fatalf("after RESTORE and a restart FCALL f2 = %q, want w", got)
	}
}

// TestFunctionLibrariesAreSavedOnceAFullDiskFreesUp loads a library while
// the disk under the disk tier is full, so that its save fails, then frees
// the disk and kills the server a few seconds later: the library must be
// there after the restart. A failed save is retried each second; without
// the retry the disk kept the libraries' previous state (none here).
func TestFunctionLibrariesAreSavedOnceAFullDiskFreesUp(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	s, ballast := startOnSmallDisk(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	defer rdb.Close()
	c := dialRaw(t, s.Addr)
	status := func() string {
		t.Helper()
		tiers, err := infoFields(c, "tiers")
		if err != nil {
			t.Fatal(err)
		}
		return tiers["tier_disk_status"]
	}
	for i := 0; status() != "unavailable"; i++ {
		if i == 200 {
			t.Fatal("the disk tier never became unavailable")
		}
		if err := rdb.Set(ctx, fmt.Sprintf("fill:%d", i), randomBytes(uint64(i), 1<<20), 0).Err(); err != nil {
			t.Fatalf("SET %d: %v", i, err)
		}
	}
	code := "#!lua name=full\nredis.register_function('ff', function() return 'saved' end)"
	if err := rdb.FunctionLoad(ctx, code).Err(); err != nil {
		t.Fatalf("FUNCTION LOAD with the disk full: %v", err)
	}
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for status() == "unavailable" {
		if time.Now().After(deadline) {
			t.Fatal("the disk tier did not come back once the disk had room")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The retry (each second) and the flush after it (each second).
	time.Sleep(3 * time.Second)
	s.Crash()
	s.Relaunch(t)
	rdb2 := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer rdb2.Close()
	if got, err := rdb2.FCall(ctx, "ff", nil).Text(); err != nil || got != "saved" {
		t.Fatalf("after the disk freed up and a kill -9, FCALL ff = %q, %v; want saved", got, err)
	}
}
