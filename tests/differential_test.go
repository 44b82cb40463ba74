package tests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The differential suite sends the same scripts to a fresh redis-server 7
// and a fresh kvserver and requires identical replies, first in RESP2 and
// then again on connections that opened with HELLO 3. Comparisons are exact
// bytes unless a step says otherwise; the other modes only normalise what
// legitimately differs between two servers (clocks, connection ids,
// iteration order). Run it redis-vs-redis with KVSERVER_DIFF_AGAINST_REDIS=1
// to check that the normalisations are sound, and with
// KVSERVER_DIFF_VERBOSE=1 to log every step's replies.

// envDiffVerbose, when set to 1, logs both replies of every step.
const envDiffVerbose = "KVSERVER_DIFF_VERBOSE"

// compareMode says how the two replies of a step are compared.
type compareMode int

const (
	// cmpExact requires byte-identical replies.
	cmpExact compareMode = iota
	// cmpUnordered compares an aggregate's elements as a sorted multiset;
	// anything else (errors, nulls) must be exact.
	cmpUnordered
	// cmpUnorderedPairs compares a map, or a flat RESP2 array of key, value
	// pairs, as a set of pairs (CONFIG GET with several matches).
	cmpUnorderedPairs
	// cmpApproxInt accepts integers within step.delta of each other
	// (TTL, PTTL, EXPIRETIME of relative expiries).
	cmpApproxInt
	// cmpTypeOnly compares only the RESP type byte (TIME, CLIENT ID).
	cmpTypeOnly
	// cmpErrorPrefix requires two errors with the same first word. Used only
	// where the text is not worth pinning.
	cmpErrorPrefix
	// cmpHello compares a HELLO reply field by field, except server,
	// version and id; errors must be exact.
	cmpHello
	// cmpInfo checks the reply type and, for each dbN line, keys= and
	// expires=, plus the exact value of step.fields.
	cmpInfo
	// cmpScanAll is a pseudo step: it runs SCAN with step.cmd's options from
	// cursor 0 until the cursor returns to 0 on each server and compares
	// the sorted, deduplicated key sets.
	cmpScanAll
	// cmpRandom compares random replies (HRANDFIELD) by shape: the same
	// types and lengths at every level, and every string in either reply
	// one of step.fields; with step.distinct, no string twice in a reply
	// (SRANDMEMBER and SPOP with a positive count).
	cmpRandom
	// cmpSleep is a pseudo step that sleeps step.pause (to let keys expire).
	cmpSleep
	// cmpClosed is a pseudo step that requires both servers to have closed
	// the connection (after QUIT).
	cmpClosed
	// cmpQuiet is a pseudo step that requires both connections to receive
	// nothing for a moment (no stray pub/sub message).
	cmpQuiet
	// cmpUnorderedReplies compares the step's several replies (pub/sub
	// confirmations of a mass unsubscribe, in Redis's hash order) as a
	// multiset of whole replies.
	cmpUnorderedReplies
	// cmpOnlyProto is a pseudo step that skips the rest of the script in
	// the other protocol (what a subscribed connection may do differs
	// between RESP2 and RESP3).
	cmpOnlyProto
	// cmpMasked compares two replies exactly except that the value after
	// any map key (or flat key, value list key) named in step.fields is
	// compared by type only, and integers may differ by step.delta
	// (XINFO's radix-tree-nodes, idle and seen times).
	cmpMasked
)

// step is one command of a script and how to compare its replies.
type step struct {
	cmd    []string
	mode   compareMode
	delta  int64
	fields []string
	pause  time.Duration
	// scan is the command and key before the cursor of a cmpScanAll
	// step over a collection (ZSCAN key); nil for SCAN.
	scan []string
	// other sends the step on the script's second connection to each
	// server (WATCH races: another client's write).
	other bool
	// replies is how many replies the step reads (0 means 1): SUBSCRIBE
	// answers once per channel. listen reads them without sending a
	// command (messages published by another connection).
	replies int
	listen  bool
	// distinct requires a cmpRandom reply's strings to differ.
	distinct bool
}

