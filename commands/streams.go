package commands

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/engine"
	"github.com/kvserver/kvserver/listpack"
	"github.com/kvserver/kvserver/notify"
)

// Key specs shared by the stream rows.
var (
	xKeyUpdate = []KeySpec{{Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}
	xSubKey    = func(f KeyFlags) []KeySpec {
		return []KeySpec{{Flags: f, ReadsValue: true, Begin: Index(2), Find: Range(0, 1, 0)}}
	}
	xStreamsKeys = func(from int) []KeySpec {
		return []KeySpec{{Flags: KeyRO | KeyAccess, ReadsValue: true, Begin: Keyword("STREAMS", from), Find: Range(-1, 1, 2)}}
	}
)

// streamCommands are the stream family's rows (Redis's t_stream.c).
var streamCommands = []*Spec{
	{Name: "xadd", Arity: -5, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @stream @fast",
		KeySpecs: []KeySpec{{Notes: "UPDATE instead of INSERT because of the optional trimming feature", Flags: KeyRW | KeyUpdate, ReadsValue: true, Begin: Index(1), Find: Range(0, 1, 0)}}, Handler: cmdXadd},
	{Name: "xrange", Arity: -4, Flags: FlagReadonly, ACL: "@read @stream @slow", KeySpecs: keyReadsAccess, Handler: cmdXrange},
	{Name: "xrevrange", Arity: -4, Flags: FlagReadonly, ACL: "@read @stream @slow", KeySpecs: keyReadsAccess, Handler: cmdXrevrange},
	{Name: "xlen", Arity: 2, Flags: FlagReadonly | FlagFast, ACL: "@read @stream @fast", KeySpecs: keyReadsRO, Handler: cmdXlen},
	{Name: "xdel", Arity: -3, Flags: FlagWrite | FlagFast, ACL: "@write @stream @fast", KeySpecs: keyReadsDelete, Handler: cmdXdel},
	{Name: "xtrim", Arity: -4, Flags: FlagWrite, ACL: "@write @stream @slow", KeySpecs: keyReadsDelete, Handler: cmdXtrim},
	{Name: "xread", Arity: -4, Flags: FlagReadonly | FlagBlocking, ACL: "@read @stream @slow @blocking", KeySpecs: xStreamsKeys(1), Handler: cmdXread},
	{Name: "xreadgroup", Arity: -7, Flags: FlagWrite | FlagBlocking, ACL: "@write @stream @slow @blocking", KeySpecs: xStreamsKeys(4), Handler: cmdXread},
	{Name: "xack", Arity: -4, Flags: FlagWrite | FlagFast, ACL: "@write @stream @fast", KeySpecs: xKeyUpdate, Handler: cmdXack},
	{Name: "xpending", Arity: -3, Flags: FlagReadonly, ACL: "@read @stream @slow", KeySpecs: keyReadsAccess, Handler: cmdXpending},
	{Name: "xclaim", Arity: -6, Flags: FlagWrite | FlagFast, ACL: "@write @stream @fast", KeySpecs: xKeyUpdate, Handler: cmdXclaim},
	{Name: "xautoclaim", Arity: -6, Flags: FlagWrite | FlagFast, ACL: "@write @stream @fast", KeySpecs: keyReadsDelete, Handler: cmdXautoclaim},
	{Name: "xsetid", Arity: -3, Flags: FlagWrite | FlagDenyoom | FlagFast, ACL: "@write @stream @fast", KeySpecs: xKeyUpdate, Handler: cmdXsetid},
	{Name: "xgroup", Arity: -2, ACL: "@slow", Subcommands: []*Spec{
		{Name: "xgroup|destroy", Arity: 4, Flags: FlagWrite, ACL: "@write @stream @slow", KeySpecs: xSubKey(KeyRW | KeyDelete), Handler: cmdXgroup},
		{Name: "xgroup|delconsumer", Arity: 5, Flags: FlagWrite, ACL: "@write @stream @slow", KeySpecs: xSubKey(KeyRW | KeyDelete), Handler: cmdXgroup},
		{Name: "xgroup|create", Arity: -5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @stream @slow", KeySpecs: xSubKey(KeyRW | KeyInsert), Handler: cmdXgroup},
		{Name: "xgroup|createconsumer", Arity: 5, Flags: FlagWrite | FlagDenyoom, ACL: "@write @stream @slow", KeySpecs: xSubKey(KeyRW | KeyInsert), Handler: cmdXgroup},
		{Name: "xgroup|setid", Arity: -5, Flags: FlagWrite, ACL: "@write @stream @slow", KeySpecs: xSubKey(KeyRW | KeyUpdate), Handler: cmdXgroup},
		{Name: "xgroup|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@stream @slow", Handler: cmdXgroupHelp},
	}},
	{Name: "xinfo", Arity: -2, ACL: "@slow", Subcommands: []*Spec{
		{Name: "xinfo|groups", Arity: 3, Flags: FlagReadonly, ACL: "@read @stream @slow", KeySpecs: xSubKey(KeyRO | KeyAccess), Handler: cmdXinfo},
		{Name: "xinfo|help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: "@stream @slow", Handler: cmdXinfoHelp},
		{Name: "xinfo|stream", Arity: -3, Flags: FlagReadonly, ACL: "@read @stream @slow", KeySpecs: xSubKey(KeyRO | KeyAccess), Handler: cmdXinfo},
		{Name: "xinfo|consumers", Arity: 4, Flags: FlagReadonly, ACL: "@read @stream @slow", KeySpecs: xSubKey(KeyRO | KeyAccess), Handler: cmdXinfo},
	}},
}

// Stream error replies of t_stream.c.
const (
	errStreamID      = "ERR Invalid stream ID specified as stream command argument"
	errXaddSmaller   = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
	errXaddZero      = "ERR The ID specified in XADD must be greater than 0-0"
	errXaddExhausted = "ERR The stream has exhausted the last possible ID, unable to add more items"
	errIntervalStart = "ERR invalid start ID for the interval"
	errIntervalEnd   = "ERR invalid end ID for the interval"
)

// ScriptAware is implemented by the session of a script's redis.call,
// where XREAD and XREADGROUP refuse BLOCK (Redis keeps that answer for
// scripts rather than the null of MULTI).
type ScriptAware interface {
	InScript() bool
}

// streamLimits are the settings that decide where a stream's nodes end.
func streamLimits(x *Ctx) datatype.StreamLimits {
	return datatype.StreamLimits{
		MaxNodeBytes:   int(x.Settings.Int("stream-node-max-bytes")),
		MaxNodeEntries: int(x.Settings.Int("stream-node-max-entries")),
	}
}

// lookupStream finds key as a stream; ok is false, with WRONGTYPE
// answered, for another type. A missing key gives nil.
func lookupStream(x *Ctx, tx *engine.Tx, key []byte, read bool) (s *datatype.Stream, ok bool) {
	return lookupObject[*datatype.Stream](x, tx, key, datatype.KindStream, read)
}

// lookupStreamOrReply is lookupStream for a command with a fixed answer
// to a missing key (see lookupObjectOrReply).
func lookupStreamOrReply(x *Ctx, tx *engine.Tx, key []byte, read bool, missing missingKeyReply) (*datatype.Stream, bool) {
	return lookupObjectOrReply[*datatype.Stream](x, tx, key, datatype.KindStream, read, missing)
}

// parseULL is Redis's string2ull: string2ll's strict form, else
// strtoull's lenient one (spaces, a sign, leading zeros).
func parseULL(b []byte) (uint64, bool) {
	if v, ok := ParseInt64(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	neg := false
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		neg = b[i] == '-'
		i++
	}
	if i == len(b) {
		return 0, false
	}
	var v uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' || v > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID is streamGenericParseIDOrReply without the reply: strict
// refuses "-" and "+"; missingSeq fills an ID given as <ms>; seqGiven,
// when not nil, allows <ms>-* and reports whether the sequence was given.
func parseStreamID(b []byte, missingSeq uint64, strict bool, seqGiven *bool) (datatype.StreamID, bool) {
	if len(b) > 127 {
		return datatype.StreamID{}, false
	}
	if strict && len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		return datatype.StreamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(b) == 1 && b[0] == '-' {
		return datatype.StreamID{}, true
	}
	if len(b) == 1 && b[0] == '+' {
		return datatype.MaxStreamID, true
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i] // C string semantics
	}
	msPart, seqPart, dash := bytes.Cut(b, []byte{'-'})
	ms, ok := parseULL(msPart)
	if !ok {
		return datatype.StreamID{}, false
	}
	seq := missingSeq
	if dash {
		if seqGiven != nil && len(seqPart) == 1 && seqPart[0] == '*' {
			seq, *seqGiven = 0, false
		} else if seq, ok = parseULL(seqPart); !ok {
			return datatype.StreamID{}, false
		}
	}
	return datatype.StreamID{Ms: ms, Seq: seq}, true
}

// streamIDArg parses argument i as a strict ID, answering Redis's error.
func streamIDArg(x *Ctx, b []byte, strict bool) (datatype.StreamID, bool) {
	id, ok := parseStreamID(b, 0, strict, nil)
	if !ok {
		x.W.Error(errStreamID)
	}
	return id, ok
}

// intervalID parses one end of a range (streamParseIntervalIDOrReply):
// "(" makes it exclusive, moved one ID inwards.
func intervalID(x *Ctx, b []byte, missingSeq uint64, start bool) (datatype.StreamID, bool) {
	if len(b) > 1 && b[0] == '(' {
		id, ok := parseStreamID(b[1:], missingSeq, true, nil)
		if !ok {
			x.W.Error(errStreamID)
			return id, false
		}
		if start {
			if id, ok = id.Next(); !ok {
				x.W.Error(errIntervalStart)
			}
		} else if id, ok = id.Prev(); !ok {
			x.W.Error(errIntervalEnd)
		}
		return id, ok
	}
	id, ok := parseStreamID(b, missingSeq, false, nil)
	if !ok {
		x.W.Error(errStreamID)
	}
	return id, ok
}

func writeStreamID(x *Ctx, id datatype.StreamID) {
	var buf [41]byte
	x.W.BulkCopy(id.AppendText(buf[:0]))
}

// writeEntry writes an entry read in place as [id, [field, value, ...]]
// (the writer copies it: no allocation).
func writeEntry(x *Ctx, v datatype.StreamEntryView) {
	x.W.Array(2)
	writeStreamID(x, v.ID)
	x.W.Array(v.Len())
	v.Each(func(e listpack.Elem) {
		if e.IsInt {
			var num [20]byte
			x.W.BulkCopy(strconv.AppendInt(num[:0], e.Int, 10))
		} else {
			x.W.BulkCopy(e.Str)
		}
	})
}

// writeCopiedEntry writes an entry copied out of its stream (a blocked
// client's, taken under the engine lock and answered after it).
func writeCopiedEntry(x *Ctx, e datatype.StreamEntry) {
	x.W.Array(2)
	writeStreamID(x, e.ID)
	x.W.Array(len(e.Fields))
	for _, f := range e.Fields {
		x.W.BulkString(f)
	}
}

// writeEntryOrNull writes e, or a null when there is none (ok false).
func writeEntryOrNull(x *Ctx, e datatype.StreamEntryView, ok bool) {
	if ok {
		writeEntry(x, e)
	} else {
		x.W.Null()
	}
}

// writeEntries writes a range of entries, count of them at most (0 =
// all), in place: one pass counts them for the array's length, the
// second writes them.
func writeEntries(x *Ctx, s *datatype.Stream, start, end datatype.StreamID, count int64, rev bool) {
	n := int64(0)
	s.RangeView(start, end, rev, func(datatype.StreamEntryView) bool {
		n++
		return count == 0 || n < count
	})
	x.W.Array(int(n))
	s.RangeView(start, end, rev, func(v datatype.StreamEntryView) bool {
		writeEntry(x, v)
		n--
		return n > 0
	})
}

// trimArgs are XADD's and XTRIM's trimming options.
type trimArgs struct {
	strategy   byte // 0, 'M'axlen or 'I' (minid)
	maxLen     int64
	minID      datatype.StreamID
	approx     bool
	limit      int64
	noMkstream bool
	id         datatype.StreamID
	idGiven    bool
	seqGiven   bool
}

// parseAddOrTrim is streamParseAddOrTrimArgsOrReply: it returns the
// index of the ID (XADD) or len(args), or -1 with the error answered.
func parseAddOrTrim(x *Ctx, xadd bool) (trimArgs, int) {
	var a trimArgs
	args := x.Args
	limitGiven := false
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
		case (equalFold(opt, "maxlen") || equalFold(opt, "minid")) && more > 0:
			if a.strategy != 0 {
				x.W.Error("ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
				return a, -1
			}
			a.approx = false
			if next := args[i+1]; more >= 2 && len(next) == 1 && (next[0] == '~' || next[0] == '=') {
				a.approx = next[0] == '~'
				i++
			}
			if equalFold(opt, "maxlen") {
				n, ok := intArg(x, i+1)
				if !ok {
					return a, -1
				}
				if n < 0 {
					x.W.Error("ERR The MAXLEN argument must be >= 0.")
					return a, -1
				}
				a.strategy, a.maxLen = 'M', n
			} else {
				id, ok := streamIDArg(x, args[i+1], true)
				if !ok {
					return a, -1
				}
				a.strategy, a.minID = 'I', id
			}
			i++
			continue
		case equalFold(opt, "limit") && more > 0:
			n, ok := intArg(x, i+1)
			if !ok {
				return a, -1
			}
			if n < 0 {
				x.W.Error("ERR The LIMIT argument must be >= 0.")
				return a, -1
			}
			a.limit, limitGiven = n, true
			i++
			continue
		case xadd && equalFold(opt, "nomkstream"):
			a.noMkstream = true
			continue
		case xadd:
			id, ok := parseStreamID(opt, 0, true, &a.seqGiven)
			if !ok {
				x.W.Error(errStreamID)
				return a, -1
			}
			a.id, a.idGiven = id, true
		default:
			x.W.Error(errSyntax)
			return a, -1
		}
		break
	}
	if a.limit != 0 && a.strategy == 0 {
		x.W.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return a, -1
	}
	if !xadd && a.strategy == 0 {
		x.W.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return a, -1
	}
	switch {
	case limitGiven && !a.approx:
		x.W.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
		return a, -1
	case !limitGiven && a.approx:
		a.limit = 100 * x.Settings.Int("stream-node-max-entries")
		if a.limit <= 0 || a.limit > 1000000 {
			a.limit = 10000
		}
	case !limitGiven:
		a.limit = 0
	}
	return a, i
}

// trim applies a's strategy to s.
func (a *trimArgs) trim(s *datatype.Stream) int64 {
	switch a.strategy {
	case 'M':
		return s.Trim(a.maxLen, datatype.StreamID{}, a.approx, a.limit)
	case 'I':
		return s.Trim(-1, a.minID, a.approx, a.limit)
	}
	return 0
}

func cmdXadd(x *Ctx) {
	a, at := parseAddOrTrim(x, true)
	if at < 0 {
		return
	}
	at++ // the fields follow the ID
	n := len(x.Args) - at
	if n < 2 || n%2 == 1 {
		x.W.Error("ERR wrong number of arguments for 'xadd' command")
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		x.W.Error(errXaddZero)
		return
	}
	key := x.Args[1]
	lim := streamLimits(x)
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupStream(x, tx, key, false)
		if !ok {
			return
		}
		created := s == nil
		if created {
			if a.noMkstream {
				x.W.Null()
				return
			}
			s = datatype.NewStream()
		}
		if s.LastID == datatype.MaxStreamID {
			x.W.Error(errXaddExhausted)
			return
		}
		id, ok := nextStreamID(s, a, tx.Now())
		if !ok {
			x.W.Error(errXaddSmaller)
			return
		}
		s.Append(id, datatype.PackFields(x.Args[at:]), lim)
		writeStreamID(x, id)
		storeChanged(tx, key, s, created)
		tx.Notify(notify.Stream, "xadd", key)
		if a.trim(s) > 0 {
			tx.Modified(key)
			tx.Notify(notify.Stream, "xtrim", key)
		}
	})
}

