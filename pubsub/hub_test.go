package pubsub

import (
	"fmt"
	"slices"
	"testing"
)

// recorder is a Subscriber that keeps what it receives, encoded in RESP2.
type recorder struct{ got []string }

func (r *recorder) Deliver(m *Message, self bool) {
	r.got = append(r.got, fmt.Sprintf("%q self=%v", m.Wire(2), self))
}

func (r *recorder) Unsubscribed(channel []byte, count, total int) {
	r.got = append(r.got, fmt.Sprintf("sunsubscribe %s %d %d", channel, count, total))
}

func TestCountsFollowRedis(t *testing.T) {
	h := New()
	a := &recorder{}
	if n := h.Subscribe(a, Channel, []byte("x")); n != 1 {
		t.Errorf("first subscription count %d", n)
	}
	if n := h.Subscribe(a, Channel, []byte("x")); n != 1 {
		t.Errorf("a repeated subscription counted: %d", n)
	}
	if n := h.Subscribe(a, Pattern, []byte("x*")); n != 2 {
		t.Errorf("channels and patterns count together: %d", n)
	}
	if n := h.Subscribe(a, Shard, []byte("s")); n != 1 {
		t.Errorf("shard channels count apart: %d", n)
	}
	if ch, pat, sh := h.Counts(a); ch != 1 || pat != 1 || sh != 1 {
		t.Errorf("Counts = %d %d %d", ch, pat, sh)
	}
	if n := h.Unsubscribe(a, Channel, []byte("nope")); n != 2 {
		t.Errorf("unsubscribing from nothing changed the count: %d", n)
	}
	h.Subscribe(a, Channel, []byte("y"))
	got := h.UnsubscribeAll(a, Channel)
	if want := []Removed{{"x", 2}, {"y", 1}}; !slices.Equal(got, want) {
		t.Errorf("UnsubscribeAll = %v, want %v", got, want)
	}
	if h.NumChannels(Channel) != 0 || h.NumChannels(Shard) != 1 || h.NumPat() != 1 {
		t.Error("unused channels are not forgotten")
	}
	h.Drop(a)
	if ch, pat, sh := h.Counts(a); ch+pat+sh != 0 || h.NumPat() != 0 || h.NumChannels(Shard) != 0 {
		t.Error("Drop left subscriptions")
	}
}

func TestPublishReachesChannelsThenPatterns(t *testing.T) {
	h := New()
	a, b := &recorder{}, &recorder{}
	h.Subscribe(a, Channel, []byte("news"))
	h.Subscribe(a, Pattern, []byte("n*"))
	h.Subscribe(b, Pattern, []byte("n?ws"))
	h.Subscribe(b, Shard, []byte("news"))
	if n := h.Publish(Channel, []byte("news"), []byte("hi"), b); n != 3 {
		t.Errorf("PUBLISH reached %d, want 3 (channel and pattern count apart)", n)
	}
	if want := []string{
		`"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n" self=false`,
		`"*4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$2\r\nhi\r\n" self=false`,
	}; !slices.Equal(a.got, want) {
		t.Errorf("a got %v", a.got)
	}
	if len(b.got) != 1 || b.got[0] != `"*4\r\n$8\r\npmessage\r\n$4\r\nn?ws\r\n$4\r\nnews\r\n$2\r\nhi\r\n" self=true` {
		t.Errorf("b got %v", b.got)
	}
	if n := h.Publish(Shard, []byte("news"), []byte("s"), nil); n != 1 {
		t.Errorf("SPUBLISH reached %d: patterns never match shard channels", n)
	}
	if got := h.Channels(Channel, []byte("n*")); len(got) != 1 || string(got[0]) != "news" {
		t.Errorf("Channels = %q", got)
	}
}

func TestDropShardChannelsTellsTheSubscribers(t *testing.T) {
	h := New()
	a := &recorder{}
	h.Subscribe(a, Shard, []byte("{x}1"))
	h.Subscribe(a, Shard, []byte("{y}1"))
	h.Subscribe(a, Channel, []byte("{x}1"))
	h.DropShardChannels(func(ch []byte) bool { return string(ch) == "{x}1" })
	if want := []string{"sunsubscribe {x}1 1 2"}; !slices.Equal(a.got, want) {
		t.Errorf("got %v, want %v", a.got, want)
	}
	if ch, _, sh := h.Counts(a); ch != 1 || sh != 1 || h.NumSub(Shard, []byte("{x}1")) != 0 {
		t.Error("the wrong subscriptions were dropped")
	}
}

func TestEncodeRESP3IsAPush(t *testing.T) {
	m := &Message{Kind: Shard, Channel: []byte("c"), Payload: []byte("")}
	if got := string(Encode(nil, 3, m)); got != ">3\r\n$8\r\nsmessage\r\n$1\r\nc\r\n$0\r\n\r\n" {
		t.Errorf("Encode = %q", got)
	}
}
