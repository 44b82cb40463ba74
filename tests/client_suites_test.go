package tests

// Issue 14's acceptance: the client libraries' own test suites pass against
// kvserver within 5% of their pass count against redis-server 7.0.15, family
// by family. TestClientSuiteGoRedis measures it for go-redis v9.7.0's Ginkgo
// suite (commands_test.go and friends), TestClientSuiteRedisPy
// (client_suites_redispy_test.go) for redis-py's pytest suite.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

const (
	// envClientSuites turns TestClientSuiteGoRedis on: "1" or "all" runs
	// every family, a comma-separated list ("hashes,strings") only those.
	// The whole run takes a few minutes (the suite twice), so it is off by
	// default.
	envClientSuites = "KVSERVER_CLIENT_SUITES"

	// goRedisSuiteModule is the go-redis release whose suite is run: the
	// one kvserver's go.mod requires, so `go mod download` fetches it.
	goRedisSuiteModule = "github.com/redis/go-redis/v9@v9.7.0"

	// goRedisPortLine is the line of the suite's main_test.go that fixes
	// the port of an external server (RE_CLUSTER=true, where BeforeSuite
	// starts nothing). The copy reads GOREDIS_SUITE_PORT instead; no test
	// is changed.
	goRedisPortLine = "\trediStackPort = \"6379\"\n"
	goRedisPortEnv  = "\trediStackPort = func() string { if p := os.Getenv(\"GOREDIS_SUITE_PORT\"); p != \"\" { return p }; return \"6379\" }()\n"

	// goRedisSeed fixes Ginkgo's order of top-level containers, so both
	// servers see the specs in the same order.
	goRedisSeed = "1"

	// suiteMinRatio is the acceptance bound: kvserver passes at least this
	// share of what redis-server passes, per family.
	suiteMinRatio = 0.95
)

// suiteFamily is one of issue 14's command families and the go-redis specs
// that exercise it.
type suiteFamily struct {
	name string
	// containers are the spec's leading Describe texts, any of which
	// places it in the family ("Commands hashes" is {"Commands",
	// "hashes"}).
	containers [][]string
	// leaf, when set, also requires the It text to match.
	leaf *regexp.Regexp
}

// goRedisFamilies classifies the suite's specs; the first family that
// matches a spec takes it. Specs under none are not run. go-redis keeps
// the bit commands and a few ACL and module tests under "strings"; the
// rows before "strings" take them out.
var goRedisFamilies = []suiteFamily{
	{name: "bitmaps", containers: [][]string{{"BitCountBite"}, {"BitCountByte"}}},
	{name: "bitmaps", containers: [][]string{{"Commands", "strings"}}, leaf: regexp.MustCompile(`^should (Bit|GetBit|SetBit)`)},
	{name: "server", containers: [][]string{{"Commands", "strings"}}, leaf: regexp.MustCompile(`(?i)\b(acl|module)\b`)},
	{name: "strings", containers: [][]string{{"Commands", "strings"}, {"Commands", "marshaling/unmarshaling"}, {"Commands", "json marshaling/unmarshaling"}}},
	{name: "keyspace", containers: [][]string{{"Commands", "keys"}, {"Commands", "scanning"}, {"ScanIterator"}}},
	{name: "transactions", containers: [][]string{{"Tx"}, {"pipelining"}}},
	{name: "hashes", containers: [][]string{{"Commands", "hashes"}}},
	{name: "lists", containers: [][]string{{"Commands", "lists"}}},
	{name: "sets", containers: [][]string{{"Commands", "sets"}}},
	{name: "sorted sets", containers: [][]string{{"Commands", "sorted sets"}}},
	{name: "hyperloglog", containers: [][]string{{"Commands", "hyperloglog"}}},
	{name: "server", containers: [][]string{{"Commands", "server"}, {"Commands", "debugging"}, {"Commands", "SlowLogGet"}}},
	{name: "pub/sub", containers: [][]string{{"PubSub"}}},
	{name: "scripting", containers: [][]string{{"Commands", "Eval"}, {"Commands", "EvalRO"}, {"Commands", "Functions"}}},
	{name: "streams", containers: [][]string{{"Commands", "streams"}}},
	{name: "geo", containers: [][]string{{"Commands", "Geo add and radius search"}}},
}

