// Package tracking is Redis's client-side caching table (tracking.c): which
// clients read which keys (the default mode), which clients follow which
// key prefixes (BCAST), and the invalidations a change to a key, a flush or
// the table's own size bound causes. It does no I/O: each invalidation is
// handed to a Sender, which must queue it without blocking. It is not for
// deciding who reads a key (that is the command table's key specs) nor for
// writing RESP (package server does, with the encoders here).
package tracking

import (
	"sort"
	"strconv"
	"sync"
)

// Mode is a client's tracking options, CLIENT TRACKING's flags.
type Mode struct {
	// Redirect is the client ID that receives this client's
	// invalidations, 0 for the client itself.
	Redirect int64
	// BCAST: invalidations for every key under Prefixes (all keys with
	// none), whoever read it.
	BCAST    bool
	Prefixes []string
	// OptIn: only reads right after CLIENT CACHING YES are remembered;
	// OptOut: all but those right after CLIENT CACHING NO.
	OptIn, OptOut bool
	// NoLoop: no invalidation for the client's own changes.
	NoLoop bool
}

// Sender delivers one invalidation for client id to id or to its redirect
// target (0: none): null is the null of a flush, otherwise keys, in order.
// self is true when id's own command caused it (Table.Invalidate's
// origin). It reports whether the redirect target is gone (CLIENT
// TRACKINGINFO's broken_redirect). It is called with the Table's lock
// held and must not block or call the Table.
type Sender interface {
	SendInvalidation(id, redirect int64, keys []string, null, self bool) (brokenRedir bool)
}

// client is one tracking client's state.
type client struct {
	mode Mode
	// caching is CLIENT CACHING's flag for the next command.
	caching bool
	// brokenRedir: the redirect target is gone (CLIENT TRACKINGINFO's
	// broken_redirect).
	brokenRedir bool
}

// bcastState is one prefix's followers and the keys under it changed
// since the last Broadcast, each with the ID of the client that changed
// it last (0: none, as for expiry).
type bcastState struct {
	clients map[int64]struct{}
	keys    map[string]int64
}

// Table is one server's tracking state. The zero value is not usable;
// call New.
type Table struct {
	mu      sync.Mutex
	send    Sender
	clients map[int64]*client
	// keys maps each remembered key to the clients that read it; items
	// counts the pairs (INFO tracking_total_items).
	keys  map[string]map[int64]struct{}
	items int
	// prefixes maps each followed prefix to its state.
	prefixes map[string]*bcastState
	// overLimit counts the Limit calls in a row that could not get under
	// the bound (Redis's timeout_counter): each tries harder.
	overLimit int
}

// New returns an empty Table that invalidates through send.
func New(send Sender) *Table {
	return &Table{send: send, clients: make(map[int64]*client),
		keys: make(map[string]map[int64]struct{}), prefixes: make(map[string]*bcastState)}
}

// Errors of Enable, Redis's replies to CLIENT TRACKING ON.
const (
	errPrefixNeedsBcast = "ERR PREFIX option requires BCAST mode to be enabled"
	errSwitchBcast      = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	errBcastOpt         = "ERR OPTIN and OPTOUT are not compatible with BCAST"
	errBothOpt          = "ERR You can't specify both OPTIN mode and OPTOUT mode"
	errSwitchOpt        = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
)

// Enable turns tracking on for id with mode, checking it as Redis's
// CLIENT TRACKING ON does; it returns the error reply, "" on success.
func (t *Table) Enable(id int64, mode Mode) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !mode.BCAST && len(mode.Prefixes) > 0 {
		return errPrefixNeedsBcast
	}
	old := t.clients[id]
	if old != nil && old.mode.BCAST != mode.BCAST {
		return errSwitchBcast
	}
	if mode.BCAST && (mode.OptIn || mode.OptOut) {
		return errBcastOpt
	}
	if mode.OptIn && mode.OptOut {
		return errBothOpt
	}
	if old != nil && ((mode.OptIn && old.mode.OptOut) || (mode.OptOut && old.mode.OptIn)) {
		return errSwitchOpt
	}
	if mode.BCAST {
		if msg := prefixCollision(old, mode.Prefixes); msg != "" {
			return msg
		}
	}
	c := old
	if c == nil {
		c = &client{}
		t.clients[id] = c
	}
	prefixes := c.mode.Prefixes
	c.mode = mode
	c.brokenRedir = false
	if mode.BCAST {
		add := mode.Prefixes
		if len(add) == 0 {
			add = []string{""}
		}
		for _, p := range add {
			bs := t.prefixes[p]
			if bs == nil {
				bs = &bcastState{clients: make(map[int64]struct{}), keys: make(map[string]int64)}
				t.prefixes[p] = bs
			}
			if _, ok := bs.clients[id]; !ok {
				bs.clients[id] = struct{}{}
				prefixes = append(prefixes, p)
			}
		}
		c.mode.Prefixes = prefixes
	}
	return ""
}

