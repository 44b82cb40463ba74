package resp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// Why not redcon.Reader: redcon keeps every command in one growing buffer
// and hands out slices of it, so a 32 MiB SET is read through a buffer that
// doubles several times and must then be copied again into the store. This
// reader keeps a small fixed buffer for ordinary traffic and reads any bulk
// of at least bigBulkThreshold bytes straight into a slice of exactly its
// size, which the command may keep: one copy (kernel to final buffer) on the
// SET path.

const (
	// defaultReadBuffer is the per-connection buffer for ordinary commands.
	DefaultReadBuffer = 16 * 1024
	// streamReadBuffer is the size the buffer grows to, from
	// defaultReadBuffer, for a client whose pipelined commands keep
	// filling it: measured with 16 x 4 KiB SETs per batch, reads of 16 KiB
	// took 30% of the server's CPU in read system calls.
	streamReadBuffer = 128 * 1024
	// bigBulkThreshold is the bulk size from which a bulk gets its own
	// allocation instead of living in the connection buffer.
	BigBulkThreshold = 16 * 1024
	// maxInlineSize matches Redis's PROTO_INLINE_MAX_SIZE.
	maxInlineSize = 64 * 1024
	// maxMultibulkLen matches Redis's limit on a multibulk count.
	maxMultibulkLen = 1<<31 - 1
	// maxRetainedBuffer is the buffer size above which a grown buffer is
	// dropped after the command that needed it.
	maxRetainedBuffer = 256 * 1024
)

// ProtocolError is a malformed request. Its message is the Redis error text
// sent to the client before the connection is closed.
type ProtocolError struct{ Msg string }

func (e *ProtocolError) Error() string { return e.Msg }

func protoErr(format string, args ...any) error {
	return &ProtocolError{Msg: fmt.Sprintf(format, args...)}
}

// argRef locates one argument: either a span of the read buffer, relative to
// the start of the command, or a separately allocated bulk.
type argRef struct {
	off, n int
	owned  []byte
}

// Reader parses RESP requests (multibulk and inline) from a connection.
// The zero value is not usable; use NewReader.
type Reader struct {
	rd        io.Reader
	buf       []byte
	r, w      int // unread data is buf[r:w]
	maxBulk   *atomic.Int64
	refs      []argRef
	args      [][]byte
	owned     []bool
	bytesRead int64
	// authRequired applies Redis's tighter request limits to a client that
	// has not authenticated yet.
	authRequired bool
	// budget, when set, is the connection's share of the budget that
	// bounds the big bulks in flight over all connections; ctx ends the
	// wait for it (the client is closed or killed).
	budget BulkBudget
	ctx    context.Context
	// pool, when set, supplies the buffers of bulks of poolMin bytes or
	// more (fromPool); pooled lists those of the command being read or
	// run, and big (StartBig's) may be one: each is given to pool.EndRead
	// once its command is done (DropArgs) or the connection is (Release).
	pool    ValuePool
	poolMin int
	pooled  [][]byte

	// nextBig is the big bulk Next last reported (NextBig).
	nextBig bigBulk
	// parsed is set when Next found a whole, well-formed command at r
	// and left its arguments in refs (offsets from r), the command ending
	// at parsedEnd: ReadCommand then takes them instead of parsing the
	// command a second time. What moves or refills the buffer (makeRoom,
	// resetDrained, StartBig) or changes what a command may be clears it.
	parsed    bool
	parsedEnd int
	// big is a big bulk read on an event loop (StartBig, FillBig): the
	// bytes of its command before it stay in buf up to bigAt, its own go
	// straight into big (bigFill of them so far), and what follows it
	// (its CRLF, then more commands) is read into buf from bigAt on.
	big     []byte
	bigFill int
	bigAt   int
}

// bigBulk is where Next found a big bulk.
type bigBulk struct {
	n    int
	at   int  // index in buf of the bulk's first byte
	last bool // the command's last argument
}

