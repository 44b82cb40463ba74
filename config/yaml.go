package config

//go:generate go run ./internal/gendocs -root ..

import (
	"strings"
)

// yamlHeader opens configs/kvserver.yaml.
const yamlHeader = "kvserver configuration: the built-in defaults.\n" +
	"\n" +
	"Every key's default here is the default of its row in the settings table\n" +
	"(config/settings.go), which is the lowest layer of the configuration; a\n" +
	"test fails when the two disagree. Copy this file to start your own. Each\n" +
	"key can be overridden, in rising priority, by:\n" +
	"  1. a YAML file of the same shape named by --config (or KVSERVER_CONFIG),\n" +
	"  2. an environment variable KVSERVER_<KEY>, the key upper-cased with '-'\n" +
	"     turned into '_' (KVSERVER_MAXMEMORY, KVSERVER_PROTO_MAX_BULK_LEN, ...),\n" +
	"  3. a command-line flag named like the key (--maxmemory, --proto-max-bulk-len).\n" +
	"\n" +
	"Sizes are a plain number of bytes or a string in Redis syntax, units\n" +
	"case-insensitive: b=1, k=1000, kb=1024, m=1000^2, mb=1024^2, g=1000^3,\n" +
	"gb=1024^3 (so \"512mb\", \"1gb\", 1048576). Negative, fractional or other units\n" +
	"are rejected.\n" +
	"\n" +
	"A key left empty (\"port:\") keeps its default. Unknown keys in a --config\n" +
	"file are an error.\n"

// DefaultYAML renders configs/kvserver.yaml from the settings table: a
// header, then for every key a file may set, in table order, its notes (or
// its doc line and default) as comments and its default value. The file in
// the repository is this output (go generate ./config writes it; a test
// fails when the two differ).
func DefaultYAML() []byte {
	var b strings.Builder
	b.WriteString(comment(yamlHeader))
	for _, s := range settings {
		if !s.Configurable() {
			continue
		}
		notes := s.Notes
		if notes == "" {
			notes = s.Doc + ".\nDefault: " + s.DefaultText() + "."
		}
		b.WriteString("\n")
		b.WriteString(comment(notes))
		b.WriteString(s.Name + ": " + s.yamlDefault() + "\n")
	}
	return []byte(b.String())
}

// comment turns text into YAML comment lines.
func comment(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" {
			b.WriteString("#\n")
		} else {
			b.WriteString("# " + line + "\n")
		}
	}
	return b.String()
}

// yamlDefault is the setting's default as the YAML file writes it, so that
// YAML reads back the same value: quoted where YAML 1.1 would read a
// boolean or where the text is empty or has spaces.
func (s Setting) yamlDefault() string {
	switch s.Kind {
	case KindRenames:
		return "{}"
	case KindUsers:
		return "[]"
	case KindBool:
		return s.Default
	}
	v := s.Default
	switch {
	case v == "", strings.ContainsAny(v, " #:"), s.Kind == KindEnum && (v == "yes" || v == "no"):
		return `"` + v + `"`
	}
	return v
}
