package resp

import (
	"bytes"
	"io"
	"math"
	"strconv"

	"github.com/tidwall/redcon"
)

// zeroCopyThreshold is the bulk size from which a reply references the
// stored value in a vectored write instead of copying it into the buffer.
const zeroCopyThreshold = 16 * 1024

// storedZeroCopyThreshold is zeroCopyThreshold for string values
// (StoredBulk), whose bytes the engine never changes in place. Below it a
// copy costs less than the extra iovec; at 4 KiB the copy into the buffer
// was 18% of a pipelined GET's CPU (mostly cache misses on the value,
// which the kernel's copy then takes instead).
const storedZeroCopyThreshold = 2 * 1024

// bufferSize is the capacity of a writer's buffer for small replies, and
// minCarve the least room left in it that the replies after a referenced
// bulk use (carve) before a new buffer is made.
const (
	bufferSize = 16 * 1024
	minCarve   = 512
)

// BuffersWriter is an io.Writer that can write several buffers with one
// vectored write (writev). A Writer whose destination implements it hands
// its queued large bulks over without copying them; the server's
// connections do (net.Buffers). Any other destination gets one Write per
// buffer.
type BuffersWriter interface {
	io.Writer
	// WriteBuffers writes bufs in order and returns the number of bytes
	// written; it may reslice the elements of bufs as it goes.
	WriteBuffers(bufs [][]byte) (int64, error)
}

