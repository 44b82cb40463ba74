package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// elementType is one collection type kvbench elements can fill: the
// command that adds elements first..first+n-1 to key (or, for a type
// whose command adds one element, addOne's command for element i), and
// what the element count of a key is read with.
type elementType struct {
	add    func(key string, first, n int) []string
	addOne func(key string, i int) []string
	count  string
}

// commands are the commands that add elements first..first+n-1 to key.
func (et elementType) commands(key string, first, n int) [][]string {
	if et.addOne == nil {
		return [][]string{et.add(key, first, n)}
	}
	cmds := make([][]string, n)
	for i := range cmds {
		cmds[i] = et.addOne(key, first+i)
	}
	return cmds
}

// elementTypes are the collection types measured; a family adds its row.
var elementTypes = map[string]elementType{
	"zset": {
		add: func(key string, first, n int) []string {
			cmd := []string{"ZADD", key}
			for i := first; i < first+n; i++ {
				cmd = append(cmd, strconv.FormatFloat(float64(i)*1.5, 'g', -1, 64), fmt.Sprintf("member:%06d", i))
			}
			return cmd
		},
		count: "ZCARD",
	},
	"list": {
		add: func(key string, first, n int) []string {
			cmd := []string{"RPUSH", key}
			for i := first; i < first+n; i++ {
				cmd = append(cmd, fmt.Sprintf("member:%06d", i))
			}
			return cmd
		},
		count: "LLEN",
	},
	// Sets of the same 13-byte strings (hashtables, as Redis 7.0 has no
	// listpack sets), and of integers (intsets while 100 to a key).
	"set": {
		add: func(key string, first, n int) []string {
			cmd := []string{"SADD", key}
			for i := first; i < first+n; i++ {
				cmd = append(cmd, fmt.Sprintf("member:%06d", i))
			}
			return cmd
		},
		count: "SCARD",
	},
	"intset": {
		add: func(key string, first, n int) []string {
			cmd := []string{"SADD", key}
			for i := first; i < first+n; i++ {
				cmd = append(cmd, strconv.Itoa(i))
			}
			return cmd
		},
		count: "SCARD",
	},
	// Stream entries of one field and a 13-byte value, IDs one
	// millisecond apart.
	"stream": {
		addOne: func(key string, i int) []string {
			return []string{"XADD", key, fmt.Sprintf("%d-1", 1+i), "member", fmt.Sprintf("member:%06d", i)}
		},
		count: "XLEN",
	},
}

// elementLayouts are how the elements are spread: many small collections
// (Redis's compact encodings) and one big one.
var elementLayouts = []struct {
	name    string
	perKey  func(total int) int
	batchOf int
}{
	{"many keys x 100", func(int) int { return 100 }, 100},
	{"one key", func(total int) int { return total }, 1000},
}

// elementsResult is one server's memory growth for one type and layout.
type elementsResult struct {
	Server       string  `json:"server"`
	Type         string  `json:"type"`
	Layout       string  `json:"layout"`
	Keys         int     `json:"keys"`
	Elements     int     `json:"elements"`
	Encoding     string  `json:"encoding"`
	RSSPerElem   float64 `json:"rss_bytes_per_element"`
	UsedPerElem  float64 `json:"used_memory_bytes_per_element"`
	RSSGrowth    int64   `json:"rss_growth_bytes"`
	UsedGrowth   int64   `json:"used_memory_growth_bytes"`
	ElementBytes int     `json:"member_bytes"`
}

// elementsOptions are the flags of kvbench elements.
type elementsOptions struct {
	types    []string
	elements int
	redisBin string
	kvBin    string
}