// familyOf returns the family of a spec, or "" for one outside them.
func familyOf(containers []string, leaf string) string {
	for _, f := range goRedisFamilies {
		in := slices.ContainsFunc(f.containers, func(prefix []string) bool {
			return len(containers) >= len(prefix) && slices.Equal(containers[:len(prefix)], prefix)
		})
		if in && (f.leaf == nil || f.leaf.MatchString(leaf)) {
			return f.name
		}
	}
	return ""
}

// goRedisFocus is the Ginkgo focus regexp for the top-level containers of
// the families in want (nil: all). Ginkgo matches it against "go-redis "
// (the suite's description) followed by the spec's texts.
func goRedisFocus(want map[string]bool) string {
	var tops []string
	for _, f := range goRedisFamilies {
		if want != nil && !want[f.name] {
			continue
		}
		for _, c := range f.containers {
			tops = append(tops, regexp.QuoteMeta(strings.Join(c, " ")))
		}
	}
	slices.Sort(tops)
	return "^go-redis (" + strings.Join(slices.Compact(tops), "|") + ") "
}

// suiteSpec is one spec of a Ginkgo JSON report, reduced to what the
// comparison needs.
type suiteSpec struct {
	ContainerHierarchyTexts []string
	LeafNodeType            string
	LeafNodeText            string
	State                   string
	Failure                 struct {
		Message  string
		Location struct {
			FileName   string
			LineNumber int
		}
	}
}

// failureSummary is the spec's failure on one line: Gomega's message
// without its "Unexpected error:" and type lines (so that a server's error
// reply shows), cut to 160 bytes, and where in the suite it failed.
func (s suiteSpec) failureSummary() string {
	var parts []string
	for _, line := range strings.Split(s.Failure.Message, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "Unexpected error:" || line == "occurred" ||
			(strings.HasPrefix(line, "<") && strings.HasSuffix(line, ">:")) {
			continue
		}
		if !slices.Contains(parts, line) {
			parts = append(parts, line)
		}
	}
	msg := strings.Join(parts, " ")
	if len(msg) > 160 {
		msg = msg[:160] + "..."
	}
	return fmt.Sprintf("%s (%s:%d)", msg, filepath.Base(s.Failure.Location.FileName), s.Failure.Location.LineNumber)
}

// name is the spec's full text, as Ginkgo prints it.
func (s suiteSpec) name() string {
	return strings.Join(append(slices.Clone(s.ContainerHierarchyTexts), s.LeafNodeText), " ")
}

// readGinkgoReport reads the specs of a --json-report file.
func readGinkgoReport(path string) ([]suiteSpec, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ginkgo report: %w", err)
	}
	var reports []struct{ SpecReports []suiteSpec }
	if err := json.Unmarshal(raw, &reports); err != nil {
		return nil, fmt.Errorf("decode ginkgo report %s: %w", path, err)
	}
	var specs []suiteSpec
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType == "It" {
				specs = append(specs, s)
			}
		}
	}
	return specs, nil
}

// familyResult is one row of the comparison.
type familyResult struct {
	family            string
	specs             int
	redisPassed, kvOK int
	// regressions are the specs that pass on redis-server and not on
	// kvserver, with kvserver's failure message.
	regressions []string
}

// ratio is kvserver's pass count over redis-server's (1 when both are 0).
func (r familyResult) ratio() float64 {
	if r.redisPassed == 0 {
		if r.kvOK == 0 {
			return 1
		}
		return float64(r.kvOK)
	}
	return float64(r.kvOK) / float64(r.redisPassed)
}

// compareSuiteRuns pairs the two runs' specs by name and counts passes per
// family, in goRedisFamilies' order.
func compareSuiteRuns(redisSpecs, kvSpecs []suiteSpec) []familyResult {
	var order []string
	for _, f := range goRedisFamilies {
		order = append(order, f.name)
	}
	return countSuiteRuns(redisSpecs, kvSpecs, func(s suiteSpec) string {
		return familyOf(s.ContainerHierarchyTexts, s.LeafNodeText)
	}, order)
}

