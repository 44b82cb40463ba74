package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kvserver/kvserver/config"
)

// newFlagSet returns a flag set whose --help prints the subcommand's
// synopsis and what it measures above the flag defaults. Parse returns
// flag.ErrHelp after printing it, which main treats as success.
func newFlagSet(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: kvbench %s %s\n\n%s\n\nflags:\n", name, synopsis, strings.TrimSpace(about))
		fs.PrintDefaults()
	}
	return fs
}

// parseNoArgs parses args into fs and rejects positional arguments.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseSizeList parses a comma-separated list of sizes in Redis syntax
// (4kb,1mb); every size must be positive.
func parseSizeList(flagName, s string) ([]int64, error) {
	var out []int64
	for _, f := range strings.Split(s, ",") {
		n, err := parseSize(flagName, strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// parseCountList parses a comma-separated list of positive integers.
func parseCountList(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--%s: bad count %q", flagName, f)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseSize parses one positive size in Redis syntax.
func parseSize(flagName, s string) (int64, error) {
	n, err := config.ParseSize(s)
	if err != nil {
		return 0, fmt.Errorf("--%s: %w", flagName, err)
	}
	if n < 1 {
		return 0, fmt.Errorf("--%s: size %q must be positive", flagName, s)
	}
	return n, nil
}

// writeJSONLines writes one JSON object per line (--json output).
func writeJSONLines[T any](out io.Writer, items []T) error {
	enc := json.NewEncoder(out)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return nil
}
