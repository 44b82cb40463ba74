package pubsub

import (
	"sort"
	"sync"

	"github.com/kvserver/kvserver/glob"
)

// Kind says which namespace a subscription or a publication is in.
type Kind uint8

const (
	// Channel is SUBSCRIBE and PUBLISH's namespace.
	Channel Kind = iota
	// Pattern is PSUBSCRIBE's: glob patterns matched against the
	// channels of PUBLISH.
	Pattern
	// Shard is SSUBSCRIBE and SPUBLISH's: channels bound to a cluster
	// slot, never matched by patterns.
	Shard
	kinds
)

// Message is one delivery to one subscriber. Its slices are shared by all
// receivers of a publication, must not be modified, and are valid only
// during Deliver (Wire's encoding may be kept).
type Message struct {
	// Kind is Channel ("message"), Pattern ("pmessage") or Shard
	// ("smessage").
	Kind Kind
	// Pattern is the pattern that matched, for Kind Pattern.
	Pattern []byte
	// Channel and Payload are what was published.
	Channel, Payload []byte
	// From is the subscriber that published it (Publish's from), nil for
	// a message of no client's.
	From Subscriber
	// wire caches Encode's output for RESP2 and RESP3: receivers share it.
	wire [2][]byte
}

// Wire returns m encoded for proto (Encode), encoded once per protocol and
// shared by every receiver: callers must not modify it.
func (m *Message) Wire(proto int) []byte {
	i := 0
	if proto == 3 {
		i = 1
	}
	if m.wire[i] == nil {
		m.wire[i] = Encode(nil, proto, m)
	}
	return m.wire[i]
}

// Subscriber receives the messages of its subscriptions. Deliver is called
// with the Hub's lock held, by the publishing goroutine: it must queue the
// message and return without blocking or calling the Hub. It may keep the
// bytes of m.Wire, never m's Channel, Pattern or Payload, which may be the
// publisher's buffers. self is true when the publication comes from the
// subscriber's own command (Publish's from), whose goroutine may then
// write it in order with the reply.
type Subscriber interface {
	Deliver(m *Message, self bool)
	// Unsubscribed tells the subscriber that the server removed its
	// subscription to a shard channel (DropShardChannels), with its
	// shard count and its count of all subscriptions afterwards; the
	// same rules as Deliver apply.
	Unsubscribed(channel []byte, count, total int)
}

// Hub holds the subscriptions of one server. The zero value is not
// usable; call New.
type Hub struct {
	mu sync.Mutex
	// names maps, per kind, a channel or pattern to its subscribers.
	names [kinds]map[string]map[Subscriber]struct{}
	// subs maps each subscriber to its own subscriptions, per kind.
	subs map[Subscriber]*[kinds]map[string]struct{}
}

// New returns an empty Hub.
func New() *Hub {
	h := &Hub{subs: make(map[Subscriber]*[kinds]map[string]struct{})}
	for k := range h.names {
		h.names[k] = make(map[string]map[Subscriber]struct{})
	}
	return h
}

// Subscribe adds sub to name in kind's namespace (nothing changes when it
// is already there) and returns sub's subscription count as Redis reports
// it after the change: channels plus patterns, or shard channels.
func (h *Hub) Subscribe(sub Subscriber, kind Kind, name []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := h.subs[sub]
	if own == nil {
		own = new([kinds]map[string]struct{})
		h.subs[sub] = own
	}
	if own[kind] == nil {
		own[kind] = make(map[string]struct{})
	}
	n := string(name)
	if _, ok := own[kind][n]; !ok {
		own[kind][n] = struct{}{}
		set := h.names[kind][n]
		if set == nil {
			set = make(map[Subscriber]struct{})
			h.names[kind][n] = set
		}
		set[sub] = struct{}{}
	}
	return countLocked(own, kind)
}

// Unsubscribe removes sub from name and returns sub's count after it (see
// Subscribe).
func (h *Hub) Unsubscribe(sub Subscriber, kind Kind, name []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := h.subs[sub]
	if own == nil {
		return 0
	}
	h.removeLocked(sub, own, kind, string(name))
	return countLocked(own, kind)
}

// Removed is one subscription UnsubscribeAll removed and the subscriber's
// count right after its removal.
type Removed struct {
	Name  string
	Count int
}

