package rdb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/kvserver/kvserver/datatype"
	"github.com/kvserver/kvserver/listpack"
)

// Errors of Restore, worded as RESTORE replies them.
var (
	// ErrPayload: too short, a newer RDB version, or a wrong checksum.
	ErrPayload = errors.New("DUMP payload version or checksum are wrong")
	// ErrData: the value itself does not decode.
	ErrData = errors.New("Bad data format")
)

// Value is what a payload holds: a string's bytes, or an object of
// another kind.
type Value struct {
	String []byte
	Object datatype.Object
}

// Limits are the settings that decide the encodings of restored values,
// as they decide those of values written by commands.
type Limits struct {
	Hash datatype.HashLimits
	ZSet datatype.ZSetLimits
	Set  datatype.SetLimits
	List datatype.ListLimits
}

// Dump serializes v as Redis 7.0's DUMP does.
func Dump(v Value) ([]byte, error) {
	var b []byte
	switch obj := v.Object.(type) {
	case nil:
		b = append(b, typeString)
		b = appendString(b, v.String)
	case *datatype.Hash:
		b = dumpHash(b, obj)
	case *datatype.ZSet:
		b = dumpZSet(b, obj)
	case *datatype.Set:
		b = dumpSet(b, obj)
	case *datatype.List:
		b = dumpList(b, obj, DefaultListNodeBytes)
	case *datatype.Stream:
		b = dumpStream(b, obj)
	default:
		return nil, fmt.Errorf("rdb: cannot dump a %v", v.Object.Kind())
	}
	return AppendFooter(b), nil
}

func dumpHash(b []byte, h *datatype.Hash) []byte {
	if h.IsListpack() {
		elems := make([][]byte, 0, 2*h.Len())
		h.Range(func(f, v []byte) bool {
			elems = append(elems, f, v)
			return true
		})
		b = append(b, typeHashListpack)
		return appendString(b, listpack.Build(elems))
	}
	b = append(b, typeHash)
	b = appendLen(b, uint64(h.Len()))
	h.Range(func(f, v []byte) bool {
		b = appendString(b, f)
		b = appendString(b, v)
		return true
	})
	return b
}

// dumpZSet writes a listpack sorted set as member, score pairs (scores as
// the listpack holds them), a skiplist as RDB_TYPE_ZSET_2: members from
// the greatest to the smallest, each with its score as a binary double.
func dumpZSet(b []byte, z *datatype.ZSet) []byte {
	if z.IsListpack() {
		elems := make([][]byte, 0, 2*z.Len())
		z.ForEach(func(e datatype.ZEntry) bool {
			elems = append(elems, []byte(e.Member), []byte(datatype.ListpackScore(e.Score)))
			return true
		})
		b = append(b, typeZSetListpack)
		return appendString(b, listpack.Build(elems))
	}
	b = append(b, typeZSet2)
	b = appendLen(b, uint64(z.Len()))
	z.Range(z.Len()-1, true, func(e datatype.ZEntry) bool {
		b = appendString(b, []byte(e.Member))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.Score))
		return true
	})
	return b
}

// dumpSet writes an intset as Redis's blob (byte-identical to Redis's
// DUMP) and a hashtable as its members, in the table's order.
func dumpSet(b []byte, s *datatype.Set) []byte {
	if blob := s.IntsetBlob(); blob != nil {
		b = append(b, typeSetIntset)
		return appendString(b, blob)
	}
	b = append(b, typeSet)
	b = appendLen(b, uint64(s.Len()))
	s.Range(func(m []byte) bool {
		b = appendString(b, m)
		return true
	})
	return b
}

// DefaultListNodeBytes is the listpack size of a quicklist node under
// Redis's default list-max-listpack-size -2.
const DefaultListNodeBytes = 8192

// Quicklist node containers (quicklist.h).
const (
	quicklistPlain  = 1
	quicklistPacked = 2
	// quicklistPlainSize is packed_threshold: elements from 1 GiB are
	// plain nodes.
	quicklistPlainSize = 1 << 30
	// quicklistSizeEstimate is SIZE_ESTIMATE_OVERHEAD, what Redis adds to
	// an element's length when it decides whether it fits a node.
	quicklistSizeEstimate = 8
)

// dumpList writes RDB_TYPE_LIST_QUICKLIST_2: the elements packed into
// listpack nodes as Redis packs a list pushed in order (a node takes one
// more element while its listpack plus the element and 8 bytes stays
// within nodeBytes). A list built by RPUSH gets redis-server's nodes and
// dumps byte for byte as redis-server's.
func dumpList(b []byte, l *datatype.List, nodeBytes int) []byte {
	type node struct {
		elems [][]byte
		plain bool
	}
	var nodes []node
	var cur [][]byte
	curSize := 0 // the listpack bytes of cur
	var entry []byte
	l.Range(0, false, func(_ int, v []byte) bool {
		if len(cur) > 0 && (len(v) >= quicklistPlainSize || curSize+len(v)+quicklistSizeEstimate > nodeBytes) {
			nodes = append(nodes, node{elems: cur})
			cur = nil
		}
		if len(v) >= quicklistPlainSize {
			nodes = append(nodes, node{elems: [][]byte{v}, plain: true})
			return true
		}
		if len(cur) == 0 {
			curSize = listpack.HeaderSize + 1
		}
		cur = append(cur, v)
		entry = listpack.AppendString(entry[:0], v)
		curSize += len(entry)
		return true
	})
	if len(cur) > 0 {
		nodes = append(nodes, node{elems: cur})
	}
	b = append(b, typeListQuick2)
	b = appendLen(b, uint64(len(nodes)))
	for _, n := range nodes {
		if n.plain {
			b = appendLen(b, quicklistPlain)
			b = appendString(b, n.elems[0])
			continue
		}
		b = appendLen(b, quicklistPacked)
		b = appendString(b, listpack.Build(n.elems))
	}
	return b
}

