package respclient

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// ErrProtocol is wrapped by errors about replies that are malformed or not
// of the type the caller asked for. The stream is out of sync after one.
var ErrProtocol = errors.New("respclient: protocol error")

// ServerError is an error reply (-ERR …) met by a typed reader. The
// reader that returned it is still in sync and usable.
type ServerError struct {
	Msg string // the reply without '-' and CRLF
}

// Error implements error.
func (e *ServerError) Error() string { return "respclient: server replied: " + e.Msg }

// DefaultBufSize is the read buffer NewReader uses for size <= 0. Bulk
// bodies larger than what is buffered bypass the buffer (bufio.Reader reads
// large requests straight into the destination), so it only has to hold
// reply headers and small values.
const DefaultBufSize = 64 << 10

// Reader reads replies from a byte stream in the order they arrive. The
// typed readers (ReadOK, ReadInt, ReadBulkLen and ReadBody) allocate
// nothing unless they fail; ReadReply allocates the reply it returns.
//
// I/O errors are returned as they come from the stream (io.EOF only when
// the stream ended between replies, io.ErrUnexpectedEOF inside one), for
// the caller to wrap with what it was doing.
type Reader struct {
	br *bufio.Reader
	// long collects a reply line longer than br's buffer; it is reused.
	long []byte
}

// NewReader returns a Reader on rd with a read buffer of size bytes
// (DefaultBufSize if size <= 0).
func NewReader(rd io.Reader, size int) *Reader {
	if size <= 0 {
		size = DefaultBufSize
	}
	return &Reader{br: bufio.NewReaderSize(rd, size)}
}

// Buffered reports how many bytes have been received but not yet read.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// line reads one reply line, CRLF included. The slice is valid until the
// next read.
func (r *Reader) line() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return line, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return line, fmt.Errorf("%w: malformed reply line %q", ErrProtocol, line)
	}
	return line, nil
}

// ReadLine reads one reply line and returns it without its CRLF; it is at
// least one byte long, the reply's type. The slice is valid until the next
// read. A bulk or aggregate reply's header is a line; the rest of the reply
// must then be read with ReadBody or ReadReply's elements.
func (r *Reader) ReadLine() ([]byte, error) {
	line, err := r.line()
	if err != nil {
		return nil, err
	}
	return line[:len(line)-2], nil
}

// unexpected turns a line that is not the wanted reply into an error: a
// *ServerError for an error reply (the stream stays in sync), a protocol
// error otherwise.
func unexpected(line []byte, want string) error {
	if line[0] == '-' {
		return &ServerError{Msg: string(line[1:])}
	}
	return fmt.Errorf("%w: want %s, got %q", ErrProtocol, want, line)
}

// ReadOK reads a +OK status reply.
func (r *Reader) ReadOK() error {
	line, err := r.ReadLine()
	if err != nil {
		return err
	}
	if string(line) != "+OK" {
		return unexpected(line, "+OK")
	}
	return nil
}

// ReadInt reads an integer reply.
func (r *Reader) ReadInt() (int64, error) {
	line, err := r.ReadLine()
	if err != nil {
		return 0, err
	}
	if line[0] != ':' {
		return 0, unexpected(line, "an integer")
	}
	n, ok := parseInt(line[1:])
	if !ok {
		return 0, fmt.Errorf("%w: integer %q", ErrProtocol, line)
	}
	return n, nil
}

// ReadBulkLen reads a bulk reply's header and returns its length, -1 for
// a null reply ($-1, or RESP3's _). The body must then be consumed with
// ReadBody.
func (r *Reader) ReadBulkLen() (int, error) {
	line, err := r.ReadLine()
	if err != nil {
		return 0, err
	}
	switch line[0] {
	case '$':
	case '_':
		if len(line) == 1 {
			return -1, nil
		}
		return 0, fmt.Errorf("%w: bad null %q", ErrProtocol, line)
	default:
		return 0, unexpected(line, "a bulk string")
	}
	n, ok := parseInt(line[1:])
	if !ok || n < -1 || int64(int(n)) != n {
		return 0, fmt.Errorf("%w: bulk length %q", ErrProtocol, line)
	}
	return int(n), nil
}

// ReadBody consumes a bulk body of n bytes (n >= 0, from ReadBulkLen) and
// its CRLF. The first min(n, len(dst)) bytes land in dst, read straight
// from the socket when they are more than is buffered; the rest are
// discarded. So ReadBody(n, dst[:n]) reads a value and ReadBody(n, nil)
// skips one.
func (r *Reader) ReadBody(n int, dst []byte) error {
	k := min(n, len(dst))
	if _, err := io.ReadFull(r.br, dst[:k]); err != nil {
		return noEOF(err)
	}
	if _, err := r.br.Discard(n - k); err != nil {
		return noEOF(err)
	}
	crlf, err := r.br.Peek(2)
	if err != nil {
		return noEOF(err)
	}
	if crlf[0] != '\r' || crlf[1] != '\n' {
		return fmt.Errorf("%w: bulk of %d bytes not followed by CRLF", ErrProtocol, n)
	}
	_, _ = r.br.Discard(2) // cannot fail: Peek(2) succeeded
	return nil
}

// noEOF reports an end of stream inside a reply as io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseInt parses a decimal integer with an optional minus sign, without
// allocating (strconv needs a string).
func parseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return -int64(n), true // -(1<<63) wraps to itself: math.MinInt64
	case !neg && n < 1<<63:
		return int64(n), true
	}
	return 0, false
}