// nextStreamID is the ID XADD gives a new entry (streamAppendItem):
// explicit, <ms>-* or automatic; ok is false when not above LastID.
func nextStreamID(s *datatype.Stream, a trimArgs, now int64) (datatype.StreamID, bool) {
	last := s.LastID
	var id datatype.StreamID
	switch {
	case a.idGiven && a.seqGiven:
		id = a.id
	case a.idGiven:
		id = a.id
		if last.Ms == a.id.Ms {
			if last.Seq == math.MaxUint64 {
				return id, false
			}
			id = datatype.StreamID{Ms: last.Ms, Seq: last.Seq + 1}
		}
	default:
		if uint64(now) > last.Ms {
			id = datatype.StreamID{Ms: uint64(now)}
		} else {
			id, _ = last.Next()
		}
	}
	return id, id.Compare(last) > 0
}

func cmdXlen(x *Ctx) { replyLen(x, datatype.KindStream) }

func cmdXrange(x *Ctx) { xrangeGeneric(x, false) }

func cmdXrevrange(x *Ctx) { xrangeGeneric(x, true) }

func xrangeGeneric(x *Ctx, rev bool) {
	startArg, endArg := x.Args[2], x.Args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := intervalID(x, startArg, 0, true)
	if !ok {
		return
	}
	end, ok := intervalID(x, endArg, math.MaxUint64, false)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(x.Args); j++ {
		if equalFold(x.Args[j], "count") && j+1 < len(x.Args) {
			if count, ok = intArg(x, j+1); !ok {
				return
			}
			count = max(count, 0)
			j++
		} else {
			x.W.Error(errSyntax)
			return
		}
	}
	x.View(func(tx *engine.Tx) {
		s, ok := lookupStream(x, tx, x.Args[1], true)
		switch {
		case !ok:
		case s == nil:
			x.W.Array(0)
		case count == 0:
			x.W.NullArray()
		default:
			writeEntries(x, s, start, end, max(count, 0), rev)
		}
	})
}

