package respclient

import (
	"io"
	"net"
	"strconv"
)

// AppendArrayHeader appends the header of an array of n elements.
func AppendArrayHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendBulkHeader appends the header of a bulk string of n bytes; the
// body and its CRLF must follow.
func AppendBulkHeader(b []byte, n int) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// AppendBulk appends s as a bulk string.
func AppendBulk[S string | []byte](b []byte, s S) []byte {
	b = AppendBulkHeader(b, len(s))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// AppendCommand appends the command args as a multibulk request.
func AppendCommand[S string | []byte](b []byte, args ...S) []byte {
	b = AppendArrayHeader(b, len(args))
	for _, a := range args {
		b = AppendBulk(b, a)
	}
	return b
}

// BigValue is the size from which Batch.AddValue references a value
// instead of copying it into the batch.
const BigValue = 16 << 10

// Batch accumulates encoded commands for one vectored write. Command
// headers and small arguments are appended to an internal buffer; values
// of at least BigValue bytes stay in their owners' buffers and are only
// referenced, so a SET of a large value copies it once, from the caller's
// buffer into the socket. The zero value is an empty batch; a batch is
// reused after each Flush without allocating.
type Batch struct {
	hdr  []byte
	mark int // hdr[:mark] is already in segs
	segs []segment
	bufs net.Buffers
}

// segment is one piece of the write: hdr[start:end] or, when ext is not
// nil, ext itself.
type segment struct {
	start, end int
	ext        []byte
}

// Len reports the bytes that Flush would write.
func (b *Batch) Len() int {
	n := len(b.hdr)
	for _, s := range b.segs {
		n += len(s.ext)
	}
	return n
}

// Reset empties the batch and drops its references to callers' values.
func (b *Batch) Reset() {
	for i := range b.segs {
		b.segs[i].ext = nil
	}
	b.hdr, b.segs, b.mark = b.hdr[:0], b.segs[:0], 0
}

// Add appends one command whose arguments are all strings.
func (b *Batch) Add(args ...string) {
	b.hdr = AppendCommand(b.hdr, args...)
}

// AddValue appends one command: args followed by value as the last
// argument. A value of at least BigValue bytes is not copied: it must stay
// unchanged until the batch is flushed.
func (b *Batch) AddValue(value []byte, args ...string) {
	b.hdr = AppendArrayHeader(b.hdr, len(args)+1)
	for _, a := range args {
		b.hdr = AppendBulk(b.hdr, a)
	}
	if len(value) < BigValue {
		b.hdr = AppendBulk(b.hdr, value)
		return
	}
	b.hdr = AppendBulkHeader(b.hdr, len(value))
	b.cut()
	b.segs = append(b.segs, segment{ext: value})
	b.hdr = append(b.hdr, '\r', '\n')
}

// cut closes the hdr piece written since the last cut.
func (b *Batch) cut() {
	if len(b.hdr) > b.mark {
		b.segs = append(b.segs, segment{start: b.mark, end: len(b.hdr)})
		b.mark = len(b.hdr)
	}
}

// Flush writes the batch to w with one vectored write (writev on a TCP
// connection) and resets it, whether or not the write succeeded.
func (b *Batch) Flush(w io.Writer) error {
	b.cut()
	b.bufs = b.bufs[:0]
	for _, s := range b.segs {
		if s.ext != nil {
			b.bufs = append(b.bufs, s.ext)
		} else {
			b.bufs = append(b.bufs, b.hdr[s.start:s.end])
		}
	}
	bufs := b.bufs // WriteTo consumes the slice it is called on
	_, err := bufs.WriteTo(w)
	clear(b.bufs) // drop references to the callers' values
	b.Reset()
	return err
}
