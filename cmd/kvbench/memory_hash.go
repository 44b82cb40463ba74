package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// hashLayouts are what kvbench memory --hashes stores: 100,000 fields of
// about 20 bytes (field and value) in small hashes, which both servers keep
// as listpacks, and in one big hash, a hashtable.
var hashLayouts = []struct{ keys, fields int }{{1000, 100}, {1, 100000}}

// hashSettle is how long the hash measurement waits before reading memory:
// kvserver writes the hashes behind to its disk tier after 2 s and hands
// the garbage of that back to the system once idle 2 s later.
const hashSettle = 10 * time.Second

// hashMemoryResult is what one server holds for one layout, as growth over
// the empty server per field stored.
type hashMemoryResult struct {
	Server       string  `json:"server"`
	Keys         int     `json:"keys"`
	Fields       int     `json:"fields_per_key"`
	Encoding     string  `json:"encoding"`
	RawBytes     int64   `json:"raw_bytes"`
	RSSBytes     int64   `json:"rss_growth_bytes"`
	UsedBytes    int64   `json:"used_memory_growth_bytes"`
	RSSPerField  float64 `json:"rss_per_field"`
	UsedPerField float64 `json:"used_memory_per_field"`
}

// measureHashMemory runs every layout against a fresh pair of servers.
func measureHashMemory(ctx context.Context, o memoryOptions, dir string) ([]hashMemoryResult, error) {
	var results []hashMemoryResult
	for _, l := range hashLayouts {
		err := onFreshServers(ctx, o, dir, fmt.Sprintf("%d hashes", l.keys), func(t *target) error {
			r, err := hashMemoryOf(ctx, t, l.keys, l.fields)
			results = append(results, r)
			return err
		})
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// hashMemoryOf stores keys hashes of fields fields each ("field:J" =
// "value:K:J", 1000 fields per HSET) and measures the growth of t's memory.
func hashMemoryOf(ctx context.Context, t *target, keys, fields int) (hashMemoryResult, error) {
	r := hashMemoryResult{Server: t.Name, Keys: keys, Fields: fields}
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return r, err
	}
	defer c.Close()
	rss0, used0, err := settleMemory(t, c, hashSettle)
	if err != nil {
		return r, err
	}
	for k := range keys {
		key := fmt.Sprintf("hash:%d", k)
		for start := 0; start < fields; start += 1000 {
			args := []string{"HSET", key}
			for j := start; j < min(start+1000, fields); j++ {
				f, v := fmt.Sprintf("field:%d", j), fmt.Sprintf("value:%d:%d", k, j)
				args = append(args, f, v)
				r.RawBytes += int64(len(f) + len(v))
			}
			if line, err := c.Do(args...); err != nil || !strings.HasPrefix(line, ":") {
				return r, fmt.Errorf("HSET %s: %q %v", key, line, err)
			}
		}
	}
	if r.Encoding, err = c.DoBulk("OBJECT", "ENCODING", "hash:0"); err != nil {
		return r, err
	}
	rss1, used1, err := settleMemory(t, c, hashSettle)
	if err != nil {
		return r, err
	}
	n := float64(keys * fields)
	r.RSSBytes, r.UsedBytes = rss1-rss0, used1-used0
	r.RSSPerField, r.UsedPerField = float64(r.RSSBytes)/n, float64(r.UsedBytes)/n
	return r, nil
}

func writeHashMemoryTable(out io.Writer, results []hashMemoryResult) error {
	fmt.Fprintf(out, "%9s  %6s  %7s  %9s  %10s  %12s  %13s\n",
		"server", "keys", "fields", "encoding", "raw/field", "RSS/field", "used/field")
	for _, r := range results {
		fmt.Fprintf(out, "%9s  %6d  %7d  %9s  %10.1f  %12.1f  %13.1f\n", r.Server, r.Keys, r.Fields, r.Encoding,
			float64(r.RawBytes)/float64(r.Keys*r.Fields), r.RSSPerField, r.UsedPerField)
	}
	return nil
}