// streamIDArgs parses every argument as a strict stream ID (XDEL, XACK),
// answering the first one's error.
func streamIDArgs(x *Ctx, args [][]byte) ([]datatype.StreamID, bool) {
	ids := make([]datatype.StreamID, 0, len(args))
	for _, arg := range args {
		id, ok := streamIDArg(x, arg, true)
		if !ok {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

func cmdXdel(x *Ctx) {
	key := x.Args[1]
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupStreamOrReply(x, tx, key, false, replyZero)
		if !ok {
			return
		}
		ids, ok := streamIDArgs(x, x.Args[2:])
		if !ok {
			return
		}
		deleted := 0
		for _, id := range ids {
			if s.Delete(id) {
				if id.Compare(s.MaxDeletedID) > 0 {
					s.MaxDeletedID = id
				}
				deleted++
			}
		}
		if deleted > 0 {
			tx.Modified(key)
			tx.Notify(notify.Stream, "xdel", key)
		}
		x.W.Int(int64(deleted))
	})
}

func cmdXtrim(x *Ctx) {
	key := x.Args[1]
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupStream(x, tx, key, false)
		if !ok {
			return
		}
		a, at := parseAddOrTrim(x, false)
		if at < 0 {
			return
		}
		if s == nil {
			x.W.Int(0)
			return
		}
		deleted := a.trim(s)
		if deleted > 0 {
			tx.Modified(key)
			tx.Notify(notify.Stream, "xtrim", key)
		}
		x.W.Int(deleted)
	})
}

// xreadArgs are XREAD's and XREADGROUP's parsed options.
type xreadArgs struct {
	group, consumer []byte
	count           int64
	timeout         int64 // -1: no BLOCK
	noAck           bool
	keys, ids       [][]byte
}