// BulkBudget bounds the memory of large bulks in flight: the Reader asks it
// for a bulk's bytes (from BigBulkThreshold on) before allocating them.
type BulkBudget interface {
	// Acquire takes n more bytes, waiting until they may be taken or ctx
	// ends.
	Acquire(ctx context.Context, n int64) error
	// TryAcquire takes n more bytes if Acquire would without waiting.
	TryAcquire(n int64) bool
}

// SetBulkBudget makes the Reader take every large bulk from b before
// reading it; ctx ends the wait (the connection is closed or killed).
func (r *Reader) SetBulkBudget(ctx context.Context, b BulkBudget) {
	r.budget, r.ctx = b, ctx
}

// ValuePool supplies the buffers large bulks are read into (package
// bufpool's Pool).
type ValuePool interface {
	// Get returns a buffer of n bytes whose contents are undefined.
	Get(n int) []byte
	// EndRead says the command that read a bulk into b has ended.
	EndRead(b []byte)
}

// SetValuePool makes the Reader read bulks of min bytes or more into
// buffers from p. The connection calls DropArgs after each command and
// Release when it closes, which end the reads (EndRead).
func (r *Reader) SetValuePool(p ValuePool, min int) { r.pool, r.poolMin = p, min }

// fromPool reports whether a big bulk of n bytes is read into a buffer
// from the pool (allocBig).
func (r *Reader) fromPool(n int) bool { return r.pool != nil && n >= r.poolMin }

// allocBig returns a buffer of n bytes for a big bulk, whose contents are
// undefined: from the pool when n is large enough for it (fromPool).
func (r *Reader) allocBig(n int) []byte {
	if !r.fromPool(n) {
		return uninitialized(n)
	}
	return r.pool.Get(n)
}

// endReads ends the reads of the pooled buffers of the command just run.
func (r *Reader) endReads() {
	for i, b := range r.pooled {
		r.pool.EndRead(b)
		r.pooled[i] = nil
	}
	r.pooled = r.pooled[:0]
}

// Release ends the reads of every pooled buffer the Reader holds, those
// of a command it had not finished reading included; the connection is
// closing.
func (r *Reader) Release() {
	r.endReads()
	if r.big != nil && r.fromPool(len(r.big)) {
		r.pool.EndRead(r.big)
	}
	r.big, r.bigFill = nil, 0
}

// DropArgs forgets the last command's arguments once it has run, so that
// an idle connection does not keep its last large value alive after the
// store has dropped or demoted it (150 connections that each sent a
// 32 MiB SET would otherwise hold 4.7 GiB).
func (r *Reader) DropArgs(cmd *Command) {
	clear(r.refs[:cap(r.refs)])
	r.refs = r.refs[:0]
	r.parsed = false
	clear(r.args[:cap(r.args)])
	r.args = r.args[:0]
	cmd.Args, cmd.owned = nil, nil
	r.endReads()
}

// SetAuthRequired turns the limits for unauthenticated clients on or off.
func (r *Reader) SetAuthRequired(on bool) {
	if on != r.authRequired {
		r.parsed = false // Next checked the other limits
	}
	r.authRequired = on
}

// NewReader returns a Reader that rejects bulks longer than *maxBulk. The
// limit is shared so that CONFIG SET proto-max-bulk-len reaches every
// connection.
func NewReader(rd io.Reader, maxBulk *atomic.Int64) *Reader {
	return &Reader{rd: rd, buf: make([]byte, DefaultReadBuffer), maxBulk: maxBulk}
}

// Buffered reports whether unparsed input is already buffered, i.e. whether
// a pipelined command follows and the reply flush can wait.
func (r *Reader) Buffered() bool { return r.w > r.r }

// BytesRead returns and resets the count of bytes read from the connection.
func (r *Reader) BytesRead() int64 {
	n := r.bytesRead
	r.bytesRead = 0
	return n
}

