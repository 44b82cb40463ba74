package tests

// The crash chaos test: kvserver is killed with SIGKILL twenty times under
// a mixed load, and after every restart each chunk is checked byte for
// byte against a model of what the test wrote.
//
// Every value says which write produced it, so a reader can tell a stale
// value, a torn chunk and damaged bytes apart:
//   - a chunk's kv_bytes starts with the write's sequence number and the
//     chunk id, and the rest is random bytes derived from the sequence
//     number (chaosData);
//   - its metadata is LMCache's 28-byte bf16 KV_2LTD metadata of shape
//     [2, 1, seq, D]: the token count is the sequence number, so the
//     metadata names the write of the data it describes (chaosMeta);
//   - a small key's value is "key|seq|" and random bytes (chaosSmallValue).
//
// Sequence numbers are unique across the test and per key increasing.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	// chaosCycles is how many times the server is killed.
	chaosCycles = 20
	// chaosChunks is the number of chunk ids; with kv_bytes of 64 KiB-1 MiB
	// the live data is about 25 MiB, well over --maxmemory.
	chaosChunks = 48
	// chaosWorkers is the number of client goroutines; each owns the
	// chunks and small keys whose index is its number modulo chaosWorkers,
	// so that every key has one writer and its history is sequential.
	chaosWorkers = 4
	// chaosSmallKeys is the number of small keys per worker.
	chaosSmallKeys = 16
	// chaosSettle is how long before the kill a change must have been
	// acknowledged to be durable: write-behind waits for 2 s without
	// writes and the disk tier is flushed each second (README,
	// "Durability promise"), plus slack for a loaded machine.
	chaosSettle = 5 * time.Second
	// chaosTTLSlack is how close to its deadline a key may or may not have
	// expired yet, as seen by the test's clock.
	chaosTTLSlack = 500 * time.Millisecond
	// envChaosSeed fixes the seed (the one a failing run logged).
	envChaosSeed = "KVSERVER_CHAOS_SEED"
)

// chaosChunkKey is the LMCache key prefix of chunk id.
func chaosChunkKey(id int) string {
	return fmt.Sprintf("chaos@1@0@%064x@bfloat16", id*7919+17)
}

// chaosSmallKey is the name of worker w's j-th small key.
func chaosSmallKey(w, j int) string { return fmt.Sprintf("chaos:small:%d:%d", w, j) }

// chaosMaxSeq bounds the sequence numbers: chaosMeta's shape needs
// 4*seq <= 1 MiB.
const chaosMaxSeq = 1 << 18

// chaosHidden is the hidden size of write seq's chunk: its kv_bytes hold
// 4*seq*hidden bytes, 64 KiB to 1 MiB.
func chaosHidden(seq int64) int {
	target := 64<<10 + rand.New(rand.NewPCG(uint64(seq), 0xc4a05)).IntN(960<<10)
	return max(1, target/(4*int(seq)))
}

// chaosMeta is the metadata value of write seq.
func chaosMeta(seq int64) string {
	h := chaosHidden(seq)
	return kvMetadata(4*int(seq)*h, 1, int(seq), h)
}

// chaosData is the kv_bytes value of write seq to chunk id.
func chaosData(id int, seq int64) []byte {
	b := randomBytes(uint64(seq)<<8|0xda, 4*int(seq)*chaosHidden(seq))
	binary.LittleEndian.PutUint64(b[0:], uint64(seq))
	binary.LittleEndian.PutUint64(b[8:], uint64(id))
	return b
}

// chaosSmallValue is the value of write seq to small key key.
func chaosSmallValue(key string, seq int64) string {
	return key + "|" + strconv.FormatInt(seq, 10) + "|" + string(randomBytes(uint64(seq)<<8|0x5a, 16+int(seq%2000)))
}

// errCorrupt marks a value that is not exactly what any write of the test
// stored under its key.
var errCorrupt = errors.New("corrupt value")

// chaosDataSeq returns the write a kv_bytes value of chunk id comes from,
// or errCorrupt unless the value is exactly chaosData of that write.
func chaosDataSeq(id int, v []byte, maxSeq int64) (int64, error) {
	if len(v) < 16 {
		return 0, fmt.Errorf("%w: kv_bytes of %d bytes", errCorrupt, len(v))
	}
	seq := int64(binary.LittleEndian.Uint64(v[0:]))
	if got := binary.LittleEndian.Uint64(v[8:]); got != uint64(id) {
		return 0, fmt.Errorf("%w: kv_bytes of chunk %d says chunk %d", errCorrupt, id, got)
	}
	if seq < 1 || seq > maxSeq {
		return 0, fmt.Errorf("%w: kv_bytes names write %d, never made", errCorrupt, seq)
	}
	want := chaosData(id, seq)
	if len(v) != len(want) {
		return 0, fmt.Errorf("%w: kv_bytes of write %d has %d bytes, want %d", errCorrupt, seq, len(v), len(want))
	}
	if i := firstDiff(v, want); i >= 0 {
		return 0, fmt.Errorf("%w: kv_bytes of write %d differs from byte %d on", errCorrupt, seq, i)
	}
	return seq, nil
}

