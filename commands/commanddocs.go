package commands

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/kvserver/kvserver/resp"
)

// redisCommandDocs returns what Redis reports about each command of our
// table that it has, by full name: redisCommandDocsRESP decoded on first
// use, once. The map and its values are never changed afterwards.
//
// The descriptions are kept as RESP3 strings rather than Go expressions
// building resp.Value trees: as code they made one init function that was
// two thirds of the binary (88 MB of 134 MB) and cost every start 1.7 ms
// and 1.2 MB of heap, though only COMMAND INFO and COMMAND DOCS read them.
// Now the first of those pays instead, once: about 1.1 ms and 1.2 MB on a
// 2-core machine (BenchmarkDecodeRedisCommandDocs). Every string in the
// decoded trees is a substring of the generated data, so the decode
// allocates the trees' element slices and the commandDoc values, and
// copies no text.
var redisCommandDocs = sync.OnceValue(func() map[string]*commandDoc {
	docs := make(map[string]*commandDoc, len(redisCommandDocsRESP))
	for name, enc := range redisCommandDocsRESP {
		d, err := decodeCommandDoc(enc)
		if err != nil {
			// The generated data is checked by TestGeneratedDocsRoundTrip;
			// failing here means commanddocs_gen.go was edited by hand.
			panic(fmt.Sprintf("commands: commanddocs_gen.go: %s: %v", name, err))
		}
		docs[name] = d
	}
	return docs
})

// docsDepth bounds the nesting of a description, so that no input can
// recurse without end. Redis 7.0's deepest (arguments within arguments in
// COMMAND DOCS) nests 13 deep, counting the array of nine and the strings;
// TestGeneratedDocsRoundTrip says when that comes near the bound.
const docsDepth = 32

// errDocSyntax is wrapped by every decoding error.
var errDocSyntax = errors.New("malformed command description")

// decodeCommandDoc decodes one value of redisCommandDocsRESP: the RESP3
// array of nine that gencommands writes (arity, flags as a set of simple
// strings, first key, last key, step, ACL categories, tips, key specs,
// docs). Only what resp.Writer writes for a resp.Value is accepted, in its
// exact form, so that writing the result back gives the input again.
func decodeCommandDoc(enc string) (*commandDoc, error) {
	// The array of nine is read element by element, not as a Value, so
	// that it costs no slice of its own.
	if !strings.HasPrefix(enc, "*9\r\n") {
		return nil, fmt.Errorf("%w: not an array of nine", errDocSyntax)
	}
	rest := enc[len("*9\r\n"):]
	var e [9]resp.Value
	for i := range e {
		var err error
		if e[i], rest, err = decodeValue(rest, docsDepth-1); err != nil {
			return nil, err
		}
	}
	if rest != "" {
		return nil, fmt.Errorf("%w: %d bytes after the description", errDocSyntax, len(rest))
	}
	for _, i := range []int{0, 2, 3, 4} {
		if e[i].Kind != resp.KindInt {
			return nil, fmt.Errorf("%w: element %d is not an integer", errDocSyntax, i)
		}
	}
	if e[1].Kind != resp.KindSet {
		return nil, fmt.Errorf("%w: flags are not a set", errDocSyntax)
	}
	flags := make([]string, len(e[1].Elems))
	for i, f := range e[1].Elems {
		if f.Kind != resp.KindSimple {
			return nil, fmt.Errorf("%w: flag %d is not a simple string", errDocSyntax, i)
		}
		flags[i] = f.Str
	}
	return &commandDoc{
		Arity:         int(e[0].Int),
		Flags:         flags,
		FirstKey:      int(e[2].Int),
		LastKey:       int(e[3].Int),
		Step:          int(e[4].Int),
		ACLCategories: e[5],
		Tips:          e[6],
		KeySpecs:      e[7],
		Docs:          e[8],
	}, nil
}

// decodeValue decodes the RESP3 value at the start of s, nested at most
// depth deep, and returns it with what follows it. Strings in the value
// are substrings of s.
func decodeValue(s string, depth int) (resp.Value, string, error) {
	if depth == 0 {
		return resp.Value{}, "", fmt.Errorf("%w: nested too deep", errDocSyntax)
	}
	line, rest, ok := strings.Cut(s, "\r\n")
	if !ok || line == "" {
		return resp.Value{}, "", fmt.Errorf("%w: no type line", errDocSyntax)
	}
	marker, text := line[0], line[1:]
	switch marker {
	case '+':
		if strings.ContainsAny(text, "\r\n") {
			// resp.Writer would write the line break as a space.
			return resp.Value{}, "", fmt.Errorf("%w: simple string with a line break", errDocSyntax)
		}
		return resp.Simple(text), rest, nil
	case '_':
		if text != "" {
			return resp.Value{}, "", fmt.Errorf("%w: null with a payload", errDocSyntax)
		}
		return resp.Value{Kind: resp.KindNull}, rest, nil
	case ':':
		n, err := canonicalInt(text)
		return resp.Int(n), rest, err
	case '$':
		n, err := canonicalInt(text)
		if err != nil {
			return resp.Value{}, "", err
		}
		if n < 0 || n > int64(len(rest))-2 || rest[n:n+2] != "\r\n" {
			return resp.Value{}, "", fmt.Errorf("%w: bulk of %d bytes does not fit", errDocSyntax, n)
		}
		return resp.Bulk(rest[:n]), rest[n+2:], nil
	}
	kind, per := resp.KindArray, int64(1)
	switch marker {
	case '*':
	case '~':
		kind = resp.KindSet
	case '%':
		kind, per = resp.KindMap, 2
	default:
		return resp.Value{}, "", fmt.Errorf("%w: type %q", errDocSyntax, marker)
	}
	n, err := canonicalInt(text)
	if err != nil {
		return resp.Value{}, "", err
	}
	// Every element takes at least three bytes ("_\r\n"), which bounds
	// the allocation by the input's length.
	if n < 0 || n > int64(len(rest))/3/per {
		return resp.Value{}, "", fmt.Errorf("%w: %d elements do not fit", errDocSyntax, n)
	}
	elems := make([]resp.Value, n*per)
	for i := range elems {
		if elems[i], rest, err = decodeValue(rest, depth-1); err != nil {
			return resp.Value{}, "", err
		}
	}
	return resp.Value{Kind: kind, Elems: elems}, rest, nil
}

// canonicalInt parses a decimal integer written as strconv.FormatInt
// writes it, the only form resp.Writer produces.
func canonicalInt(text string) (int64, error) {
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != text {
		return 0, fmt.Errorf("%w: integer %q", errDocSyntax, text)
	}
	return n, nil
}