// script is a named sequence of steps run on one fresh connection per
// server, after FLUSHALL and SELECT 0.
type script struct {
	name  string
	steps []step
}

// do is an exact step.
func do(args ...string) step { return step{cmd: args} }

// unordered compares the aggregate reply as a multiset (KEYS).
func unordered(args ...string) step { return step{cmd: args, mode: cmpUnordered} }

// unorderedPairs compares a map reply as a set of pairs (CONFIG GET).
func unorderedPairs(args ...string) step { return step{cmd: args, mode: cmpUnorderedPairs} }

// approxInt accepts integer replies within delta.
func approxInt(delta int64, args ...string) step {
	return step{cmd: args, mode: cmpApproxInt, delta: delta}
}

// masked compares the values of the keys fields by type only and
// integers within delta (see cmpMasked).
func masked(delta int64, fields []string, args ...string) step {
	return step{cmd: args, mode: cmpMasked, delta: delta, fields: fields}
}

// typeOnly compares only the reply's type byte.
func typeOnly(args ...string) step { return step{cmd: args, mode: cmpTypeOnly} }

// errorPrefix requires errors with the same first word.
func errorPrefix(args ...string) step { return step{cmd: args, mode: cmpErrorPrefix} }

// hello compares a HELLO reply ignoring server, version and id.
func hello(args ...string) step { return step{cmd: args, mode: cmpHello} }

// info compares an INFO reply's type, keyspace lines and the named fields.
func info(section string, fields ...string) step {
	cmd := []string{"INFO"}
	if section != "" {
		cmd = append(cmd, strings.Fields(section)...)
	}
	return step{cmd: cmd, mode: cmpInfo, fields: fields}
}

// scanAll iterates SCAN 0 <opts...> to completion on both servers.
func scanAll(opts ...string) step { return step{cmd: opts, mode: cmpScanAll} }

// scanKeyAll iterates cmd key 0 <opts...> (HSCAN, SSCAN, ZSCAN) to
// completion on both servers; HSCAN's and ZSCAN's elements are compared
// as pairs.
func scanKeyAll(cmd, key string, opts ...string) step {
	return step{cmd: opts, mode: cmpScanAll, fields: []string{cmd, key}}
}

// random compares a random reply by its shape and membership in members.
func random(members []string, args ...string) step {
	return step{cmd: args, mode: cmpRandom, fields: members}
}

// randomDistinct is random for replies whose picks must all differ.
func randomDistinct(members []string, args ...string) step {
	st := random(members, args...)
	st.distinct = true
	return st
}

// onOther runs st on the script's second connection to each server,
// opened at its first use like the first one (protocol, SELECT 0) but
// without FLUSHALL.
func onOther(st step) step {
	st.other = true
	return st
}

// doN is an exact step that reads n replies (SUBSCRIBE a b c).
func doN(n int, args ...string) step { return step{cmd: args, replies: n} }

// unorderedN reads n replies and compares them as a multiset; without a
// command it only listens.
func unorderedN(n int, args ...string) step {
	return step{cmd: args, replies: n, listen: len(args) == 0, mode: cmpUnorderedReplies}
}

// listen reads n replies without sending anything: the messages another
// connection's PUBLISH delivered.
func listen(n int) step { return step{listen: true, replies: n} }

// onlyProto runs the rest of the script only in RESP proto.
func onlyProto(proto int) step { return step{mode: cmpOnlyProto, delta: int64(proto)} }

// quiet requires that nothing arrives on the connection for a moment.
func quiet() step { return step{mode: cmpQuiet} }

// sleep pauses the script.
func sleep(d time.Duration) step { return step{mode: cmpSleep, pause: d} }

// expectClosed requires both connections to be closed by the server.
func expectClosed() step { return step{mode: cmpClosed} }

// arity returns exact steps for command lines that have the wrong number
// of arguments, one per line.
func arity(lines ...[]string) []step {
	steps := make([]step, len(lines))
	for i, l := range lines {
		steps[i] = do(l...)
	}
	return steps
}

