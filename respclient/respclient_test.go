package respclient

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadReplyFindsTheExtentOfEveryRESPType checks that ReadReply reads
// exactly one reply of every RESP2 and RESP3 type, no more and no less, so
// that byte-for-byte comparisons never straddle two replies.
func TestReadReplyFindsTheExtentOfEveryRESPType(t *testing.T) {
	tests := []struct {
		name  string
		reply string
	}{
		{"simple string", "+OK\r\n"},
		{"error", "-ERR wrong number of arguments for 'get' command\r\n"},
		{"integer", ":-42\r\n"},
		{"bulk", "$5\r\nhello\r\n"},
		{"bulk with CRLF inside", "$4\r\na\r\nb\r\n"},
		{"empty bulk", "$0\r\n\r\n"},
		{"null bulk", "$-1\r\n"},
		{"null array", "*-1\r\n"},
		{"empty array", "*0\r\n"},
		{"nested array", "*2\r\n*1\r\n:1\r\n*2\r\n$1\r\na\r\n$-1\r\n"},
		{"resp3 null", "_\r\n"},
		{"double", ",3.14\r\n"},
		{"double inf", ",inf\r\n"},
		{"boolean", "#t\r\n"},
		{"blob error", "!21\r\nSYNTAX invalid syntax\r\n"},
		{"verbatim", "=15\r\ntxt:Some string\r\n"},
		{"big number", "(3492890328409238509324850943850943825024385\r\n"},
		{"map", "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n_\r\n"},
		{"set", "~2\r\n+a\r\n+b\r\n"},
		{"push", ">2\r\n+message\r\n$2\r\nhi\r\n"},
		{"attribute before reply", "|1\r\n+ttl\r\n:3600\r\n*2\r\n:1\r\n:2\r\n"},
		{"attribute inside aggregate", "*2\r\n|1\r\n+a\r\n+b\r\n:1\r\n:2\r\n"},
		{"line longer than the read buffer", "+" + strings.Repeat("x", 100) + "\r\n"},
		{"bulk longer than the read buffer", "$100\r\n" + strings.Repeat("y", 100) + "\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.reply+"+NEXT\r\n"), 16)
			raw, _, err := r.ReadReply(nil)
			if err != nil || string(raw) != tt.reply {
				t.Fatalf("ReadReply = %q, %v; want %q", raw, err, tt.reply)
			}
			if next, _, err := r.ReadReply(nil); err != nil || string(next) != "+NEXT\r\n" {
				t.Fatalf("after the reply: %q, %v; want +NEXT", next, err)
			}
		})
	}
}

// TestReadReplyDecodesValues checks the parsed form that non-exact
// comparisons rely on.
func TestReadReplyDecodesValues(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		check func(Reply) bool
	}{
		{"integer", ":-42\r\n", func(r Reply) bool { return r.Type == ':' && r.Int == -42 }},
		{"null bulk", "$-1\r\n", func(r Reply) bool { return r.Type == '$' && r.Null }},
		{"null array", "*-1\r\n", func(r Reply) bool { return r.Type == '*' && r.Null }},
		{"resp3 null", "_\r\n", func(r Reply) bool { return r.Type == '_' && r.Null }},
		{"error", "-WRONGTYPE x\r\n", func(r Reply) bool { return r.IsError() && r.Str == "WRONGTYPE x" }},
		{"blob error", "!3\r\nERR\r\n", func(r Reply) bool { return r.IsError() && r.Str == "ERR" }},
		{"verbatim", "=7\r\ntxt:abc\r\n", func(r Reply) bool { return r.Format == "txt" && r.Str == "abc" }},
		{"double", ",1.5\r\n", func(r Reply) bool { return r.Float == 1.5 }},
		{"boolean false", "#f\r\n", func(r Reply) bool { return r.Type == '#' && r.Int == 0 }},
		{"map", "%1\r\n+k\r\n:7\r\n", func(r Reply) bool {
			return r.Type == '%' && len(r.Elems) == 2 && r.Elems[0].Str == "k" && r.Elems[1].Int == 7
		}},
		{"element raw bytes", "*2\r\n$1\r\na\r\n:1\r\n", func(r Reply) bool {
			return string(r.Elems[0].Raw) == "$1\r\na\r\n" && string(r.Elems[1].Raw) == ":1\r\n"
		}},
		{"attribute", "|1\r\n+ttl\r\n:9\r\n+OK\r\n", func(r Reply) bool {
			return r.Type == '+' && r.Str == "OK" && len(r.Attrs) == 2 && r.Attrs[1].Int == 9
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r, err := NewReader(strings.NewReader(tt.raw), 0).ReadReply(nil)
			if err != nil {
				t.Fatalf("ReadReply(%q): %v", tt.raw, err)
			}
			if !tt.check(r) {
				t.Fatalf("ReadReply(%q) = %+v", tt.raw, r)
			}
			if string(r.Raw) != tt.raw {
				t.Fatalf("Raw = %q, want %q", r.Raw, tt.raw)
			}
		})
	}
}

