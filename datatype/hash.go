package datatype

// HashLimits are the settings that decide when a small hash stops being a
// listpack (hash-max-listpack-entries, hash-max-listpack-value).
type HashLimits struct {
	MaxListpackEntries int
	MaxListpackValue   int
}

// Memory estimates: a string header, and what a Go map spends per entry
// beyond its key and value headers.
const (
	stringHeaderSize = 16
	mapEntryOverhead = 48
	objectOverhead   = 64
)

// Hash is a hash value. A small one is a "listpack": its fields in
// insertion order, which HGETALL, HKEYS and HSCAN return as Redis does; past
// the limits it becomes a "hashtable" for good, as in Redis.
type Hash struct {
	// pairs holds field, value, field, value... while listpack.
	pairs []string
	// table holds the fields once the hash is a hashtable; nil before.
	table map[string]string
	// data is the bytes of all fields and values.
	data int64
}

// NewHash returns an empty listpack hash.
func NewHash() *Hash { return &Hash{} }

// Kind implements Object.
func (h *Hash) Kind() Kind { return KindHash }

// Len is the number of fields.
func (h *Hash) Len() int {
	if h.table != nil {
		return len(h.table)
	}
	return len(h.pairs) / 2
}

// MemSize implements Object.
func (h *Hash) MemSize() int64 {
	if h.table != nil {
		return objectOverhead + h.data + int64(len(h.table))*(2*stringHeaderSize+mapEntryOverhead)
	}
	return objectOverhead + h.data + int64(cap(h.pairs))*stringHeaderSize
}

// Encoding implements Object: "listpack" or "hashtable".
func (h *Hash) Encoding() string {
	if h.table != nil {
		return "hashtable"
	}
	return "listpack"
}

// IsListpack reports whether the hash keeps its insertion order.
func (h *Hash) IsListpack() bool { return h.table == nil }

func (h *Hash) find(field string) int {
	for i := 0; i < len(h.pairs); i += 2 {
		if h.pairs[i] == field {
			return i
		}
	}
	return -1
}

// Get returns a field's value.
func (h *Hash) Get(field string) (string, bool) {
	if h.table != nil {
		v, ok := h.table[field]
		return v, ok
	}
	if i := h.find(field); i >= 0 {
		return h.pairs[i+1], true
	}
	return "", false
}

// Set stores a field and reports whether it is new. lim decides whether
// the hash must become a hashtable.
func (h *Hash) Set(field, value string, lim HashLimits) bool {
	if h.table == nil && (len(field) > lim.MaxListpackValue || len(value) > lim.MaxListpackValue) {
		h.convert()
	}
	if h.table != nil {
		old, ok := h.table[field]
		if ok {
			h.data -= int64(len(old))
		} else {
			h.data += int64(len(field))
		}
		h.data += int64(len(value))
		h.table[field] = value
		return !ok
	}
	if i := h.find(field); i >= 0 {
		h.data += int64(len(value) - len(h.pairs[i+1]))
		h.pairs[i+1] = value
		return false
	}
	h.pairs = append(h.pairs, field, value)
	h.data += int64(len(field) + len(value))
	if h.Len() > lim.MaxListpackEntries {
		h.convert()
	}
	return true
}

// Delete removes a field and reports whether it was there.
func (h *Hash) Delete(field string) bool {
	if h.table != nil {
		v, ok := h.table[field]
		if ok {
			h.data -= int64(len(field) + len(v))
			delete(h.table, field)
		}
		return ok
	}
	i := h.find(field)
	if i < 0 {
		return false
	}
	h.data -= int64(len(field) + len(h.pairs[i+1]))
	h.pairs = append(h.pairs[:i], h.pairs[i+2:]...)
	return true
}

// Range calls fn for every field until it returns false: in insertion
// order for a listpack, in no particular order for a hashtable.
func (h *Hash) Range(fn func(field, value string) bool) {
	if h.table != nil {
		for f, v := range h.table {
			if !fn(f, v) {
				return
			}
		}
		return
	}
	for i := 0; i < len(h.pairs); i += 2 {
		if !fn(h.pairs[i], h.pairs[i+1]) {
			return
		}
	}
}

func (h *Hash) convert() {
	h.table = make(map[string]string, len(h.pairs))
	for i := 0; i < len(h.pairs); i += 2 {
		h.table[h.pairs[i]] = h.pairs[i+1]
	}
	h.pairs = nil
}

// Clone implements Object.
func (h *Hash) Clone() Object {
	c := &Hash{data: h.data}
	if h.table != nil {
		c.table = make(map[string]string, len(h.table))
		for f, v := range h.table {
			c.table[f] = v
		}
	} else {
		c.pairs = append([]string(nil), h.pairs...)
	}
	return c
}

// Hash encoding: a uvarint 0 (listpack) or 1 (hashtable), the field count,
// then field and value strings.

// AppendBinary implements Object.
func (h *Hash) AppendBinary(dst []byte) []byte {
	enc := uint64(0)
	if h.table != nil {
		enc = 1
	}
	dst = appendUvarint(dst, enc)
	dst = appendUvarint(dst, uint64(h.Len()))
	h.Range(func(f, v string) bool {
		dst = appendString(dst, f)
		dst = appendString(dst, v)
		return true
	})
	return dst
}

func decodeHash(b []byte) (Object, error) {
	r := reader{b: b}
	enc := r.uvarint()
	n := r.count(2)
	h := &Hash{}
	switch {
	case r.err != nil:
	case enc == 0:
		h.pairs = make([]string, 0, 2*n)
	case enc == 1:
		h.table = make(map[string]string, n)
	default:
		r.fail("unknown hash encoding")
	}
	for i := 0; i < n && r.err == nil; i++ {
		f, v := r.string(), r.string()
		if h.table != nil {
			h.table[f] = v
		} else {
			h.pairs = append(h.pairs, f, v)
		}
		h.data += int64(len(f) + len(v))
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	if h.Len() != n {
		return nil, ErrCorrupt
	}
	return h, nil
}