// seq concatenates steps and step slices into one list.
func seq(parts ...any) []step {
	var out []step
	for _, p := range parts {
		switch v := p.(type) {
		case step:
			out = append(out, v)
		case []step:
			out = append(out, v...)
		default:
			panic(fmt.Sprintf("seq: unexpected %T", p))
		}
	}
	return out
}

// line builds a command line for arity tables.
func line(a ...string) []string { return a }

// runDifferential starts one redis-server and one kvserver and runs every
// script on both, in RESP2 and in RESP3.
func runDifferential(t *testing.T, scripts []script) {
	t.Helper()
	ref := startRedis(t, "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru")
	kv := startKVServer(t, "--maxmemory", "256mb")
	steps := 0
	for _, sc := range scripts {
		steps += len(sc.steps)
	}
	t.Logf("%d scripts, %d steps, each run in RESP2 and RESP3", len(scripts), steps)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			for _, sc := range scripts {
				t.Run(sc.name, func(t *testing.T) {
					runScript(t, ref, kv, proto, sc)
				})
			}
		})
	}
}

// side is one server's connection within a script.
type side struct {
	name string
	c    *rawClient
}

// call sends one command and reads its reply.
func (s side) call(cmd []string) ([]byte, error) { return s.c.Call(cmd...) }

// exchange runs a step: sends its command (unless it only listens) and
// reads its replies, joined, sorted first for cmpUnorderedReplies.
func (s side) exchange(st step) ([]byte, error) {
	if st.replies == 0 && !st.listen {
		return s.call(st.cmd)
	}
	if !st.listen {
		if err := s.c.SendErr(encodeCommand(st.cmd)); err != nil {
			return nil, err
		}
	}
	var replies [][]byte
	for range max(st.replies, 1) {
		raw, err := s.c.ReadReply()
		if err != nil {
			return bytes.Join(replies, nil), err
		}
		replies = append(replies, raw)
	}
	if st.mode == cmpUnorderedReplies {
		slices.SortFunc(replies, bytes.Compare)
	}
	return bytes.Join(replies, nil), nil
}

// runScript runs one script on fresh connections to both servers.
func runScript(t *testing.T, ref, kv *server, proto int, sc script) {
	verbose := os.Getenv(envDiffVerbose) == "1"
	setup := [][]string{{"SELECT", "0"}}
	if proto == 3 {
		setup = append([][]string{{"HELLO", "3"}}, setup...)
	}
	sides := dialSides(t, ref, kv, append([][]string{{"FLUSHALL"}}, setup...))
	var others *[2]side
	for i, st := range sc.steps {
		where := fmt.Sprintf("script %q (RESP%d) step %d %s", sc.name, proto, i, describe(st))
		sides := sides
		if st.other {
			if others == nil {
				o := dialSides(t, ref, kv, setup)
				others = &o
			}
			sides = *others
		}
		switch st.mode {
		case cmpSleep:
			time.Sleep(st.pause)
			continue
		case cmpClosed:
			for _, s := range sides {
				if raw, err := readWithin(s.c, time.Second); !isClosed(err) {
					t.Errorf("%s: %s did not close the connection: read %s, %v", where, s.name, strconv.Quote(string(raw)), err)
				}
			}
			continue
		case cmpScanAll:
			if !compareScanAll(t, where, sides, st.fields, st.cmd) {
				return
			}
			continue
		case cmpOnlyProto:
			if int64(proto) != st.delta {
				return
			}
			continue
		case cmpQuiet:
			for _, s := range sides {
				if raw, err := readWithin(s.c, 150*time.Millisecond); err == nil || isClosed(err) {
					t.Errorf("%s: %s sent %s, %v", where, s.name, strconv.Quote(string(raw)), err)
				}
			}
			continue
		}
		var raws [2][]byte
		for j, s := range sides {
			raw, err := s.exchange(st)
			if err != nil {
				t.Errorf("%s: %s: %v (partial reply %s)", where, s.name, err, strconv.Quote(string(raw)))
				return
			}
			raws[j] = raw
		}
		if verbose {
			t.Logf("%s:\n  redis:    %s\n  kvserver: %s", where, strconv.Quote(string(raws[0])), strconv.Quote(string(raws[1])))
		}
		if why := compareReplies(st, raws[0], raws[1]); why != "" {
			t.Errorf("%s: %s\n  redis:    %s\n  kvserver: %s", where, why, quoteTrunc(raws[0]), quoteTrunc(raws[1]))
		}
	}
}

