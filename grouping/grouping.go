package grouping

import "strings"

// Version identifies the grouping rule of this package. The disk tier stores
// it in its format key; a store written under another version is a store in
// another format. Bump it whenever Of maps any key differently.
const Version = 1

// The suffixes LMCache appends to a chunk's name.
const (
	// DataSuffix ends the key that holds a chunk's data (its KV bytes).
	DataSuffix = "kv_bytes"
	// MetadataSuffix ends the key that holds a chunk's LMCache metadata.
	MetadataSuffix = "metadata"
)

// suffixes are the trailing parts that Of strips, longest first so that
// ":kv_bytes" wins over "kv_bytes".
var suffixes = [...]string{
	":" + DataSuffix,
	":" + MetadataSuffix,
	DataSuffix,
	MetadataSuffix,
}

// suffixLen returns the length of the group suffix key ends in, 0 when none.
func suffixLen[K string | []byte](key K) int {
	for _, s := range suffixes {
		if len(key) >= len(s) && string(key[len(key)-len(s):]) == s {
			return len(s)
		}
	}
	return 0
}

// Of returns the group a key belongs to: the key without a trailing
// ":kv_bytes", ":metadata", "kv_bytes" or "metadata", or the whole key when
// it has none of those suffixes. The result aliases key.
func Of(key []byte) []byte {
	return key[:len(key)-suffixLen(key)]
}

// Name is Of for a key held as a string; the result is a substring of key.
func Name(key string) string {
	return key[:len(key)-suffixLen(key)]
}

// Members returns every key that Of maps to group: the candidates are the
// group itself and the group with each suffix appended, and a candidate
// belongs only if Of gives the group back (for example "a:" + "kv_bytes"
// belongs to group "a", not "a:").
func Members(group []byte) [][]byte {
	out := make([][]byte, 0, 1+len(suffixes))
	if len(Of(group)) == len(group) {
		out = append(out, group)
	}
	for _, s := range suffixes {
		k := make([]byte, 0, len(group)+len(s))
		k = append(append(k, group...), s...)
		if len(Of(k)) == len(group) {
			out = append(out, k)
		}
	}
	return out
}

// IsData reports whether key is named as a chunk's data key (it ends in
// DataSuffix, with or without the ':').
func IsData(key string) bool {
	return strings.HasSuffix(key, DataSuffix)
}

// IsMetadata reports whether key is named as a chunk's metadata key (it
// ends in MetadataSuffix, with or without the ':').
func IsMetadata(key string) bool {
	return strings.HasSuffix(key, MetadataSuffix)
}

// IsChunk reports whether a group name (see Of) has the shape of LMCache's
// chunk keys: model@world_size@worker_id@hash@dtype, optionally followed by
// @layer (layer-wise mode). The model may itself contain '@'.
func IsChunk(name string) bool {
	f := strings.Split(name, "@")
	if n := len(f); n >= 6 && isDecimal(f[n-1]) {
		f = f[:n-1] // @layer
	}
	n := len(f)
	if n < 5 {
		return false
	}
	model := strings.Join(f[:n-4], "@")
	return model != "" && isDecimal(f[n-4]) && isDecimal(strings.TrimPrefix(f[n-3], "-")) &&
		f[n-2] != "" && isWord(f[n-1])
}

// isDecimal reports whether s is a non-empty run of ASCII digits.
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isWord reports whether s is a non-empty run of letters, digits and '_'
// (a dtype name such as bfloat16 or fp8_e4m3).
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ChunkFields splits a chunk group name (one IsChunk accepts) into the
// model and the chunk's prefix hash, with "@<layer>" appended in
// layer-wise mode; ok is false for any other name.
func ChunkFields(name string) (model, hash string, ok bool) {
	if !IsChunk(name) {
		return "", "", false
	}
	f := strings.Split(name, "@")
	layer := ""
	if n := len(f); n >= 6 && isDecimal(f[n-1]) {
		layer = "@" + f[n-1]
		f = f[:n-1]
	}
	n := len(f)
	return strings.Join(f[:n-4], "@"), f[n-2] + layer, true
}