// chaosMetaSeq returns the write a metadata value comes from, or
// errCorrupt unless the value is exactly chaosMeta of that write.
func chaosMetaSeq(v []byte, maxSeq int64) (int64, error) {
	if len(v) != 28 {
		return 0, fmt.Errorf("%w: metadata of %d bytes", errCorrupt, len(v))
	}
	seq := int64(int32(binary.LittleEndian.Uint32(v[20:])))
	if seq < 1 || seq > maxSeq {
		return 0, fmt.Errorf("%w: metadata names write %d, never made", errCorrupt, seq)
	}
	if string(v) != chaosMeta(seq) {
		return 0, fmt.Errorf("%w: metadata %x is not that of write %d", errCorrupt, v, seq)
	}
	return seq, nil
}

// chaosSmallSeq returns the write a small key's value comes from, or
// errCorrupt unless the value is exactly chaosSmallValue of that write.
func chaosSmallSeq(key string, v []byte, maxSeq int64) (int64, error) {
	rest, ok := bytes.CutPrefix(v, []byte(key+"|"))
	if !ok {
		return 0, fmt.Errorf("%w: value of %s starts %q", errCorrupt, key, v[:min(len(v), 40)])
	}
	num, _, _ := bytes.Cut(rest, []byte("|"))
	seq, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || seq < 1 || seq > maxSeq {
		return 0, fmt.Errorf("%w: value of %s names write %q", errCorrupt, key, num)
	}
	if want := chaosSmallValue(key, seq); string(v) != want {
		return 0, fmt.Errorf("%w: value of %s is not that of write %d (%d bytes, want %d)", errCorrupt, key, seq, len(v), len(want))
	}
	return seq, nil
}

// firstDiff is the index of the first byte where a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// keyModel is what one key holds as far as the test knows.
type keyModel struct {
	// seq is the write the key holds, 0 when it does not exist.
	seq int64
	// deadline is the earliest the key may expire, zero for none.
	deadline time.Time
	// latest is the latest it may expire (zero: deadline). The server
	// fixes an expiry at some moment between sending the command and
	// reading its reply, which under -race on a loaded machine can be
	// seconds apart, so the test knows the deadline only to that span.
	latest time.Time
}

// expiring returns k with the expiry a server set at some moment between
// sent and answered: now+ttl for a now in that span.
func (k keyModel) expiring(sent, answered time.Time, ttl time.Duration) keyModel {
	k.deadline, k.latest = sent.Add(ttl), answered.Add(ttl)
	return k
}

// at is what a read at time t must find: the write held (0: no key), and
// whether that is certain; it is not from chaosTTLSlack before the
// earliest deadline to chaosTTLSlack after the latest, where the key may
// or may not have expired yet.
func (k keyModel) at(t time.Time) (seq int64, certain bool) {
	if k.seq == 0 || k.deadline.IsZero() || t.Before(k.deadline.Add(-chaosTTLSlack)) {
		return k.seq, true
	}
	latest := k.latest
	if latest.Before(k.deadline) {
		latest = k.deadline
	}
	if t.After(latest.Add(chaosTTLSlack)) {
		return 0, true
	}
	return k.seq, false
}

// during is what a command sent at t0 and answered at t1 must find: the
// server ran it at some moment in between, so the answer is certain only
// where the key is certainly in the same state over the whole span.
func (k keyModel) during(t0, t1 time.Time) (seq int64, certain bool) {
	s0, c0 := k.at(t0)
	s1, c1 := k.at(t1)
	return s0, c0 && c1 && s0 == s1
}

// chunkModel is what the test knows about one chunk (kv_bytes and
// metadata keys). Only its worker touches it while load runs.
type chunkModel struct {
	data, meta keyModel
	// held holds every (kv_bytes, metadata) pair of writes the chunk held
	// since the last check, the one found then included: what a restart
	// may find. "Absent" is always possible.
	held map[[2]int64]bool
	// mayExpire is set when a key of the chunk had a short expiry since
	// the last check: a key that expires on its own splits the chunk, as
	// a client's single-key DEL would, so half a chunk is no error.
	mayExpire bool
	// changedAt is when the last change since the last check was
	// acknowledged (zero: unchanged since).
	changedAt time.Time
	// inFlight is set while a change is sent: if the kill comes first, its
	// outcome is unknown.
	inFlight bool
}

// smallModel is what the test knows about one small key.
type smallModel struct {
	key keyModel
	// seen holds every write the key held since the last check.
	seen      map[int64]bool
	changedAt time.Time
	inFlight  bool
}

// chaosModel is the test's record of everything it wrote.
type chaosModel struct {
	t      *testing.T
	seq    atomic.Int64
	chunks [chaosChunks]chunkModel
	small  map[string]*smallModel
	// failures counts reported errors; past a limit the details are
	// dropped so that a broken server does not flood the log.
	failures atomic.Int64
}

func newChaosModel(t *testing.T) *chaosModel {
	m := &chaosModel{t: t, small: map[string]*smallModel{}}
	for i := range m.chunks {
		m.chunks[i].held = map[[2]int64]bool{}
	}
	for w := range chaosWorkers {
		for j := range chaosSmallKeys {
			m.small[chaosSmallKey(w, j)] = &smallModel{seen: map[int64]bool{}}
		}
	}
	return m
}

// fail reports one failure (safe from any goroutine).
func (m *chaosModel) fail(format string, args ...any) {
	if n := m.failures.Add(1); n <= 30 {
		m.t.Errorf(format, args...)
	} else if n == 31 {
		m.t.Errorf("more failures; details dropped")
	}
}