// dialSides opens one connection to each server and runs the setup
// commands on both, which must not fail.
func dialSides(t *testing.T, ref, kv *server, setup [][]string) [2]side {
	t.Helper()
	sides := [2]side{{"redis", dialRaw(t, ref.Addr)}, {"kvserver", dialRaw(t, kv.Addr)}}
	for _, cmd := range setup {
		for _, s := range sides {
			raw, err := s.call(cmd)
			if err != nil {
				t.Fatalf("%s: setup %q: %v", s.name, cmd, err)
			}
			if len(raw) == 0 || raw[0] == '-' || raw[0] == '!' {
				t.Fatalf("%s: setup %q answered %s", s.name, cmd, strconv.Quote(string(raw)))
			}
		}
	}
	return sides
}

// readWithin reads one reply with a shorter deadline than usual, for
// steps that expect nothing but EOF.
func readWithin(c *rawClient, d time.Duration) ([]byte, error) {
	saved := c.Timeout
	c.Timeout = d
	defer func() { c.Timeout = saved }()
	return c.ReadReply()
}

// describe renders a step's command for messages.
func describe(st step) string {
	switch st.mode {
	case cmpSleep:
		return fmt.Sprintf("(sleep %v)", st.pause)
	case cmpClosed:
		return "(connection closed?)"
	case cmpScanAll:
		return fmt.Sprintf("(SCAN to completion %q)", st.cmd)
	case cmpQuiet:
		return "(nothing arrives?)"
	}
	if st.listen {
		return fmt.Sprintf("(read %d replies)", st.replies)
	}
	prefix := ""
	if st.other {
		prefix = "(other connection) "
	}
	parts := make([]string, len(st.cmd))
	for i, a := range st.cmd {
		if len(a) > 40 {
			a = a[:40] + fmt.Sprintf("...(%d bytes)", len(a))
		}
		parts[i] = a
	}
	return prefix + fmt.Sprintf("%q", parts)
}

// quoteTrunc quotes a reply for a message, shortening huge ones.
func quoteTrunc(raw []byte) string {
	const max = 4000
	if len(raw) > max {
		return strconv.Quote(string(raw[:max])) + fmt.Sprintf("...(%d bytes)", len(raw))
	}
	return strconv.Quote(string(raw))
}

// isClosed reports whether err means the peer closed the connection.
func isClosed(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var oe *net.OpError
	return errors.As(err, &oe) // connection reset by peer
}

// compareReplies returns "" when the replies agree under st's mode, or why
// they do not.
func compareReplies(st step, a, b []byte) string {
	if st.mode == cmpExact || st.mode == cmpUnorderedReplies {
		if bytes.Equal(a, b) {
			return ""
		}
		return "replies differ"
	}
	ra, errA := parseReply(a)
	rb, errB := parseReply(b)
	if errA != nil || errB != nil {
		return fmt.Sprintf("unparsable reply (redis: %v, kvserver: %v)", errA, errB)
	}
	switch st.mode {
	case cmpTypeOnly:
		if ra.Type != rb.Type {
			return fmt.Sprintf("reply types differ: %q vs %q", ra.Type, rb.Type)
		}
		return ""
	case cmpErrorPrefix:
		if !ra.IsError() || !rb.IsError() {
			return "expected two errors"
		}
		if firstWord(ra.Str) != firstWord(rb.Str) {
			return "error codes differ"
		}
		return ""
	case cmpApproxInt:
		return compareApprox(ra, rb, st.delta)
	case cmpUnordered:
		return compareUnordered(ra, rb, false)
	case cmpUnorderedPairs:
		return compareUnordered(ra, rb, true)
	case cmpHello:
		return compareHello(ra, rb)
	case cmpInfo:
		return compareInfo(ra, rb, st.fields)
	case cmpRandom:
		if why := compareRandom(ra, rb, st.fields); why != "" || !st.distinct {
			return why
		}
		return compareDistinct(ra, rb)
	case cmpMasked:
		return compareMasked(ra, rb, st.fields, st.delta)
	}
	return fmt.Sprintf("unknown comparison mode %d", st.mode)
}

