package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// setMemoryResult is what one server holds for one layout of set members:
// the growth of its resident memory and of its used_memory, per member.
type setMemoryResult struct {
	Server         string  `json:"server"`
	Layout         string  `json:"layout"`
	Keys           int     `json:"keys"`
	Members        int     `json:"members"`
	RSSBytes       int64   `json:"rss_growth_bytes"`
	UsedBytes      int64   `json:"used_memory_growth_bytes"`
	RSSPerMember   float64 `json:"rss_bytes_per_member"`
	UsedPerMember  float64 `json:"used_memory_bytes_per_member"`
	EncodingOfLast string  `json:"encoding"`
}

// setLayout is one way of storing the members: how many keys, and what a
// member looks like.
type setLayout struct {
	name   string
	keys   int
	member func(i int) string
}

// setLayouts are the layouts kvbench setmemory measures for n members:
// short strings and integers, spread over 1000 keys (small sets) and in
// one key (one big hashtable).
func setLayouts(n int) []setLayout {
	str := func(i int) string { return fmt.Sprintf("member:%06d", i) }
	return []setLayout{
		{"strings, 1000 keys", min(1000, n), str},
		{"strings, 1 key", 1, str},
		{"integers, 1000 keys", min(1000, n), strconv.Itoa},
		{"integers, 1 key", 1, strconv.Itoa},
	}
}

func runSetMemory(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("setmemory", "[--members 100000] [--json]", `
Starts a fresh redis-server and kvserver for each layout, stores --members
distinct set members with SADD (12-byte strings or integers, in 1000 keys
or in one), and reports how much each process grew per member: resident
memory (VmRSS) and the server's own used_memory. 100 integers per key are
an intset in both servers; 100,000 in one key are a hashtable.`)
	members := fs.Int("members", 100000, "members stored per layout and server")
	redisBin := fs.String("redis", "redis-server", "redis-server binary")
	kvBin := fs.String("kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *members < 1 {
		return fmt.Errorf("--members %d: want at least 1", *members)
	}
	tmp, bin, err := workDir(ctx, "kvbench-setmemory-", *kvBin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var results []setMemoryResult
	for li, layout := range setLayouts(*members) {
		for si, start := range []func(ctx context.Context, bin, dir, maxMemory string) (*target, error){startRedis, startKVServer} {
			b := *redisBin
			if si == 1 {
				b = bin
			}
			dir := filepath.Join(tmp, fmt.Sprintf("l%d-s%d", li, si))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			t, err := start(ctx, b, dir, "4gb")
			if err != nil {
				return err
			}
			r, err := setMemoryOf(ctx, t, layout, *members)
			t.Stop()
			os.RemoveAll(dir)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", t.Name, layout.name, err)
			}
			results = append(results, r)
		}
	}
	if *asJSON {
		return writeJSONLines(out, results)
	}
	fmt.Fprintf(out, "%9s  %-20s  %8s  %12s  %12s  %10s\n", "server", "layout", "members", "RSS B/memb", "used B/memb", "encoding")
	for _, r := range results {
		fmt.Fprintf(out, "%9s  %-20s  %8d  %12.1f  %12.1f  %10s\n",
			r.Server, r.Layout, r.Members, r.RSSPerMember, r.UsedPerMember, r.EncodingOfLast)
	}
	return nil
}

// setMemoryOf stores n members in t as layout says and measures how much
// t grew.
func setMemoryOf(ctx context.Context, t *target, layout setLayout, n int) (setMemoryResult, error) {
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return setMemoryResult{}, err
	}
	defer c.Close()
	// Long enough for write-behind (2 s idle) and gctune's release of idle
	// memory (2 s after the last burst) to finish: after 3 s kvserver's
	// RSS still held the load's garbage.
	settle := func() (rss, used int64, err error) { return settledMemory(t, c, 8*time.Second) }
	rss0, used0, err := settle()
	if err != nil {
		return setMemoryResult{}, err
	}
	perKey := n / layout.keys
	const batch = 1000
	for k := range layout.keys {
		key := "set:" + strconv.Itoa(k)
		for from := 0; from < perKey; from += batch {
			args := []string{"SADD", key}
			for j := from; j < min(from+batch, perKey); j++ {
				args = append(args, layout.member(k*perKey+j))
			}
			if _, err := c.Do(args...); err != nil {
				return setMemoryResult{}, err
			}
		}
	}
	enc, err := c.DoBulk("OBJECT", "ENCODING", "set:"+strconv.Itoa(layout.keys-1))
	if err != nil {
		return setMemoryResult{}, err
	}
	rss1, used1, err := settle()
	if err != nil {
		return setMemoryResult{}, err
	}
	stored := perKey * layout.keys
	return setMemoryResult{
		Server: t.Name, Layout: layout.name, Keys: layout.keys, Members: stored,
		RSSBytes: rss1 - rss0, UsedBytes: used1 - used0,
		RSSPerMember:   float64(rss1-rss0) / float64(stored),
		UsedPerMember:  float64(used1-used0) / float64(stored),
		EncodingOfLast: enc,
	}, nil
}
