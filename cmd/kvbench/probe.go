package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/kvserver/kvserver/grouping"
)

// probeResult compares one KVC.PROBE of N keys with the N sequential
// EXISTS round trips an LMCache client sends for the same lookup.
type probeResult struct {
	Keys         int     `json:"keys"`
	Rounds       int     `json:"rounds"`
	ProbeMicros  float64 `json:"probe_us_median"`
	ExistsMicros float64 `json:"sequential_exists_us_median"`
	Speedup      float64 `json:"speedup"`
	ProbeCount   string  `json:"probe_reply"`
}

// runProbe measures the prefix lookup both ways against one kvserver.
func runProbe(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("probe", "[--keys 256] [--rounds 31] [--json]", `
Starts kvserver alone and times one KVC.PROBE of --keys chunk keys against the
--keys sequential EXISTS round trips an LMCache client sends for the same
prefix lookup; medians over --rounds and the speedup are reported.`)
	keys := fs.Int("keys", 256, "chunk keys in the prefix")
	rounds := fs.Int("rounds", 31, "alternating rounds; medians are reported")
	kvBin := fs.String("kvserver", "", "kvserver binary (default: build ./cmd/kvserver)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tmp, bin, err := workDir(ctx, "kvbench-probe-", *kvBin)
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	*kvBin = bin
	kv, err := startKVServer(ctx, *kvBin, tmp+"/kv", "1gb")
	if err != nil {
		return err
	}
	defer kv.Stop()
	c, err := dialBench(ctx, kv.Addr)
	if err != nil {
		return err
	}
	defer c.Close()
	names := make([]string, *keys)
	for i := range names {
		names[i] = fmt.Sprintf("llama@1@0@%064x@bfloat16", i) + grouping.MetadataSuffix
		if err := c.Set(names[i], make([]byte, 28)); err != nil {
			return err
		}
	}
	probeArgs := append([]string{"KVC.PROBE"}, names...)
	var probeTimes, existsTimes []float64
	res := probeResult{Keys: *keys, Rounds: *rounds}
	for r := 0; r < *rounds; r++ {
		start := time.Now()
		line, err := c.Do(probeArgs...)
		if err != nil {
			return err
		}
		probeTimes = append(probeTimes, float64(time.Since(start).Microseconds()))
		res.ProbeCount = line
		start = time.Now()
		for _, k := range names {
			line, err := c.Do("EXISTS", k)
			if err != nil {
				return err
			}
			if line != ":1" {
				return fmt.Errorf("EXISTS %s = %q", k, line)
			}
		}
		existsTimes = append(existsTimes, float64(time.Since(start).Microseconds()))
	}
	if res.ProbeCount != ":"+strconv.Itoa(*keys) {
		return fmt.Errorf("KVC.PROBE answered %s, want :%d", res.ProbeCount, *keys)
	}
	res.ProbeMicros, res.ExistsMicros = median(probeTimes), median(existsTimes)
	res.Speedup = res.ExistsMicros / res.ProbeMicros
	if *asJSON {
		return json.NewEncoder(out).Encode(res)
	}
	_, err = fmt.Fprintf(out, "prefix of %d keys, %d rounds (medians)\n  KVC.PROBE:           %8.0f us\n  sequential EXISTS:   %8.0f us\n  speedup:             %8.1fx\n",
		res.Keys, res.Rounds, res.ProbeMicros, res.ExistsMicros, res.Speedup)
	return err
}
