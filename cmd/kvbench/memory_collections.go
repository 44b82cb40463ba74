package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// collectionKind is a composite type kvbench memory measures per element
// (--hashes, --zsets): the command that adds elements and what element j
// of key k is.
type collectionKind struct {
	name    string // the key prefix and the row's type
	command string
	// element returns the two arguments of element j of key k (field and
	// value, score and member) and the raw bytes they stand for.
	element func(k, j int) (a, b string, raw int)
}

// hashKind stores "field:J" = "value:K:J": about 20 bytes of field and
// value.
var hashKind = collectionKind{name: "hash", command: "HSET", element: func(k, j int) (string, string, int) {
	f, v := fmt.Sprintf("field:%d", j), fmt.Sprintf("value:%d:%d", k, j)
	return f, v, len(f) + len(v)
}}

// zsetKind stores members "member:K:J" with integer scores in an order
// unrelated to the members' (J*7919 mod 100003), so that a big set grows
// by inserts all over it, not only at its end; the raw bytes are the
// member's and 8 for the score.
var zsetKind = collectionKind{name: "zset", command: "ZADD", element: func(k, j int) (string, string, int) {
	m := fmt.Sprintf("member:%d:%d", k, j)
	return strconv.Itoa(j * 7919 % 100003), m, len(m) + 8
}}

// collectionLayouts are how kvbench memory --hashes or --zsets spreads
// 100,000 short elements: in small collections, which both servers keep
// as listpacks, and in one big one (a hashtable, a skiplist).
var collectionLayouts = []struct{ keys, elements int }{{1000, 100}, {1, 100000}}

// collectionSettle is how long the measurement waits before reading
// memory: kvserver writes the collections behind to its disk tier after
// 2 s and hands the garbage of that back to the system once idle 2 s
// later.
const collectionSettle = 10 * time.Second

// collectionMemoryResult is what one server holds for one layout, as
// growth over the empty server per element stored.
type collectionMemoryResult struct {
	Server         string  `json:"server"`
	Type           string  `json:"type"`
	Keys           int     `json:"keys"`
	Elements       int     `json:"elements_per_key"`
	Encoding       string  `json:"encoding"`
	RawBytes       int64   `json:"raw_bytes"`
	RSSBytes       int64   `json:"rss_growth_bytes"`
	UsedBytes      int64   `json:"used_memory_growth_bytes"`
	RSSPerElement  float64 `json:"rss_per_element"`
	UsedPerElement float64 `json:"used_memory_per_element"`
}

// measureCollectionMemory runs every layout of kind against a fresh pair
// of servers.
func measureCollectionMemory(ctx context.Context, o memoryOptions, dir string, kind collectionKind) ([]collectionMemoryResult, error) {
	var results []collectionMemoryResult
	for _, l := range collectionLayouts {
		err := onFreshServers(ctx, o, dir, fmt.Sprintf("%d %ss", l.keys, kind.name), func(t *target) error {
			r, err := collectionMemoryOf(ctx, t, kind, l.keys, l.elements)
			results = append(results, r)
			return err
		})
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// collectionMemoryOf stores keys collections of kind with elements
// elements each (1000 per command) and measures the growth of t's memory.
func collectionMemoryOf(ctx context.Context, t *target, kind collectionKind, keys, elements int) (collectionMemoryResult, error) {
	r := collectionMemoryResult{Server: t.Name, Type: kind.name, Keys: keys, Elements: elements}
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return r, err
	}
	defer c.Close()
	rss0, used0, err := settleMemory(t, c, collectionSettle)
	if err != nil {
		return r, err
	}
	for k := range keys {
		key := fmt.Sprintf("%s:%d", kind.name, k)
		for start := 0; start < elements; start += 1000 {
			args := []string{kind.command, key}
			for j := start; j < min(start+1000, elements); j++ {
				a, b, raw := kind.element(k, j)
				args = append(args, a, b)
				r.RawBytes += int64(raw)
			}
			if line, err := c.Do(args...); err != nil || !strings.HasPrefix(line, ":") {
				return r, fmt.Errorf("%s %s: %q %v", kind.command, key, line, err)
			}
		}
	}
	if r.Encoding, err = c.DoBulk("OBJECT", "ENCODING", kind.name+":0"); err != nil {
		return r, err
	}
	rss1, used1, err := settleMemory(t, c, collectionSettle)
	if err != nil {
		return r, err
	}
	n := float64(keys * elements)
	r.RSSBytes, r.UsedBytes = rss1-rss0, used1-used0
	r.RSSPerElement, r.UsedPerElement = float64(r.RSSBytes)/n, float64(r.UsedBytes)/n
	return r, nil
}

func writeCollectionMemoryTable(out io.Writer, results []collectionMemoryResult) error {
	fmt.Fprintf(out, "%9s  %5s  %6s  %8s  %9s  %8s  %11s  %12s\n",
		"server", "type", "keys", "elements", "encoding", "raw/elem", "RSS/element", "used/element")
	for _, r := range results {
		fmt.Fprintf(out, "%9s  %5s  %6d  %8d  %9s  %8.1f  %11.1f  %12.1f\n", r.Server, r.Type, r.Keys, r.Elements, r.Encoding,
			float64(r.RawBytes)/float64(r.Keys*r.Elements), r.RSSPerElement, r.UsedPerElement)
	}
	return nil
}