// prefixCollision is Redis's checkPrefixCollisionsOrReply: two prefixes
// of one client collide when one starts the other.
func prefixCollision(old *client, prefixes []string) string {
	for i, p := range prefixes {
		if old != nil {
			for _, q := range old.mode.Prefixes {
				if overlap(q, p) {
					return "ERR Prefix '" + p + "' overlaps with an existing prefix '" + q +
						"'. Prefixes for a single client must not overlap."
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + p + "' overlaps with another provided prefix '" + q +
					"'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

func overlap(a, b string) bool {
	n := min(len(a), len(b))
	return a[:n] == b[:n]
}

// Disable turns tracking off for id (CLIENT TRACKING OFF, RESET,
// disconnection). Like Redis, the keys it read stay in the table until
// they change; the invalidation then skips it.
func (t *Table) Disable(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[id]
	if c == nil {
		return
	}
	for _, p := range c.mode.Prefixes {
		if bs := t.prefixes[p]; bs != nil {
			delete(bs.clients, id)
			if len(bs.clients) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
	delete(t.clients, id)
}

// Info is a client's tracking state as CLIENT TRACKINGINFO and CLIENT
// LIST report it.
type Info struct {
	On          bool
	Mode        Mode
	Caching     bool
	BrokenRedir bool
}

// Get returns id's tracking state.
func (t *Table) Get(id int64) Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[id]
	if c == nil {
		return Info{}
	}
	m := c.mode
	m.Prefixes = append([]string(nil), m.Prefixes...)
	return Info{On: true, Mode: m, Caching: c.caching, BrokenRedir: c.brokenRedir}
}

// SetCaching sets CLIENT CACHING's flag for id's next command; false when
// id does not track.
func (t *Table) SetCaching(id int64, on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[id]; c != nil {
		c.caching = on
	}
}

// SetBrokenRedir records that id's redirect target is gone.
func (t *Table) SetBrokenRedir(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[id]; c != nil {
		c.brokenRedir = true
	}
}

// Remember records that id read keys, Redis's trackingRememberKeys, when
// id tracks in the default mode and OPTIN/OPTOUT let it; then it clears
// the CLIENT CACHING flag (the command after CACHING has run).
func (t *Table) Remember(id int64, keys [][]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.clients[id]
	if c == nil || c.mode.BCAST {
		return
	}
	if (c.mode.OptIn && !c.caching) || (c.mode.OptOut && c.caching) {
		return
	}
	for _, k := range keys {
		ids := t.keys[string(k)]
		if ids == nil {
			ids = make(map[int64]struct{})
			t.keys[string(k)] = ids
		}
		if _, ok := ids[id]; !ok {
			ids[id] = struct{}{}
			t.items++
		}
	}
}

// CommandDone clears id's CLIENT CACHING flag after a command other than
// CLIENT CACHING itself.
func (t *Table) CommandDone(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.clients[id]; c != nil {
		c.caching = false
	}
}

// Invalidate is Redis's trackingInvalidateKey for a changed key: the
// clients that read it get its invalidation (not one in BCAST mode, not
// origin itself with NOLOOP) and forget it; for BCAST it is kept for the
// next Broadcast. origin is the ID of the client whose command changed it,
// 0 for the server's own work (expiry, eviction); current is the client
// whose command is running, whose own invalidation is marked self.
func (t *Table) Invalidate(key string, origin, current int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p, bs := range t.prefixes {
		if len(p) <= len(key) && key[:len(p)] == p {
			bs.keys[key] = origin
		}
	}
	t.invalidateLocked(key, origin, current)
}

func (t *Table) invalidateLocked(key string, origin, current int64) {
	ids := t.keys[key]
	if ids == nil {
		return
	}
	for _, id := range sortedIDs(ids) {
		c := t.clients[id]
		if c == nil || c.mode.BCAST || (c.mode.NoLoop && id == origin) {
			continue
		}
		t.sendLocked(id, c, []string{key}, false, id == current)
	}
	t.items -= len(ids)
	delete(t.keys, key)
}

func (t *Table) sendLocked(id int64, c *client, keys []string, null, self bool) {
	if t.send.SendInvalidation(id, c.mode.Redirect, keys, null, self) {
		c.brokenRedir = true
	}
}

func sortedIDs(ids map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Flush is Redis's trackingInvalidateKeysOnFlush: every tracking client
// gets the null invalidation and the table forgets every key. origin is
// the flushing client.
func (t *Table) Flush(origin int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range t.trackingIDsLocked() {
		t.sendLocked(id, t.clients[id], nil, true, id == origin)
	}
	t.keys = make(map[string]map[int64]struct{})
	t.items = 0
}

func (t *Table) trackingIDsLocked() []int64 {
	out := make([]int64, 0, len(t.clients))
	for id := range t.clients {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Broadcast is Redis's trackingBroadcastInvalidationMessages, run between
// commands: each prefix's followers get one invalidation with the keys
// changed under it since the last call, in byte order (without those a
// NOLOOP follower changed itself).
func (t *Table) Broadcast() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range sortedPrefixes(t.prefixes) {
		bs := t.prefixes[p]
		if len(bs.keys) == 0 {
			continue
		}
		keys := make([]string, 0, len(bs.keys))
		for k := range bs.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, id := range sortedIDs(bs.clients) {
			c := t.clients[id]
			if c == nil {
				continue
			}
			send := keys
			if c.mode.NoLoop {
				send = nil
				for _, k := range keys {
					if bs.keys[k] != id {
						send = append(send, k)
					}
				}
				if len(send) == 0 {
					continue
				}
			}
			t.sendLocked(id, c, send, false, false)
		}
		clear(bs.keys)
	}
}

func sortedPrefixes(m map[string]*bcastState) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Pending reports whether Broadcast has keys to send.
func (t *Table) Pending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, bs := range t.prefixes {
		if len(bs.keys) > 0 {
			return true
		}
	}
	return false
}

// Limit is Redis's trackingLimitUsedSlots: while the table remembers more
// than max keys (0: no bound), it forgets random ones, invalidating them
// for their readers as if they had changed, with an effort that grows
// each time a call ends still over the bound.
func (t *Table) Limit(max int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if max <= 0 || len(t.keys) <= max {
		t.overLimit = 0
		return
	}
	effort := 100 * (t.overLimit + 1)
	for key := range t.keys {
		// Go's map order is random: the first key is Redis's random walk.
		if effort == 0 {
			break
		}
		effort--
		t.invalidateLocked(key, 0, 0)
		if len(t.keys) <= max {
			t.overLimit = 0
			return
		}
	}
	t.overLimit++
}

// Stats are INFO's tracking counters.
type Stats struct {
	Clients, Keys, Items, Prefixes int
}

// Stats returns the counters of INFO's tracking_* fields.
func (t *Table) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Stats{Clients: len(t.clients), Keys: len(t.keys), Items: t.items, Prefixes: len(t.prefixes)}
}

// Tracking reports whether any client tracks, so that key changes cost
// nothing otherwise.
func (t *Table) Tracking() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients) > 0 || len(t.keys) > 0
}

// channelHeader is the RESP2 pub/sub message head of an invalidation on
// __redis__:invalidate, Redis's addReplyPubsubMessage with no payload.
const channelHeader = "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"

// Encode appends an invalidation as a client of protocol proto receives it:
// a RESP3 push of "invalidate" and the keys (or null), or in RESP2 (a
// redirect target subscribed to __redis__:invalidate) a pub/sub message
// whose payload is that array. nullProto is the tracking client's
// protocol, whose null Redis sends for a flush.
func Encode(dst []byte, proto int, keys []string, null bool, nullProto int) []byte {
	if proto == 3 {
		dst = append(dst, ">2\r\n$10\r\ninvalidate\r\n"...)
	} else {
		dst = append(dst, channelHeader...)
	}
	if null {
		if nullProto == 3 {
			return append(dst, "_\r\n"...)
		}
		return append(dst, "$-1\r\n"...)
	}
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(keys)), 10)
	dst = append(dst, '\r', '\n')
	for _, k := range keys {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(k)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, k...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// EncodeRedirBroken appends the RESP3 push that tells a tracking client
// its redirect target is gone.
func EncodeRedirBroken(dst []byte, redirect int64) []byte {
	dst = append(dst, ">2\r\n$21\r\ntracking-redir-broken\r\n:"...)
	dst = strconv.AppendInt(dst, redirect, 10)
	return append(dst, '\r', '\n')
}
