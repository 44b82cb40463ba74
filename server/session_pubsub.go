package server

import (
	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/pubsub"
)

// The pub/sub family's view of a connection (commands.PubSub), over the
// server's pubsub.Hub with the connection's Client as the subscriber.

var _ commands.PubSub = session{}

func (s session) Subscribe(kind pubsub.Kind, name []byte) int {
	s.c.mailboxUsed.Store(true)
	n := s.c.srv.hub.Subscribe(s.c, kind, name)
	s.c.subscribed.Store(true)
	return n
}

func (s session) Unsubscribe(kind pubsub.Kind, name []byte) int {
	n := s.c.srv.hub.Unsubscribe(s.c, kind, name)
	s.updateSubscribed()
	return n
}

func (s session) UnsubscribeAll(kind pubsub.Kind) ([]pubsub.Removed, int) {
	removed := s.c.srv.hub.UnsubscribeAll(s.c, kind)
	s.updateSubscribed()
	ch, pat, shard := s.c.srv.hub.Counts(s.c)
	if kind == pubsub.Shard {
		return removed, shard
	}
	return removed, ch + pat
}

func (s session) DropSubscriptions() {
	s.c.srv.hub.Drop(s.c)
	s.c.subscribed.Store(false)
}

// updateSubscribed leaves subscribed mode with the last subscription.
func (s session) updateSubscribed() {
	ch, pat, shard := s.c.srv.hub.Counts(s.c)
	s.c.subscribed.Store(ch+pat+shard > 0)
}

func (s session) Subscribed() bool { return s.c.subscribed.Load() }

func (s session) Publish(kind pubsub.Kind, channel, message []byte) int {
	return s.c.srv.hub.Publish(kind, channel, message, s.c)
}

func (s session) Channels(kind pubsub.Kind, pattern []byte) [][]byte {
	return s.c.srv.hub.Channels(kind, pattern)
}

func (s session) NumSub(kind pubsub.Kind, channel []byte) int {
	return s.c.srv.hub.NumSub(kind, channel)
}

func (s session) NumPat() int { return s.c.srv.hub.NumPat() }

func (s session) NumChannels(kind pubsub.Kind) int { return s.c.srv.hub.NumChannels(kind) }