func (m *chaosModel) nextSeq() int64 {
	s := m.seq.Add(1)
	if s > chaosMaxSeq {
		m.t.Errorf("more than %d writes: chaosMeta cannot describe them", chaosMaxSeq)
	}
	return s
}

// chaosOps counts a cycle's acknowledged operations.
type chaosOps struct {
	writes, reads, dels, expires, probes, smallSets atomic.Int64
}

// chaosWorker runs one client's share of the load.
type chaosWorker struct {
	m      *chaosModel
	w      int
	c      *rawClient
	rng    *rand.Rand
	chunks []int
	ops    *chaosOps
	// quietAt, when set, is when the worker stops writing: it then only
	// reads, probes and deletes, so that the disk tier's flushes and
	// value-log collection run with deletes alone.
	quietAt time.Time
}

// errReported ends a worker after it reported a failure.
var errReported = errors.New("failure reported")

// run sends operations until the connection breaks (the kill) or stop is
// closed.
func (w *chaosWorker) run(stop <-chan struct{}) {
	quiet := false
	for {
		select {
		case <-stop:
			return
		default:
		}
		var err error
		if !w.quietAt.IsZero() && time.Now().After(w.quietAt) {
			if !quiet {
				// Delete half the chunks at once: their value-log
				// segments die together and are collected while the
				// deletes alone are to be flushed. The other half is
				// left to check that the writes before survive.
				quiet = true
				for range len(w.chunks) / 2 {
					if err := w.delChunk(); err != nil {
						return
					}
				}
			}
			time.Sleep(2 * time.Millisecond) // paced: mostly reads
			switch r := w.rng.IntN(1000); {
			case r < 3:
				err = w.delChunk()
			case r < 500:
				err = w.readChunk()
			default:
				err = w.probe()
			}
			if err != nil {
				return
			}
			continue
		}
		switch r := w.rng.IntN(100); {
		case r < 35:
			err = w.writeChunk()
		case r < 60:
			err = w.readChunk()
		case r < 70:
			err = w.delChunk()
		case r < 78:
			err = w.expireChunk()
		case r < 88:
			err = w.probe()
		default:
			err = w.smallSets()
		}
		if err != nil {
			return
		}
	}
}

func (w *chaosWorker) pick() (int, *chunkModel) {
	id := w.chunks[w.rng.IntN(len(w.chunks))]
	return id, &w.m.chunks[id]
}

// call sends one command; a reply other than want is reported.
func (w *chaosWorker) call(want string, args ...string) error {
	raw, err := w.c.Call(args...)
	if err != nil {
		return err
	}
	if string(raw) != want {
		w.m.fail("worker %d: %s = %s, want %s", w.w, quoteArgs(args), quoteTrunc(raw), quoteTrunc([]byte(want)))
		return errReported
	}
	return nil
}

// writeChunk stores a new write of a chunk as LMCache does: kv_bytes, then
// metadata.
func (w *chaosWorker) writeChunk() error {
	id, p := w.pick()
	seq := w.m.nextSeq()
	k := chaosChunkKey(id)
	p.inFlight = true
	if p.meta.seq != 0 {
		p.held[[2]int64{seq, p.meta.seq}] = true // new kv_bytes, old metadata
	}
	p.held[[2]int64{seq, seq}] = true
	if err := w.call("+OK\r\n", "SET", k+"kv_bytes", string(chaosData(id, seq))); err != nil {
		return err
	}
	p.data = keyModel{seq: seq}
	if err := w.call("+OK\r\n", "SET", k+"metadata", chaosMeta(seq)); err != nil {
		return err
	}
	p.meta = keyModel{seq: seq}
	p.changedAt, p.inFlight = time.Now(), false
	w.ops.writes.Add(1)
	return nil
}

// readChunk reads a chunk as LMCache does (metadata, then kv_bytes) and
// one small key, and checks what it gets against the model.
func (w *chaosWorker) readChunk() error {
	id, p := w.pick()
	k := chaosChunkKey(id)
	maxSeq := w.m.seq.Load()
	t0 := time.Now()
	meta, err := w.c.Call("GET", k+"metadata")
	if err != nil {
		return err
	}
	data, err := w.c.Call("GET", k+"kv_bytes")
	if err != nil {
		return err
	}
	t1 := time.Now()
	w.checkRead(fmt.Sprintf("chunk %d metadata", id), p.meta, t0, t1, meta, func(v []byte) (int64, error) { return chaosMetaSeq(v, maxSeq) })
	w.checkRead(fmt.Sprintf("chunk %d kv_bytes", id), p.data, t0, t1, data, func(v []byte) (int64, error) { return chaosDataSeq(id, v, maxSeq) })

	key := chaosSmallKey(w.w, w.rng.IntN(chaosSmallKeys))
	t0 = time.Now()
	raw, err := w.c.Call("GET", key)
	if err != nil {
		return err
	}
	w.checkRead(key, w.m.small[key].key, t0, time.Now(), raw, func(v []byte) (int64, error) { return chaosSmallSeq(key, v, maxSeq) })
	w.ops.reads.Add(1)
	return nil
}

