package commands

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/resp"
)

// encodeRESP3 writes v as kvserver writes it to a RESP3 client.
func encodeRESP3(t testing.TB, v resp.Value) string {
	var b bytes.Buffer
	w := resp.NewWriter(&b)
	w.SetProto(3)
	w.WriteValue(v)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// encodeCommandDoc writes d back in the form gencommands generates.
func encodeCommandDoc(t testing.TB, d *commandDoc) string {
	flags := make([]resp.Value, len(d.Flags))
	for i, f := range d.Flags {
		flags[i] = resp.Simple(f)
	}
	return encodeRESP3(t, resp.Array(
		resp.Int(int64(d.Arity)), resp.SetOf(flags...),
		resp.Int(int64(d.FirstKey)), resp.Int(int64(d.LastKey)), resp.Int(int64(d.Step)),
		d.ACLCategories, d.Tips, d.KeySpecs, d.Docs,
	))
}

// TestGeneratedDocsRoundTrip decodes every generated description and
// writes it back with resp.Writer: the bytes must be the generated ones, so
// the decoder loses nothing (no kind changed, no element dropped) and
// COMMAND INFO and DOCS write what Redis wrote.
func TestGeneratedDocsRoundTrip(t *testing.T) {
	if len(redisCommandDocsRESP) < 300 {
		t.Fatalf("only %d generated descriptions; regenerate commanddocs_gen.go", len(redisCommandDocsRESP))
	}
	deepest := 0
	for name, enc := range redisCommandDocsRESP {
		d, err := decodeCommandDoc(enc)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := encodeCommandDoc(t, d); got != enc {
			t.Errorf("%s: written back as\n%q\nwant\n%q", name, got, enc)
		}
		deepest = max(deepest, depthOf(resp.Array(d.Docs)))
	}
	t.Logf("deepest description nests %d deep", deepest)
	if deepest+2 > docsDepth {
		t.Errorf("descriptions nest %d deep, docsDepth %d leaves too little room", deepest, docsDepth)
	}
	docs := redisCommandDocs()
	if len(docs) != len(redisCommandDocsRESP) {
		t.Errorf("redisCommandDocs has %d entries, the generated data %d", len(docs), len(redisCommandDocsRESP))
	}
	if d := docs["get"]; d == nil || d.Arity != 2 || d.FirstKey != 1 || d.Docs.Kind != resp.KindMap {
		t.Errorf("get: %+v", d)
	}
	if !RedisHas("get") || RedisHas("kvc.probe") || RedisHas("client|setinfo") {
		t.Error("RedisHas disagrees with the generated data")
	}
}

// depthOf is the nesting depth of v, 1 for a scalar.
func depthOf(v resp.Value) int {
	d := 0
	for _, e := range v.Elems {
		d = max(d, depthOf(e))
	}
	return d + 1
}

func TestDecodeCommandDocRejects(t *testing.T) {
	const good = "*9\r\n:2\r\n~1\r\n+stale\r\n:0\r\n:0\r\n:0\r\n~1\r\n+@slow\r\n~0\r\n*0\r\n%1\r\n$7\r\nsummary\r\n_\r\n"
	if d, err := decodeCommandDoc(good); err != nil || d.Arity != 2 || len(d.Flags) != 1 || d.Docs.Elems[1].Kind != resp.KindNull {
		t.Fatalf("decodeCommandDoc(good) = %+v, %v", d, err)
	}
	const head = "*9\r\n:2\r\n~0\r\n:0\r\n:0\r\n:0\r\n~0\r\n~0\r\n~0\r\n" // all but the docs
	for _, c := range []struct{ why, enc, msg string }{
		{"empty", "", "not an array of nine"},
		{"not an array", "~0\r\n", "not an array of nine"},
		{"array of eight", "*8\r\n:2\r\n~0\r\n:0\r\n:0\r\n:0\r\n~0\r\n~0\r\n~0\r\n", "not an array of nine"},
		{"no CRLF", "*9\r\n:2", "no type line"},
		{"cut short", good[:len(good)-1], "no type line"},
		{"trailing bytes", good + "_\r\n", "3 bytes after"},
		{"arity a bulk", "*9\r\n$1\r\n2\r\n~0\r\n:0\r\n:0\r\n:0\r\n~0\r\n~0\r\n~0\r\n%0\r\n", "element 0 is not an integer"},
		{"flags an array", "*9\r\n:2\r\n*0\r\n:0\r\n:0\r\n:0\r\n~0\r\n~0\r\n~0\r\n%0\r\n", "flags are not a set"},
		{"flag a bulk", "*9\r\n:2\r\n~1\r\n$5\r\nstale\r\n:0\r\n:0\r\n:0\r\n~0\r\n~0\r\n~0\r\n%0\r\n", "flag 0 is not a simple string"},
		{"a double", head + ",1.5\r\n", "type ','"},
		{"a boolean", head + "#t\r\n", "type '#'"},
		{"an error", head + "-ERR x\r\n", "type '-'"},
		{"RESP2 null bulk", head + "$-1\r\n", "bulk of -1 bytes"},
		{"integer with a plus", "*9\r\n:+2\r\n~0\r\n:0\r\n:0\r\n:0\r\n~0\r\n~0\r\n~0\r\n%0\r\n", `integer "+2"`},
		{"count with a zero", head + "%01\r\n", `integer "01"`},
		{"bulk longer than the input", head + "$10\r\nabc\r\n", "bulk of 10 bytes"},
		{"bulk without its CRLF", head + "$3\r\nabcd\r\n", "bulk of 3 bytes"},
		{"null with a payload", head + "_x\r\n", "null with a payload"},
		{"simple string with a line feed", head + "+a\nb\r\n", "line break"},
		{"more elements than bytes", head + "*1000000\r\n:1\r\n", "1000000 elements"},
		{"negative count", head + "%-1\r\n", "-1 elements"},
		{"too deep", head + strings.Repeat("*1\r\n", docsDepth) + "*0\r\n", "nested too deep"},
	} {
		d, err := decodeCommandDoc(c.enc)
		if !errors.Is(err, errDocSyntax) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: decodeCommandDoc(%q) = %+v, %v; want an errDocSyntax error saying %q", c.why, c.enc, d, err, c.msg)
		}
	}
}

// FuzzDecodeCommandDoc feeds the decoder arbitrary bytes: it must not
// panic, and whatever value it accepts must be written back by resp.Writer
// as exactly the bytes it consumed.
func FuzzDecodeCommandDoc(f *testing.F) {
	for _, name := range []string{"get", "set", "client|kill", "xadd"} {
		f.Add(redisCommandDocsRESP[name])
	}
	f.Fuzz(func(t *testing.T, enc string) {
		_, _ = decodeCommandDoc(enc)
		v, rest, err := decodeValue(enc, docsDepth)
		if err != nil {
			return
		}
		if got, want := encodeRESP3(t, v), enc[:len(enc)-len(rest)]; got != want {
			t.Errorf("decoded %q, written back as %q", want, got)
		}
	})
}

// BenchmarkDecodeRedisCommandDocs measures what the first COMMAND INFO or
// COMMAND DOCS pays to decode every generated description.
func BenchmarkDecodeRedisCommandDocs(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		for name, enc := range redisCommandDocsRESP {
			if _, err := decodeCommandDoc(enc); err != nil {
				b.Fatalf("%s: %v", name, err)
			}
		}
	}
}
