// Command kvbench measures kvserver against Debian's redis-server on the
// same machine, side by side in one run.
//
// Usage:
//
//	kvbench compare [--sizes 4mb,32mb] [--conns 8] [--rounds 5] [--json]
//	kvbench trace [--traces synthetic,conversation] [--maxmemory 64mb] [--json]
//	kvbench probe [--keys 256] [--json]
//
// compare starts both servers itself (building ./cmd/kvserver unless
// --kvserver names a binary), alternates which one goes first in each
// round, and reports the median SET and GET throughput of each and their
// ratio. Absolute figures on a shared machine are noise; the ratio is the
// result.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "compare":
		err = runCompare(ctx, os.Args[2:], os.Stdout)
	case "trace":
		err = runTrace(ctx, os.Args[2:], os.Stdout)
	case "probe":
		err = runProbe(ctx, os.Args[2:], os.Stdout)
	case "-h", "--help", "help":
		usage()
		return
	default:
		fmt.Fprintf(os.Stderr, "kvbench: unknown command %q\n", os.Args[1])
		usage()
		os.Exit(2)
	}
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
  compare   SET/GET throughput of kvserver vs redis-server, side by side
            (kvbench compare --help for flags)
  trace     replay the Mooncake traces (../shared/data/mooncake) against both
            with the same maxmemory; block hit rates beside the ideal
  probe     one KVC.PROBE of 256 keys vs 256 sequential EXISTS (latency ratio)`)
}
