// Command kvbench measures kvserver against Debian's redis-server on the
// same machine, side by side in one run.
//
// Usage:
//
//	kvbench compare [--sizes 4kb,1mb,32mb] [--conns 1,8,64] [--pipeline 16] [--rounds 3] [--json]
//	kvbench users [--rounds 3] [--conns 8,50] [--sizes 1mb,4mb,32mb] [--json]
//	kvbench types [--rounds 3] [--conns 50] [--pipeline 1] [--requests 100000]
//	kvbench lmcache [--chunk 16mb] [--chunks 32] [--conns 8] [--json]
//	kvbench limit [--seconds 2] [--json]
//	kvbench report [--out BENCHMARKS.md] [--chart docs/throughput.png] [--json]
//	kvbench trace [--traces synthetic,conversation] [--maxmemory 64mb] [--json]
//	kvbench probe [--keys 256] [--json]
//	kvbench disk [--sizes 1mb,32mb] [--total 1gb] [--json]
//	kvbench memory [--sizes 1mb,32mb] [--total 1gb] [--hashes] [--zsets] [--json]
//	kvbench elements [--types zset,list,set,intset,stream] [--elements 100000] [--json]
//	kvbench gpuinfo [--json]
//	kvbench layerwise [--addr HOST:PORT] [--layers 32] [--chunks 4] [--json]
//	kvbench fanout [--subscribers 100] [--messages 5000] [--size 64] [--rounds 5] [--json]
//	kvbench evalsha [--conns 8] [--pipeline 16] [--seconds 2] [--rounds 5] [--json]
//	kvbench sink --port N
//
// compare, users, lmcache and report start both servers themselves (building
// ./cmd/kvserver unless --kvserver names a binary), alternate which one goes
// first in each round, and report medians and the kvserver/redis ratio.
// Absolute figures on a shared machine are noise; the ratio is the result.
// limit measures what the machine allows (loopback TCP, memcpy) so that the
// figures can be read as a fraction of it; sink serves the copy floor that
// users measures beside both servers (a server that stores nothing).
// report writes BENCHMARKS.md and docs/throughput.png, which must not be
// edited by hand.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// commandFunc runs one subcommand with its arguments, printing to out.
type commandFunc func(ctx context.Context, args []string, out io.Writer) error

// commandTable maps each subcommand to its entry point.
func commandTable() map[string]commandFunc {
	return map[string]commandFunc{
		"compare":   runCompare,
		"users":     runUsers,
		"types":     runTypes,
		"lmcache":   runLMCache,
		"limit":     runLimit,
		"report":    runReport,
		"trace":     runTrace,
		"probe":     runProbe,
		"disk":      runDisk,
		"memory":    runMemory,
		"elements":  runElements,
		"gpuinfo":   runGPUInfo,
		"layerwise": runLayerwise,
		"fanout":    runFanout,
		"evalsha":   runEvalSHA,
		"sink":      runSink,
	}
}

func main() {
	commands := commandTable()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	switch name {
	case "-h", "--help", "help":
		usage()
		return
	}
	run, ok := commands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kvbench: unknown command %q\n", name)
		usage()
		os.Exit(2)
	}
	err := run(ctx, os.Args[2:], os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kvbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: kvbench <command> [flags]

commands:
  compare   SET/GET throughput (GB/s and ops/s) of kvserver vs redis-server,
            side by side, over value sizes, connection counts and pipelining
  users     as users measure it: redis-benchmark and go-redis against both,
            with server CPU per operation and per GB (from /proc), p50/p99,
            Unix socket throughput, the SET storm on a fresh server, idle RSS
  types     HSET/HGET, LPUSH/LPOP, SADD/SPOP, ZADD/ZRANGE/ZPOPMIN (redis-benchmark)
            and MULTI of 10 SETs (go-redis) against both, ops/s and CPU/op ratios
  lmcache   LMCache's store / EXISTS-walk lookup / retrieve pattern with
            16 MiB chunks against both
  limit     this machine's loopback TCP (1 and 8 streams) and memcpy GB/s
  report    run limit, a reduced compare, lmcache and memory; write BENCHMARKS.md
            and docs/throughput.png (generated files: do not edit by hand)
  trace     replay the Mooncake traces (../shared/data/mooncake) against both
            with the same maxmemory; block hit rates beside the ideal
  probe     one KVC.PROBE of 256 keys vs 256 sequential EXISTS (latency ratio)
  disk      the disk tier's Put/Get vs plain file write+fdatasync and cold reads, same disk, same run
  memory    memory growth per stored byte (RSS and used_memory) of both, fresh servers per size
  elements  bytes per element of collections (sorted sets, lists, sets, streams) in many small keys and in one big one
  gpuinfo   NVIDIA GPUs, memory and PCIe link (NVML); "no NVIDIA driver" and exit 0 without one
  layerwise gpuclient's layer-wise store and load of a 32-layer chunk set through one
            server (CPU device): sequential vs pipelined with compute = load time
  fanout    PUBLISH fan-out, 1 publisher to 100 subscribers, deliveries/s of both
  evalsha   EVALSHA of a small (lock-extend) script against both, alternating rounds, ratio

Every command takes --json and --help (kvbench <command> --help).`)
}