// parseXread parses the options up to STREAMS; ok is false with the
// error answered.
func parseXread(x *Ctx, xreadgroup bool) (a xreadArgs, ok bool) {
	a.timeout = -1
	args := x.Args
	streamsAt := 0
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case equalFold(o, "block") && more > 0:
			if sa, ok := x.Session.(ScriptAware); ok && sa.InScript() {
				x.W.Error("ERR " + string(args[0]) + " command is not allowed with BLOCK option from scripts")
				return a, false
			}
			i++
			t, ok := timeoutMillis(x, args[i])
			if !ok {
				return a, false
			}
			a.timeout = t
		case equalFold(o, "count") && more > 0:
			i++
			n, ok := intArg(x, i)
			if !ok {
				return a, false
			}
			a.count = max(n, 0)
		case equalFold(o, "streams") && more > 0:
			streamsAt = i + 1
			if (len(args)-streamsAt)%2 != 0 {
				x.W.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return a, false
			}
			n := (len(args) - streamsAt) / 2
			a.keys, a.ids = args[streamsAt:streamsAt+n], args[streamsAt+n:]
			i = len(args)
		case equalFold(o, "group") && more >= 2:
			if !xreadgroup {
				x.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return a, false
			}
			a.group, a.consumer = args[i+1], args[i+2]
			i += 2
		case equalFold(o, "noack"):
			if !xreadgroup {
				x.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return a, false
			}
			a.noAck = true
		default:
			x.W.Error(errSyntax)
			return a, false
		}
	}
	if streamsAt == 0 {
		x.W.Error(errSyntax)
		return a, false
	}
	if xreadgroup && a.group == nil {
		x.W.Error("ERR Missing GROUP option for XREADGROUP")
		return a, false
	}
	return a, true
}

// timeoutMillis parses a BLOCK timeout in milliseconds as Redis's
// getTimeoutFromObjectOrReply does.
func timeoutMillis(x *Ctx, b []byte) (int64, bool) {
	n, ok := ParseInt64(b)
	if !ok {
		x.W.Error("ERR timeout is not an integer or out of range")
		return 0, false
	}
	if n < 0 {
		x.W.Error("ERR timeout is negative")
		return 0, false
	}
	return n, true
}

// maxID marks a ">" in XREADGROUP's IDs.
var maxID = datatype.MaxStreamID

func cmdXread(x *Ctx) {
	xreadgroup := len(x.Args[0]) == 10
	a, ok := parseXread(x, xreadgroup)
	if !ok {
		return
	}
	run := x.View
	if xreadgroup {
		run = x.Update
	}
	var ids []datatype.StreamID
	answered := false
	run(func(tx *engine.Tx) {
		var streams []*datatype.Stream
		var groups []*datatype.StreamGroup
		streams, groups, ids, answered = resolveXread(x, tx, &a, xreadgroup)
		if !answered {
			answered = serveXread(x, tx, &a, streams, groups, ids)
		}
	})
	if answered {
		return
	}
	if a.timeout < 0 || !x.KeyBlocking.CanBlock() {
		x.W.NullArray()
		return
	}
	blockXread(x, &a, ids)
}

// resolveXread looks the keys and groups up and resolves the IDs ("$" to
// the stream's last ID, ">" to maxID); answered is true when it wrote an
// error.
func resolveXread(x *Ctx, tx *engine.Tx, a *xreadArgs, xreadgroup bool) (streams []*datatype.Stream, groups []*datatype.StreamGroup, ids []datatype.StreamID, answered bool) {
	streams = make([]*datatype.Stream, len(a.keys))
	groups = make([]*datatype.StreamGroup, len(a.keys))
	ids = make([]datatype.StreamID, len(a.keys))
	for i, key := range a.keys {
		s, ok := lookupStream(x, tx, key, true)
		if !ok {
			return nil, nil, nil, true
		}
		streams[i] = s
		if a.group != nil {
			if s != nil {
				groups[i] = s.Group(string(a.group))
			}
			if groups[i] == nil {
				x.W.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(a.group) + "' in XREADGROUP with GROUP option")
				return nil, nil, nil, true
			}
		}
		arg := a.ids[i]
		switch {
		case string(arg) == "$":
			if xreadgroup {
				x.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return nil, nil, nil, true
			}
			if s != nil {
				ids[i] = s.LastID
			}
		case string(arg) == ">":
			if !xreadgroup {
				x.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return nil, nil, nil, true
			}
			ids[i] = maxID
		default:
			if ids[i], ok = streamIDArg(x, arg, true); !ok {
				return nil, nil, nil, true
			}
		}
	}
	return streams, groups, ids, false
}

// blockXread waits for an entry past the IDs of XREAD or XREADGROUP >
// (Redis's serveClientsBlockedOnStreamKey): the first stream that gets
// one is served alone. A group destroyed, or for XREADGROUP the key
// deleted, ends the wait with Redis's errors.
func blockXread(x *Ctx, a *xreadArgs, ids []datatype.StreamID) {
	var key []byte
	var entries []datatype.StreamEntry
	var errReply string
	tried := make(map[string]bool, len(a.keys))
	why := x.KeyBlocking.BlockOnKeys(a.keys, time.Duration(a.timeout)*time.Millisecond, func(tx *engine.Tx, k []byte) bool {
		// The registration's own try is the synchronous rule (an entry
		// past the ID); wake-ups are Redis's (the last ID past it).
		first := !tried[string(k)]
		tried[string(k)] = true
		i := slices.IndexFunc(a.keys, func(b []byte) bool { return bytes.Equal(b, k) })
		obj, err := tx.Object(k, datatype.KindStream, false)
		if err != nil || obj == nil {
			if a.group != nil && !first {
				errReply = "UNBLOCKED the stream key no longer exists"
				return true
			}
			return false
		}
		s := obj.(*datatype.Stream)
		gt := ids[i]
		var g *datatype.StreamGroup
		if a.group != nil {
			if g = s.Group(string(a.group)); g == nil {
				errReply = "NOGROUP the consumer group this client was blocked on no longer exists"
				return true
			}
			gt = g.LastID
		}
		if first {
			if last, ok := s.LastEntryID(); !ok || last.Compare(gt) <= 0 {
				return false
			}
		} else if s.LastID.Compare(gt) <= 0 {
			return false
		}
		key = append([]byte(nil), k...)
		start, _ := gt.Next()
		if g == nil {
			s.Range(start, datatype.MaxStreamID, false, func(e datatype.StreamEntry) bool {
				entries = append(entries, e)
				return a.count == 0 || int64(len(entries)) < a.count
			})
			return true
		}
		now := tx.Now()
		c, created := g.AddConsumer(string(a.consumer), now)
		if created {
			tx.Notify(notify.Stream, "xgroup-createconsumer", key)
		}
		c.SeenTime = now
		// Copied: the reply is written after the engine lock is released.
		for _, v := range deliverNew(s, g, c, start, a, now) {
			entries = append(entries, v.Entry())
		}
		tx.Modified(key)
		return true
	})
	switch {
	case why != UnblockedReady:
		replyUnserved(x, why, x.W.NullArray)
	case errReply != "":
		x.W.Error(errReply)
	default:
		if x.W.Proto() == 2 {
			x.W.Array(1)
			x.W.Array(2)
		} else {
			x.W.Map(1)
		}
		x.W.BulkCopy(key)
		x.W.Array(len(entries))
		for _, e := range entries {
			writeCopiedEntry(x, e)
		}
	}
}

