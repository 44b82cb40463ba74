package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

func maxBulkOf(n int64) *atomic.Int64 {
	var a atomic.Int64
	a.Store(n)
	return &a
}

// readAll parses every command in input; it returns the commands (as
// strings) and the error that stopped parsing.
func readAll(rd io.Reader, maxBulk int64) ([][]string, error) {
	r := NewReader(rd, maxBulkOf(maxBulk))
	var out [][]string
	var cmd Command
	for {
		if err := r.ReadCommand(&cmd); err != nil {
			return out, err
		}
		args := make([]string, len(cmd.Args))
		for i, a := range cmd.Args {
			args[i] = string(a)
		}
		out = append(out, args)
	}
}

func encode(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

func TestReaderParsesRequests(t *testing.T) {
	big := strings.Repeat("v", 3*BigBulkThreshold+7)
	cases := []struct {
		name  string
		input string
		want  [][]string
		err   string
	}{
		{"multibulk", encode("SET", "k", "v"), [][]string{{"SET", "k", "v"}}, ""},
		{"pipelined", encode("PING") + encode("GET", "a"), [][]string{{"PING"}, {"GET", "a"}}, ""},
		{"empty bulk", encode("SET", "k", ""), [][]string{{"SET", "k", ""}}, ""},
		{"big bulk then small args", encode("SET", "k", big, "EX", "10"), [][]string{{"SET", "k", big, "EX", "10"}}, ""},
		{"two big bulks", encode("MSET", "a", big, "b", big), [][]string{{"MSET", "a", big, "b", big}}, ""},
		{"empty multibulk is skipped", "*0\r\n*-1\r\n" + encode("PING"), [][]string{{"PING"}}, ""},
		{"inline", "SET a b\r\n", [][]string{{"SET", "a", "b"}}, ""},
		{"inline LF only", "PING\n", [][]string{{"PING"}}, ""},
		{"inline quotes", `SET "a b" 'c d' "\x41\n"` + "\r\n", [][]string{{"SET", "a b", "c d", "A\n"}}, ""},
		{"blank inline lines are skipped", "\r\n\r\nPING\r\n", [][]string{{"PING"}}, ""},
		{"unbalanced quotes", "SET \"a b\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"closing quote followed by text", "SET \"a\"b\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"bad multibulk length", "*abc\r\n", nil, "Protocol error: invalid multibulk length"},
		{"expected dollar", "*1\r\nfoo\r\n", nil, "Protocol error: expected '$', got 'f'"},
		{"negative bulk length", "*1\r\n$-5\r\n", nil, "Protocol error: invalid bulk length"},
		{"bulk over the limit", "*1\r\n$2000000\r\n", nil, "Protocol error: invalid bulk length"},
		{"too big inline", strings.Repeat("a", maxInlineSize+10), nil, "Protocol error: too big inline request"},
		{"too big count line", "*" + strings.Repeat("1", maxInlineSize+10), nil, "Protocol error: too big mbulk count string"},
		{"half a command", "*2\r\n$3\r\nGET\r\n", nil, "EOF"},
	}
	for _, tc := range cases {
		for _, mode := range []string{"whole", "one byte at a time"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				var rd io.Reader = strings.NewReader(tc.input)
				if mode != "whole" {
					rd = iotest.OneByteReader(rd)
				}
				got, err := readAll(rd, 1<<20)
				if len(got) != len(tc.want) {
					t.Fatalf("got %d commands %q, want %q", len(got), got, tc.want)
				}
				for i := range got {
					if strings.Join(got[i], "\x00") != strings.Join(tc.want[i], "\x00") {
						t.Fatalf("command %d: got %q, want %q", i, got[i], tc.want[i])
					}
				}
				want := tc.err
				if want == "" {
					want = "EOF"
				}
				var perr *ProtocolError
				switch {
				case errors.As(err, &perr):
					if perr.Msg != want {
						t.Fatalf("error %q, want %q", perr.Msg, want)
					}
				case !errors.Is(err, io.EOF) || want != "EOF":
					t.Fatalf("error %v, want %q", err, want)
				}
			})
		}
	}
}

