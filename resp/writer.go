package resp

import (
	"io"
	"math"
	"net"
	"strconv"

	"github.com/tidwall/redcon"
)

// zeroCopyThreshold is the bulk size from which a reply references the
// stored value in a vectored write instead of copying it into the buffer.
const zeroCopyThreshold = 16 * 1024

// maxPendingReply is the buffered reply size that forces a flush even when
// more pipelined commands are waiting.
const maxPendingReply = 1 << 20

// Writer encodes replies in RESP2 or RESP3. RESP2 encodings come from
// redcon's Append functions; RESP3 types are added here. Large bulks are not
// copied: they are queued as their own segment of a vectored write, so a GET
// of a stored value makes zero user-space copies.
type Writer struct {
	w       io.Writer
	buf     []byte
	segs    net.Buffers
	pending int
	proto   int
	written int64
	err     error
}

// NewWriter returns a RESP2 Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, 16*1024), proto: 2}
}

// Proto is the protocol version in use (2 or 3).
func (w *Writer) Proto() int { return w.proto }

// SetProto switches the protocol version.
func (w *Writer) SetProto(p int) { w.proto = p }

// BytesWritten returns and resets the number of bytes written.
func (w *Writer) BytesWritten() int64 {
	n := w.written
	w.written = 0
	return n
}

// Pending is the number of reply bytes buffered but not yet written.
func (w *Writer) Pending() int { return len(w.buf) + w.pending }

// OK writes +OK.
func (w *Writer) OK() { w.buf = redcon.AppendOK(w.buf) }

// Simple writes a simple string.
func (w *Writer) Simple(s string) { w.buf = redcon.AppendString(w.buf, s) }

// Error writes an error; msg must carry its code ("ERR ...", "WRONGTYPE ...").
func (w *Writer) Error(msg string) { w.buf = redcon.AppendError(w.buf, msg) }

// Int writes an integer.
func (w *Writer) Int(n int64) { w.buf = redcon.AppendInt(w.buf, n) }

// Bool writes a boolean: #t/#f in RESP3, :1/:0 in RESP2.
func (w *Writer) Bool(b bool) {
	if w.proto == 3 {
		if b {
			w.buf = append(w.buf, "#t\r\n"...)
		} else {
			w.buf = append(w.buf, "#f\r\n"...)
		}
		return
	}
	if b {
		w.Int(1)
	} else {
		w.Int(0)
	}
}

// Bulk writes a bulk string. A large b is referenced, not copied; it must
// not be modified afterwards (stored values are immutable).
func (w *Writer) Bulk(b []byte) {
	if len(b) < zeroCopyThreshold {
		w.buf = redcon.AppendBulk(w.buf, b)
		return
	}
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(b)), 10)
	w.buf = append(w.buf, '\r', '\n')
	w.segs = append(w.segs, w.buf, b)
	w.pending += len(w.buf) + len(b)
	w.buf = make([]byte, 0, 512)
	w.buf = append(w.buf, '\r', '\n')
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) { w.buf = redcon.AppendBulkString(w.buf, s) }

// BulkInt writes an integer as a bulk string.
func (w *Writer) BulkInt(n int64) { w.buf = redcon.AppendBulkInt(w.buf, n) }

// Null writes the null reply: $-1 in RESP2, _ in RESP3.
func (w *Writer) Null() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = redcon.AppendNull(w.buf)
}

// NullArray writes the null array: *-1 in RESP2, _ in RESP3.
func (w *Writer) NullArray() {
	if w.proto == 3 {
		w.buf = append(w.buf, "_\r\n"...)
		return
	}
	w.buf = append(w.buf, "*-1\r\n"...)
}

// Array writes an array header of n elements.
func (w *Writer) Array(n int) { w.buf = redcon.AppendArray(w.buf, n) }

// Map writes a map header of n pairs: %n in RESP3, *2n in RESP2.
func (w *Writer) Map(n int) {
	if w.proto == 3 {
		w.buf = appendHeader(w.buf, '%', int64(n))
		return
	}
	w.Array(2 * n)
}

