package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// runUsers is the users subcommand: the third-party-client measurements
// on a fresh pair, printed as tables or JSON lines.
func runUsers(ctx context.Context, args []string, out io.Writer) error {
	o, err := parseUsersFlags(args)
	if err != nil {
		return err
	}
	res, err := onPair(ctx, &o.pairOptions, func(pair *serverPair) (usersResult, error) {
		return measureUsers(ctx, o, pair, func(format string, a ...any) {
			fmt.Fprintf(os.Stderr, "kvbench users: %s\n", fmt.Sprintf(format, a...))
		})
	})
	if err != nil {
		return err
	}
	if o.jsonOutput {
		return writeJSONLines(out, []usersResult{res})
	}
	return printUsers(out, res)
}

// printUsers writes the users tables as aligned text.
func printUsers(out io.Writer, res usersResult) error {
	type printed struct {
		tab  userTable
		rows []userRow
	}
	var tables []printed
	for _, tab := range userTables {
		tables = append(tables, printed{tab, res.Rows})
	}
	if floored := flooredRows(res.Rows); len(floored) > 0 {
		tables = append(tables, printed{floorTable, floored})
	}
	for _, t := range tables {
		tab := t.tab
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, strings.Join(tab.columns, "\t")+"\t")
		for _, r := range t.rows {
			fmt.Fprintln(tw, strings.Join(tab.cells(r), "\t")+"\t")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(out)
	}
	for _, s := range res.Storm {
		fmt.Fprintf(out, "storm %s: %d x %s SET on a fresh server: first second %.0f ops, steady %.0f ops/s (%.2fx); per second %v; host time stolen %.1f%%, %d reruns\n",
			s.Server, s.Conns, sizeLabel(s.ValueBytes), s.FirstSecond, s.Steady, s.Ratio, s.PerSecond, 100*s.Stolen, s.Reruns)
	}
	for _, m := range res.Idle {
		fmt.Fprintf(out, "idle RSS %s after %d x %s SET: %.0f MiB\n", m.Server, m.Values, sizeLabel(m.ValueBytes), float64(m.RSSBytes)/(1<<20))
	}
	return nil
}
