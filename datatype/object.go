package datatype

import (
	"errors"
	"fmt"
)

// Kind is the Redis type of a stored value.
type Kind uint8

// The kinds, as the disk tier stores them (the numbers are part of the
// record format: never renumber).
const (
	KindString Kind = iota
	KindHash
	KindList
	KindSet
	KindZSet
	KindStream
)

// String returns the name TYPE replies with.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindHash:
		return "hash"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindStream:
		return "stream"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind returns the kind TYPE names name (SCAN ... TYPE), matching
// case-insensitively like Redis's getObjectTypeByName.
func ParseKind(name []byte) (Kind, bool) {
	for k := KindString; k <= KindStream; k++ {
		if equalFold(name, k.String()) {
			return k, true
		}
	}
	return 0, false
}

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// Object is a composite value held in memory. Commands change it in place
// inside an engine transaction and then tell the engine (engine.Tx.Modified),
// which re-reads Len and MemSize: both must be cheap.
type Object interface {
	// Kind is the value's Redis type.
	Kind() Kind
	// Len is the number of elements (fields, members); an Object whose Len
	// drops to 0 is deleted, as Redis deletes empty collections.
	Len() int
	// MemSize is the memory the value uses, in bytes, for maxmemory.
	MemSize() int64
	// Encoding is the name OBJECT ENCODING reports.
	Encoding() string
	// AppendBinary appends the value's disk encoding to dst; Decode with
	// the same Kind reads it back.
	AppendBinary(dst []byte) []byte
	// Clone returns an independent deep copy (COPY).
	Clone() Object
}

// Empty reports whether obj is an empty collection, which the engine
// deletes as Redis does; a stream is never empty in that sense (Redis
// keeps a stream with no entries, with its groups and last ID).
func Empty(obj Object) bool { return obj.Len() == 0 && obj.Kind() != KindStream }

// ErrCorrupt is wrapped by every decoding failure.
var ErrCorrupt = errors.New("datatype: corrupt encoding")

// decoders are the kinds' decoding functions, indexed by Kind; a family
// adds its own here.
var decoders = [...]func([]byte) (Object, error){
	KindHash:   decodeHash,
	KindList:   decodeList,
	KindSet:    decodeSet,
	KindZSet:   decodeZSet,
	KindStream: decodeStream,
}

// Decode reads a value of kind k that AppendBinary wrote.
func Decode(k Kind, b []byte) (Object, error) {
	if int(k) >= len(decoders) || decoders[k] == nil {
		return nil, fmt.Errorf("%w: no decoder for %v", ErrCorrupt, k)
	}
	obj, err := decoders[k](b)
	if err != nil {
		return nil, fmt.Errorf("decode %v: %w", k, err)
	}
	return obj, nil
}