// checkRead checks a GET reply read between t0 and t1 against k: the
// value must be exactly some write's (else it is a corrupt read), and the
// write the one the key holds.
func (w *chaosWorker) checkRead(what string, k keyModel, t0, t1 time.Time, raw []byte, decode func([]byte) (int64, error)) {
	var got int64
	if !isNull(raw) {
		r, err := parseReply(raw)
		if err != nil || r.Type != '$' {
			w.m.fail("worker %d: GET %s answered %s", w.w, what, quoteTrunc(raw))
			return
		}
		if got, err = decode([]byte(r.Str)); err != nil {
			w.m.fail("worker %d: corrupt read of %s: %v", w.w, what, err)
			return
		}
	}
	if s, certain := k.during(t0, t1); certain && got != s {
		w.m.fail("worker %d: GET %s found write %d, want %d (0: no key)", w.w, what, got, s)
	} else if got != 0 && got != k.seq {
		w.m.fail("worker %d: GET %s found write %d, want %d or none", w.w, what, got, k.seq)
	}
}

// isNull reports whether raw is a RESP2 or RESP3 null.
func isNull(raw []byte) bool { return string(raw) == "$-1\r\n" || string(raw) == "_\r\n" }

// delChunk deletes both keys of a chunk in one command.
func (w *chaosWorker) delChunk() error {
	id, p := w.pick()
	k := chaosChunkKey(id)
	p.inFlight = true
	sent := time.Now()
	raw, err := w.c.Call("DEL", k+"kv_bytes", k+"metadata")
	if err != nil {
		return err
	}
	answered := time.Now()
	ds, dc := p.data.during(sent, answered)
	ms, mc := p.meta.during(sent, answered)
	want := 0
	for _, s := range []int64{ds, ms} {
		if s != 0 {
			want++
		}
	}
	if r, err := parseReply(raw); err != nil || r.Type != ':' || (dc && mc && r.Int != int64(want)) {
		w.m.fail("worker %d: DEL chunk %d = %s, want :%d", w.w, id, quoteTrunc(raw), want)
		return errReported
	}
	p.data, p.meta = keyModel{}, keyModel{}
	p.changedAt, p.inFlight = time.Now(), false
	w.ops.dels.Add(1)
	return nil
}

// expireChunk gives both keys of a chunk an expiry: mostly a long one
// (kept across restarts), sometimes one short enough to pass during the
// test.
func (w *chaosWorker) expireChunk() error {
	id, p := w.pick()
	k := chaosChunkKey(id)
	ms := 600_000 + w.rng.IntN(600_000)
	short := w.rng.IntN(4) == 0
	if short {
		ms = 300 + w.rng.IntN(1200)
	}
	ttl := time.Duration(ms) * time.Millisecond
	p.inFlight = true
	p.mayExpire = p.mayExpire || short
	for _, kk := range []struct {
		suffix string
		key    *keyModel
	}{{"kv_bytes", &p.data}, {"metadata", &p.meta}} {
		suffix, key := kk.suffix, kk.key
		sent := time.Now()
		raw, err := w.c.Call("PEXPIRE", k+suffix, strconv.Itoa(ms))
		if err != nil {
			return err
		}
		answered := time.Now()
		seq, certain := key.during(sent, answered)
		switch {
		case string(raw) == ":1\r\n" && seq != 0:
			*key = key.expiring(sent, answered, ttl)
		case string(raw) == ":0\r\n" && (seq == 0 || !certain):
			*key = keyModel{}
		default:
			w.m.fail("worker %d: PEXPIRE chunk %d %s = %s, model holds write %d", w.w, id, suffix, quoteTrunc(raw), seq)
			return errReported
		}
	}
	p.changedAt, p.inFlight = time.Now(), false
	w.ops.expires.Add(1)
	return nil
}

// probe asks KVC.PROBE for a run of metadata keys and checks the count of
// leading keys that exist.
func (w *chaosWorker) probe() error {
	n := 1 + w.rng.IntN(6)
	args := []string{"KVC.PROBE"}
	if w.rng.IntN(2) == 0 {
		args = append(args, "LEASE", "500")
	}
	var models []keyModel
	for range n {
		id, p := w.pick()
		args = append(args, chaosChunkKey(id)+"metadata")
		models = append(models, p.meta)
	}
	t0 := time.Now()
	raw, err := w.c.Call(args...)
	if err != nil {
		return err
	}
	t1 := time.Now()
	want, certain := 0, true
	for _, k := range models {
		s, c := k.during(t0, t1)
		if !c {
			certain = false
			break
		}
		if s == 0 {
			break
		}
		want++
	}
	r, err := parseReply(raw)
	if err != nil || r.Type != ':' || r.Int < int64(want) || r.Int > int64(n) || (certain && r.Int != int64(want)) {
		w.m.fail("worker %d: %s = %s, want :%d (certain %v)", w.w, quoteArgs(args), quoteTrunc(raw), want, certain)
		return errReported
	}
	w.ops.probes.Add(1)
	return nil
}