// Set writes a set header: ~n in RESP3, *n in RESP2.
func (w *Writer) Set(n int) {
	if w.proto == 3 {
		w.buf = appendHeader(w.buf, '~', int64(n))
		return
	}
	w.Array(n)
}

// Double writes a floating point number: ,f in RESP3, a bulk in RESP2,
// formatted like Redis's addReplyDouble.
func (w *Writer) Double(f float64) {
	if w.proto == 3 {
		w.buf = append(w.buf, ',')
		w.buf = appendRESP3Double(w.buf, f)
		w.buf = append(w.buf, '\r', '\n')
		return
	}
	w.BulkString(FormatDouble(f))
}

// Verbatim writes a verbatim string (=len\r\ntxt:...) in RESP3, a bulk in
// RESP2. Redis uses it for INFO, CLIENT LIST and CLIENT INFO.
func (w *Writer) Verbatim(s string) {
	if w.proto != 3 {
		w.BulkString(s)
		return
	}
	w.buf = appendHeader(w.buf, '=', int64(len(s)+4))
	w.buf = append(w.buf, "txt:"...)
	w.buf = append(w.buf, s...)
	w.buf = append(w.buf, '\r', '\n')
}

// Raw writes pre-encoded bytes.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// Flush writes everything buffered, with one vectored write when large
// bulks are queued.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	var n int64
	var err error
	if len(w.segs) == 0 {
		if len(w.buf) == 0 {
			return nil
		}
		var m int
		m, err = w.w.Write(w.buf)
		n = int64(m)
	} else {
		segs := append(w.segs, w.buf)
		n, err = segs.WriteTo(w.w)
		clear(w.segs)
		w.segs = w.segs[:0]
		w.pending = 0
	}
	w.written += n
	w.buf = w.buf[:0]
	if cap(w.buf) > 1<<20 {
		w.buf = make([]byte, 0, 16*1024)
	}
	w.err = err
	return err
}

// FlushN writes the first n bytes of the pending replies (all of them
// when n >= Pending) and keeps the rest for a later Flush or FlushN. The
// server uses it to write under deadlines (output buffer limits, idle
// timeout); stored values are still referenced, not copied.
func (w *Writer) FlushN(n int) error {
	if w.err != nil {
		return w.err
	}
	if n >= w.Pending() {
		return w.Flush()
	}
	if n <= 0 {
		return nil
	}
	if len(w.buf) > 0 {
		// The tail buffer becomes a segment so that the prefix may end
		// inside it; later replies start a new buffer.
		w.segs = append(w.segs, w.buf)
		w.pending += len(w.buf)
		w.buf = make([]byte, 0, 512)
	}
	out := make(net.Buffers, 0, len(w.segs))
	for rest := n; rest > 0; {
		seg := w.segs[len(out)]
		k := min(len(seg), rest)
		out = append(out, seg[:k])
		rest -= k
	}
	m, err := out.WriteTo(w.w)
	w.written += m
	w.consume(int(m))
	w.err = err
	return err
}

// consume drops the first m written bytes of the queued segments.
func (w *Writer) consume(m int) {
	w.pending -= m
	i := 0
	for m > 0 && i < len(w.segs) {
		if len(w.segs[i]) <= m {
			m -= len(w.segs[i])
			i++
			continue
		}
		w.segs[i] = w.segs[i][m:]
		m = 0
	}
	rem := copy(w.segs, w.segs[i:])
	clear(w.segs[rem:])
	w.segs = w.segs[:rem]
}

func appendHeader(b []byte, c byte, n int64) []byte {
	b = append(b, c)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

// FormatDouble formats f like Redis 7's RESP2 double replies (%.17g, with
// inf and -inf spelled out).
func FormatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

func appendRESP3Double(b []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	case math.IsNaN(f):
		return append(b, "nan"...)
	}
	return strconv.AppendFloat(b, f, 'g', 17, 64)
}