// serveXread writes the reply of the streams that have something to
// serve and reports whether any had.
func serveXread(x *Ctx, tx *engine.Tx, a *xreadArgs, streams []*datatype.Stream, groups []*datatype.StreamGroup, ids []datatype.StreamID) bool {
	type served struct {
		i       int
		gt      datatype.StreamID
		history bool
	}
	var serve []served
	for i, s := range streams {
		if s == nil {
			continue
		}
		gt := ids[i]
		last, hasLast := s.LastEntryID()
		switch {
		case groups[i] != nil && gt != maxID:
			serve = append(serve, served{i, gt, true})
		case groups[i] != nil:
			if hasLast && last.Compare(groups[i].LastID) > 0 {
				serve = append(serve, served{i, groups[i].LastID, false})
			}
		case hasLast && last.Compare(gt) > 0:
			serve = append(serve, served{i, gt, false})
		}
	}
	if len(serve) == 0 {
		return false
	}
	if x.W.Proto() == 2 {
		x.W.Array(len(serve))
	} else {
		x.W.Map(len(serve))
	}
	now := tx.Now()
	for _, sv := range serve {
		s, g := streams[sv.i], groups[sv.i]
		if x.W.Proto() == 2 {
			x.W.Array(2)
		}
		x.W.BulkCopy(a.keys[sv.i])
		start, _ := sv.gt.Next()
		if g == nil {
			writeEntries(x, s, start, datatype.MaxStreamID, a.count, false)
			continue
		}
		c, created := g.AddConsumer(string(a.consumer), now)
		if created {
			tx.Notify(notify.Stream, "xgroup-createconsumer", a.keys[sv.i])
		}
		c.SeenTime = now
		if sv.history {
			writeConsumerHistory(x, s, g, c, start, a.count, now)
		} else {
			list := deliverNew(s, g, c, start, a, now)
			x.W.Array(len(list))
			for _, e := range list {
				writeEntry(x, e)
			}
		}
		tx.Modified(a.keys[sv.i])
	}
	return true
}

// writeConsumerHistory serves XREADGROUP with an ID: the consumer's
// pending entries from start, each delivered once more (a deleted one
// as [id, nil]).
func writeConsumerHistory(x *Ctx, s *datatype.Stream, g *datatype.StreamGroup, c *datatype.StreamConsumer, start datatype.StreamID, count int64, now int64) {
	var ids []datatype.StreamID
	for _, id := range c.Pending() {
		if id.Compare(start) >= 0 && (count == 0 || int64(len(ids)) < count) {
			ids = append(ids, id)
		}
	}
	x.W.Array(len(ids))
	for _, id := range ids {
		e, ok := s.View(id)
		if !ok {
			x.W.Array(2)
			writeStreamID(x, id)
			x.W.NullArray()
			continue
		}
		writeEntry(x, e)
		p := g.PendingEntry(id)
		p.DeliveryTime = now
		p.DeliveryCount++
	}
}

// deliverNew serves XREADGROUP >: it returns the entries after start,
// advancing the group's last ID and read counter, each added to the
// consumer's PEL unless NOACK.
// The entries are read in place: valid until the stream changes.
func deliverNew(s *datatype.Stream, g *datatype.StreamGroup, c *datatype.StreamConsumer, start datatype.StreamID, a *xreadArgs, now int64) []datatype.StreamEntryView {
	var list []datatype.StreamEntryView
	s.RangeView(start, datatype.MaxStreamID, false, func(e datatype.StreamEntryView) bool {
		list = append(list, e)
		return a.count == 0 || int64(len(list)) < a.count
	})
	for _, e := range list {
		if e.ID.Compare(g.LastID) > 0 {
			if g.EntriesRead != -1 && !rangeHasTombstones(s, e.ID, datatype.MaxStreamID) {
				g.EntriesRead++
			} else if s.EntriesAdded != 0 {
				g.EntriesRead = s.DistanceFromFirstEver(e.ID)
			}
			g.LastID = e.ID
		}
		if !a.noAck {
			g.Deliver(e.ID, c, now)
		}
	}
	return list
}

// rangeHasTombstones is streamRangeHasTombstones: whether an entry was
// deleted between start and end.
func rangeHasTombstones(s *datatype.Stream, start, end datatype.StreamID) bool {
	if s.Len() == 0 || s.MaxDeletedID.IsZero() {
		return false
	}
	if s.FirstID().Compare(s.MaxDeletedID) > 0 {
		return false
	}
	return start.Compare(s.MaxDeletedID) <= 0 && s.MaxDeletedID.Compare(end) <= 0
}

// writeGroupLag is streamReplyWithCGLag.
func writeGroupLag(x *Ctx, s *datatype.Stream, g *datatype.StreamGroup) {
	switch {
	case s.EntriesAdded == 0:
		x.W.Int(0)
	case g.EntriesRead != -1 && !rangeHasTombstones(s, g.LastID, datatype.MaxStreamID):
		x.W.Int(s.EntriesAdded - g.EntriesRead)
	default:
		if read := s.DistanceFromFirstEver(g.LastID); read != -1 {
			x.W.Int(s.EntriesAdded - read)
		} else {
			x.W.Null()
		}
	}
}

// errNoGroup is the NOGROUP error of XACK, XPENDING, XCLAIM and
// XAUTOCLAIM.
func errNoGroup(key, group []byte) string {
	return "NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'"
}

// lookupGroup finds key's stream and group name; ok is false with the
// reply written (WRONGTYPE, or NOGROUP unless quiet).
func lookupGroup(x *Ctx, tx *engine.Tx, key, name []byte, quiet bool) (*datatype.Stream, *datatype.StreamGroup, bool) {
	s, ok := lookupStream(x, tx, key, true)
	if !ok {
		return nil, nil, false
	}
	var g *datatype.StreamGroup
	if s != nil {
		g = s.Group(string(name))
	}
	if g == nil && !quiet {
		x.W.Error(errNoGroup(key, name))
		return nil, nil, false
	}
	return s, g, true
}

func cmdXack(x *Ctx) {
	key := x.Args[1]
	x.Update(func(tx *engine.Tx) {
		_, g, ok := lookupGroup(x, tx, key, x.Args[2], true)
		if !ok {
			return
		}
		if g == nil {
			x.W.Int(0)
			return
		}
		ids, ok := streamIDArgs(x, x.Args[3:])
		if !ok {
			return
		}
		acked := 0
		for _, id := range ids {
			if g.Ack(id) {
				acked++
			}
		}
		if acked > 0 {
			tx.Modified(key)
		}
		x.W.Int(int64(acked))
	})
}