// smallSets sends a pipeline of small SETs and then reads the replies.
func (w *chaosWorker) smallSets() error {
	n := 4 + w.rng.IntN(13)
	type set struct {
		key string
		seq int64
	}
	sets := make([]set, n)
	var req []byte
	for i := range sets {
		key := chaosSmallKey(w.w, w.rng.IntN(chaosSmallKeys))
		seq := w.m.nextSeq()
		sets[i] = set{key, seq}
		sm := w.m.small[key]
		sm.seen[seq], sm.inFlight = true, true
		req = append(req, encodeCommand([]string{"SET", key, chaosSmallValue(key, seq)})...)
	}
	if err := w.c.SendErr(req); err != nil {
		return err
	}
	for _, s := range sets {
		raw, err := w.c.ReadReply()
		if err != nil {
			return err
		}
		if string(raw) != "+OK\r\n" {
			w.m.fail("worker %d: pipelined SET %s = %s", w.w, s.key, quoteTrunc(raw))
			return errReported
		}
		sm := w.m.small[s.key]
		sm.key = keyModel{seq: s.seq}
		sm.changedAt = time.Now()
	}
	for _, s := range sets {
		w.m.small[s.key].inFlight = false
	}
	w.ops.smallSets.Add(1)
	return nil
}

// chaosCheck counts what a check after a restart found.
type chaosCheck struct {
	whole, torn, absent, expiredHalf, corrupt, small int
	// expiredAfterRead counts keys that expired between their read and
	// their PTTL.
	expiredAfterRead int
}

// check reads back every key after a restart (no load running) and checks
// it against the model: SCAN lists only keys the test wrote; every chunk
// is whole or absent (half only where an expiry may have split it), every
// value is exactly that of a write the key held since the last check, and
// every change acknowledged chaosSettle before killedAt survived. crashed
// says the restart followed a kill, after which the server drops the half
// chunks it finds at start. The model then becomes what was found.
//
// Expiry runs on the server while the check reads, so a chunk's two keys
// are read with one MGET (two GETs could see a chunk split by an expiry
// between them that the server never held), and a key's TTL is read after
// its value: a key that expired in between is gone from then on, and the
// model must say so (the model once took such a key for one without
// expiry, and the next cycle's reads failed on it).
func (m *chaosModel) check(c *rawClient, when string, killedAt time.Time, crashed bool) chaosCheck {
	t := m.t
	var res chaosCheck
	maxSeq := m.seq.Load()
	scanned := scanKeys(t, c)
	chunkOf := map[string]int{}
	for id := range chaosChunks {
		chunkOf[chaosChunkKey(id)+"kv_bytes"] = id
		chunkOf[chaosChunkKey(id)+"metadata"] = id
	}
	for key := range scanned {
		if _, ok := chunkOf[key]; !ok && m.small[key] == nil {
			m.fail("%s: SCAN lists %q, a key the test never wrote", when, key)
		}
	}
	rd := &chaosReader{m: m, c: c, when: when, scanned: scanned}
	now := time.Now()
	durable := func(changedAt time.Time, inFlight bool) bool {
		return !inFlight && (changedAt.IsZero() || killedAt.Sub(changedAt) > chaosSettle)
	}
	for id := range m.chunks {
		p := &m.chunks[id]
		k := chaosChunkKey(id)
		t0 := time.Now()
		raw := c.Do("MGET", k+"kv_bytes", k+"metadata")
		t1 := time.Now()
		r, err := parseReply(raw)
		if err != nil || r.Type != '*' || len(r.Elems) != 2 {
			m.fail("%s: MGET of chunk %d answered %s", when, id, quoteTrunc(raw))
			continue
		}
		dataSeq, data := rd.read(k+"kv_bytes", r.Elems[0], p.mayExpire, func(v []byte) (int64, error) { return chaosDataSeq(id, v, maxSeq) })
		metaSeq, meta := rd.read(k+"metadata", r.Elems[1], p.mayExpire, func(v []byte) (int64, error) { return chaosMetaSeq(v, maxSeq) })
		found := [2]int64{dataSeq, metaSeq}
		half := isHalf(found)
		switch {
		case found == [2]int64{}:
			res.absent++
		case half && (p.held[found] || p.mayExpire):
			res.expiredHalf++
		case half:
			m.fail("%s: chunk %d is half a chunk: kv_bytes holds write %d, metadata write %d (0: no key)", when, id, found[0], found[1])
		case !p.held[found]:
			m.fail("%s: chunk %d holds kv_bytes of write %d and metadata of write %d, a state it never had since the last check (%v)", when, id, found[0], found[1], p.held)
		case found[0] != found[1]:
			res.torn++
		default:
			res.whole++
		}
		if durable(p.changedAt, p.inFlight) {
			// What the chunk held at the kill, less what expired by the
			// time its keys were read.
			ds, dc := p.data.during(t0, t1)
			ms, mc := p.meta.during(t0, t1)
			want := [2]int64{ds, ms}
			// A chunk an expiry split before the kill is dropped at the
			// start after it (the server never serves half a chunk it
			// finds on disk).
			dropped := crashed && isHalf(want) && found == [2]int64{}
			if dc && mc && found != want && !dropped {
				m.fail("%s: chunk %d holds writes %v (kv_bytes, metadata), want %v: unchanged for %v before the kill",
					when, id, found, want, sinceOrForever(killedAt, p.changedAt))
			}
		}
		// An expiry seen by PTTL after the read split the chunk or took
		// it whole: what the chunk holds now is a state it had too.
		p.data, p.meta = data, meta
		p.held = map[[2]int64]bool{found: true, {data.seq, meta.seq}: true}
		p.changedAt, p.inFlight = time.Time{}, false
		p.mayExpire = shortTTL(data, now) || shortTTL(meta, now)
	}
	for key, sm := range m.small {
		r, err := parseReply(c.Do("GET", key))
		if err != nil {
			m.fail("%s: GET %s: %v", when, key, err)
			continue
		}
		_, got := rd.read(key, r, false, func(v []byte) (int64, error) { return chaosSmallSeq(key, v, maxSeq) })
		if got.seq != 0 {
			res.small++
			if !sm.seen[got.seq] && got.seq != sm.key.seq {
				m.fail("%s: %s holds write %d, not one it held since the last check", when, key, got.seq)
			}
		}
		if durable(sm.changedAt, sm.inFlight) && got.seq != sm.key.seq {
			m.fail("%s: %s holds write %d, want %d: unchanged for %v before the kill",
				when, key, got.seq, sm.key.seq, sinceOrForever(killedAt, sm.changedAt))
		}
		sm.key, sm.seen = got, map[int64]bool{got.seq: true}
		sm.changedAt, sm.inFlight = time.Time{}, false
	}
	res.corrupt += rd.corrupt
	res.expiredAfterRead = rd.expiredAfterRead
	if n := infoInt(t, c, "tiers", "tier_disk_corrupt_records"); n != 0 {
		m.fail("%s: tier_disk_corrupt_records = %d", when, n)
	}
	return res
}