// compareRandom requires the same shape (types and lengths at every
// level) and every string or double of either reply to be one of members;
// other leaves (errors, nulls, integers) must be identical.
func compareRandom(a, b Reply, members []string) string {
	if a.Type != b.Type || len(a.Elems) != len(b.Elems) {
		return "reply shapes differ"
	}
	if a.IsAggregate() {
		for i := range a.Elems {
			if why := compareRandom(a.Elems[i], b.Elems[i], members); why != "" {
				return fmt.Sprintf("element %d: %s", i, why)
			}
		}
		return ""
	}
	if a.Type != '$' && a.Type != ',' { // strings and RESP3 doubles (scores) are picks
		if !bytes.Equal(a.Raw, b.Raw) {
			return "replies differ"
		}
		return ""
	}
	for _, r := range []Reply{a, b} {
		if !slices.Contains(members, r.Str) {
			return fmt.Sprintf("%q is not a member", r.Str)
		}
	}
	return ""
}

// compareMasked is cmpMasked's comparison.
func compareMasked(a, b Reply, fields []string, delta int64) string {
	if bytes.Equal(a.Raw, b.Raw) {
		return ""
	}
	if a.Type != b.Type {
		return fmt.Sprintf("reply types differ: %q vs %q", a.Type, b.Type)
	}
	if !a.IsAggregate() {
		return compareApprox(a, b, delta)
	}
	if len(a.Elems) != len(b.Elems) {
		return "aggregate lengths differ"
	}
	for i := range a.Elems {
		if i%2 == 1 && a.Elems[i-1].Type != '*' && slices.Contains(fields, a.Elems[i-1].Str) {
			if a.Elems[i].Type != b.Elems[i].Type {
				return fmt.Sprintf("element %d (%s): types differ", i, a.Elems[i-1].Str)
			}
			continue
		}
		if why := compareMasked(a.Elems[i], b.Elems[i], fields, delta); why != "" {
			return fmt.Sprintf("element %d: %s", i, why)
		}
	}
	return ""
}

// compareDistinct requires no string to repeat within either reply.
func compareDistinct(a, b Reply) string {
	for _, r := range []Reply{a, b} {
		seen := make(map[string]bool, len(r.Elems))
		for _, e := range r.Elems {
			if seen[e.Str] {
				return fmt.Sprintf("%q picked twice", e.Str)
			}
			seen[e.Str] = true
		}
	}
	return ""
}

// firstWord is an error's code: "ERR", "WRONGTYPE", "NOPROTO", ...
func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i]
	}
	return s
}

// compareApprox accepts equal replies, or two integers (or two aggregates
// of integers) within delta of each other.
func compareApprox(a, b Reply, delta int64) string {
	if bytes.Equal(a.Raw, b.Raw) {
		return ""
	}
	if a.Type != b.Type {
		return fmt.Sprintf("reply types differ: %q vs %q", a.Type, b.Type)
	}
	switch {
	case a.Type == ':':
		if d := a.Int - b.Int; d > delta || d < -delta {
			return fmt.Sprintf("integers differ by more than %d", delta)
		}
		return ""
	case a.IsAggregate() && len(a.Elems) == len(b.Elems):
		for i := range a.Elems {
			if why := compareApprox(a.Elems[i], b.Elems[i], delta); why != "" {
				return fmt.Sprintf("element %d: %s", i, why)
			}
		}
		return ""
	}
	return "replies differ"
}

