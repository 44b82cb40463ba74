// Command gendocs writes the files that follow from the settings table:
// configs/kvserver.yaml (config.DefaultYAML) and the flag table in
// README.md (config.FlagTable, the table that starts "| flag |"). Run it
// after changing a row, from the repository root or through go generate:
//
//	go generate ./config
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kvserver/kvserver/config"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	if err := os.WriteFile(filepath.Join(root, "configs", "kvserver.yaml"), config.DefaultYAML(), 0o644); err != nil {
		return err
	}
	readme := filepath.Join(root, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	out, err := replaceFlagTable(string(data), config.FlagTable())
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return os.WriteFile(readme, []byte(out), 0o644)
}

// replaceFlagTable replaces the Markdown table that starts with "| flag |"
// in doc by table.
func replaceFlagTable(doc, table string) (string, error) {
	lines := strings.SplitAfter(doc, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "| flag |") {
			start = i
			break
		}
	}
	if start < 0 {
		return "", errors.New(`no table starting with "| flag |"`)
	}
	end := start
	for end < len(lines) && strings.HasPrefix(lines[end], "|") {
		end++
	}
	var b bytes.Buffer
	for _, l := range lines[:start] {
		b.WriteString(l)
	}
	b.WriteString(table)
	for _, l := range lines[end:] {
		b.WriteString(l)
	}
	return b.String(), nil
}
