package config

import (
	"bytes"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/kvserver/kvserver/configs"
)

// readmeFlagTable returns the README's flag table: the block of table
// lines that starts with the "| flag |" header.
func readmeFlagTable(t *testing.T, readme string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "| flag |"):
			out = append(out, line)
		case len(out) > 0 && strings.HasPrefix(line, "|"):
			out = append(out, line)
		case len(out) > 0:
			return strings.Join(out, "\n") + "\n"
		}
	}
	if len(out) == 0 {
		t.Fatal("README.md has no table starting with \"| flag |\"")
	}
	return strings.Join(out, "\n") + "\n"
}

func TestREADMEFlagTableMatchesTheSettingsTable(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	got, want := readmeFlagTable(t, string(data)), FlagTable()
	if got == want {
		return
	}
	gotRows, wantRows := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gotRows), len(wantRows)) {
		var g, w string
		if i < len(gotRows) {
			g = gotRows[i]
		}
		if i < len(wantRows) {
			w = wantRows[i]
		}
		if g != w {
			t.Errorf("README flag table row %d:\n got %s\nwant %s", i, g, w)
		}
	}
	t.Errorf("README.md's flag table differs from config.FlagTable(): run go generate ./config")
}

// yamlKeyLine matches a top-level "key: value" line of configs/kvserver.yaml.
var yamlKeyLine = regexp.MustCompile(`^([a-z0-9-]+):`)

func TestYAMLFileMatchesTheSettingsTable(t *testing.T) {
	t.Parallel()
	if !bytes.Equal(configs.DefaultYAML, DefaultYAML()) {
		t.Errorf("configs/kvserver.yaml is not what the settings table renders: run go generate ./config")
	}
	var keys []string
	for _, line := range strings.Split(string(configs.DefaultYAML), "\n") {
		if m := yamlKeyLine.FindStringSubmatch(line); m != nil {
			keys = append(keys, m[1])
		}
	}
	if want := fileKeys(); !slices.Equal(keys, want) {
		t.Errorf("configs/kvserver.yaml has keys, in order,\n %v\nwant the settings table's\n %v", keys, want)
	}

	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(configs.DefaultYAML)); err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if s.field == nil {
			continue
		}
		var fromFile, fromTable Config
		if err := s.decode(v.Get(s.Name), &fromFile); err != nil {
			t.Errorf("%s: the YAML file's value: %v", s.Name, err)
			continue
		}
		var def any = s.Default
		if s.Kind == KindRenames || s.Kind == KindUsers {
			def = nil
		}
		if err := s.decode(def, &fromTable); err != nil {
			t.Errorf("%s: the table's default %q: %v", s.Name, s.Default, err)
			continue
		}
		if got, want := reflect.ValueOf(s.field(&fromFile)).Elem().Interface(), reflect.ValueOf(s.field(&fromTable)).Elem().Interface(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: configs/kvserver.yaml has %#v, the settings table's default is %#v (%q)", s.Name, got, want, s.Default)
		}
	}
}