// compareUnordered compares two aggregates as multisets of elements (or of
// key, value pairs); non-aggregates must be byte-identical.
func compareUnordered(a, b Reply, pairs bool) string {
	if !a.IsAggregate() || !b.IsAggregate() {
		if bytes.Equal(a.Raw, b.Raw) {
			return ""
		}
		return "replies differ"
	}
	if a.Type != b.Type {
		return fmt.Sprintf("aggregate types differ: %q vs %q", a.Type, b.Type)
	}
	ka, errA := multiset(a, pairs)
	kb, errB := multiset(b, pairs)
	if errA != nil || errB != nil {
		return fmt.Sprintf("odd number of elements for pairs (redis: %v, kvserver: %v)", errA, errB)
	}
	if strings.Join(ka, "\x00") != strings.Join(kb, "\x00") {
		return fmt.Sprintf("element multisets differ:\n    redis:    %q\n    kvserver: %q", ka, kb)
	}
	return ""
}

// multiset returns an aggregate's elements (or pairs) as sorted raw strings.
func multiset(r Reply, pairs bool) ([]string, error) {
	var out []string
	if pairs {
		if len(r.Elems)%2 != 0 {
			return nil, errors.New("odd length")
		}
		for i := 0; i < len(r.Elems); i += 2 {
			out = append(out, string(r.Elems[i].Raw)+string(r.Elems[i+1].Raw))
		}
	} else {
		for _, e := range r.Elems {
			out = append(out, string(e.Raw))
		}
	}
	sort.Strings(out)
	return out, nil
}

// helloVolatile are HELLO fields that legitimately differ between servers.
func helloVolatile(key string) bool {
	switch key {
	case "server", "version", "id":
		return true
	}
	return false
}

// compareHello compares HELLO replies field by field except the volatile
// ones; errors must be identical.
func compareHello(a, b Reply) string {
	if a.IsError() || b.IsError() || !a.IsAggregate() || !b.IsAggregate() {
		if bytes.Equal(a.Raw, b.Raw) {
			return ""
		}
		return "replies differ"
	}
	if a.Type != b.Type {
		return fmt.Sprintf("reply types differ: %q vs %q", a.Type, b.Type)
	}
	if len(a.Elems) != len(b.Elems) || len(a.Elems)%2 != 0 {
		return fmt.Sprintf("HELLO field counts differ: %d vs %d elements", len(a.Elems), len(b.Elems))
	}
	for i := 0; i < len(a.Elems); i += 2 {
		ka, kb := a.Elems[i], b.Elems[i]
		if !bytes.Equal(ka.Raw, kb.Raw) {
			return fmt.Sprintf("HELLO field %d is %q vs %q", i/2, ka.Raw, kb.Raw)
		}
		if helloVolatile(ka.Str) {
			if a.Elems[i+1].Type != b.Elems[i+1].Type {
				return fmt.Sprintf("HELLO %s types differ", ka.Str)
			}
			continue
		}
		if !bytes.Equal(a.Elems[i+1].Raw, b.Elems[i+1].Raw) {
			return fmt.Sprintf("HELLO %s differs: %q vs %q", ka.Str, a.Elems[i+1].Raw, b.Elems[i+1].Raw)
		}
	}
	return ""
}

