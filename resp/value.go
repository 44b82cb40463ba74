package resp

// Kind is the RESP type of a Value.
type Kind uint8

// The kinds of Value. Map and Set degrade to arrays in RESP2.
const (
	KindSimple Kind = iota
	KindBulk
	KindInt
	KindArray
	KindMap
	KindSet
	KindNull
)

// Value is a reply tree, for static replies such as COMMAND INFO and
// COMMAND DOCS that must be encoded in either protocol version.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Elems []Value // for maps: key, value, key, value, ...
}

// Simple returns a simple string Value.
func Simple(s string) Value { return Value{Kind: KindSimple, Str: s} }

// Bulk returns a bulk string Value.
func Bulk(s string) Value { return Value{Kind: KindBulk, Str: s} }

// Int returns an integer Value.
func Int(n int64) Value { return Value{Kind: KindInt, Int: n} }

// Array returns an array Value.
func Array(elems ...Value) Value { return Value{Kind: KindArray, Elems: elems} }

// Map returns a map Value from alternating keys and values.
func Map(kv ...Value) Value { return Value{Kind: KindMap, Elems: kv} }

// SetOf returns a set Value.
func SetOf(elems ...Value) Value { return Value{Kind: KindSet, Elems: elems} }

// WriteValue encodes v in the writer's protocol version.
func (w *Writer) WriteValue(v Value) {
	switch v.Kind {
	case KindSimple:
		w.Simple(v.Str)
	case KindBulk:
		w.BulkString(v.Str)
	case KindInt:
		w.Int(v.Int)
	case KindNull:
		w.Null()
	case KindArray:
		w.Array(len(v.Elems))
		for _, e := range v.Elems {
			w.WriteValue(e)
		}
	case KindMap:
		w.Map(len(v.Elems) / 2)
		for _, e := range v.Elems {
			w.WriteValue(e)
		}
	case KindSet:
		w.Set(len(v.Elems))
		for _, e := range v.Elems {
			w.WriteValue(e)
		}
	}
}