func cmdXpending(x *Ctx) {
	args := x.Args
	summary := len(args) == 3
	if !summary && (len(args) < 6 || len(args) > 9) {
		x.W.Error(errSyntax)
		return
	}
	var start, end datatype.StreamID
	var count, minIdle int64
	var consumer []byte
	if !summary {
		at := 3
		if equalFold(args[3], "idle") {
			var ok bool
			if minIdle, ok = intArg(x, 4); !ok {
				return
			}
			if len(args) < 8 {
				x.W.Error(errSyntax)
				return
			}
			at += 2
		}
		var ok bool
		if count, ok = intArg(x, at+2); !ok {
			return
		}
		count = max(count, 0)
		if start, ok = intervalID(x, args[at], 0, true); !ok {
			return
		}
		if end, ok = intervalID(x, args[at+1], math.MaxUint64, false); !ok {
			return
		}
		if at+3 < len(args) {
			consumer = args[at+3]
		}
	}
	x.View(func(tx *engine.Tx) {
		_, g, ok := lookupGroup(x, tx, args[1], args[2], false)
		if !ok {
			return
		}
		if summary {
			writePendingSummary(x, g)
			return
		}
		pel := g.PendingIDs()
		if consumer != nil {
			c := g.Consumer(string(consumer))
			if c == nil {
				x.W.Array(0)
				return
			}
			pel = c.Pending()
		}
		now := tx.Now()
		var list []*datatype.PendingEntry
		for _, id := range pel {
			if count == 0 || id.Compare(end) > 0 {
				break
			}
			if id.Compare(start) < 0 {
				continue
			}
			p := g.PendingEntry(id)
			if minIdle != 0 && now-p.DeliveryTime < minIdle {
				continue
			}
			list = append(list, p)
			count--
		}
		x.W.Array(len(list))
		for _, p := range list {
			x.W.Array(4)
			writeStreamID(x, p.ID)
			x.W.BulkString(p.Consumer.Name)
			x.W.Int(max(now-p.DeliveryTime, 0))
			x.W.Int(p.DeliveryCount)
		}
	})
}

// writePendingSummary is XPENDING key group: the count, the first and
// last IDs and the consumers with pending entries.
func writePendingSummary(x *Ctx, g *datatype.StreamGroup) {
	x.W.Array(4)
	pel := g.PendingIDs()
	x.W.Int(int64(len(pel)))
	if len(pel) == 0 {
		x.W.Null()
		x.W.Null()
		x.W.NullArray()
		return
	}
	writeStreamID(x, pel[0])
	writeStreamID(x, pel[len(pel)-1])
	n := 0
	for _, c := range g.Consumers() {
		if len(c.Pending()) > 0 {
			n++
		}
	}
	x.W.Array(n)
	for _, c := range g.Consumers() {
		if len(c.Pending()) > 0 {
			x.W.Array(2)
			x.W.BulkString(c.Name)
			x.W.BulkString(strconv.Itoa(len(c.Pending())))
		}
	}
}

// claimingConsumer is c, or, on the first claim of an XCLAIM or
// XAUTOCLAIM (c nil), the group's consumer name, created if missing with
// its xgroup-createconsumer event and seen now: Redis looks the consumer
// up only once there is something to claim.
func claimingConsumer(tx *engine.Tx, key []byte, g *datatype.StreamGroup, c *datatype.StreamConsumer, name []byte, now int64) *datatype.StreamConsumer {
	if c != nil {
		return c
	}
	c, created := g.AddConsumer(string(name), now)
	if created {
		tx.Notify(notify.Stream, "xgroup-createconsumer", key)
	}
	c.SeenTime = now
	return c
}

// writeClaimed answers the IDs an XCLAIM or XAUTOCLAIM claimed: the IDs
// alone with JUSTID, else their entries.
func writeClaimed(x *Ctx, s *datatype.Stream, claimed []datatype.StreamID, justID bool) {
	x.W.Array(len(claimed))
	for _, id := range claimed {
		if justID {
			writeStreamID(x, id)
			continue
		}
		e, ok := s.View(id)
		writeEntryOrNull(x, e, ok)
	}
}

func cmdXclaim(x *Ctx) {
	args := x.Args
	key := args[1]
	x.Update(func(tx *engine.Tx) {
		s, g, ok := lookupGroup(x, tx, key, args[2], false)
		if !ok {
			return
		}
		minIdle, ok := ParseInt64(args[4])
		if !ok {
			x.W.Error("ERR Invalid min-idle-time argument for XCLAIM")
			return
		}
		minIdle = max(minIdle, 0)
		j := 5
		for ; j < len(args); j++ {
			if _, ok := parseStreamID(args[j], 0, true, nil); !ok {
				break
			}
		}
		lastIDArg := j - 1
		now := tx.Now()
		var lastID datatype.StreamID
		retry, delivery := int64(-1), int64(-1)
		force, justID := false, false
		// intOption parses arg, the integer after option name.
		intOption := func(name string, arg []byte) (int64, bool) {
			v, ok := ParseInt64(arg)
			if !ok {
				x.W.Error("ERR Invalid " + name + " option argument for XCLAIM")
			}
			return v, ok
		}
		for ; j < len(args); j++ {
			more := len(args) - 1 - j
			opt := args[j]
			switch {
			case equalFold(opt, "force"):
				force = true
			case equalFold(opt, "justid"):
				justID = true
			case equalFold(opt, "idle") && more > 0:
				j++
				v, ok := intOption("IDLE", args[j])
				if !ok {
					return
				}
				delivery = now - v
			case equalFold(opt, "time") && more > 0:
				j++
				v, ok := intOption("TIME", args[j])
				if !ok {
					return
				}
				delivery = v
			case equalFold(opt, "retrycount") && more > 0:
				j++
				v, ok := intOption("RETRYCOUNT", args[j])
				if !ok {
					return
				}
				retry = v
			case equalFold(opt, "lastid") && more > 0:
				j++
				if lastID, ok = streamIDArg(x, args[j], true); !ok {
					return
				}
			default:
				x.W.Error("ERR Unrecognized XCLAIM option '" + string(opt) + "'")
				return
			}
		}
		changed := false
		if lastID.Compare(g.LastID) > 0 {
			g.LastID, changed = lastID, true
		}
		if delivery < 0 || delivery > now {
			delivery = now
		}
		var c *datatype.StreamConsumer
		var claimed []datatype.StreamID
		for j := 5; j <= lastIDArg; j++ {
			id, _ := parseStreamID(args[j], 0, true, nil)
			p := g.PendingEntry(id)
			if _, exists := s.View(id); !exists {
				if p != nil {
					g.Ack(id)
					changed = true
				}
				continue
			}
			fresh := false
			if force && p == nil {
				fresh = true
			}
			if p == nil && !fresh {
				continue
			}
			if !fresh && minIdle != 0 && now-p.DeliveryTime < minIdle {
				continue
			}
			c = claimingConsumer(tx, key, g, c, args[3], now)
			if fresh {
				p = g.Deliver(id, c, now)
			}
			g.Assign(p, c)
			p.DeliveryTime = delivery
			if retry >= 0 {
				p.DeliveryCount = retry
			} else if !justID {
				p.DeliveryCount++
			}
			claimed = append(claimed, id)
			changed = true
		}
		writeClaimed(x, s, claimed, justID)
		if changed {
			tx.Modified(key)
		}
	})
}