// compareInfo requires both INFO replies to be of the same string type
// (bulk in RESP2, verbatim in RESP3), the same dbN lines as far as keys=
// and expires= go, and the same values for fields. Errors must be exact.
func compareInfo(a, b Reply, fields []string) string {
	if a.IsError() || b.IsError() {
		if bytes.Equal(a.Raw, b.Raw) {
			return ""
		}
		return "replies differ"
	}
	if a.Type != b.Type || (a.Type != '$' && a.Type != '=') {
		return fmt.Sprintf("INFO reply types %q vs %q, want both bulk or both verbatim", a.Type, b.Type)
	}
	if a.Type == '=' && a.Format != b.Format {
		return fmt.Sprintf("verbatim formats %q vs %q", a.Format, b.Format)
	}
	ia, ib := parseInfo(a.Str), parseInfo(b.Str)
	if ka, kb := keyspaceLines(ia), keyspaceLines(ib); ka != kb {
		return fmt.Sprintf("keyspace lines differ: %q vs %q", ka, kb)
	}
	for _, f := range fields {
		va, okA := ia[f]
		vb, okB := ib[f]
		if okA != okB || va != vb {
			return fmt.Sprintf("INFO field %s: %q (present %v) vs %q (present %v)", f, va, okA, vb, okB)
		}
	}
	return ""
}

// parseInfo turns INFO text into field -> value.
func parseInfo(text string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(text, "\r\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// keyspaceLines renders the dbN entries as "dbN:keys=K,expires=E;" in db
// order, dropping avg_ttl and anything else.
func keyspaceLines(m map[string]string) string {
	var dbs []int
	for k := range m {
		if n, err := strconv.Atoi(strings.TrimPrefix(k, "db")); err == nil && strings.HasPrefix(k, "db") {
			dbs = append(dbs, n)
		}
	}
	sort.Ints(dbs)
	var b strings.Builder
	for _, n := range dbs {
		vals := make(map[string]string)
		for _, kv := range strings.Split(m["db"+strconv.Itoa(n)], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				vals[k] = v
			}
		}
		fmt.Fprintf(&b, "db%d:keys=%s,expires=%s;", n, vals["keys"], vals["expires"])
	}
	return b.String()
}

// compareScanAll runs SCAN to completion on both servers and compares the
// key sets; an error reply must be identical on both. It returns false if a
// connection failed and the script cannot go on.
func compareScanAll(t *testing.T, where string, sides [2]side, prefix, opts []string) bool {
	t.Helper()
	if prefix == nil {
		prefix = []string{"SCAN"}
	}
	pairs := len(prefix) > 1 && !strings.EqualFold(prefix[0], "SSCAN")
	var keys [2][]string
	var errs [2]string
	for j, s := range sides {
		seen := make(map[string]bool)
		cursor := "0"
		for iter := 0; ; iter++ {
			if iter > 100000 {
				t.Errorf("%s: %s: SCAN did not finish", where, s.name)
				return false
			}
			raw, err := s.call(append(append(append([]string(nil), prefix...), cursor), opts...))
			if err != nil {
				t.Errorf("%s: %s: %v", where, s.name, err)
				return false
			}
			r, err := parseReply(raw)
			if err != nil {
				t.Errorf("%s: %s: %v", where, s.name, err)
				return false
			}
			if r.IsError() {
				errs[j] = string(raw)
				break
			}
			if r.Type != '*' || len(r.Elems) != 2 || r.Elems[0].Type != '$' || r.Elems[1].Type != '*' {
				t.Errorf("%s: %s: malformed SCAN reply %s", where, s.name, quoteTrunc(raw))
				return true
			}
			elems := r.Elems[1].Elems
			for i := 0; i < len(elems); i++ {
				k := elems[i].Str
				if pairs && i+1 < len(elems) {
					i++
					k += "\x00" + elems[i].Str
				}
				seen[k] = true
			}
			cursor = r.Elems[0].Str
			if cursor == "0" {
				break
			}
		}
		for k := range seen {
			keys[j] = append(keys[j], k)
		}
		sort.Strings(keys[j])
	}
	if errs[0] != errs[1] {
		t.Errorf("%s: error replies differ\n  redis:    %s\n  kvserver: %s", where, strconv.Quote(errs[0]), strconv.Quote(errs[1]))
	} else if strings.Join(keys[0], "\x00") != strings.Join(keys[1], "\x00") {
		t.Errorf("%s: scanned key sets differ\n  redis:    %q\n  kvserver: %q", where, keys[0], keys[1])
	}
	return true
}