// QueryBufferSize is the size of the connection's read buffer.
func (r *Reader) QueryBufferSize() int { return len(r.buf) }

// QueryBufferUsed is the number of buffered unread bytes.
func (r *Reader) QueryBufferUsed() int { return r.w - r.r }

// Command is one parsed request.
type Command struct {
	// Args are the command name and its arguments. Arguments that alias
	// the read buffer are valid only until the next ReadCommand; use Own
	// to keep one.
	Args  [][]byte
	owned []bool
}

// Own returns argument i as a slice the caller may keep: the big bulk itself
// when it was allocated for this command (no copy), otherwise a copy.
func (c *Command) Own(i int) []byte {
	if c.owned[i] {
		c.owned[i] = false // hand over once
		return c.Args[i]
	}
	return append([]byte(nil), c.Args[i]...)
}

// ReadCommand reads the next non-empty command into cmd.
func (r *Reader) ReadCommand(cmd *Command) error {
	for {
		ok, err := r.readOne()
		if err != nil {
			return err
		}
		if ok {
			cmd.Args = r.args
			cmd.owned = r.owned
			return nil
		}
	}
}

// fill reads more data, compacting or growing the buffer so that the
// command starting at start keeps its bytes. It returns the shift applied
// to buffer offsets.
func (r *Reader) fill(start int) (int, error) {
	shift := r.makeRoom(start) // which forgets Next's parse
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	r.bytesRead += int64(n)
	if n > 0 {
		return shift, nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return shift, err
}

// makeRoom compacts or grows a full buffer so that a read has room and the
// command starting at start keeps its bytes, and returns the shift applied
// to buffer offsets.
func (r *Reader) makeRoom(start int) int {
	r.parsed = false
	if r.w < len(r.buf) {
		return 0
	}
	switch {
	case start > 0 && len(r.buf) < streamReadBuffer:
		// The client fills the buffer faster than commands end in it
		// (pipelining): a larger one takes more per read call.
		nb := make([]byte, len(r.buf)*2)
		r.w = copy(nb, r.buf[start:r.w])
		r.buf = nb
	case start > 0:
		r.w = copy(r.buf, r.buf[start:r.w])
	default:
		nb := make([]byte, len(r.buf)*2)
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	r.r -= start
	if r.big != nil {
		r.bigAt -= start
	}
	return start
}

// resetDrained starts an empty buffer over at its beginning, dropping one
// grown past maxRetainedBuffer.
func (r *Reader) resetDrained() {
	r.parsed = false
	if r.r != r.w {
		return
	}
	if len(r.buf) > maxRetainedBuffer {
		r.buf = make([]byte, DefaultReadBuffer)
	}
	r.r, r.w = 0, 0
}

// readLine returns the end of the inline request line starting at pos
// (the index of its '\n', or of a '\r' just before it), reading more as
// needed. limit bounds the line length. A NUL byte hides the rest of the
// buffer, like the strchr Redis uses to find the end of an inline request:
// the line then only ends by exceeding the limit.
func (r *Reader) readLine(start *int, pos *int, limit int, tooBig string) (int, error) {
	scanFrom := *pos
	hidden := false
	for {
		for i := scanFrom; i < r.w && !hidden; i++ {
			if r.buf[i] == 0 {
				hidden = true
				break
			}
			if r.buf[i] == '\n' {
				end := i
				if end > *pos && r.buf[end-1] == '\r' {
					end--
				}
				return end, nil
			}
		}
		if r.w-*pos > limit {
			return 0, protoErr("%s", tooBig)
		}
		scanFrom = r.w
		shift, err := r.fill(*start)
		*start -= shift
		*pos -= shift
		scanFrom -= shift
		if err != nil {
			return 0, err
		}
	}
}

// headerEnd is where a multibulk header line (a count or a bulk length)
// at the start of b ends, as Redis's processMultibulkBuffer finds it: the
// first '\r', unless a NUL comes before it (Redis's strchr stops there);
// -1 when there is none.
func headerEnd(b []byte) int {
	cr := bytes.IndexByte(b, '\r')
	if cr < 0 || bytes.IndexByte(b[:cr], 0) >= 0 {
		return -1
	}
	return cr
}

// readHeader returns the index of the '\r' that ends the multibulk header
// line starting at pos (headerEnd), once the byte after it is buffered too,
// reading more as needed: the line's next token starts two bytes after the
// '\r', whatever the second byte is, as in Redis. Without a '\r', a line
// longer than limit is tooBig.
func (r *Reader) readHeader(start *int, pos *int, limit int, tooBig string) (int, error) {
	for {
		if cr := headerEnd(r.buf[*pos:r.w]); cr >= 0 {
			if *pos+cr+1 < r.w {
				return *pos + cr, nil
			}
		} else if r.w-*pos > limit {
			return 0, protoErr("%s", tooBig)
		}
		shift, err := r.fill(*start)
		*start -= shift
		*pos -= shift
		if err != nil {
			return 0, err
		}
	}
}

// readOne parses one request. It reports false for an empty request
// (blank inline line or a multibulk count <= 0), which Redis ignores.
func (r *Reader) readOne() (bool, error) {
	if r.parsed {
		// Next parsed it: its arguments are in refs.
		r.parsed = false
		start := r.r
		r.r = r.parsedEnd
		r.resolve(start)
		return true, nil
	}
	if r.r == r.w {
		r.resetDrained()
		if _, err := r.fill(0); err != nil {
			return false, err
		}
	}
	r.refs = r.refs[:0]
	start := r.r
	if r.buf[start] != '*' {
		return r.readInline()
	}
	pos := start
	end, err := r.readHeader(&start, &pos, maxInlineSize, "Protocol error: too big mbulk count string")
	if err != nil {
		return false, err
	}
	count, ok := parseInt(r.buf[pos+1 : end])
	if !ok || count > maxMultibulkLen {
		return false, protoErr("Protocol error: invalid multibulk length")
	}
	if count > 10 && r.authRequired {
		return false, protoErr("Protocol error: unauthenticated multibulk length")
	}
	pos = end + 2
	if count <= 0 {
		r.r = pos
		return false, nil
	}
	for i := int64(0); i < count; i++ {
		// As in Redis, the line is found before its '$' is checked.
		end, err := r.readHeader(&start, &pos, maxInlineSize, "Protocol error: too big bulk count string")
		if err != nil {
			return false, err
		}
		if r.buf[pos] != '$' {
			return false, protoErr("Protocol error: expected '$', got '%c'", r.buf[pos])
		}
		n, ok := parseInt(r.buf[pos+1 : end])
		if !ok || n < 0 || n > r.maxBulk.Load() {
			return false, protoErr("Protocol error: invalid bulk length")
		}
		if n > 16384 && r.authRequired {
			return false, protoErr("Protocol error: unauthenticated bulk length")
		}
		pos = end + 2
		if r.big != nil && pos == r.bigAt && int(n) == len(r.big) {
			// Read on the event loop (StartBig), its budget taken; a
			// connection that left the loop first reads the rest here.
			if err := r.readFull(r.big[r.bigFill:]); err != nil {
				return false, err
			}
			r.refs = append(r.refs, argRef{owned: r.big})
			if r.fromPool(len(r.big)) {
				r.pooled = append(r.pooled, r.big)
			}
			r.big, r.bigFill = nil, 0
			if err := r.skipBulkEnd(pos); err != nil {
				return false, err
			}
			pos = r.r
			continue
		}
		if n >= BigBulkThreshold {
			if r.budget != nil {
				if err := r.budget.Acquire(r.ctx, n); err != nil {
					return false, err
				}
			}
			big, err := r.readBig(int(n), pos)
			if err != nil {
				return false, err
			}
			r.refs = append(r.refs, argRef{owned: big})
			// readBig consumed the buffer up to r.r; the command's small
			// arguments before this one stay where they are.
			pos = r.r
			continue
		}
		for pos+int(n)+2 > r.w {
			shift, err := r.fill(start)
			start -= shift
			pos -= shift
			if err != nil {
				return false, err
			}
		}
		r.refs = append(r.refs, argRef{off: pos - start, n: int(n)})
		pos += int(n) + 2 // Redis does not check the CRLF after a bulk either
	}
	r.r = pos
	r.resolve(start)
	return true, nil
}

// readBig reads a bulk of n bytes (and its trailing CRLF) starting at pos
// into a new slice of exactly n bytes.
func (r *Reader) readBig(n int, pos int) ([]byte, error) {
	big := r.allocBig(n) // every byte is copied or read below, or big is dropped
	if r.fromPool(n) {
		r.pooled = append(r.pooled, big)
	}
	have := copy(big, r.buf[pos:r.w])
	pos += have
	if have < n {
		if err := r.readFull(big[have:]); err != nil {
			return nil, err
		}
		pos = r.w
	}
	if err := r.skipBulkEnd(pos); err != nil {
		return nil, err
	}
	return big, nil
}

// readFull reads all of p from the connection, waiting for it; a
// connection that ends first is io.EOF.
func (r *Reader) readFull(p []byte) error {
	m, err := io.ReadFull(r.rd, p)
	r.bytesRead += int64(m)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = io.EOF
	}
	return err
}

// skipBulkEnd skips the CRLF that follows a big bulk read outside buf,
// from pos, reading it if needed, and leaves r.r after it. Everything
// before pos belongs to arguments already resolved as offsets, so buf is
// only appended to.
func (r *Reader) skipBulkEnd(pos int) error {
	skip := 2
	for skip > 0 {
		if pos < r.w {
			take := min(skip, r.w-pos)
			pos += take
			skip -= take
			continue
		}
		if r.w == len(r.buf) {
			// No room: read the CRLF into a scratch array.
			var crlf [2]byte
			if err := r.readFull(crlf[:skip]); err != nil {
				return err
			}
			skip = 0
			continue
		}
		m, err := r.rd.Read(r.buf[r.w:])
		r.w += m
		r.bytesRead += int64(m)
		if m == 0 && err != nil {
			return err
		}
	}
	r.r = pos
	return nil
}

func (r *Reader) skipEOL(end int) int {
	if end < r.w && r.buf[end] == '\r' {
		end++
	}
	return end + 1
}

// resolve turns the argument references of the command that starts at
// start into slices.
func (r *Reader) resolve(start int) {
	r.args = r.args[:0]
	r.owned = r.owned[:0]
	for _, ref := range r.refs {
		if ref.owned != nil {
			r.args = append(r.args, ref.owned)
			r.owned = append(r.owned, true)
			continue
		}
		b := r.buf[start+ref.off : start+ref.off+ref.n : start+ref.off+ref.n]
		r.args = append(r.args, b)
		r.owned = append(r.owned, false)
	}
}

// readInline parses a telnet-style request line with Redis's quoting rules.
func (r *Reader) readInline() (bool, error) {
	start := r.r
	pos := start
	end, err := r.readLine(&start, &pos, maxInlineSize, "Protocol error: too big inline request")
	if err != nil {
		return false, err
	}
	line := r.buf[pos:end]
	r.r = r.skipEOL(end)
	words, ok := splitArgs(line)
	if !ok {
		return false, protoErr("Protocol error: unbalanced quotes in request")
	}
	if len(words) == 0 {
		return false, nil
	}
	r.args = r.args[:0]
	r.owned = r.owned[:0]
	for _, w := range words {
		r.args = append(r.args, w)
		r.owned = append(r.owned, true)
	}
	return true, nil
}

// parseInt parses a signed decimal the way Redis's string2ll does for
// protocol lengths.
func parseInt(b []byte) (int64, bool) {
	if len(b) > 20 {
		return 0, false
	}
	// Not bytes.CutPrefix: four headers a command, and its call to
	// bytes.Equal showed in profiles of small writes.
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

// splitArgs splits an inline request like Redis's sdssplitargs: words are
// separated by spaces; "double quotes" support \n \r \t \b \a \\ \" and \xHH
// escapes; 'single quotes' support \'. A closing quote must be followed by a
// space or the end. It reports false for unbalanced quotes.
func splitArgs(line []byte) ([][]byte, bool) {
	var out [][]byte
	i := 0
	for {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			return out, true
		}
		var cur []byte
		var quote byte // the open quote character, 0 outside quotes
		for done := false; !done; {
			switch {
			case quote != 0:
				if i >= len(line) {
					return nil, false
				}
				c := line[i]
				switch {
				case c == quote:
					if i+1 < len(line) && !isSpace(line[i+1]) {
						return nil, false
					}
					done = true
				case quote == '"' && c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
					cur = append(cur, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 3
				case quote == '"' && c == '\\' && i+1 < len(line):
					i++
					cur = append(cur, unescape(line[i]))
				case quote == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
					i++
					cur = append(cur, '\'')
				default:
					cur = append(cur, c)
				}
			case i >= len(line):
				done = true
			default:
				switch c := line[i]; {
				case c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == 0:
					// sdssplitargs ends a word only at these; \v and \f
					// are kept inside it (but skipped between words).
					done = true
				case c == '"' || c == '\'':
					quote = c
				default:
					cur = append(cur, c)
				}
			}
			if i < len(line) {
				i++
			}
		}
		if cur == nil {
			cur = []byte{}
		}
		out = append(out, cur)
	}
}

// unescape is the character that a backslash before c stands for inside
// double quotes: \n \r \t \b \a, or c itself.
func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f'
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func hexVal(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// Fill reads once more into the buffer with read, a read that does not
// wait (an event loop's: it answers an error when no bytes are ready),
// making room as ReadCommand would. It is how a connection whose socket is
// readable takes what arrived before Next and ReadCommand look at it.
func (r *Reader) Fill(read func([]byte) (int, error)) (int, error) {
	// resetDrained and makeRoom forget Next's parse.
	r.resetDrained()
	r.makeRoom(r.r)
	n, err := read(r.buf[r.w:])
	if n > 0 {
		r.w += n
		r.bytesRead += int64(n)
	}
	return n, err
}

// Pending is what Next finds buffered.
type Pending int

const (
	// NextEmpty: nothing is buffered.
	NextEmpty Pending = iota
	// NextPartial: the start of a command; ReadCommand would read more.
	NextPartial
	// NextWhole: a whole command (or a malformed one), which ReadCommand
	// parses, or rejects, without reading.
	NextWhole
	// NextBig: a command with a bulk of BigBulkThreshold bytes or more,
	// which ReadCommand reads with the bulk budget and may wait for.
	NextBig
)

// Next reports what the buffered input holds, without consuming it.
func (r *Reader) Next() Pending {
	r.parsed = false
	b := r.buf[r.r:r.w]
	if len(b) == 0 {
		return NextEmpty
	}
	// header is where the multibulk header line at from ends, as
	// readHeader finds it: the index of its '\r' once the byte after it is
	// buffered too (found); without it, what ReadCommand would make of
	// the input: whole (a line too long, an error) or partial.
	header := func(from int) (end int, found bool, without Pending) {
		cr := headerEnd(b[from:])
		switch {
		case cr < 0 && len(b)-from > maxInlineSize:
			return 0, false, NextWhole
		case cr < 0 || from+cr+1 >= len(b):
			return 0, false, NextPartial
		}
		return from + cr, true, 0
	}
	if b[0] != '*' {
		// A NUL hides the rest of an inline request (readLine).
		nl, nul := bytes.IndexByte(b, '\n'), bytes.IndexByte(b, 0)
		if nl >= 0 && (nul < 0 || nl < nul) || len(b) > maxInlineSize {
			return NextWhole
		}
		return NextPartial
	}
	end, found, without := header(0)
	if !found {
		return without
	}
	count, ok := parseInt(b[1:end])
	if !ok || count <= 0 || count > maxMultibulkLen || count > 10 && r.authRequired {
		return NextWhole // ReadCommand answers or skips it without reading
	}
	pos := end + 2
	// The arguments as ReadCommand would find them, for it to take
	// (parsed), unless a bulk read on the loop makes the command one
	// ReadCommand finishes itself.
	r.refs = r.refs[:0]
	plain := true
	for i := range count {
		end, found, without := header(pos)
		if !found {
			return without
		}
		if b[pos] != '$' {
			return NextWhole
		}
		n, ok := parseInt(b[pos+1 : end])
		if !ok || n < 0 || n > r.maxBulk.Load() || n > 16384 && r.authRequired {
			return NextWhole
		}
		data := end + 2 // where the bulk's bytes start in b
		if r.big != nil && r.r+data == r.bigAt && int(n) == len(r.big) {
			// Read on the event loop (StartBig): its bytes are not in
			// buf, its CRLF is.
			if r.bigFill < len(r.big) {
				return NextPartial
			}
			pos = data + 2
			if pos > len(b) {
				return NextPartial
			}
			plain = false
			continue
		}
		if n >= BigBulkThreshold {
			r.nextBig = bigBulk{n: int(n), at: r.r + data, last: i == count-1}
			return NextBig
		}
		r.refs = append(r.refs, argRef{off: data, n: int(n)})
		pos = data + int(n) + 2
		if pos > len(b) {
			return NextPartial
		}
	}
	r.parsed, r.parsedEnd = plain, r.r+pos
	return NextWhole
}

// StartBig starts reading the big bulk Next just reported (NextBig) the way
// an event loop reads: its bytes go straight into a slice of their own as
// they arrive (FillBig), and once they and the rest of the command are in,
// Next reports NextWhole and ReadCommand hands the slice over as the
// argument, without waiting for anything. Redis reads a big argument so,
// into an object of its size. StartBig reports false, doing nothing, when
// the bulk is not the command's last argument or its budget cannot be
// taken at once: ReadCommand then reads it, waiting if it must (off the
// loop).
func (r *Reader) StartBig() bool {
	r.parsed = false
	nb := r.nextBig
	r.nextBig = bigBulk{}
	if !nb.last || nb.n == 0 || r.big != nil || nb.at < r.r || nb.at > r.w {
		return false
	}
	if r.budget != nil && !r.budget.TryAcquire(int64(nb.n)) {
		return false
	}
	big := r.allocBig(nb.n) // filled below and by FillBig before any use
	have := copy(big, r.buf[nb.at:r.w])
	// What followed the bulk's bytes in buf moves to where they started.
	r.w = nb.at + copy(r.buf[nb.at:], r.buf[nb.at+have:r.w])
	r.big, r.bigFill, r.bigAt = big, have, nb.at
	return true
}

// BigPending reports whether a big bulk StartBig started still lacks bytes:
// the next read is FillBig's.
func (r *Reader) BigPending() bool { return r.big != nil && r.bigFill < len(r.big) }

// BigHeld is the size of the big bulk StartBig started and ReadCommand has
// not handed over yet (its budget is taken), 0 when none.
func (r *Reader) BigHeld() int64 { return int64(len(r.big)) }

// FillBig reads the next bytes of the big bulk StartBig started, with one
// call of read.
func (r *Reader) FillBig(read func([]byte) (int, error)) (int, error) {
	n, err := read(r.big[r.bigFill:])
	if n > 0 {
		r.bigFill += n
		r.bytesRead += int64(n)
	}
	return n, err
}