func TestEverySettingHasADocAndDefault(t *testing.T) {
	t.Parallel()
	name := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, s := range settings {
		if !name.MatchString(s.Name) || seen[s.Name] {
			t.Errorf("setting %q: want a unique lower-case, dash-separated name", s.Name)
		}
		seen[s.Name] = true
		if strings.TrimSpace(s.Doc) == "" || strings.Contains(s.Doc, "\n") || strings.Contains(s.Doc, "|") {
			t.Errorf("%s: want a one-line doc without '|', have %q", s.Name, s.Doc)
		}
		if s.ConfigOnly && s.field != nil {
			t.Errorf("%s: a ConfigOnly setting has no Config field", s.Name)
		}
		if (s.ConfigOnly || s.Mutable || s.Rewrite != NoRewrite) && !s.InConfig {
			t.Errorf("%s: ConfigOnly, Mutable and rewritten settings must be CONFIG parameters (InConfig)", s.Name)
		}
		if s.ConfigOnly && s.Rewrite != NoRewrite {
			t.Errorf("%s: a ConfigOnly parameter has nothing to rewrite", s.Name)
		}
		switch s.Kind {
		case KindInt:
			n, err := strconv.ParseInt(s.Default, 10, 64)
			if err != nil || n < s.Min || (s.Max != 0 && n > s.Max) {
				t.Errorf("%s: default %q is not an integer in %d..%d", s.Name, s.Default, s.Min, s.Max)
			}
		case KindSize:
			n, err := ParseSize(s.Default)
			if err != nil || (s.Max != 0 && n > s.Max) || (n < s.Min && !(s.Name == "maxmemory" || s.Name == "maxdisk")) {
				t.Errorf("%s: default %q is not a size in bounds: %v", s.Name, s.Default, err)
			}
		case KindEnum:
			if !s.ConfigOnly && !slices.Contains(s.Values, s.Default) {
				t.Errorf("%s: default %q is not one of its values %q", s.Name, s.Default, s.Values)
			}
		case KindBool:
			if s.Default != "yes" && s.Default != "no" {
				t.Errorf("%s: default %q is not yes or no", s.Name, s.Default)
			}
		case KindRenames, KindUsers:
			if s.Default != "" || s.DefaultDoc == "" {
				t.Errorf("%s: lists have no Default, only a DefaultDoc", s.Name)
			}
		}
		if s.Kind != KindEnum && len(s.Values) > 0 {
			t.Errorf("%s: only enums have Values", s.Name)
		}
		if s.Mutable && !s.ConfigOnly && (s.Kind == KindInt || s.Kind == KindSize) && s.Max == 0 {
			t.Errorf("%s: a mutable number needs a Max for CONFIG SET", s.Name)
		}
		if s.Configurable() {
			var c Config
			def := any(s.Default)
			if s.Kind == KindRenames || s.Kind == KindUsers {
				def = nil
			}
			if err := s.decode(def, &c); err != nil {
				t.Errorf("%s: default %q does not decode: %v", s.Name, s.Default, err)
			}
		}
	}
	// Every field of Config but ConfigFile (--config) and byName (the
	// settings read by name) is some setting's.
	var c Config
	fields := map[uintptr]bool{}
	for _, s := range settings {
		if s.field != nil {
			fields[reflect.ValueOf(s.field(&c)).Pointer()] = true
		}
	}
	cv := reflect.ValueOf(&c).Elem()
	for i := range cv.NumField() {
		f := cv.Type().Field(i)
		if f.Name != "ConfigFile" && f.Name != "byName" && !fields[cv.Field(i).Addr().Pointer()] {
			t.Errorf("Config.%s belongs to no row of the settings table", f.Name)
		}
	}
}

func TestEveryFlagAndVariableComesFromTheTable(t *testing.T) {
	t.Parallel()
	fs := newFlagSet()
	for _, s := range settings {
		f := fs.Lookup(s.Name)
		if s.ConfigOnly != (f == nil) {
			t.Errorf("%s: flag %v, want one exactly when the setting is configurable", s.Name, f)
			continue
		}
		if f != nil && (f.Usage != s.Usage() || strings.ContainsAny(f.Usage, "`[")) {
			t.Errorf("--%s usage %q, want the doc line %q as plain text", s.Name, f.Usage, s.Doc)
		}
		env := envSettings([]string{s.EnvName() + "=x"})
		if _, ok := env[s.Name]; ok != s.Configurable() {
			t.Errorf("%s: %s recognised = %v", s.Name, s.EnvName(), ok)
		}
	}
}

// TestPercentilesAsRedis: latency-tracking-info-percentiles parses and
// prints as redis-server 7.0.15 did for the same values (CONFIG SET and
// CONFIG GET on it).
func TestPercentilesAsRedis(t *testing.T) {
	good := map[string]string{
		"50 99 99.9":   "50 99 99.9",
		"1e1 5.50 .5":  "10 5.5 0.5",
		"50 50":        "50 50",
		"-0 100":       "-0 100",
		"":             "",
		"50 99.99 0":   "50 99.99 0",
		"+7 0.0000001": "7 0",
		"0x10":         "16",
	}
	for in, want := range good {
		ps, reason := ParsePercentiles(in)
		if reason != "" {
			t.Errorf("%q refused: %s", in, reason)
			continue
		}
		if got := FormatPercentiles(ps); got != want {
			t.Errorf("%q prints as %q, redis-server printed %q", in, got, want)
		}
	}
	const invalid = "Invalid latency-tracking-info-percentiles parameters"
	const outside = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
	for in, want := range map[string]string{
		"abc": invalid, "nan": invalid, "50  99": invalid, " 50": invalid, "50 ": invalid, "1e400": invalid, "5_0": invalid,
		"101": outside, "-1": outside, "inf": outside, "50 100.5": outside,
	} {
		if _, reason := ParsePercentiles(in); reason != want {
			t.Errorf("%q: %q, want %q", in, reason, want)
		}
	}
}