// chaosReader reads keys back for a check.
type chaosReader struct {
	m    *chaosModel
	c    *rawClient
	when string
	// scanned is what SCAN listed at the start of the check.
	scanned map[string]bool
	// corrupt counts values that are no write's.
	corrupt int
	// expiredAfterRead counts keys gone by the PTTL after their read.
	expiredAfterRead int
}

// read checks key's value v (a GET reply or an MGET element) and returns
// the write it holds (0: none) and what the key holds once its TTL has
// been read after it. mayExpire says the key may have expired since SCAN.
func (rd *chaosReader) read(key string, v Reply, mayExpire bool, decode func([]byte) (int64, error)) (int64, keyModel) {
	m, when := rd.m, rd.when
	if v.Null {
		if rd.scanned[key] && !mayExpire {
			m.fail("%s: SCAN listed %s but a read finds nothing", when, key)
		}
		return 0, keyModel{}
	}
	if v.Type != '$' {
		m.fail("%s: read of %s answered %s", when, key, quoteTrunc(v.Raw))
		return 0, keyModel{}
	}
	if !rd.scanned[key] {
		m.fail("%s: SCAN did not list %s, which a read finds", when, key)
	}
	seq, err := decode([]byte(v.Str))
	if err != nil {
		rd.corrupt++
		m.fail("%s: corrupt read of %s: %v", when, key, err)
		return 0, keyModel{}
	}
	sent := time.Now()
	ttl, err := parseReply(rd.c.Do("PTTL", key))
	switch {
	case err != nil || ttl.Type != ':':
		m.fail("%s: PTTL %s answered %s (%v)", when, key, quoteTrunc(ttl.Raw), err)
		return seq, keyModel{seq: seq}
	case ttl.Int == -2:
		// Expired since the read: nothing but expiry touches a key while
		// the check runs.
		rd.expiredAfterRead++
		return seq, keyModel{}
	case ttl.Int >= 0:
		// PTTL counts whole milliseconds down from the moment the server
		// answered.
		return seq, keyModel{seq: seq}.expiring(sent, time.Now().Add(time.Millisecond), time.Duration(ttl.Int)*time.Millisecond)
	}
	return seq, keyModel{seq: seq}
}

// isHalf reports whether a chunk state (kv_bytes write, metadata write; 0:
// no key) holds one key of the two.
func isHalf(s [2]int64) bool { return (s[0] == 0) != (s[1] == 0) }

// shortTTL reports whether k expires within a minute of now: during the
// test (the long expiries the test sets are 10-20 minutes).
func shortTTL(k keyModel, now time.Time) bool {
	return !k.deadline.IsZero() && k.deadline.Sub(now) < time.Minute
}

func sinceOrForever(killedAt, changedAt time.Time) string {
	if changedAt.IsZero() {
		return "the whole cycle"
	}
	return killedAt.Sub(changedAt).Round(time.Millisecond).String()
}

// scanKeys lists every key with SCAN.
func scanKeys(t *testing.T, c *rawClient) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	cursor := "0"
	for {
		r, err := parseReply(c.Do("SCAN", cursor, "COUNT", "200"))
		if err != nil || r.Type != '*' || len(r.Elems) != 2 {
			t.Fatalf("SCAN %s: %+v %v", cursor, r, err)
		}
		for _, k := range r.Elems[1].Elems {
			keys[k.Str] = true
		}
		if cursor = r.Elems[0].Str; cursor == "0" {
			return keys
		}
	}
}

// droppedRe matches the start-up log line that counts the half chunks
// dropped after a crash.
var droppedRe = regexp.MustCompile(`incomplete_chunks_dropped=(\d+)`)

