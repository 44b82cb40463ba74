package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/kvserver/kvserver/respclient"
)

// evalshaScript is a small script of the kind lock libraries run: redis-py's
// Lock.extend checks the token, then moves the expiry.
const evalshaScript = `local v = redis.call('get', KEYS[1])
if v == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0`

// evalshaResult compares EVALSHA throughput of the two servers.
type evalshaResult struct {
	Conns    int     `json:"conns"`
	Pipeline int     `json:"pipeline"`
	Rounds   int     `json:"rounds"`
	RedisOps float64 `json:"redis_ops_per_sec"`
	KVOps    float64 `json:"kvserver_ops_per_sec"`
	Ratio    float64 `json:"ratio"`
}

// runEvalSHA measures EVALSHA of a small script against both servers.
func runEvalSHA(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("evalsha", "[--conns 8] [--pipeline 16] [--seconds 2] [--rounds 5] [--json]", `
Starts Debian's redis-server and kvserver side by side and measures EVALSHA
of a small script (redis-py Lock.extend's shape: GET, compare, PEXPIRE) on
--conns connections, --pipeline requests in flight on each, for --seconds per
phase. Rounds alternate which server goes first; medians of ops/s and the
kvserver/redis ratio are reported.`)
	conns := fs.Int("conns", 8, "connections")
	pipeline := fs.Int("pipeline", 16, "EVALSHA requests in flight per connection")
	seconds := fs.Float64("seconds", 2, "length of one phase")
	rounds := fs.Int("rounds", 5, "alternating rounds; medians are reported")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	var o pairOptions
	o.define(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	res, err := onPair(ctx, &o, func(pair *serverPair) (evalshaResult, error) {
		res := evalshaResult{Conns: *conns, Pipeline: *pipeline, Rounds: *rounds}
		ops := map[string][]float64{}
		for r := 0; r < *rounds; r++ {
			for _, t := range pair.order(r) {
				n, err := evalshaPhase(ctx, t.Addr, *conns, *pipeline, time.Duration(*seconds*float64(time.Second)))
				if err != nil {
					return res, fmt.Errorf("%s: %w", t.Name, err)
				}
				ops[t.Name] = append(ops[t.Name], n)
			}
		}
		res.RedisOps, res.KVOps = median(ops[pair.redis.Name]), median(ops[pair.kv.Name])
		res.Ratio = res.KVOps / res.RedisOps
		return res, nil
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(out).Encode(res)
	}
	_, err = fmt.Fprintf(out, "EVALSHA of a small script, %d conns, pipeline %d, %d rounds (medians)\n  redis-server: %10.0f ops/s\n  kvserver:     %10.0f ops/s\n  ratio:        %10.2f\n",
		res.Conns, res.Pipeline, res.Rounds, res.RedisOps, res.KVOps, res.Ratio)
	return err
}

// evalshaPhase loads the script on the server at addr and runs EVALSHA of
// it from conns connections for d; it returns the operations per second.
func evalshaPhase(ctx context.Context, addr string, conns, pipeline int, d time.Duration) (float64, error) {
	c, err := dialBench(ctx, addr)
	if err != nil {
		return 0, err
	}
	sha, err := c.DoBulk("SCRIPT", "LOAD", evalshaScript)
	c.Close()
	if err != nil {
		return 0, fmt.Errorf("SCRIPT LOAD: %w", err)
	}
	var wg sync.WaitGroup
	counts := make([]int, conns)
	errs := make([]error, conns)
	start := time.Now()
	deadline := start.Add(d)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i], errs[i] = evalshaLoop(ctx, addr, sha, fmt.Sprintf("kvbench:lock:%d", i), pipeline, deadline)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	total := 0
	for i := range conns {
		if errs[i] != nil {
			return 0, errs[i]
		}
		total += counts[i]
	}
	return float64(total) / elapsed, nil
}

// evalshaLoop sends batches of pipeline EVALSHA calls on one connection
// until deadline and returns how many it completed.
func evalshaLoop(ctx context.Context, addr, sha, key string, pipeline int, deadline time.Time) (int, error) {
	var dl net.Dialer
	conn, err := dl.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	rd := respclient.NewReader(conn, 0)
	var b respclient.Batch
	b.Add("SET", key, "token")
	if err := b.Flush(conn); err != nil {
		return 0, err
	}
	if err := rd.ReadOK(); err != nil {
		return 0, err
	}
	var raw []byte
	n := 0
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for range pipeline {
			b.Add("EVALSHA", sha, "1", key, "token", "60000")
		}
		if err := b.Flush(conn); err != nil {
			return n, err
		}
		for range pipeline {
			var rep respclient.Reply
			raw, rep, err = rd.ReadReply(raw[:0])
			if err != nil {
				return n, err
			}
			if rep.Type != ':' || rep.Int != 1 {
				return n, fmt.Errorf("EVALSHA answered %.80q", rep.Raw)
			}
			n++
		}
	}
	return n, nil
}