// countSuiteRuns pairs the two runs' specs by name and counts, per family
// (family's answer; "" leaves a spec out), the specs that ran on
// redis-server and how many passed on each server, in the order of the
// family names in order.
func countSuiteRuns(redisSpecs, kvSpecs []suiteSpec, family func(suiteSpec) string, order []string) []familyResult {
	kvByName := make(map[string]suiteSpec, len(kvSpecs))
	for _, s := range kvSpecs {
		kvByName[s.name()] = s
	}
	byFamily := map[string]*familyResult{}
	for _, s := range redisSpecs {
		fam := family(s)
		if fam == "" || s.State == "skipped" || s.State == "pending" {
			continue
		}
		r := byFamily[fam]
		if r == nil {
			r = &familyResult{family: fam}
			byFamily[fam] = r
		}
		r.specs++
		kv := kvByName[s.name()]
		if kv.State == "passed" {
			r.kvOK++
		}
		if s.State == "passed" {
			r.redisPassed++
			if kv.State != "passed" {
				why := "did not run"
				if kv.State != "" {
					why = kv.State + ": " + kv.failureSummary()
				}
				r.regressions = append(r.regressions, fmt.Sprintf("%s [%s]", s.name(), why))
			}
		}
	}
	var out []familyResult
	seen := map[string]bool{}
	for _, name := range order {
		if r := byFamily[name]; r != nil && !seen[name] {
			seen[name] = true
			out = append(out, *r)
		}
	}
	return out
}

// suiteRetries is how often a spec that passed on one server and failed on
// the other runs again, alone and on a fresh server of the kind where it
// failed. The suites have specs that fail now and then on redis-server
// too (go-redis's function specs after "Shows function stats" kills a
// busy function failed on redis-server in 3 of 4 runs of four families,
// and once on kvserver), and one such flake in a family of 15 specs is
// past the 5% bound. Both servers get the same second chances.
const suiteRetries = 2

// retryMismatches runs again, through rerun (which starts a fresh server,
// kvserver when kv is set, runs the one spec and returns its state), each
// spec that passed in one run and failed in the other, on the server
// where it failed, and takes a pass as the spec's result. It returns the
// specs that passed only when run again.
func retryMismatches(redisSpecs, kvSpecs []suiteSpec, rerun func(kv bool, s suiteSpec) string) []string {
	kvAt := make(map[string]int, len(kvSpecs))
	for i, s := range kvSpecs {
		kvAt[s.name()] = i
	}
	var flaky []string
	for i := range redisSpecs {
		j, ok := kvAt[redisSpecs[i].name()]
		if !ok {
			continue
		}
		r, k := &redisSpecs[i], &kvSpecs[j]
		if (r.State == "passed") == (k.State == "passed") || r.State == "skipped" || k.State == "skipped" {
			continue
		}
		failed, onKV, where := r, false, "redis"
		if r.State == "passed" {
			failed, onKV, where = k, true, "kvserver"
		}
		for range suiteRetries {
			if rerun(onKV, *failed) == "passed" {
				failed.State = "passed"
				flaky = append(flaky, fmt.Sprintf("%s (on %s)", failed.name(), where))
				break
			}
		}
	}
	return flaky
}

// stateOf is the state of the spec named name in specs ("" when absent).
func stateOf(specs []suiteSpec, name string) string {
	for _, s := range specs {
		if s.name() == name {
			return s.State
		}
	}
	return ""
}