// checkServerLog fails the test if the server's output (of one run)
// shows a panic, a runtime fatal error or an ERROR line (a failed flush,
// a corrupt record: nothing a crash should cause), and returns the half
// chunks the server dropped at start.
func checkServerLog(t *testing.T, when, out string) (dropped int) {
	t.Helper()
	for _, bad := range []string{"panic:", "fatal error:", "DATA RACE"} {
		if i := strings.Index(out, bad); i >= 0 {
			t.Errorf("%s: server log shows %q:\n%s", when, bad, out[i:min(len(out), i+4000)])
		}
	}
	for _, mm := range droppedRe.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(mm[1])
		dropped += n
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "level=ERROR") {
			t.Errorf("%s: server logged %s", when, line)
		}
	}
	return dropped
}

// TestChaosKillNineUnderMixedLoad kills kvserver with SIGKILL twenty
// times, each time at a random moment of a mixed load (LMCache chunk
// writes and reads, pair DELs, overwrites, expiries, KVC.PROBE, pipelined
// small SETs) against a 16 MiB memory tier, so that demotion, write-behind,
// flushes and value-log collection are all under way. After every restart,
// over the same data directory, every key is read back: no corrupt value,
// no half chunk, no state a key never held, no write or delete
// acknowledged chaosSettle before the kill undone, and no panic or ERROR
// line in the server's log. A last clean restart must keep everything
// exactly.
func TestChaosKillNineUnderMixedLoad(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(envChaosSeed); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", envChaosSeed, v, err)
		}
	}
	t.Logf("seed %d (rerun with %s=%d)", seed, envChaosSeed, seed)
	start := time.Now()
	rng := rand.New(rand.NewPCG(seed, 0))
	m := newChaosModel(t)
	s := startKVServer(t, "--maxmemory", "16mb")
	logFrom := 0
	var total chaosCheck
	var dropped int
	var ops chaosOps
	for cycle := range chaosCycles {
		// Mostly short loads. Every seventh cycle writes for 1-2 s and
		// then only reads, probes and deletes for longer than chaosSettle,
		// so that writes and deletes made then must survive the kill.
		load := 500*time.Millisecond + time.Duration(rng.Int64N(int64(2*time.Second)))
		var quietAt time.Time
		if cycle%7 == 6 {
			writing := time.Second + time.Duration(rng.Int64N(int64(time.Second)))
			quietAt = time.Now().Add(writing)
			load = writing + chaosSettle + 500*time.Millisecond + time.Duration(rng.Int64N(int64(time.Second)))
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var cycleOps chaosOps
		for w := range chaosWorkers {
			c, err := dialRawErr(t, s.Addr)
			if err != nil {
				t.Fatalf("cycle %d: dial: %v", cycle, err)
			}
			wk := &chaosWorker{m: m, w: w, c: c, ops: &cycleOps, quietAt: quietAt,
				rng: rand.New(rand.NewPCG(seed, uint64(cycle*chaosWorkers+w+1)))}
			for id := w; id < chaosChunks; id += chaosWorkers {
				wk.chunks = append(wk.chunks, id)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				wk.run(stop)
			}()
		}
		time.Sleep(load)
		killedAt := time.Now()
		s.Crash()
		close(stop)
		wg.Wait()
		s.Relaunch(t)
		when := fmt.Sprintf("cycle %d", cycle)
		c := dialRaw(t, s.Addr)
		res := m.check(c, when, killedAt, true)
		c.Close()
		out := s.Output()
		d := checkServerLog(t, when, out[logFrom:])
		logFrom = len(out)
		dropped += d
		t.Logf("cycle %2d: load %v (%d writes, %d reads, %d dels, %d expires, %d probes, %d pipelines), then: %d whole, %d torn, %d absent, %d split by expiry, %d corrupt chunks; %d small keys; %d half chunks dropped at start; %d keys expired between their read and PTTL",
			cycle, load.Round(time.Millisecond), cycleOps.writes.Load(), cycleOps.reads.Load(), cycleOps.dels.Load(),
			cycleOps.expires.Load(), cycleOps.probes.Load(), cycleOps.smallSets.Load(),
			res.whole, res.torn, res.absent, res.expiredHalf, res.corrupt, res.small, d, res.expiredAfterRead)
		total.whole += res.whole
		total.torn += res.torn
		total.absent += res.absent
		total.expiredHalf += res.expiredHalf
		total.corrupt += res.corrupt
		ops.writes.Add(cycleOps.writes.Load())
		ops.reads.Add(cycleOps.reads.Load())
		if t.Failed() {
			t.Fatalf("stopping after cycle %d (seed %d)", cycle, seed)
		}
	}

	// A clean stop writes everything: the restart must find exactly what
	// the last check found.
	s.Restart(t)
	c := dialRaw(t, s.Addr)
	res := m.check(c, "after a clean restart", time.Now(), false)
	checkServerLog(t, "clean restart", s.Output()[logFrom:])
	t.Logf("%d cycles in %v: %d writes and %d reads acknowledged; checks found %d whole chunks, %d torn by a kill between kv_bytes and metadata, %d absent, %d split by expiry, %d corrupt; %d half chunks dropped at start; clean restart: %d whole, %d torn, %d absent",
		chaosCycles, time.Since(start).Round(time.Millisecond), ops.writes.Load(), ops.reads.Load(),
		total.whole, total.torn, total.absent, total.expiredHalf, total.corrupt, dropped, res.whole, res.torn, res.absent)
}