func parseElementsFlags(args []string) (elementsOptions, bool, error) {
	fs := newFlagSet("elements", "[--types zset,list,set,intset,stream] [--elements 100000] [--json]", `
Starts a fresh redis-server and kvserver per collection type and layout,
adds --elements elements (13-byte members) either as many collections of
100 (small: Redis's listpack) or as one collection, and reports each
process's growth in resident memory and in its own used_memory, per
element.`)
	types := fs.String("types", "zset", "comma-separated collection types: zset, list, set, intset, stream")
	elements := fs.Int("elements", 100000, "elements per type and layout")
	redisBin := fs.String("redis", "redis-server", "redis-server binary")
	kvBin := fs.String("kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
	asJSON := fs.Bool("json", false, "print JSON lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return elementsOptions{}, false, err
	}
	o := elementsOptions{types: strings.Split(*types, ","), elements: *elements, redisBin: *redisBin, kvBin: *kvBin}
	for _, t := range o.types {
		if _, ok := elementTypes[t]; !ok {
			return o, false, fmt.Errorf("--types: unknown collection type %q", t)
		}
	}
	if o.elements < 100 || o.elements%100 != 0 {
		return o, false, fmt.Errorf("--elements %d: want a positive multiple of 100", o.elements)
	}
	return o, *asJSON, nil
}

// runElements measures bytes per collection element of both servers.
func runElements(ctx context.Context, args []string, out io.Writer) error {
	o, asJSON, err := parseElementsFlags(args)
	if err != nil {
		return err
	}
	tmp, bin, err := workDir(ctx, "kvbench-elements-", o.kvBin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.kvBin = bin
	var results []elementsResult
	for _, typ := range o.types {
		for li := range elementLayouts {
			for i, start := range []func(ctx context.Context, bin, dir, maxMemory string) (*target, error){startRedis, startKVServer} {
				bin := o.redisBin
				if i == 1 {
					bin = o.kvBin
				}
				sub := filepath.Join(tmp, fmt.Sprintf("%s-%d-%d", typ, li, i))
				if err := os.MkdirAll(sub, 0o755); err != nil {
					return err
				}
				t, err := start(ctx, bin, sub, "4gb")
				if err != nil {
					return err
				}
				r, err := elementsOf(ctx, t, typ, li, o.elements)
				t.Stop()
				os.RemoveAll(sub)
				if err != nil {
					return fmt.Errorf("%s, %s %s: %w", t.Name, typ, elementLayouts[li].name, err)
				}
				results = append(results, r)
			}
		}
	}
	if asJSON {
		return writeJSONLines(out, results)
	}
	fmt.Fprintf(out, "%9s  %5s  %16s  %6s  %9s  %10s  %11s\n", "server", "type", "layout", "keys", "encoding", "RSS B/elem", "used B/elem")
	for _, r := range results {
		fmt.Fprintf(out, "%9s  %5s  %16s  %6d  %9s  %10.1f  %11.1f\n", r.Server, r.Type, r.Layout, r.Keys, r.Encoding, r.RSSPerElem, r.UsedPerElem)
	}
	return nil
}

// elementsOf fills t with total elements of typ in layout li and measures
// its memory growth.
func elementsOf(ctx context.Context, t *target, typ string, li, total int) (elementsResult, error) {
	c, err := dialBench(ctx, t.Addr)
	if err != nil {
		return elementsResult{}, err
	}
	defer c.Close()
	et, lay := elementTypes[typ], elementLayouts[li]
	rss0, used0, err := settleMemory(t, c, 3*time.Second)
	if err != nil {
		return elementsResult{}, err
	}
	perKey := lay.perKey(total)
	keys := total / perKey
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("%s:%d", typ, k)
		for first := 0; first < perKey; first += lay.batchOf {
			for _, cmd := range et.commands(key, k*perKey+first, min(lay.batchOf, perKey-first)) {
				if _, err := c.Do(cmd...); err != nil {
					return elementsResult{}, err
				}
			}
		}
	}
	key0 := typ + ":0"
	if n, err := c.Do(et.count, key0); err != nil || n != ":"+strconv.Itoa(perKey) {
		return elementsResult{}, fmt.Errorf("%s %s = %q %v, want %d", et.count, key0, n, err, perKey)
	}
	enc, err := c.DoBulk("OBJECT", "ENCODING", key0)
	if err != nil {
		return elementsResult{}, err
	}
	rss1, used1, err := settleMemory(t, c, 3*time.Second)
	if err != nil {
		return elementsResult{}, err
	}
	return elementsResult{
		Server: t.Name, Type: typ, Layout: lay.name, Keys: keys, Elements: total, Encoding: enc,
		RSSGrowth: rss1 - rss0, UsedGrowth: used1 - used0,
		RSSPerElem: float64(rss1-rss0) / float64(total), UsedPerElem: float64(used1-used0) / float64(total),
		ElementBytes: len("member:000000"),
	}, nil
}
