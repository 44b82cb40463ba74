package tests

import (
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// commandStatsWorkload runs, on one server, calls that end every way INFO
// commandstats tells apart: calls that run, calls refused before they run
// (arity, ACL, a queuing error, a script's refusals), calls that run and
// answer an error (wrong type, inside EXEC and inside scripts), subcommands,
// and unknown commands and subcommands, which no command counts.
func commandStatsWorkload(t *testing.T, addr string) {
	t.Helper()
	c := dialRaw(t, addr)
	defer c.Close()
	calls := [][]string{
		{"CONFIG", "RESETSTAT"},
		{"SET", "s", "1"}, {"GET", "s"}, {"GET"}, {"INCR", "s"}, {"LPUSH", "l", "a"}, {"INCR", "l"},
		{"NOSUCHCOMMAND", "x"}, {"CONFIG", "NOSUCHSUB"}, {"CONFIG", "GET", "maxmemory"}, {"CONFIG", "GET"},
		{"EVAL", "return redis.call('get', KEYS[1])", "1", "s"},
		{"EVAL", "return redis.call('incr', KEYS[1])", "1", "l"},
		{"EVAL", "return redis.pcall('get', 'a', 'b')", "0"},
		{"EVAL", "return redis.pcall('nosuch')", "0"},
		{"EVAL_RO", "return redis.pcall('set', KEYS[1], 'x')", "1", "s"},
		{"MULTI"}, {"SET", "t", "1"}, {"INCR", "l"}, {"GET", "t"}, {"EXEC"},
		{"MULTI"}, {"SET", "t"}, {"GET", "t"}, {"EXEC"},
		{"ACL", "SETUSER", "limited", "on", "nopass", "+get", "~*"},
		{"AUTH", "limited", "x"}, {"SET", "s", "2"}, {"GET", "s"},
	}
	for _, cmd := range calls {
		if _, err := c.Call(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
}

// commandStats parses INFO commandstats: command -> its counters with the
// time fields left out, after checking each line's format.
func commandStats(t *testing.T, c *rawClient) map[string]string {
	t.Helper()
	line := regexp.MustCompile(`^calls=(\d+),usec=\d+,usec_per_call=\d+\.\d\d,rejected_calls=(\d+),failed_calls=(\d+)$`)
	fields, err := infoFields(c, "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for k, v := range fields {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		m := line.FindStringSubmatch(v)
		if m == nil {
			t.Fatalf("cmdstat_%s: badly formed %q", name, v)
		}
		out[name] = fmt.Sprintf("calls=%s,rejected_calls=%s,failed_calls=%s", m[1], m[2], m[3])
	}
	return out
}

// latencyStats parses INFO latencystats: the commands it lists, after
// checking each line's format.
func latencyStats(t *testing.T, c *rawClient) []string {
	t.Helper()
	line := regexp.MustCompile(`^p50=\d+\.\d{3},p99=\d+\.\d{3},p99\.9=\d+\.\d{3}$`)
	fields, err := infoFields(c, "latencystats")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for k, v := range fields {
		name, ok := strings.CutPrefix(k, "latency_percentiles_usec_")
		if !ok {
			continue
		}
		if !line.MatchString(v) {
			t.Fatalf("%s: badly formed %q", k, v)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TestCommandStatsMatchRedis runs the same calls on redis-server and
// kvserver and requires INFO commandstats to count the same calls,
// rejected calls and failed calls for every command, INFO latencystats to
// list the same commands, and INFO all to have Redis's sections in Redis's
// order (kvserver's own after them).
func TestCommandStatsMatchRedis(t *testing.T) {
	t.Parallel()
	servers := map[string]*server{"redis": startRedis(t), "kvserver": startKVServer(t)}
	stats := map[string]map[string]string{}
	latency := map[string][]string{}
	sections := map[string][]string{}
	for name, s := range servers {
		commandStatsWorkload(t, s.Addr)
		c := dialRaw(t, s.Addr)
		stats[name] = commandStats(t, c)
		latency[name] = latencyStats(t, c)
		raw, err := c.Call("INFO", "all")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(raw), "\r\n") {
			if strings.HasPrefix(l, "# ") {
				sections[name] = append(sections[name], l)
			}
		}
		c.Close()
	}
	want, got := stats["redis"], stats["kvserver"]
	if len(want) < 10 {
		t.Fatalf("redis-server counted only %v", want)
	}
	for name, w := range want {
		if g := got[name]; g != w {
			t.Errorf("cmdstat_%s: kvserver %q, redis-server %q", name, g, w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("cmdstat_%s: kvserver %q, redis-server has no line", name, g)
		}
	}
	if !slices.Equal(latency["kvserver"], latency["redis"]) {
		t.Errorf("latencystats lists %v, redis-server %v", latency["kvserver"], latency["redis"])
	}
	if r, k := sections["redis"], sections["kvserver"]; len(k) < len(r) || !slices.Equal(k[:len(r)], r) {
		t.Errorf("INFO all sections %v, redis-server %v", k, r)
	}
}

// TestCommandStatsResetAndMetrics checks that CONFIG RESETSTAT empties
// the statistics, and that the Prometheus metrics export the same counts
// as INFO commandstats.
func TestCommandStatsResetAndMetrics(t *testing.T) {
	t.Parallel()
	metricsPort := freePort(t)
	s := startKVServer(t, "--metrics-port", strconv.Itoa(metricsPort))
	c := dialRaw(t, s.Addr)
	for range 5 {
		expectReply(t, c, "+OK\r\n", "SET", "k", "v")
	}
	c.Call("GET")
	if got := commandStats(t, c)["set"]; got != "calls=5,rejected_calls=0,failed_calls=0" {
		t.Fatalf("cmdstat_set %q", got)
	}
	code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, want := range []string{
		`kvserver_commands_total{command="set"} 5`,
		`kvserver_commands_total{command="get"} 1`,
		`kvserver_command_errors_total{command="get"} 1`,
		`kvserver_command_duration_seconds_count{command="set"} 5`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	expectReply(t, c, "+OK\r\n", "CONFIG", "RESETSTAT")
	got := commandStats(t, c)
	if len(got) != 1 || got["config|resetstat"] != "calls=1,rejected_calls=0,failed_calls=0" {
		t.Errorf("after CONFIG RESETSTAT: %v", got)
	}
	if names := latencyStats(t, c); !slices.Equal(names, []string{"config|resetstat", "info"}) {
		t.Errorf("latencystats after CONFIG RESETSTAT: %v", names)
	}
}

// TestLatencyTrackingSettingsMatchRedis sends the same CONFIG SET and GET
// of latency-tracking and latency-tracking-info-percentiles to
// redis-server and kvserver and compares the replies byte for byte, then
// the fields INFO latencystats prints with custom percentiles and with
// latency-tracking off.
func TestLatencyTrackingSettingsMatchRedis(t *testing.T) {
	t.Parallel()
	cmds := [][]string{
		// One parameter a GET: Redis answers a pattern in its hash order.
		{"CONFIG", "GET", "latency-tracking"},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "101"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "abc"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "50  99"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "1e1 5.50 .5"},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking", "maybe"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", ""},
		{"CONFIG", "GET", "latency-tracking-info-percentiles"},
		{"CONFIG", "SET", "latency-tracking-info-percentiles", "1e1 5.50 .5"},
	}
	replies := map[string][]string{}
	fields := map[string][]string{}
	for name, s := range map[string]*server{"redis": startRedis(t), "kvserver": startKVServer(t)} {
		c := dialRaw(t, s.Addr)
		for _, cmd := range cmds {
			raw, err := c.Call(cmd...)
			if err != nil {
				t.Fatal(err)
			}
			replies[name] = append(replies[name], string(raw))
		}
		expectReply(t, c, "+OK\r\n", "SET", "k", "v")
		f, err := infoFields(c, "latencystats")
		if err != nil {
			t.Fatal(err)
		}
		re := regexp.MustCompile(`^p10=\d+\.\d{3},p5\.5=\d+\.\d{3},p0\.5=\d+\.\d{3}$`)
		if v := f["latency_percentiles_usec_set"]; !re.MatchString(v) {
			t.Errorf("%s: latency_percentiles_usec_set %q", name, v)
		}
		expectReply(t, c, "+OK\r\n", "CONFIG", "SET", "latency-tracking", "no")
		expectReply(t, c, "+OK\r\n", "SET", "k", "v")
		f, err = infoFields(c, "latencystats")
		if err != nil {
			t.Fatal(err)
		}
		for k := range f {
			fields[name] = append(fields[name], k)
		}
	}
	for i, cmd := range cmds {
		if got, want := replies["kvserver"][i], replies["redis"][i]; got != want {
			t.Errorf("%v: kvserver %q, redis-server %q", cmd, got, want)
		}
	}
	if len(fields["kvserver"]) != 0 || len(fields["redis"]) != 0 {
		t.Errorf("INFO latencystats with latency-tracking no: kvserver %v, redis-server %v", fields["kvserver"], fields["redis"])
	}
}

// TestLatencyHistogramMatchesRedis: LATENCY HISTOGRAM has redis-server's
// shape in RESP2 and RESP3 (a map of command to calls and a map of
// microsecond steps to cumulative counts), counts the same calls, names
// the same commands for a subcommand, a container and an unknown name, and
// steps at the same microsecond values (1, 2, 4, 8, 16, 33, 66, ... as
// Redis's log iterator reports them).
func TestLatencyHistogramMatchesRedis(t *testing.T) {
	t.Parallel()
	steps := regexp.MustCompile(`^(1|2|4|8|16|33|66|132|264|528|1056|2113|4227|8454|16908|33816|67633|135266|270532|541065|1082130|\d{7,})$`)
	for name, s := range map[string]*server{"redis": startRedis(t), "kvserver": startKVServer(t)} {
		for _, proto := range []int{2, 3} {
			c := dialRaw(t, s.Addr)
			if proto == 3 {
				if _, err := c.Call("HELLO", "3"); err != nil {
					t.Fatal(err)
				}
			}
			expectReply(t, c, "+OK\r\n", "CONFIG", "RESETSTAT")
			for range 7 {
				expectReply(t, c, "+OK\r\n", "SET", "k", "v")
			}
			if _, err := c.Call("CONFIG", "GET", "maxmemory"); err != nil {
				t.Fatal(err)
			}
			raw, err := c.Call("LATENCY", "HISTOGRAM", "set", "nosuch", "config", "get")
			if err != nil {
				t.Fatal(err)
			}
			r, err := parseReply(raw)
			if err != nil {
				t.Fatal(err)
			}
			wantType := byte('*')
			if proto == 3 {
				wantType = '%'
			}
			if r.Type != wantType {
				t.Fatalf("%s RESP%d: reply type %q: %q", name, proto, r.Type, raw)
			}
			// Flatten: name, {calls, N, histogram_usec, {step, count...}}.
			var got []string
			for i := 0; i+1 < len(r.Elems); i += 2 {
				cmd, body := r.Elems[i].Str, r.Elems[i+1]
				if len(body.Elems) != 4 || body.Elems[0].Str != "calls" || body.Elems[2].Str != "histogram_usec" {
					t.Fatalf("%s RESP%d: %s's entry %q", name, proto, cmd, raw)
				}
				hist := body.Elems[3].Elems
				if len(hist) == 0 || len(hist)%2 != 0 {
					t.Fatalf("%s RESP%d: %s's histogram %q", name, proto, cmd, raw)
				}
				for j := 0; j < len(hist); j += 2 {
					if !steps.MatchString(strconv.FormatInt(hist[j].Int, 10)) {
						t.Errorf("%s RESP%d: %s steps at %d us", name, proto, cmd, hist[j].Int)
					}
				}
				last := hist[len(hist)-1].Int
				got = append(got, fmt.Sprintf("%s calls=%d last=%d", cmd, body.Elems[1].Int, last))
			}
			// The container names the subcommands that ran, in Redis's
			// dictionary order: compared as a set.
			want := []string{"config|get calls=1 last=1", "config|resetstat calls=1 last=1", "set calls=7 last=7"}
			slices.Sort(got)
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("%s RESP%d: %v, want %v", name, proto, got, want)
			}
			c.Close()
		}
	}
}