// TestReadReplyRejectsMalformedReplies pins down what is a protocol error
// and that a stream cut inside a reply is io.ErrUnexpectedEOF.
func TestReadReplyRejectsMalformedReplies(t *testing.T) {
	for _, raw := range []string{"+OK\n", "?x\r\n", ":1x\r\n", "$3\r\nabcd\r\n", "$-2\r\n", "_x\r\n",
		"#x\r\n", "%-1\r\n", "=3\r\nabc\r\n", ",nope\r\n", strings.Repeat("*1\r\n", MaxReplyDepth+2) + ":1\r\n"} {
		if _, r, err := NewReader(strings.NewReader(raw), 0).ReadReply(nil); !errors.Is(err, ErrProtocol) {
			t.Errorf("ReadReply(%q) = %+v, %v; want a protocol error", raw, r, err)
		}
	}
	for _, raw := range []string{"+OK", "$5\r\nab", "*2\r\n:1\r\n"} {
		if _, _, err := NewReader(strings.NewReader(raw), 0).ReadReply(nil); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("ReadReply(%q): %v, want io.ErrUnexpectedEOF", raw, err)
		}
	}
	if _, _, err := NewReader(strings.NewReader(""), 0).ReadReply(nil); err != io.EOF {
		t.Errorf("ReadReply at the end of the stream: %v, want io.EOF", err)
	}
}

// TestTypedReadersReadWhatTheyAskFor covers the hot-path readers: a server
// error leaves the stream in sync, a reply of another type is a protocol
// error, and ReadBody fills, truncates or skips.
func TestTypedReadersReadWhatTheyAskFor(t *testing.T) {
	r := NewReader(strings.NewReader("+OK\r\n-ERR no\r\n:12\r\n$5\r\nhello\r\n$5\r\nworld\r\n$-1\r\n$3\r\nabc\r\n+OK\r\n:1\r\n"), 0)
	if err := r.ReadOK(); err != nil {
		t.Fatal(err)
	}
	var se *ServerError
	if err := r.ReadOK(); !errors.As(err, &se) || se.Msg != "ERR no" {
		t.Fatalf("ReadOK on an error reply: %v", err)
	}
	if n, err := r.ReadInt(); n != 12 || err != nil {
		t.Fatalf("ReadInt = %d, %v", n, err)
	}
	dst := make([]byte, 5)
	if n, err := r.ReadBulkLen(); n != 5 || err != nil {
		t.Fatalf("ReadBulkLen = %d, %v", n, err)
	}
	if err := r.ReadBody(5, dst); err != nil || string(dst) != "hello" {
		t.Fatalf("ReadBody = %q, %v", dst, err)
	}
	r.ReadBulkLen()
	if err := r.ReadBody(5, dst[:2]); err != nil || string(dst[:2]) != "wo" {
		t.Fatalf("ReadBody into a short buffer = %q, %v", dst[:2], err)
	}
	if n, err := r.ReadBulkLen(); n != -1 || err != nil {
		t.Fatalf("ReadBulkLen of a null = %d, %v", n, err)
	}
	r.ReadBulkLen()
	if err := r.ReadBody(3, nil); err != nil {
		t.Fatalf("ReadBody skipping: %v", err)
	}
	if _, err := r.ReadInt(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("ReadInt on +OK: %v, want a protocol error", err)
	}
}