// writeBuffers writes bufs to w, vectored when w is a BuffersWriter.
func writeBuffers(w io.Writer, bufs [][]byte) (int64, error) {
	if bw, ok := w.(BuffersWriter); ok {
		return bw.WriteBuffers(bufs)
	}
	var n int64
	for _, b := range bufs {
		m, err := w.Write(b)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Writer encodes replies in RESP2 or RESP3. RESP2 encodings come from
// redcon's Append functions; RESP3 types are added here. Large bulks are not
// copied: they are queued as their own segment of a vectored write, so a GET
// of a stored value makes zero user-space copies.
type Writer struct {
	w   io.Writer
	buf []byte
	// home is the buffer buf was last made as; carved is set when buf is
	// a later part of it (carve), so that Flush, once every segment is
	// written, starts again at its beginning.
	home    []byte
	carved  bool
	segs    [][]byte
	pending int
	proto   int
	written int64
	err     error
}

// NewWriter returns a RESP2 Writer on w.
func NewWriter(w io.Writer) *Writer {
	home := make([]byte, 0, bufferSize)
	return &Writer{w: w, buf: home, home: home, proto: 2}
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

// BufferCap is the capacity of the buffer small replies are encoded into.
func (w *Writer) BufferCap() int { return cap(w.buf) }

// BufferLen is the number of bytes in that buffer not yet written.
func (w *Writer) BufferLen() int { return len(w.buf) }

// QueuedBytes is the number of reply bytes queued as segments of a
// vectored write (large bulks and the buffers before them), not yet written.
func (w *Writer) QueuedBytes() int { return w.pending }

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
	w.bulkRef(b)
}

// StoredBulk writes a string value of the keyspace as a bulk string,
// referenced rather than copied from a smaller size than Bulk's: the
// engine never changes a string's bytes in place, where a view into a
// collection's packed elements may be moved by the next write to it.
func (w *Writer) StoredBulk(b []byte) {
	if len(b) < storedZeroCopyThreshold {
		w.buf = redcon.AppendBulk(w.buf, b)
		return
	}
	w.bulkRef(b)
}

// bulkRef writes b's header into the buffer and queues the buffer and b as
// segments of the next vectored write.
func (w *Writer) bulkRef(b []byte) {
	w.buf = append(w.buf, '$')
	w.buf = strconv.AppendInt(w.buf, int64(len(b)), 10)
	w.buf = append(w.buf, '\r', '\n')
	w.segs = append(w.segs, w.buf, b)
	w.pending += len(w.buf) + len(b)
	w.carve()
	w.buf = append(w.buf, '\r', '\n')
}

// carve starts an empty buf after the bytes just queued as a segment: in
// the rest of the same buffer while it has room (a buffer allocated per
// referenced bulk cost more than the copy it saved, for 4 KiB values),
// otherwise in a new one.
func (w *Writer) carve() {
	if cap(w.buf)-len(w.buf) >= minCarve {
		w.buf = w.buf[len(w.buf):len(w.buf)]
		w.carved = true
		return
	}
	w.home = make([]byte, 0, bufferSize)
	w.buf, w.carved = w.home, false
}

// BulkString writes a bulk string.
func (w *Writer) BulkString(s string) { w.buf = redcon.AppendBulkString(w.buf, s) }

// BulkCopy writes a bulk string copied into the buffer whatever its size,
// for bytes that may change once the caller returns (a view into a
// collection changed in place).
func (w *Writer) BulkCopy(b []byte) { w.buf = redcon.AppendBulk(w.buf, b) }

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

// Push writes the header of an out-of-band message of n elements
// (pub/sub): >n in RESP3, *n in RESP2.
func (w *Writer) Push(n int) { w.aggregate('>', n, n) }

// Map writes a map header of n pairs: %n in RESP3, *2n in RESP2.
func (w *Writer) Map(n int) { w.aggregate('%', n, 2*n) }

// Set writes a set header: ~n in RESP3, *n in RESP2.
func (w *Writer) Set(n int) { w.aggregate('~', n, n) }

// aggregate writes the header of a RESP3 aggregate type, marker and n
// elements, or in RESP2 the header of the array of resp2Len elements that
// stands for it.
func (w *Writer) aggregate(marker byte, n, resp2Len int) {
	if w.proto == 3 {
		w.buf = appendHeader(w.buf, marker, int64(n))
		return
	}
	w.Array(resp2Len)
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
		// The tail buffer joins the segments in w.segs itself, whose
		// array then keeps the room: appended to a copy of the slice
		// header, it was a new array per flush of a referenced value.
		w.segs = append(w.segs, w.buf)
		n, err = writeBuffers(w.w, w.segs)
		clear(w.segs)
		w.segs = w.segs[:0]
		w.pending = 0
	}
	w.written += n
	w.buf = w.buf[:0]
	if w.carved {
		// Every segment carved from home is written.
		w.buf, w.carved = w.home[:0], false
	}
	if cap(w.buf) > 1<<20 {
		w.home = make([]byte, 0, bufferSize)
		w.buf = w.home
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
		w.carve()
	}
	out := make([][]byte, 0, len(w.segs))
	for rest := n; rest > 0; {
		seg := w.segs[len(out)]
		k := min(len(seg), rest)
		out = append(out, seg[:k])
		rest -= k
	}
	m, err := writeBuffers(w.w, out)
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

// ReplyMark is where the next reply starts in a Writer's buffers.
type ReplyMark struct{ buf, segs int }

// Mark returns the position the next reply will start at.
func (w *Writer) Mark() ReplyMark { return ReplyMark{len(w.buf), len(w.segs)} }

// Discard drops the replies written since m, which must be a mark taken
// since the last Flush (CLIENT REPLY OFF and SKIP). Large bulks queued
// since are let go without being written.
func (w *Writer) Discard(m ReplyMark) {
	if len(w.segs) <= m.segs {
		w.buf = w.buf[:m.buf]
		return
	}
	// A large bulk moved the buffer m points into to segs[m.segs]; what
	// it held before m goes back to the buffer.
	keep := w.segs[m.segs][:m.buf]
	for _, s := range w.segs[m.segs:] {
		w.pending -= len(s)
	}
	clear(w.segs[m.segs:])
	w.segs = w.segs[:m.segs]
	w.buf = append(w.buf[:0], keep...)
}

// ErrorSince reports whether the reply written since m is an error.
func (w *Writer) ErrorSince(m ReplyMark) bool {
	b := w.replyAt(m)
	return len(b) > 0 && b[0] == '-'
}

// replyAt returns the buffered bytes from m on, as far as the buffer m
// is in goes.
func (w *Writer) replyAt(m ReplyMark) []byte {
	b := w.buf
	if len(w.segs) > m.segs {
		// A large bulk moved the buffer the reply started in to segs.
		b = w.segs[m.segs]
	}
	if m.buf >= len(b) {
		return nil
	}
	return b[m.buf:]
}

// ErrorCodeSince returns the code of the error reply written since m (the
// first word after '-', or "ERR" when no space follows within 32 bytes,
// like Redis's afterErrorReply), and false when that reply is no error.
func (w *Writer) ErrorCodeSince(m ReplyMark) (string, bool) {
	b := w.replyAt(m)
	if len(b) == 0 || b[0] != '-' {
		return "", false
	}
	if i := bytes.IndexByte(b[:min(len(b), 32)], ' '); i > 1 {
		return string(b[1:i]), true
	}
	return "ERR", true
}