// Restore reads a DUMP payload.
func Restore(payload []byte, lim Limits) (Value, error) {
	body, err := payloadBody(payload)
	if err != nil {
		return Value{}, err
	}
	r := &reader{b: body}
	v, err := r.value(lim)
	if err == nil && r.err != nil {
		err = r.err
	}
	if err != nil {
		return Value{}, fmt.Errorf("%w: %v", ErrData, err)
	}
	return v, nil
}

// reader reads RDB encodings; the first failure sticks in err.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = errors.New(what)
	}
}

func (r *reader) byte() byte {
	if r.err != nil || len(r.b) == 0 {
		r.fail("truncated")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) take(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail("truncated")
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// length is rdbLoadLenByRef: a length, or (encoded) the special encoding
// of a string.
func (r *reader) length() (n uint64, encoded bool) {
	c := r.byte()
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3F), false
	case 1:
		return uint64(c&0x3F)<<8 | uint64(r.byte()), false
	case 3:
		return uint64(c & 0x3F), true
	}
	switch c {
	case 0x80:
		if b := r.take(4); b != nil {
			return uint64(binary.BigEndian.Uint32(b)), false
		}
	case 0x81:
		if b := r.take(8); b != nil {
			return binary.BigEndian.Uint64(b), false
		}
	default:
		r.fail("bad length")
	}
	return 0, false
}

// count reads a collection length that each element of at least min bytes
// must fit in what is left.
func (r *reader) count(min int) int {
	n, enc := r.length()
	if enc || n > uint64(len(r.b)/min) {
		r.fail("bad count")
		return 0
	}
	return int(n)
}

// string is rdbGenericLoadStringObject.
func (r *reader) string() []byte {
	n, encoded := r.length()
	if r.err != nil {
		return nil
	}
	if !encoded {
		return r.take(n)
	}
	switch n {
	case encInt8:
		return strconv.AppendInt(nil, int64(int8(r.byte())), 10)
	case encInt16:
		if b := r.take(2); b != nil {
			return strconv.AppendInt(nil, int64(int16(binary.LittleEndian.Uint16(b))), 10)
		}
	case encInt32:
		if b := r.take(4); b != nil {
			return strconv.AppendInt(nil, int64(int32(binary.LittleEndian.Uint32(b))), 10)
		}
	case encLZF:
		clen, e1 := r.length()
		ulen, e2 := r.length()
		if e1 || e2 || ulen > 1<<32 {
			r.fail("bad LZF lengths")
			return nil
		}
		c := r.take(clen)
		if r.err != nil {
			return nil
		}
		out, err := lzfDecompress(c, int(ulen))
		if err != nil {
			r.fail(err.Error())
		}
		return out
	default:
		r.fail("unknown string encoding")
	}
	return nil
}