// TestBatchEncodesRESP: small values are copied into the header buffer,
// large ones referenced, and the bytes on the wire are plain RESP arrays
// of bulk strings either way.
func TestBatchEncodesRESP(t *testing.T) {
	big := bytes.Repeat([]byte{'x'}, BigValue+3)
	var b Batch
	b.Add("GET", "k1")
	b.AddValue([]byte("small"), "SET", "k2")
	b.AddValue(big, "SET", "k3")
	b.AddValue(big, "SET", "k4")
	b.Add("KVC.PROBE", "LEASE", "10", "a")
	var out bytes.Buffer
	if err := b.Flush(&out); err != nil {
		t.Fatal(err)
	}
	want := "*2\r\n$3\r\nGET\r\n$2\r\nk1\r\n" +
		"*3\r\n$3\r\nSET\r\n$2\r\nk2\r\n$5\r\nsmall\r\n" +
		"*3\r\n$3\r\nSET\r\n$2\r\nk3\r\n$16387\r\n" + string(big) + "\r\n" +
		"*3\r\n$3\r\nSET\r\n$2\r\nk4\r\n$16387\r\n" + string(big) + "\r\n" +
		"*4\r\n$9\r\nKVC.PROBE\r\n$5\r\nLEASE\r\n$2\r\n10\r\n$1\r\na\r\n"
	if out.String() != want {
		t.Fatalf("encoded %q\nwant    %q", trunc(out.String()), trunc(want))
	}
	if n := len(b.segs); n != 0 || len(b.hdr) != 0 || b.mark != 0 {
		t.Fatalf("batch not reset after write: %d segments, %d header bytes", n, len(b.hdr))
	}
	// Only the two large values are referenced rather than copied.
	var refs int
	b.AddValue(big, "SET", "k")
	b.AddValue([]byte("m"), "SET", "k")
	b.cut()
	for _, s := range b.segs {
		if s.ext != nil {
			refs++
			if &s.ext[0] != &big[0] {
				t.Fatal("large value was copied")
			}
		}
	}
	if refs != 1 {
		t.Fatalf("%d referenced values, want 1", refs)
	}
}

func trunc(s string) string {
	return strings.ReplaceAll(s, strings.Repeat("x", BigValue+3), "x…")
}

// TestAppendCommandEncodesBytesArguments: the []byte form encodes as the
// string form does.
func TestAppendCommandEncodesBytesArguments(t *testing.T) {
	if got := string(AppendCommand(nil, []byte("A"), []byte("bc"))); got != "*2\r\n$1\r\nA\r\n$2\r\nbc\r\n" {
		t.Errorf("AppendCommand = %q", got)
	}
}

// repeat is an endless stream of one reply.
type repeat struct {
	b   []byte
	off int
}

func (r *repeat) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.b[r.off:])
		n += k
		r.off = (r.off + k) % len(r.b)
	}
	return n, nil
}

// TestHotPathAllocatesNothing pins down the zero-allocation promise of the
// typed readers, for small values in the buffer and large ones read
// straight into the caller's buffer.
func TestHotPathAllocatesNothing(t *testing.T) {
	for _, size := range []int{100, 1 << 20} {
		value := bytes.Repeat([]byte("x"), size)
		stream := append(AppendBulk(nil, value), "+OK\r\n:7\r\n"...)
		r := NewReader(&repeat{b: stream}, 0)
		dst := make([]byte, size)
		allocs := testing.AllocsPerRun(100, func() {
			n, err := r.ReadBulkLen()
			if err != nil || n != size {
				t.Fatalf("ReadBulkLen = %d, %v", n, err)
			}
			if err := r.ReadBody(n, dst); err != nil {
				t.Fatal(err)
			}
			if err := r.ReadOK(); err != nil {
				t.Fatal(err)
			}
			if _, err := r.ReadInt(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%d-byte value: %v allocations per reply group, want 0", size, allocs)
		}
	}
}

// BenchmarkReadBulk reads 4 MiB bulk replies into a reused buffer.
func BenchmarkReadBulk(b *testing.B) {
	value := bytes.Repeat([]byte("x"), 4<<20)
	r := NewReader(&repeat{b: AppendBulk(nil, value)}, 0)
	dst := make([]byte, len(value))
	b.SetBytes(int64(len(value)))
	b.ReportAllocs()
	for b.Loop() {
		n, err := r.ReadBulkLen()
		if err != nil {
			b.Fatal(err)
		}
		if err := r.ReadBody(n, dst); err != nil {
			b.Fatal(err)
		}
	}
}