func TestReaderHandsOverBigBulksWithoutCopy(t *testing.T) {
	big := strings.Repeat("x", BigBulkThreshold)
	r := NewReader(strings.NewReader(encode("SET", "k", big)), maxBulkOf(1<<20))
	var cmd Command
	if err := r.ReadCommand(&cmd); err != nil {
		t.Fatal(err)
	}
	first := cmd.Own(2)
	if &first[0] != &cmd.Args[2][0] {
		t.Fatal("Own copied a big bulk that was allocated for the command")
	}
	second := cmd.Own(2)
	if &second[0] == &first[0] {
		t.Fatal("Own handed the same big bulk out twice")
	}
	small := cmd.Own(1)
	if string(small) != "k" || &small[0] == &cmd.Args[1][0] {
		t.Fatal("Own must copy an argument that aliases the read buffer")
	}
}

func TestReaderShrinksBufferAfterHugeCommand(t *testing.T) {
	many := make([]string, 0, 20001)
	many = append(many, "MSET")
	for i := 0; i < 10000; i++ {
		many = append(many, fmt.Sprint("k", i), "v")
	}
	input := encode(many...) + encode("PING")
	r := NewReader(strings.NewReader(input), maxBulkOf(1<<20))
	var cmd Command
	if err := r.ReadCommand(&cmd); err != nil || len(cmd.Args) != len(many) {
		t.Fatalf("first command: %v, %d args", err, len(cmd.Args))
	}
	if err := r.ReadCommand(&cmd); err != nil || string(cmd.Args[0]) != "PING" {
		t.Fatalf("second command: %v", err)
	}
	if _, err := readAll(strings.NewReader(""), 1); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if r.QueryBufferSize() > maxRetainedBuffer*2 {
		// The next read drops the grown buffer.
		r.ReadCommand(&cmd)
		if r.QueryBufferSize() > DefaultReadBuffer {
			t.Fatalf("buffer stayed at %d bytes", r.QueryBufferSize())
		}
	}
}

// FuzzReader checks that any input parses the same whole or byte by byte,
// never panics, and that what parses re-encodes to input that parses the
// same.
func FuzzReader(f *testing.F) {
	f.Add([]byte(encode("SET", "k", "v")))
	f.Add([]byte("PING\r\nSET \"a b\" c\r\n"))
	f.Add([]byte("*1\r\n$-1\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$100000\r\nabc"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole, errWhole := readAll(bytes.NewReader(data), 1<<20)
		bytewise, errByte := readAll(iotest.OneByteReader(bytes.NewReader(data)), 1<<20)
		if fmt.Sprint(whole) != fmt.Sprint(bytewise) || fmt.Sprint(errWhole) != fmt.Sprint(errByte) {
			t.Fatalf("whole %q (%v) != bytewise %q (%v)", whole, errWhole, bytewise, errByte)
		}
		var re strings.Builder
		for _, cmd := range whole {
			re.WriteString(encode(cmd...))
		}
		again, err := readAll(strings.NewReader(re.String()), 1<<20)
		if !errors.Is(err, io.EOF) || fmt.Sprint(again) != fmt.Sprint(whole) {
			t.Fatalf("re-encoded commands parse as %q (%v), want %q", again, err, whole)
		}
	})
}

// A pipelining client that keeps the buffer full gets a larger one, up to
// streamReadBuffer, and every command still parses whole however the
// stream is cut.
func TestReaderGrowsBufferForPipelinedStream(t *testing.T) {
	var input strings.Builder
	var want []string
	for i := 0; i < 200; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), 4096+i)
		want = append(want, v)
		input.WriteString(encode("SET", fmt.Sprint("k", i), v))
	}
	for _, cut := range []int{1, 1000, 7777, 1 << 20} {
		r := NewReader(iotest.HalfReader(&chunkReader{s: input.String(), n: cut}), maxBulkOf(1<<20))
		var cmd Command
		for i, v := range want {
			if err := r.ReadCommand(&cmd); err != nil {
				t.Fatalf("cut %d: command %d: %v", cut, i, err)
			}
			if len(cmd.Args) != 3 || string(cmd.Args[1]) != fmt.Sprint("k", i) || string(cmd.Args[2]) != v {
				t.Fatalf("cut %d: command %d parsed wrong", cut, i)
			}
		}
		if len(r.buf) > streamReadBuffer {
			t.Fatalf("cut %d: buffer grew to %d, above %d", cut, len(r.buf), streamReadBuffer)
		}
		if cut >= 7777 && len(r.buf) != streamReadBuffer {
			t.Fatalf("cut %d: buffer is %d after a full pipeline, want %d", cut, len(r.buf), streamReadBuffer)
		}
	}
}

// chunkReader returns at most n bytes of s per Read.
type chunkReader struct {
	s string
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.s) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[k:]
	return k, nil
}
