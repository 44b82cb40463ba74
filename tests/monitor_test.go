package tests

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// monitorStamp matches what differs between two servers' monitor lines:
// the time and the client's port (a script's commands come from "lua").
var monitorStamp = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) (?:127\.0\.0\.1:\d+|(lua))\] `)

// monitorStampless is a monitor line with monitorStamp's parts replaced.
const monitorStampless = "+T [$1 $2] "

// TestMonitorMatchesRedis runs the same commands on redis-server and
// kvserver with a MONITOR connection open and compares the feeds, time and
// port aside: quoting of odd bytes, AUTH and HELLO AUTH redacted, admin
// commands left out, a transaction's commands before EXEC, the database
// after SELECT, refused commands left out; scripts and functions before
// the commands they run, which come from "lua" in the script's database,
// those a script could not run left out; the monitor's own keyspace
// commands refused and its others fed back; then RESET ends the feed.
func TestMonitorMatchesRedis(t *testing.T) {
	t.Parallel()
	ref := startRedis(t)
	kv := startKVServer(t)
	cmds := [][]string{
		{"SET", "k", "a b\"c\\\n\r\t\a\b\x00\xff"},
		{"get", "k"},
		{"EVAL", "redis.call('set', KEYS[1], ARGV[1]) redis.call('select', 2) redis.pcall('nosuch') redis.pcall('get') " +
			"redis.pcall('set', 'x', 'y', 'z') redis.pcall('config', 'get', 'maxmemory') return redis.call('get', KEYS[1])", "1", "s", "v\x00"},
		{"EVALSHA", "0000000000000000000000000000000000000000", "0"},
		{"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "s"},
		{"EVAL", "return 1", "x"},
		{"FUNCTION", "LOAD", "REPLACE", "#!lua name=mon\nredis.register_function('f', function(keys, args) return redis.call('incr', keys[1]) end)"},
		{"FCALL", "f", "1", "n"},
		{"FCALL", "nosuch", "0"},
		{"MULTI"},
		{"EVAL", "return redis.call('incr', KEYS[1])", "1", "n"},
		{"EXEC"},
		{"AUTH", "user", "secret"},
		{"HELLO", "2", "AUTH", "u", "p"},
		{"HELLO", "3", "SETNAME", "n"},
		{"HELLO", "2"},
		{"CONFIG", "GET", "maxmemory"},
		{"CLIENT", "LIST"},
		{"SELECT", "3"},
		{"MULTI"},
		{"SET", "a", "1"},
		{"INCR", "a"},
		{"EXEC"},
		{"CLIENT", "ID"},
		{"NOSUCH", "x"},
		{"GET"},
		{"SELECT", "0"},
		{"PING", "last"},
	}
	var feeds [2][]string
	for i, srv := range []*server{ref, kv} {
		mon := dialRaw(t, srv.Addr)
		other := dialRaw(t, srv.Addr)
		if got := string(mon.Do("MONITOR")); got != "+OK\r\n" {
			t.Fatalf("MONITOR answered %q", got)
		}
		for _, c := range cmds {
			other.Do(c...)
		}
		for {
			line, err := mon.ReadReply()
			if err != nil {
				t.Fatalf("monitor feed after %d lines: %v", len(feeds[i]), err)
			}
			s := monitorStamp.ReplaceAllString(string(line), monitorStampless)
			feeds[i] = append(feeds[i], s)
			if strings.Contains(s, `"last"`) {
				break
			}
		}
		// The monitor's own commands: no keyspace access (Redis treats it
		// as a replica), the others answered and then fed back.
		for _, c := range [][]string{{"GET", "k"}, {"SET", "k", "v"}, {"PING"}, {"MULTI"}, {"GET", "k"}, {"EXEC"}} {
			feeds[i] = append(feeds[i], string(mon.Do(c...)))
			if c[0] != "GET" && c[0] != "SET" {
				line, err := mon.ReadReply()
				if err != nil {
					t.Fatalf("feed of the monitor's own %q: %v", c, err)
				}
				feeds[i] = append(feeds[i], monitorStamp.ReplaceAllString(string(line), monitorStampless))
			}
		}
		if got := string(mon.Do("RESET")); got != "+RESET\r\n" {
			t.Fatalf("RESET answered %q", got)
		}
		other.Do("PING", "after reset")
		mon.Timeout = 200 * time.Millisecond
		if line, err := mon.ReadReply(); err == nil {
			t.Fatalf("feed after RESET: %q", line)
		}
	}
	if strings.Join(feeds[0], "") != strings.Join(feeds[1], "") {
		t.Fatalf("monitor feeds differ:\nredis    %q\nkvserver %q", feeds[0], feeds[1])
	}
}

// TestStalledMonitorIsDroppedNotWaitedFor fills the output limit of a
// monitor that never reads: kvserver closes it while the writer's
// commands keep their pace.
func TestStalledMonitorIsDroppedNotWaitedFor(t *testing.T) {
	t.Parallel()
	kv := startKVServer(t, "--client-output-buffer-limit", "pubsub 1mb 0 0")
	mon := dialRaw(t, kv.Addr)
	mon.Do("MONITOR")
	writer := dialRaw(t, kv.Addr)
	value := strings.Repeat("v", 64<<10)
	start := time.Now()
	for range 400 {
		writer.Do("SET", "big", value)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("400 SETs with a stalled monitor took %v", took)
	}
	list := string(writer.Do("CLIENT", "LIST"))
	if strings.Contains(list, "flags=O") {
		t.Fatalf("stalled monitor still connected:\n%s", list)
	}
}