// UnsubscribeAll removes every subscription sub has in kind's namespace,
// in name order, and reports each with the count that followed it.
func (h *Hub) UnsubscribeAll(sub Subscriber, kind Kind) []Removed {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := h.subs[sub]
	if own == nil || len(own[kind]) == 0 {
		return nil
	}
	names := make([]string, 0, len(own[kind]))
	for n := range own[kind] {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Removed, len(names))
	for i, n := range names {
		h.removeLocked(sub, own, kind, n)
		out[i] = Removed{n, countLocked(own, kind)}
	}
	return out
}

// Drop removes every subscription of sub (disconnection, RESET).
func (h *Hub) Drop(sub Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := h.subs[sub]
	if own == nil {
		return
	}
	for kind := range own {
		for n := range own[kind] {
			h.removeLocked(sub, own, Kind(kind), n)
		}
	}
	delete(h.subs, sub)
}

func (h *Hub) removeLocked(sub Subscriber, own *[kinds]map[string]struct{}, kind Kind, name string) {
	if _, ok := own[kind][name]; !ok {
		return
	}
	delete(own[kind], name)
	set := h.names[kind][name]
	delete(set, sub)
	if len(set) == 0 {
		// Like Redis, an unused channel costs nothing afterwards.
		delete(h.names[kind], name)
	}
}

// countLocked is Redis's clientSubscriptionsCount (channels and patterns)
// or clientShardSubscriptionsCount.
func countLocked(own *[kinds]map[string]struct{}, kind Kind) int {
	if kind == Shard {
		return len(own[Shard])
	}
	return len(own[Channel]) + len(own[Pattern])
}

// DropShardChannels removes every subscription to the shard channels
// gone reports (those of cluster slots this node no longer serves, as
// Redis's pubsubShardUnsubscribeAllClients) and tells each subscriber.
func (h *Hub) DropShardChannels(gone func(channel []byte) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, set := range h.names[Shard] {
		ch := []byte(name)
		if !gone(ch) {
			continue
		}
		for sub := range set {
			own := h.subs[sub]
			h.removeLocked(sub, own, Shard, name)
			sub.Unsubscribed(ch, len(own[Shard]), len(own[Channel])+len(own[Pattern])+len(own[Shard]))
		}
	}
}

// Counts returns sub's channel, pattern and shard channel subscriptions
// (CLIENT LIST's sub, psub and ssub).
func (h *Hub) Counts(sub Subscriber) (channels, patterns, shard int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	own := h.subs[sub]
	if own == nil {
		return 0, 0, 0
	}
	return len(own[Channel]), len(own[Pattern]), len(own[Shard])
}

// Publish delivers payload on channel to its subscribers and, for kind
// Channel, to the subscribers of matching patterns, and returns how many
// deliveries it made (a client subscribed to the channel and to a
// matching pattern counts twice, as in Redis). from is the publishing
// subscriber, or nil.
func (h *Hub) Publish(kind Kind, channel, payload []byte, from Subscriber) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	receivers := 0
	if set := h.names[kind][string(channel)]; len(set) > 0 {
		m := &Message{Kind: kind, Channel: channel, Payload: payload, From: from}
		for sub := range set {
			sub.Deliver(m, sub == from)
			receivers++
		}
	}
	if kind != Channel {
		return receivers
	}
	for pat, set := range h.names[Pattern] {
		if !glob.Match([]byte(pat), channel) {
			continue
		}
		m := &Message{Kind: Pattern, Pattern: []byte(pat), Channel: channel, Payload: payload, From: from}
		for sub := range set {
			sub.Deliver(m, sub == from)
			receivers++
		}
	}
	return receivers
}

// Channels returns the channels of kind (Channel or Shard) with at least
// one subscriber, those matching pattern when it is not nil, sorted.
func (h *Hub) Channels(kind Kind, pattern []byte) [][]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out [][]byte
	for n := range h.names[kind] {
		if pattern == nil || glob.Match(pattern, []byte(n)) {
			out = append(out, []byte(n))
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i]) < string(out[j]) })
	return out
}

// NumSub returns the subscribers of channel in kind's namespace.
func (h *Hub) NumSub(kind Kind, channel []byte) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.names[kind][string(channel)])
}

// NumPat returns the number of distinct patterns subscribed to (Redis's
// PUBSUB NUMPAT and INFO pubsub_patterns).
func (h *Hub) NumPat() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.names[Pattern])
}

// NumChannels returns the number of channels of kind with subscribers
// (INFO pubsub_channels, pubsubshard_channels).
func (h *Hub) NumChannels(kind Kind) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.names[kind])
}