func cmdXautoclaim(x *Ctx) {
	args := x.Args
	key := args[1]
	minIdle, ok := ParseInt64(args[4])
	if !ok {
		x.W.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := intervalID(x, args[5], 0, true)
	if !ok {
		return
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		switch {
		case equalFold(args[j], "count") && j+1 < len(args):
			n, ok := ParseInt64(args[j+1])
			if !ok || n < 1 || n > math.MaxInt64/16 {
				x.W.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			j++
		case equalFold(args[j], "justid"):
			justID = true
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	x.Update(func(tx *engine.Tx) {
		s, g, ok := lookupGroup(x, tx, key, args[2], false)
		if !ok {
			return
		}
		now := tx.Now()
		attempts := count * 10
		pel := g.PendingIDs()
		ids := append([]datatype.StreamID(nil), pel[g.PendingFrom(start):]...)
		var claimed, deleted []datatype.StreamID
		var c *datatype.StreamConsumer
		i := 0
		for ; attempts > 0 && count > 0 && i < len(ids); i++ {
			attempts--
			id := ids[i]
			p := g.PendingEntry(id)
			if _, exists := s.View(id); !exists {
				g.Ack(id)
				deleted = append(deleted, id)
				count--
				continue
			}
			if minIdle != 0 && now-p.DeliveryTime < minIdle {
				continue
			}
			c = claimingConsumer(tx, key, g, c, args[3], now)
			g.Assign(p, c)
			p.DeliveryTime = now
			if !justID {
				p.DeliveryCount++
			}
			claimed = append(claimed, id)
			count--
		}
		var next datatype.StreamID
		if i < len(ids) {
			next = ids[i]
		}
		x.W.Array(3)
		writeStreamID(x, next)
		writeClaimed(x, s, claimed, justID)
		x.W.Array(len(deleted))
		for _, id := range deleted {
			writeStreamID(x, id)
		}
		if len(claimed) > 0 || len(deleted) > 0 {
			tx.Modified(key)
		}
	})
}

func cmdXsetid(x *Ctx) {
	args := x.Args
	key := args[1]
	id, ok := streamIDArg(x, args[2], true)
	if !ok {
		return
	}
	entriesAdded := int64(-1)
	var maxDeleted datatype.StreamID
	for i := 3; i < len(args); i += 2 {
		more := len(args) - 1 - i
		switch {
		case equalFold(args[i], "entriesadded") && more > 0:
			n, ok := intArg(x, i+1)
			if !ok {
				return
			}
			if n < 0 {
				x.W.Error("ERR entries_added must be positive")
				return
			}
			entriesAdded = n
		case equalFold(args[i], "maxdeletedid") && more > 0:
			if maxDeleted, ok = streamIDArg(x, args[i+1], true); !ok {
				return
			}
			if id.Compare(maxDeleted) < 0 {
				x.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupStreamOrReply(x, tx, key, false, replyNoKey)
		if !ok {
			return
		}
		if last, ok := s.LastEntryID(); ok {
			if id.Compare(last) < 0 {
				x.W.Error("ERR The ID specified in XSETID is smaller than the target stream top item")
				return
			}
			if entriesAdded != -1 && int64(s.Len()) > entriesAdded {
				x.W.Error("ERR The entries_added specified in XSETID is smaller than the target stream length")
				return
			}
		}
		s.LastID = id
		if entriesAdded != -1 {
			s.EntriesAdded = entriesAdded
		}
		if !maxDeleted.IsZero() {
			s.MaxDeletedID = maxDeleted
		}
		tx.Modified(key)
		tx.Notify(notify.Stream, "xsetid", key)
		x.W.OK()
	})
}

func cmdXgroupHelp(x *Ctx) {
	writeHelp(x, "XGROUP",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.")
}

func cmdXinfoHelp(x *Ctx) {
	writeHelp(x, "XINFO",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.")
}

// subcommandSyntaxError is addReplySubcommandSyntaxError.
func subcommandSyntaxError(x *Ctx) {
	x.W.Error("ERR unknown subcommand or wrong number of arguments for '" + Truncate(string(x.Args[1]), 128) + "'. Try " + upper(string(x.Args[0])) + " HELP.")
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func cmdXgroup(x *Ctx) {
	args := x.Args
	op := string(bytes.ToLower(args[1]))
	key, name := args[2], args[3]
	mkstream := false
	entriesRead := int64(-1)
	if (op == "create" || op == "setid") && len(args) >= 5 {
		for i := 5; i < len(args); {
			switch {
			case op == "create" && equalFold(args[i], "mkstream"):
				mkstream = true
				i++
			case equalFold(args[i], "entriesread") && i+1 < len(args):
				n, ok := intArg(x, i+1)
				if !ok {
					return
				}
				if n < 0 && n != -1 {
					x.W.Error("ERR value for ENTRIESREAD must be positive or -1")
					return
				}
				entriesRead = n
				i += 2
			default:
				subcommandSyntaxError(x)
				return
			}
		}
	}
	x.Update(func(tx *engine.Tx) {
		s, ok := lookupStream(x, tx, key, false)
		if !ok {
			return
		}
		var g *datatype.StreamGroup
		if !mkstream {
			if s == nil {
				x.W.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
				return
			}
			if g = s.Group(string(name)); g == nil && (op == "setid" || op == "createconsumer" || op == "delconsumer") {
				x.W.Error("NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(key) + "'")
				return
			}
		}
		switch {
		case op == "create" && len(args) <= 8:
			xgroupCreate(x, tx, s, key, name, entriesRead)
		case op == "setid" && (len(args) == 5 || len(args) == 7):
			id := s.LastID
			if string(args[4]) != "$" {
				var ok bool
				if id, ok = parseStreamID(args[4], 0, false, nil); !ok {
					x.W.Error(errStreamID)
					return
				}
			}
			g.LastID, g.EntriesRead = id, entriesRead
			tx.Modified(key)
			tx.Notify(notify.Stream, "xgroup-setid", key)
			x.W.OK()
		case op == "destroy":
			if !s.DestroyGroup(string(name)) {
				x.W.Int(0)
				return
			}
			tx.Modified(key)
			tx.Notify(notify.Stream, "xgroup-destroy", key)
			x.W.Int(1)
		case op == "createconsumer":
			_, created := g.AddConsumer(string(args[4]), tx.Now())
			if created {
				tx.Modified(key)
				tx.Notify(notify.Stream, "xgroup-createconsumer", key)
				x.W.Int(1)
			} else {
				x.W.Int(0)
			}
		case op == "delconsumer":
			pending := g.DeleteConsumer(string(args[4]))
			if pending >= 0 {
				tx.Modified(key)
				tx.Notify(notify.Stream, "xgroup-delconsumer", key)
			}
			x.W.Int(int64(max(pending, 0)))
		default:
			subcommandSyntaxError(x)
		}
	})
}

// xgroupCreate is XGROUP CREATE once the options are parsed.
func xgroupCreate(x *Ctx, tx *engine.Tx, s *datatype.Stream, key, name []byte, entriesRead int64) {
	var id datatype.StreamID
	if string(x.Args[4]) == "$" {
		if s != nil {
			id = s.LastID
		}
	} else {
		var ok bool
		if id, ok = streamIDArg(x, x.Args[4], true); !ok {
			return
		}
	}
	created := s == nil
	if created {
		s = datatype.NewStream()
	}
	if s.CreateGroup(string(name), id, entriesRead) == nil {
		x.W.Error("BUSYGROUP Consumer Group name already exists")
		return
	}
	storeChanged(tx, key, s, created)
	tx.Notify(notify.Stream, "xgroup-create", key)
	x.W.OK()
}

func cmdXinfo(x *Ctx) {
	args := x.Args
	op := string(bytes.ToLower(args[1]))
	key := args[2]
	x.View(func(tx *engine.Tx) {
		s, ok := lookupStreamOrReply(x, tx, key, true, replyNoKey)
		if !ok {
			return
		}
		now := tx.Now()
		switch {
		case op == "consumers":
			g := s.Group(string(args[3]))
			if g == nil {
				x.W.Error("NOGROUP No such consumer group '" + string(args[3]) + "' for key name '" + string(key) + "'")
				return
			}
			x.W.Array(len(g.Consumers()))
			for _, c := range g.Consumers() {
				x.W.Map(3)
				x.W.BulkString("name")
				x.W.BulkString(c.Name)
				x.W.BulkString("pending")
				x.W.Int(int64(len(c.Pending())))
				x.W.BulkString("idle")
				x.W.Int(max(now-c.SeenTime, 0))
			}
		case op == "groups":
			x.W.Array(len(s.Groups()))
			for _, g := range s.Groups() {
				x.W.Map(6)
				x.W.BulkString("name")
				x.W.BulkString(g.Name)
				x.W.BulkString("consumers")
				x.W.Int(int64(len(g.Consumers())))
				x.W.BulkString("pending")
				x.W.Int(int64(g.PendingCount()))
				x.W.BulkString("last-delivered-id")
				writeStreamID(x, g.LastID)
				writeEntriesRead(x, g)
				x.W.BulkString("lag")
				writeGroupLag(x, s, g)
			}
		case op == "stream":
			xinfoStream(x, s)
		}
	})
}

func writeEntriesRead(x *Ctx, g *datatype.StreamGroup) {
	x.W.BulkString("entries-read")
	if g.EntriesRead != -1 {
		x.W.Int(g.EntriesRead)
	} else {
		x.W.Null()
	}
}

// xinfoStream is XINFO STREAM key [FULL [COUNT n]]. radix-tree-nodes is
// an estimate: kvserver keeps Redis's node boundaries, not its tree.
func xinfoStream(x *Ctx, s *datatype.Stream) {
	rest := x.Args[3:]
	full := len(rest) > 0
	count := int64(10)
	switch {
	case len(rest) == 0:
	case (len(rest) == 1 || len(rest) == 3) && equalFold(rest[0], "full"):
		if len(rest) == 3 {
			if !equalFold(rest[1], "count") {
				subcommandSyntaxError(x)
				return
			}
			n, ok := intArg(x, 5)
			if !ok {
				return
			}
			if n < 0 {
				n = 10
			}
			count = n
		}
	default:
		subcommandSyntaxError(x)
		return
	}
	if full {
		x.W.Map(9)
	} else {
		x.W.Map(10)
	}
	x.W.BulkString("length")
	x.W.Int(int64(s.Len()))
	x.W.BulkString("radix-tree-keys")
	x.W.Int(int64(s.Nodes()))
	x.W.BulkString("radix-tree-nodes")
	x.W.Int(int64(s.Nodes()) + 1)
	x.W.BulkString("last-generated-id")
	writeStreamID(x, s.LastID)
	x.W.BulkString("max-deleted-entry-id")
	writeStreamID(x, s.MaxDeletedID)
	x.W.BulkString("entries-added")
	x.W.Int(s.EntriesAdded)
	x.W.BulkString("recorded-first-entry-id")
	writeStreamID(x, s.FirstID())
	if !full {
		x.W.BulkString("groups")
		x.W.Int(int64(len(s.Groups())))
		x.W.BulkString("first-entry")
		e, ok := s.FirstView()
		writeEntryOrNull(x, e, ok)
		x.W.BulkString("last-entry")
		e, ok = s.LastView()
		writeEntryOrNull(x, e, ok)
		return
	}
	x.W.BulkString("entries")
	writeEntries(x, s, datatype.StreamID{}, datatype.MaxStreamID, count, false)
	x.W.BulkString("groups")
	x.W.Array(len(s.Groups()))
	limit := func(n int) int {
		if count > 0 && int64(n) > count {
			return int(count)
		}
		return n
	}
	for _, g := range s.Groups() {
		x.W.Map(7)
		x.W.BulkString("name")
		x.W.BulkString(g.Name)
		x.W.BulkString("last-delivered-id")
		writeStreamID(x, g.LastID)
		writeEntriesRead(x, g)
		x.W.BulkString("lag")
		writeGroupLag(x, s, g)
		x.W.BulkString("pel-count")
		x.W.Int(int64(g.PendingCount()))
		x.W.BulkString("pending")
		pel := g.PendingIDs()
		x.W.Array(limit(len(pel)))
		for _, id := range pel[:limit(len(pel))] {
			p := g.PendingEntry(id)
			x.W.Array(4)
			writeStreamID(x, id)
			x.W.BulkString(p.Consumer.Name)
			x.W.Int(p.DeliveryTime)
			x.W.Int(p.DeliveryCount)
		}
		x.W.BulkString("consumers")
		x.W.Array(len(g.Consumers()))
		for _, c := range g.Consumers() {
			x.W.Map(4)
			x.W.BulkString("name")
			x.W.BulkString(c.Name)
			x.W.BulkString("seen-time")
			x.W.Int(c.SeenTime)
			x.W.BulkString("pel-count")
			x.W.Int(int64(len(c.Pending())))
			x.W.BulkString("pending")
			cp := c.Pending()
			x.W.Array(limit(len(cp)))
			for _, id := range cp[:limit(len(cp))] {
				p := g.PendingEntry(id)
				x.W.Array(3)
				writeStreamID(x, id)
				x.W.Int(p.DeliveryTime)
				x.W.Int(p.DeliveryCount)
			}
		}
	}
}
