package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// fanoutResult is PUBLISH fan-out on both servers: one publisher, many
// subscribers of one channel, messages delivered per second (each message
// counted once per subscriber that received it).
type fanoutResult struct {
	Subscribers int       `json:"subscribers"`
	Messages    int       `json:"messages"`
	Size        int       `json:"size"`
	Pipeline    int       `json:"pipeline"`
	Rounds      int       `json:"rounds"`
	Redis       []float64 `json:"redis_deliveries_per_s"`
	KV          []float64 `json:"kvserver_deliveries_per_s"`
	RedisMedian float64   `json:"redis_median"`
	KVMedian    float64   `json:"kvserver_median"`
	Ratio       float64   `json:"ratio"`
	// RedisCPU and KVCPU are each round's server CPU time (user plus
	// system) per delivery, in microseconds: steadier than the rates on
	// a shared machine.
	RedisCPU       []float64 `json:"redis_cpu_us_per_delivery"`
	KVCPU          []float64 `json:"kvserver_cpu_us_per_delivery"`
	RedisCPUMedian float64   `json:"redis_cpu_median"`
	KVCPUMedian    float64   `json:"kvserver_cpu_median"`
}

// runFanout measures PUBLISH fan-out against both servers in alternating
// rounds.
func runFanout(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("fanout", "[--subscribers 100] [--messages 5000] [--size 64] [--pipeline 32] [--rounds 5] [--json]", `
Starts redis-server and kvserver; in each round, on each server (alternating
which goes first), --subscribers connections SUBSCRIBE to one channel and one
publisher sends --messages PUBLISHes of --size bytes, --pipeline at a time.
A round ends when every subscriber has read every message; its figure is
deliveries per second (messages x subscribers / elapsed). Medians and the
kvserver/redis ratio are reported.`)
	var pair pairOptions
	pair.define(fs)
	subs := fs.Int("subscribers", 100, "subscriber connections")
	msgs := fs.Int("messages", 5000, "messages per round")
	size := fs.Int("size", 64, "message payload bytes")
	pipeline := fs.Int("pipeline", 32, "PUBLISHes in flight")
	rounds := fs.Int("rounds", 5, "alternating rounds; medians are reported")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	pair.maxMemory = "1gb"
	res, err := onPair(ctx, &pair, func(p *serverPair) (fanoutResult, error) {
		res := fanoutResult{Subscribers: *subs, Messages: *msgs, Size: *size, Pipeline: *pipeline, Rounds: *rounds}
		for r := range *rounds {
			for _, t := range p.order(r) {
				var rate float64
				use, err := serverCPU(ctx, t, func() (err error) {
					rate, err = fanoutRound(ctx, t.Addr, *subs, *msgs, *size, *pipeline)
					return err
				})
				if err != nil {
					return res, fmt.Errorf("%s: %w", t.Name, err)
				}
				perDelivery := use.Seconds / float64(*subs**msgs) * 1e6
				if t == p.kv {
					res.KV = append(res.KV, rate)
					res.KVCPU = append(res.KVCPU, perDelivery)
				} else {
					res.Redis = append(res.Redis, rate)
					res.RedisCPU = append(res.RedisCPU, perDelivery)
				}
			}
		}
		res.RedisMedian, res.KVMedian = median(res.Redis), median(res.KV)
		res.Ratio = res.KVMedian / res.RedisMedian
		res.RedisCPUMedian, res.KVCPUMedian = median(res.RedisCPU), median(res.KVCPU)
		return res, nil
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(out).Encode(res)
	}
	_, err = fmt.Fprintf(out, "PUBLISH fan-out: 1 publisher, %d subscribers, %d messages of %d bytes, pipeline %d, %d rounds (medians)\n"+
		"  redis-server: %12.0f deliveries/s %8.3f µs CPU/delivery\n  kvserver:     %12.0f deliveries/s %8.3f µs CPU/delivery\n  ratio:        %12.2fx\n",
		res.Subscribers, res.Messages, res.Size, res.Pipeline, res.Rounds, res.RedisMedian, res.RedisCPUMedian, res.KVMedian, res.KVCPUMedian, res.Ratio)
	return err
}

// fanoutRound runs one round against addr and returns deliveries per
// second.
func fanoutRound(ctx context.Context, addr string, subs, msgs, size, pipeline int) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	conns := make([]*benchConn, subs)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		c, err := dialBench(ctx, addr)
		if err != nil {
			return 0, err
		}
		conns[i] = c
		if _, err := c.Do("SUBSCRIBE", "fanout"); err != nil {
			return 0, err
		}
	}
	pub, err := dialBench(ctx, addr)
	if err != nil {
		return 0, err
	}
	defer pub.Close()
	// Every subscriber must be registered before the clock starts.
	if n, err := pub.Do("PUBSUB", "NUMSUB", "fanout"); err != nil || !strings.HasPrefix(n, "*2") {
		return 0, fmt.Errorf("PUBSUB NUMSUB: %q, %v", n, err)
	}
	payload := strings.Repeat("m", size)
	var wg sync.WaitGroup
	errs := make(chan error, subs+1)
	start := time.Now()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			go func() { <-ctx.Done(); c.conn.SetReadDeadline(time.Unix(1, 0)) }()
			for range msgs {
				raw, _, err := c.rd.ReadReply(c.raw[:0])
				c.raw = raw
				if err != nil {
					errs <- fmt.Errorf("subscriber: %w", err)
					return
				}
			}
		}()
	}
	for sent := 0; sent < msgs; {
		n := min(pipeline, msgs-sent)
		for range n {
			pub.out.Add("PUBLISH", "fanout", payload)
		}
		if err := pub.flush("PUBLISH"); err != nil {
			return 0, err
		}
		for range n {
			raw, rep, err := pub.rd.ReadReply(pub.raw[:0])
			pub.raw = raw
			if err != nil {
				return 0, fmt.Errorf("PUBLISH reply: %w", err)
			}
			if rep.Int != int64(subs) {
				return 0, fmt.Errorf("PUBLISH reached %d subscribers, want %d", rep.Int, subs)
			}
		}
		sent += n
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, err
	default:
	}
	return float64(subs*msgs) / elapsed.Seconds(), nil
}
