package respclient

import (
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Reply is a parsed RESP2 or RESP3 reply.
type Reply struct {
	// Type is the RESP type byte: + - : $ * _ , # ! = ( % ~ >.
	Type byte
	// Str is the payload of simple strings, errors, bulk and blob-error
	// strings, verbatim strings (without the format prefix), big numbers
	// and doubles (as sent).
	Str string
	// Format is a verbatim string's three-letter format, e.g. "txt".
	Format string
	// Int is an integer's value, or 1/0 for a boolean.
	Int int64
	// Float is a double's value.
	Float float64
	// Null is true for _, $-1 and *-1.
	Null bool
	// Elems are an aggregate's elements; maps list key, value, key, value.
	Elems []Reply
	// Attrs are the key, value pairs of an attribute (|) that preceded the
	// reply.
	Attrs []Reply
	// Raw is the exact encoding of this reply, attribute included.
	Raw []byte
}

// IsError reports whether the reply is a simple or blob error.
func (r Reply) IsError() bool { return r.Type == '-' || r.Type == '!' }

// IsAggregate reports whether the reply has elements.
func (r Reply) IsAggregate() bool {
	switch r.Type {
	case '*', '%', '~', '>':
		return true
	}
	return false
}

// MaxReplyDepth bounds the nesting ReadReply accepts, so that a broken
// server cannot make it recurse without end.
const MaxReplyDepth = 64

// ReadReply reads exactly one complete reply of any RESP2 or RESP3 type (an
// attribute and the reply it precedes count as one), appends its exact
// bytes to raw and returns them with the parsed reply. On an error, the
// returned bytes are what was read of the reply. An error reply is a Reply
// like any other, not an error.
func (r *Reader) ReadReply(raw []byte) ([]byte, Reply, error) {
	rep, err := r.readOne(&raw, 0)
	return raw, rep, err
}

// readOne reads one reply, appending its bytes to *buf.
func (r *Reader) readOne(buf *[]byte, depth int) (Reply, error) {
	if depth > MaxReplyDepth {
		return Reply{}, fmt.Errorf("%w: reply nested deeper than %d", ErrProtocol, MaxReplyDepth)
	}
	start := len(*buf)
	line, err := r.line()
	*buf = append(*buf, line...)
	if err != nil {
		return Reply{}, err
	}
	rep := Reply{Type: line[0]}
	payload := line[1 : len(line)-2]
	finish := func() (Reply, error) {
		rep.Raw = (*buf)[start:len(*buf):len(*buf)]
		return rep, nil
	}
	bad := func(what string) (Reply, error) {
		return Reply{}, fmt.Errorf("%w: bad %s %q", ErrProtocol, what, line)
	}
	// null answers a length of -1, which only replies of type nullable
	// may have.
	null := func(nullable byte) (Reply, error) {
		if rep.Type != nullable {
			return bad("null (only " + string(nullable) + " may be null)")
		}
		rep.Null = true
		return finish()
	}
	switch rep.Type {
	case '+', '-', '(':
		rep.Str = string(payload)
		return finish()
	case ':':
		n, ok := parseInt(payload)
		if !ok {
			return bad("integer")
		}
		rep.Int = n
		return finish()
	case '_':
		if len(payload) != 0 {
			return bad("null")
		}
		rep.Null = true
		return finish()
	case ',':
		rep.Str = string(payload)
		rep.Float, err = strconv.ParseFloat(rep.Str, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return bad("double")
		}
		return finish()
	case '#':
		switch string(payload) {
		case "t":
			rep.Int = 1
		case "f":
		default:
			return bad("boolean")
		}
		return finish()
	case '$', '!', '=':
		n, ok := parseInt(payload)
		if !ok || n < -1 || int64(int(n)) != n || n > 1<<40 {
			return bad("bulk length")
		}
		if n == -1 {
			return null('$')
		}
		body, err := r.appendBody(buf, int(n))
		if err != nil {
			return Reply{}, err
		}
		rep.Str = string(body)
		if rep.Type == '=' {
			if n < 4 || rep.Str[3] != ':' {
				return Reply{}, fmt.Errorf("%w: verbatim string without format: %q", ErrProtocol, rep.Str)
			}
			rep.Format, rep.Str = rep.Str[:3], rep.Str[4:]
		}
		return finish()
	case '*', '~', '>', '%', '|':
		n, ok := parseInt(payload)
		if !ok || n < -1 || n > 1<<32 {
			return bad("aggregate length")
		}
		if n == -1 {
			return null('*')
		}
		if rep.Type == '%' || rep.Type == '|' {
			n *= 2
		}
		elems := make([]Reply, 0, min(n, 1024))
		for range n {
			e, err := r.readOne(buf, depth+1)
			if err != nil {
				return Reply{}, noEOF(err)
			}
			elems = append(elems, e)
		}
		if rep.Type != '|' {
			rep.Elems = elems
			return finish()
		}
		// An attribute is followed by the reply it decorates; together they
		// are one reply.
		inner, err := r.readOne(buf, depth+1)
		if err != nil {
			return Reply{}, noEOF(err)
		}
		inner.Attrs = append(elems, inner.Attrs...)
		inner.Raw = (*buf)[start:len(*buf):len(*buf)]
		return inner, nil
	default:
		return Reply{}, fmt.Errorf("%w: unknown reply type %q in line %q", ErrProtocol, rep.Type, line)
	}
}

// appendBody reads a bulk body of n bytes and its CRLF onto *buf and
// returns the body (within *buf). The buffer grows as bytes arrive, so a
// length the stream does not back costs no more memory than it sends.
func (r *Reader) appendBody(buf *[]byte, n int) ([]byte, error) {
	at := len(*buf)
	const step = 1 << 20
	for left := n + 2; left > 0; {
		k := min(left, step)
		*buf = append(*buf, make([]byte, k)...)
		got, err := io.ReadFull(r.br, (*buf)[len(*buf)-k:])
		if err != nil {
			*buf = (*buf)[:len(*buf)-k+got]
			return nil, fmt.Errorf("short bulk: %w", noEOF(err))
		}
		left -= k
	}
	b := (*buf)[at:]
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, fmt.Errorf("%w: bulk of %d bytes not followed by CRLF", ErrProtocol, n)
	}
	return b[:n], nil
}