// formatSuiteTable renders the comparison: one line per family, then the
// specs kvserver loses.
func formatSuiteTable(results []familyResult) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "family\tspecs\tpassed on redis\tpassed on kvserver\tratio")
	var total familyResult
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\n", r.family, r.specs, r.redisPassed, r.kvOK, r.ratio())
		total.specs += r.specs
		total.redisPassed += r.redisPassed
		total.kvOK += r.kvOK
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%.3f\n", total.specs, total.redisPassed, total.kvOK, total.ratio())
	tw.Flush()
	for _, r := range results {
		for _, name := range r.regressions {
			fmt.Fprintf(&b, "passes on redis, not on kvserver: %s: %s\n", r.family, name)
		}
	}
	return b.String()
}

// TestClientSuiteGoRedis runs go-redis v9.7.0's own suite, family by family,
// against a fresh redis-server and a fresh kvserver built from this tree,
// prints how many specs pass on each and the specs that pass only on
// redis-server, and fails for a family where kvserver passes fewer than
// 95% of redis-server's count. It runs only when KVSERVER_CLIENT_SUITES is
// set (about 2 minutes: builds, then 30 s a server; scripts/client-suites.sh).
func TestClientSuiteGoRedis(t *testing.T) {
	families := clientSuiteFamilies(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skipf("redis-server is not on PATH (%v): the suites' baseline is a redis-server 7.0 (Debian package redis-server)", err)
	}
	suiteDir := goRedisSuiteCopy(t)
	goCmd := func(args ...string) *exec.Cmd {
		cmd := exec.Command("go", args...)
		cmd.Dir = suiteDir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		return cmd
	}
	// The suite's own dependencies (Ginkgo, Gomega) are not kvserver's.
	if out, err := goCmd("mod", "download").CombinedOutput(); err != nil {
		t.Skipf("go-redis's suite is not available: its dependencies did not download: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "goredis.test")
	if out, err := goCmd("test", "-c", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building go-redis's suite: %v\n%s", err, out)
	}
	focus := goRedisFocus(families)

	// One server at a time: the suite has timing-sensitive specs (blocking
	// pops, CLIENT PAUSE, WAIT) that a second run beside it would disturb.
	redisSpecs := runGoRedisSuite(t, bin, suiteDir, startRedis(t), focus)
	kvSpecs := runGoRedisSuite(t, bin, suiteDir, startKVServer(t), focus)
	flaky := retryMismatches(redisSpecs, kvSpecs, func(kv bool, s suiteSpec) string {
		srv := startRedis(t)
		if kv {
			srv = startKVServer(t)
		}
		defer srv.stop(t)
		one := "^go-redis " + regexp.QuoteMeta(s.name()) + "$"
		return stateOf(runGoRedisSuite(t, bin, suiteDir, srv, one), s.name())
	})
	if len(flaky) > 0 {
		t.Logf("passed when run again: %s", strings.Join(flaky, "; "))
	}
	results := compareSuiteRuns(redisSpecs, kvSpecs)
	if len(results) == 0 {
		t.Fatalf("no spec of the families ran (focus %q)", focus)
	}
	t.Logf("go-redis %s suite, redis-server against kvserver:\n%s", goRedisSuiteModule, formatSuiteTable(results))
	for _, r := range results {
		if r.ratio() < suiteMinRatio {
			t.Errorf("%s: kvserver passes %d of go-redis's specs, redis-server %d (ratio %.3f, want at least %.2f)",
				r.family, r.kvOK, r.redisPassed, r.ratio(), suiteMinRatio)
		}
	}
}

// clientSuiteFamilies reads KVSERVER_CLIENT_SUITES: nil for every family,
// or the set named. It skips the test when the variable is unset.
func clientSuiteFamilies(t *testing.T) map[string]bool {
	t.Helper()
	v := os.Getenv(envClientSuites)
	switch v {
	case "":
		t.Skipf("%s is not set: the client-library suites take minutes (scripts/client-suites.sh runs them)", envClientSuites)
	case "1", "all":
		return nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if !slices.ContainsFunc(goRedisFamilies, func(f suiteFamily) bool { return f.name == name }) {
			t.Fatalf("%s=%q: no family %q (families: %s)", envClientSuites, v, name, familyNames())
		}
		want[name] = true
	}
	return want
}

// familyNames lists the families for messages.
func familyNames() string {
	var names []string
	for _, f := range goRedisFamilies {
		names = append(names, f.name)
	}
	return strings.Join(slices.Compact(names), ", ")
}

// goRedisSuiteCopy copies go-redis's module from the module cache into a
// writable temporary directory and makes its external-server port
// configurable. It skips the test when the module is not in the cache and
// cannot be downloaded.
func goRedisSuiteCopy(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", goRedisSuiteModule).Output()
	if err != nil {
		t.Skipf("go-redis's suite is not available: go mod download %s: %v", goRedisSuiteModule, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Skipf("go-redis's suite is not available: go mod download %s printed %q", goRedisSuiteModule, out)
	}
	dst := filepath.Join(t.TempDir(), "go-redis")
	if err := copyTree(mod.Dir, dst); err != nil {
		t.Fatalf("copying go-redis's suite: %v", err)
	}
	mainTest := filepath.Join(dst, "main_test.go")
	src, err := os.ReadFile(mainTest)
	if err != nil {
		t.Fatalf("go-redis's suite: %v", err)
	}
	if n := strings.Count(string(src), goRedisPortLine); n != 1 {
		t.Fatalf("go-redis's main_test.go has %d lines %q, want 1: the suite's harness changed", n, goRedisPortLine)
	}
	patched := strings.Replace(string(src), goRedisPortLine, goRedisPortEnv, 1)
	if err := os.WriteFile(mainTest, []byte(patched), 0o644); err != nil {
		t.Fatalf("go-redis's suite: %v", err)
	}
	return dst
}

// copyTree copies the regular files under src to dst, writable.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// runGoRedisSuite runs the compiled suite against srv and returns its
// specs. Failing specs are expected (the suite also tests Redis 7.2 and
// 7.4 features); only a run that leaves no report fails the test.
func runGoRedisSuite(t *testing.T, bin, dir string, srv *server, focus string) []suiteSpec {
	t.Helper()
	report := filepath.Join(t.TempDir(), srv.Name+".json")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^TestGinkgoSuite$", "-test.timeout", "9m",
		"-ginkgo.focus", focus, "-ginkgo.seed", goRedisSeed, "-ginkgo.no-color",
		"-ginkgo.json-report", report)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RE_CLUSTER=true", "GOREDIS_SUITE_PORT="+strconv.Itoa(srv.Port))
	start := time.Now()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running go-redis's suite against %s: %v", srv.Name, err)
	}
	specs, rerr := readGinkgoReport(report)
	if rerr != nil {
		t.Fatalf("go-redis's suite against %s left no report (%v, exit %v); its output ends:\n%s",
			srv.Name, rerr, err, tail(string(out), 4000))
	}
	t.Logf("go-redis's suite against %s: %d specs in %s", srv.Name, len(specs), time.Since(start).Round(time.Second))
	return specs
}

// TestGoRedisSpecsAreSortedIntoFamilies pins down the classification and
// the counting the acceptance rests on, without running the suite.
func TestGoRedisSpecsAreSortedIntoFamilies(t *testing.T) {
	for _, tc := range []struct {
		containers []string
		leaf, want string
	}{
		{[]string{"Commands", "strings"}, "should Append", "strings"},
		{[]string{"Commands", "strings"}, "should BitOpAnd", "bitmaps"},
		{[]string{"Commands", "strings"}, "should GetBit", "bitmaps"},
		{[]string{"Commands", "strings"}, "should GetRange", "strings"},
		{[]string{"Commands", "strings"}, "should ACL LOG", "server"},
		{[]string{"Commands", "strings"}, "should fail module loadex", "server"},
		{[]string{"BitCountByte"}, "bit count byte", "bitmaps"},
		{[]string{"Commands", "sorted sets"}, "should ZAdd", "sorted sets"},
		{[]string{"pipelining", "TxPipeline"}, "handles val/err", "transactions"},
		{[]string{"Commands", "Functions"}, "should FunctionLoad", "scripting"},
		{[]string{"Commands", "streams", "group"}, "should XReadGroup", "streams"},
		{[]string{"ClusterClient", "pipelining"}, "works", ""},
		{[]string{"Commands"}, "anything", ""},
	} {
		if got := familyOf(tc.containers, tc.leaf); got != tc.want {
			t.Errorf("familyOf(%q, %q) = %q, want %q", tc.containers, tc.leaf, got, tc.want)
		}
	}

	focus := regexp.MustCompile(goRedisFocus(map[string]bool{"hashes": true, "transactions": true}))
	for text, want := range map[string]bool{
		"go-redis Commands hashes should HSet":            true,
		"go-redis Tx should Watch":                        true,
		"go-redis pipelining TxPipeline handles val/err":  true,
		"go-redis ClusterClient pipelining with Pipeline": false,
		"go-redis Commands strings should Get":            false,
	} {
		if got := focus.MatchString(text); got != want {
			t.Errorf("focus %s matches %q: %v, want %v", focus, text, got, want)
		}
	}

	spec := func(fam, leaf, state string) suiteSpec {
		return suiteSpec{ContainerHierarchyTexts: []string{"Commands", fam}, LeafNodeType: "It", LeafNodeText: leaf, State: state}
	}
	redisRun := []suiteSpec{
		spec("hashes", "should HSet", "passed"),
		spec("hashes", "should HGet", "passed"),
		spec("hashes", "should HExpire", "failed"),
		spec("hashes", "should HScan", "skipped"),
		spec("lists", "should LPush", "passed"),
	}
	kvRun := []suiteSpec{
		spec("hashes", "should HSet", "passed"),
		spec("hashes", "should HGet", "failed"),
		spec("hashes", "should HExpire", "failed"),
		spec("hashes", "should HScan", "skipped"),
	}
	kvRun[1].Failure.Message = "Unexpected error:\n    <proto.RedisError>: \n    ERR unknown command 'hget'\n    ERR unknown command 'hget'\noccurred"
	kvRun[1].Failure.Location.FileName = "/x/commands_test.go"
	kvRun[1].Failure.Location.LineNumber = 12
	got := compareSuiteRuns(redisRun, kvRun)
	want := []familyResult{
		{family: "hashes", specs: 3, redisPassed: 2, kvOK: 1,
			regressions: []string{"Commands hashes should HGet [failed: ERR unknown command 'hget' (commands_test.go:12)]"}},
		{family: "lists", specs: 1, redisPassed: 1, kvOK: 0,
			regressions: []string{"Commands lists should LPush [did not run]"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("compareSuiteRuns:\n got %+v\nwant %+v", got, want)
	}
	if r := got[0].ratio(); r != 0.5 {
		t.Errorf("hashes ratio %v, want 0.5", r)
	}

	// A spec that failed on one server only runs again there; a pass
	// counts, a spec that failed on both or passed on both does not run.
	redisRun = []suiteSpec{spec("sets", "a", "passed"), spec("sets", "b", "failed"), spec("sets", "c", "passed"), spec("sets", "d", "failed")}
	kvRun = []suiteSpec{spec("sets", "a", "failed"), spec("sets", "b", "passed"), spec("sets", "c", "passed"), spec("sets", "d", "failed")}
	var reruns []string
	flaky := retryMismatches(redisRun, kvRun, func(kv bool, s suiteSpec) string {
		reruns = append(reruns, fmt.Sprintf("%s kv=%v", s.LeafNodeText, kv))
		if s.LeafNodeText == "a" {
			return "passed"
		}
		return "failed"
	})
	if got, want := strings.Join(reruns, ", "), "a kv=true, b kv=false, b kv=false"; got != want {
		t.Errorf("reruns %q, want %q", got, want)
	}
	if got, want := strings.Join(flaky, "; "), "Commands sets a (on kvserver)"; got != want {
		t.Errorf("flaky %q, want %q", got, want)
	}
	if kvRun[0].State != "passed" || redisRun[1].State != "failed" || redisRun[3].State != "failed" {
		t.Errorf("states after the retries: kv a %s, redis b %s, redis d %s", kvRun[0].State, redisRun[1].State, redisRun[3].State)
	}
}