// TestChaosKeyModelAllowsForCommandLatency pins down the expiry model of
// TestChaosKillNineUnderMixedLoad, which once failed under -race on a
// loaded machine: the model put a key's deadline at the moment PEXPIRE was
// sent and judged DEL at the moment it was sent, but the server acts at
// some moment before the reply, which there came seconds later. A key is
// certain only where the whole span agrees.
func TestChaosKeyModelAllowsForCommandLatency(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	// PEXPIRE 1000 sent at 0, answered 2 s later: the server set the
	// deadline somewhere in 1 s..3 s.
	k := keyModel{seq: 7}.expiring(at(0), at(2*time.Second), time.Second)
	cases := []struct {
		name      string
		t0, t1    time.Duration
		seq       int64
		certain   bool
		aboutSlow string
	}{
		{"well before the earliest deadline", 0, 400 * time.Millisecond, 7, true, ""},
		{"near the earliest deadline", 600 * time.Millisecond, 600 * time.Millisecond, 7, false, ""},
		{"past the earliest deadline, before the latest", 1600 * time.Millisecond, 1600 * time.Millisecond, 7, false,
			"the old model said certainly expired here, yet a server that ran PEXPIRE late still holds the key"},
		{"past the latest deadline", 3600 * time.Millisecond, 4 * time.Second, 0, true, ""},
		{"a slow command spanning the deadlines", 100 * time.Millisecond, 4 * time.Second, 7, false,
			"a DEL sent while the key certainly existed but run seconds later may find it expired"},
	}
	for _, tc := range cases {
		seq, certain := k.during(at(tc.t0), at(tc.t1))
		if certain != tc.certain || (certain && seq != tc.seq) {
			t.Errorf("%s: during(%v, %v) = %d, certain %v; want %d, certain %v %s",
				tc.name, tc.t0, tc.t1, seq, certain, tc.seq, tc.certain, tc.aboutSlow)
		}
	}
	// A key without expiry, and no key, are certain at any time.
	for _, k := range []keyModel{{seq: 3}, {}} {
		if seq, certain := k.during(at(0), at(time.Hour)); !certain || seq != k.seq {
			t.Errorf("%+v: during = %d, %v", k, seq, certain)
		}
	}
	// PTTL answered between sent and answered: the deadline is known to
	// that span, plus the millisecond PTTL truncates.
	p := keyModel{seq: 1}.expiring(at(0), at(time.Second+time.Millisecond), 500*time.Millisecond)
	if _, certain := p.at(at(1200 * time.Millisecond)); certain {
		t.Errorf("a key whose PTTL read took a second is certain 1.2 s later")
	}
}

// TestChaosCheckModelsAKeyThatExpiresAfterItsRead pins down how the chaos
// check reads a key: the value, then PTTL. TestChaosKillNineUnderMixedLoad
// once failed a cycle after a check whose value read found a key that
// expired before its PTTL: PTTL answered -2, the model took the key for
// one without expiry, and the next cycle's GET found nothing where the
// model wanted the value. A key gone by its PTTL is gone from then on.
func TestChaosCheckModelsAKeyThatExpiresAfterItsRead(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	c := dialRaw(t, s.Addr)
	defer c.Close()
	m := newChaosModel(t)
	cases := []struct {
		name string
		// set stores the key; it returns when the value read may be taken
		// (the key then holds the value, or held it and has expired).
		set        func(key, value string)
		wantTTL    time.Duration // 0: none
		wantAbsent bool
	}{
		{"no expiry", func(key, value string) { c.Do("SET", key, value) }, 0, false},
		{"long expiry", func(key, value string) { c.Do("SET", key, value, "PX", "600000") }, 600 * time.Second, false},
		{"expired between the read and PTTL", func(key, value string) {
			c.Do("SET", key, value, "PX", "20")
			deadline := time.Now().Add(10 * time.Second)
			for string(c.Do("EXISTS", key)) != ":0\r\n" {
				if time.Now().After(deadline) {
					t.Fatalf("%s did not expire within 10 s of PX 20", key)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}, 0, true},
	}
	for i, tc := range cases {
		key := chaosSmallKey(0, i)
		const seq = 7
		value := chaosSmallValue(key, seq)
		before := time.Now()
		tc.set(key, value)
		rd := &chaosReader{m: m, c: c, when: tc.name, scanned: map[string]bool{key: true}}
		got, k := rd.read(key, Reply{Type: '$', Str: value}, false, func(v []byte) (int64, error) { return chaosSmallSeq(key, v, seq) })
		after := time.Now()
		if got != seq {
			t.Errorf("%s: read found write %d, want %d", tc.name, got, seq)
		}
		switch {
		case tc.wantAbsent:
			if k != (keyModel{}) {
				t.Errorf("%s: the key is modelled as %+v, want absent: the server no longer has it", tc.name, k)
			}
		case k.seq != seq:
			t.Errorf("%s: the key is modelled as holding write %d, want %d", tc.name, k.seq, seq)
		case tc.wantTTL == 0 && !k.deadline.IsZero():
			t.Errorf("%s: the key is modelled with deadline %v, want none", tc.name, k.deadline)
		case tc.wantTTL != 0 && (k.deadline.Before(before.Add(tc.wantTTL-time.Second)) || k.deadline.After(after.Add(tc.wantTTL))):
			t.Errorf("%s: the key is modelled with deadline %v, want within a second of %v", tc.name, k.deadline, before.Add(tc.wantTTL))
		}
	}
}