// value reads an object type and the object.
func (r *reader) value(lim Limits) (Value, error) {
	typ := r.byte()
	if r.err != nil {
		return Value{}, r.err
	}
	switch typ {
	case typeString:
		s := r.string()
		if s == nil && r.err == nil {
			s = []byte{}
		}
		return Value{String: s}, r.err
	case typeHash:
		n := r.count(2)
		pairs := make([]string, 0, 2*n)
		for i := 0; i < n && r.err == nil; i++ {
			pairs = append(pairs, string(r.string()), string(r.string()))
		}
		return hashValue(pairs, lim, r.err)
	case typeHashListpack:
		lp := r.string()
		if r.err != nil {
			return Value{}, r.err
		}
		elems, err := listpack.Parse(lp)
		return hashValue(elems, lim, err)
	case typeList:
		n := r.count(1)
		elems := make([][]byte, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			elems = append(elems, r.string())
		}
		return listValue(elems, lim, r.err)
	case typeListQuick, typeListQuick2:
		nodes := r.count(1)
		var elems [][]byte
		for i := 0; i < nodes && r.err == nil; i++ {
			container := uint64(quicklistPacked)
			if typ == typeListQuick2 {
				container, _ = r.length()
			}
			blob := r.string()
			if r.err != nil {
				break
			}
			switch {
			case container == quicklistPlain:
				elems = append(elems, blob)
				continue
			case container != quicklistPacked:
				return Value{}, errors.New("unknown quicklist container")
			}
			parse := listpack.Parse
			if typ == typeListQuick {
				parse = parseZiplist
			}
			strs, err := parse(blob)
			if err != nil {
				return Value{}, err
			}
			for _, e := range strs {
				elems = append(elems, []byte(e))
			}
		}
		return listValue(elems, lim, r.err)
	case typeSet:
		n := r.count(1)
		if n == 0 {
			return Value{}, errors.New("empty set")
		}
		s := datatype.NewSet()
		for i := 0; i < n && r.err == nil; i++ {
			if !s.Add(r.string(), lim.Set) && r.err == nil {
				return Value{}, errors.New("duplicate set member")
			}
		}
		return Value{Object: s}, r.err
	case typeSetIntset:
		blob := r.string()
		if r.err != nil {
			return Value{}, r.err
		}
		s, err := datatype.SetFromIntsetBlob(blob, lim.Set)
		if err != nil {
			return Value{}, err
		}
		return Value{Object: s}, nil
	case typeHashZiplist:
		zl := r.string()
		if r.err != nil {
			return Value{}, r.err
		}
		elems, err := parseZiplist(zl)
		return hashValue(elems, lim, err)
	case typeZSet2, typeZSet:
		n := r.count(2)
		entries := make([]datatype.ZEntry, 0, n)
		for i := 0; i < n && r.err == nil; i++ {
			member := string(r.string())
			var score float64
			if typ == typeZSet2 {
				if b := r.take(8); b != nil {
					score = math.Float64frombits(binary.LittleEndian.Uint64(b))
				}
			} else {
				score = r.textDouble()
			}
			entries = append(entries, datatype.ZEntry{Member: member, Score: score})
		}
		return zsetValue(entries, lim, r.err)
	case typeZSetListpack, typeZSetZiplist:
		blob := r.string()
		if r.err != nil {
			return Value{}, r.err
		}
		parse := listpack.Parse
		if typ == typeZSetZiplist {
			parse = parseZiplist
		}
		elems, err := parse(blob)
		if err != nil || len(elems)%2 != 0 {
			return Value{}, errors.Join(err, errors.New("bad sorted set pairs"))
		}
		entries := make([]datatype.ZEntry, 0, len(elems)/2)
		for i := 0; i < len(elems); i += 2 {
			score, perr := strconv.ParseFloat(elems[i+1], 64)
			if perr != nil {
				return Value{}, perr
			}
			entries = append(entries, datatype.ZEntry{Member: elems[i], Score: score})
		}
		return zsetValue(entries, lim, nil)
	case typeStreamListpacks, typeStreamListpacks2:
		return r.restoreStream(typ)
	}
	return Value{}, fmt.Errorf("unsupported object type %d", typ)
}

// hashValue builds a hash from field, value pairs as rdbLoadObject does:
// an empty one, an odd count or a repeated field is bad data.
func hashValue(elems []string, lim Limits, err error) (Value, error) {
	if err != nil {
		return Value{}, err
	}
	if len(elems) == 0 || len(elems)%2 != 0 {
		return Value{}, errors.New("empty or odd hash")
	}
	h := datatype.NewHash()
	for i := 0; i < len(elems); i += 2 {
		if !h.Set([]byte(elems[i]), []byte(elems[i+1]), lim.Hash) {
			return Value{}, errors.New("duplicate hash field")
		}
	}
	return Value{Object: h}, nil
}

// textDouble is rdbLoadDoubleValue: a length byte (253 NaN, 254 +inf,
// 255 -inf) then the number as text.
func (r *reader) textDouble() float64 {
	switch n := r.byte(); n {
	case 253:
		r.fail("NaN score")
	case 254:
		return math.Inf(1)
	case 255:
		return math.Inf(-1)
	default:
		f, err := strconv.ParseFloat(string(r.take(uint64(n))), 64)
		if err != nil {
			r.fail("bad double")
		}
		return f
	}
	return 0
}

// zsetValue builds a sorted set in the form Redis's loader picks for its
// size: empty sets, NaN scores and repeated members are bad data.
func zsetValue(entries []datatype.ZEntry, lim Limits, err error) (Value, error) {
	if err != nil {
		return Value{}, err
	}
	if len(entries) == 0 {
		return Value{}, errors.New("empty sorted set")
	}
	maxLen := 0
	for _, e := range entries {
		maxLen = max(maxLen, len(e.Member))
	}
	z := datatype.NewZSetFor(len(entries), maxLen, lim.ZSet)
	for _, e := range entries {
		if math.IsNaN(e.Score) {
			return Value{}, errors.New("NaN score")
		}
		if !z.Set(e.Member, e.Score, lim.ZSet) {
			return Value{}, errors.New("duplicate sorted set member")
		}
	}
	return Value{Object: z}, nil
}

// listValue builds a list of elems; an empty one is bad data.
func listValue(elems [][]byte, lim Limits, err error) (Value, error) {
	if err != nil {
		return Value{}, err
	}
	if len(elems) == 0 {
		return Value{}, errors.New("empty list")
	}
	l := datatype.NewList()
	for _, e := range elems {
		l.Push(e, false, lim.List)
	}
	return Value{Object: l}, nil
}
