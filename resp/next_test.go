package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// errNeedMore is what the test's source answers when ReadCommand wants
// more bytes than were given.
var errNeedMore = errors.New("would read")

// loopReader fills a Reader the way an event loop does: with Fill, from
// a source that never waits, and nothing behind it.
func loopReader(t testing.TB, data []byte) *Reader {
	t.Helper()
	var maxBulk atomic.Int64
	maxBulk.Store(512 << 20)
	r := NewReader(readerFunc(func([]byte) (int, error) { return 0, errNeedMore }), &maxBulk)
	for len(data) > 0 {
		n, err := r.Fill(func(p []byte) (int, error) { return copy(p, data), nil })
		if err != nil {
			t.Fatal(err)
		}
		data = data[n:]
	}
	return r
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// TestNextAtEveryCut cuts real requests at every byte: a cut command is
// partial, a whole one whole (and ReadCommand parses it without reading),
// and a large bulk is announced as soon as its length is.
func TestNextAtEveryCut(t *testing.T) {
	cases := []struct {
		wire string
		want Pending
	}{
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n", NextWhole},
		{"*1\r\n$4\r\nPING\r\n", NextWhole},
		{"PING\r\n", NextWhole},
		{"SET k \"a b\"\n", NextWhole},
		{"*2\r\n$3\r\nGET\r\n$" + "100" + "\r\n" + strings.Repeat("x", 100) + "\r\n", NextWhole},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20000\r\n" + strings.Repeat("v", 20000) + "\r\n", NextBig},
	}
	for _, tc := range cases {
		for cut := 0; cut <= len(tc.wire); cut++ {
			r := loopReader(t, []byte(tc.wire[:cut]))
			got := r.Next()
			var want Pending
			switch {
			case cut == 0:
				want = NextEmpty
			case tc.want == NextBig && strings.Contains(tc.wire[:cut], "$20000\r\n"):
				want = NextBig
			case cut == len(tc.wire):
				want = tc.want
			default:
				want = NextPartial
			}
			if got != want {
				t.Fatalf("%q cut at %d: Next = %d, want %d", tc.wire, cut, got, want)
			}
			if got == NextWhole {
				var cmd Command
				if err := r.ReadCommand(&cmd); err != nil {
					t.Fatalf("%q: ReadCommand after NextWhole: %v", tc.wire, err)
				}
				if r.Next() != NextEmpty {
					t.Fatalf("%q: bytes left after the command", tc.wire)
				}
			}
		}
	}
}

// TestFillKeepsAPipelineCutAnywhere fills a pipeline in small pieces,
// parsing whatever Next calls whole in between, and checks every command
// arrives once and intact.
func TestFillKeepsAPipelineCutAnywhere(t *testing.T) {
	var wire bytes.Buffer
	var want []string
	for i := range 200 {
		v := strings.Repeat(string(rune('a'+i%26)), i*37%5000)
		wire.WriteString("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n")
		want = append(want, v)
	}
	var maxBulk atomic.Int64
	maxBulk.Store(512 << 20)
	r := NewReader(readerFunc(func([]byte) (int, error) { return 0, errNeedMore }), &maxBulk)
	data := wire.Bytes()
	var got []string
	for step := 1; len(data) > 0; step = step*7%1500 + 1 {
		piece := data[:min(step, len(data))]
		n, _ := r.Fill(func(p []byte) (int, error) { return copy(p, piece), nil })
		data = data[n:]
		for r.Next() == NextWhole {
			var cmd Command
			if err := r.ReadCommand(&cmd); err != nil {
				t.Fatal(err)
			}
			got = append(got, string(cmd.Args[2]))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d commands, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("command %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
		}
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// FuzzNext checks Next against ReadCommand on any input: what Next calls
// partial ReadCommand cannot parse without reading more, and what it calls
// whole ReadCommand parses or rejects without reading (unless an empty
// request, which ReadCommand skips, comes first).
func FuzzNext(f *testing.F) {
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk"))
	f.Add([]byte("PING\r\n"))
	f.Add([]byte("*0\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*1\r\n$x\r\n"))
	f.Add([]byte("GET a\x00b\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := loopReader(t, data)
		st := r.Next()
		var cmd Command
		err := r.ReadCommand(&cmd)
		switch st {
		case NextEmpty:
			if len(data) != 0 {
				t.Fatal("NextEmpty with bytes buffered")
			}
		case NextPartial:
			if err == nil {
				t.Fatalf("Next said partial, ReadCommand parsed %q", cmd.Args)
			}
			var perr *ProtocolError
			if errors.As(err, &perr) {
				t.Fatalf("Next said partial, ReadCommand rejected it: %v", err)
			}
		case NextWhole:
			if errors.Is(err, errNeedMore) && !startsEmpty(data) {
				t.Fatalf("Next said whole, ReadCommand wanted more (%q)", data)
			}
		}
	})
}

// startsEmpty reports whether data starts with a request ReadCommand skips:
// a multibulk count <= 0 or a blank inline line.
func startsEmpty(data []byte) bool {
	if len(data) > 0 && data[0] == '*' {
		// A multibulk count ends at its '\r' (headerEnd).
		end := headerEnd(data)
		if end < 0 {
			return false
		}
		n, ok := parseInt(data[1:end])
		return ok && n <= 0
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	args, ok := splitArgs(bytes.TrimSuffix(line, []byte("\r")))
	return ok && len(args) == 0
}

// FuzzReadCommandAfterNext checks that ReadCommand after Next, which takes
// the arguments Next parsed (Reader.parsed), reads every command of any
// input as ReadCommand alone does: the same arguments, the same error, the
// same bytes left; with and without the limits of an unauthenticated
// client, and with the arguments dropped between commands as the server
// does.
func FuzzReadCommandAfterNext(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$4\r\nkey1\r\n*1\r\n$4\r\nPING\r\n"), false)
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk"), true)
	f.Add([]byte("*0\r\n*1\r\n$4\r\nPING\r\nPING\r\n*-1\r\n*1\r\n$4\r\nPINGxx"), false)
	f.Add([]byte("*11\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n$1\r\nf\r\n$1\r\ng\r\n$1\r\nh\r\n$1\r\ni\r\n$1\r\nj\r\n$1\r\nk\r\n"), true)
	f.Add([]byte("*1\r\n$20000\r\n"), true)
	f.Add([]byte("*2\n$3\nGET\n$1\nk\n*1\r\n$x\r\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, auth bool) {
		type read struct {
			args string
			err  string
			left int
		}
		run := func(next bool) []read {
			r := loopReader(t, data)
			var out []read
			for range 64 {
				var cmd Command
				r.SetAuthRequired(auth)
				if next && r.Next() == NextEmpty {
					break
				}
				err := r.ReadCommand(&cmd)
				out = append(out, read{fmt.Sprintf("%q", cmd.Args), fmt.Sprint(err), r.QueryBufferUsed()})
				if err != nil {
					break
				}
				r.DropArgs(&cmd)
			}
			return out
		}
		alone, after := run(false), run(true)
		// Next stops at an empty buffer where ReadCommand reports that it
		// needs more.
		if len(alone) == len(after)+1 && alone[len(alone)-1].err == errNeedMore.Error() && alone[len(alone)-1].left == 0 {
			alone = alone[:len(after)]
		}
		if fmt.Sprint(alone) != fmt.Sprint(after) {
			t.Fatalf("input %q (auth %v):\nReadCommand alone: %v\nafter Next:        %v", data, auth, alone, after)
		}
	})
}

// TestReadCommandTakesWhatNextParsed shows the path FuzzReadCommandAfterNext
// compares: a whole command Next saw is handed over without a second
// parse, a refill in between makes ReadCommand parse again, and a command
// with a bulk read on the loop is never handed over so.
func TestReadCommandTakesWhatNextParsed(t *testing.T) {
	r := loopReader(t, []byte("*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n*2\r\n$3\r\nGET\r\n$2\r\nk2\r\n"))
	if st := r.Next(); st != NextWhole || !r.parsed || r.parsedEnd != 21 {
		t.Fatalf("Next = %v, parsed %v up to %d; want whole, parsed up to 21", st, r.parsed, r.parsedEnd)
	}
	var cmd Command
	if err := r.ReadCommand(&cmd); err != nil || fmt.Sprintf("%q", cmd.Args) != `["GET" "k1"]` || r.parsed || r.r != 21 {
		t.Fatalf("ReadCommand = %q, %v, parsed %v, at %d", cmd.Args, err, r.parsed, r.r)
	}
	r.DropArgs(&cmd)
	if r.Next() != NextWhole || !r.parsed {
		t.Fatal("the second GET was not parsed by Next")
	}
	r.Fill(func(p []byte) (int, error) { return copy(p, "*1\r\n$4\r\nPING\r\n"), nil })
	if r.parsed {
		t.Fatal("a refill left Next's parse in place")
	}
	if err := r.ReadCommand(&cmd); err != nil || fmt.Sprintf("%q", cmd.Args) != `["GET" "k2"]` {
		t.Fatalf("ReadCommand after a refill = %q, %v", cmd.Args, err)
	}
}
