package tracking

import (
	"fmt"
	"slices"
	"testing"
)

// recorder is a Sender that keeps one line per invalidation.
type recorder struct {
	got    []string
	broken map[int64]bool
}

func (r *recorder) SendInvalidation(id, redirect int64, keys []string, null, self bool) bool {
	r.got = append(r.got, fmt.Sprintf("%d->%d %v null=%v self=%v", id, redirect, keys, null, self))
	return r.broken[redirect]
}

func (r *recorder) take() []string {
	out := r.got
	r.got = nil
	return out
}

func TestDefaultModeInvalidatesReadersOnce(t *testing.T) {
	r := &recorder{}
	tb := New(r)
	tb.Enable(1, Mode{})
	tb.Enable(2, Mode{NoLoop: true})
	tb.Remember(1, [][]byte{[]byte("k")})
	tb.Remember(2, [][]byte{[]byte("k")})
	tb.Invalidate("k", 2, 2)
	tb.Invalidate("k", 2, 2) // forgotten after the first change
	if got, want := r.take(), []string{"1->0 [k] null=false self=false"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if st := tb.Stats(); st.Keys != 0 || st.Items != 0 {
		t.Fatalf("stats after invalidation %+v", st)
	}
}

func TestOptInRemembersOnlyAfterCaching(t *testing.T) {
	r := &recorder{}
	tb := New(r)
	tb.Enable(1, Mode{OptIn: true})
	tb.Remember(1, [][]byte{[]byte("a")})
	tb.SetCaching(1, true)
	tb.Remember(1, [][]byte{[]byte("b")})
	tb.CommandDone(1)
	tb.Remember(1, [][]byte{[]byte("c")})
	for _, k := range []string{"a", "b", "c"} {
		tb.Invalidate(k, 0, 0)
	}
	if got, want := r.take(), []string{"1->0 [b] null=false self=false"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestBroadcastSendsSortedKeysPerPrefixSkippingNoLoopOwnChanges(t *testing.T) {
	r := &recorder{}
	tb := New(r)
	if msg := tb.Enable(1, Mode{BCAST: true, Prefixes: []string{"u:"}}); msg != "" {
		t.Fatal(msg)
	}
	tb.Enable(2, Mode{BCAST: true, NoLoop: true})
	tb.Invalidate("u:2", 0, 0)
	tb.Invalidate("u:1", 2, 2)
	tb.Invalidate("x", 2, 2)
	if !tb.Pending() {
		t.Fatal("nothing pending after changes")
	}
	tb.Broadcast()
	want := []string{"2->0 [u:2] null=false self=false", "1->0 [u:1 u:2] null=false self=false"}
	if got := r.take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if tb.Pending() {
		t.Fatal("still pending after Broadcast")
	}
}

func TestPrefixesMustNotOverlap(t *testing.T) {
	tb := New(&recorder{})
	if msg := tb.Enable(1, Mode{BCAST: true, Prefixes: []string{"ab", "a"}}); msg == "" {
		t.Fatal("overlapping prefixes accepted")
	}
	tb.Enable(1, Mode{BCAST: true, Prefixes: []string{"a"}})
	if msg := tb.Enable(1, Mode{BCAST: true, Prefixes: []string{"abc"}}); msg == "" {
		t.Fatal("prefix overlapping an existing one accepted")
	}
}

func TestLimitEvictsKeysWithInvalidations(t *testing.T) {
	r := &recorder{}
	tb := New(r)
	tb.Enable(1, Mode{})
	for i := range 10 {
		tb.Remember(1, [][]byte{[]byte(fmt.Sprint("k", i))})
	}
	tb.Limit(4)
	if st := tb.Stats(); st.Keys != 4 || st.Items != 4 {
		t.Fatalf("stats after Limit(4): %+v", st)
	}
	if got := len(r.take()); got != 6 {
		t.Fatalf("%d invalidations, want 6", got)
	}
}

func TestFlushSendsNullToEveryTrackingClientAndForgets(t *testing.T) {
	r := &recorder{broken: map[int64]bool{9: true}}
	tb := New(r)
	tb.Enable(1, Mode{})
	tb.Enable(2, Mode{Redirect: 9})
	tb.Remember(1, [][]byte{[]byte("k")})
	tb.Flush(1)
	want := []string{"1->0 [] null=true self=true", "2->9 [] null=true self=false"}
	if got := r.take(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !tb.Get(2).BrokenRedir {
		t.Fatal("a gone redirect target not recorded")
	}
	if tb.Stats().Keys != 0 {
		t.Fatal("keys remembered after a flush")
	}
}

func TestEncodeMatchesRedis(t *testing.T) {
	cases := []struct {
		proto, nullProto int
		keys             []string
		null             bool
		want             string
	}{
		{3, 3, []string{"k"}, false, ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"},
		{3, 2, nil, true, ">2\r\n$10\r\ninvalidate\r\n$-1\r\n"},
		{2, 2, []string{"a", "bc"}, false, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*2\r\n$1\r\na\r\n$2\r\nbc\r\n"},
		{2, 3, nil, true, "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n_\r\n"},
	}
	for _, c := range cases {
		if got := string(Encode(nil, c.proto, c.keys, c.null, c.nullProto)); got != c.want {
			t.Errorf("Encode(%d, %q, %v) = %q, want %q", c.proto, c.keys, c.null, got, c.want)
		}
	}
}

// TestExpiryFoundByReaderIsNotHiddenByNoLoop: an expiry is no client's
// change (NOLOOP does not hide it) but follows the reply of the client
// whose read found it.
func TestExpiryFoundByReaderIsNotHiddenByNoLoop(t *testing.T) {
	r := &recorder{}
	tb := New(r)
	tb.Enable(1, Mode{NoLoop: true})
	tb.Remember(1, [][]byte{[]byte("k")})
	tb.Invalidate("k", 0, 1)
	if got, want := r.take(), []string{"1->0 [k] null=false self=true"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
