package scripting

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// cjson is the cjson table (Lua CJSON 2.1 as Redis bundles it): encode,
// decode and the null sentinel, with its error messages and its number
// format (%.14g).
type cjson struct {
	null           *lua.LUserData
	maxEncodeDepth int
	maxDecodeDepth int
}

func openCJSON(L *lua.LState) *lua.LTable {
	c := &cjson{null: L.NewUserData(), maxEncodeDepth: 1000, maxDecodeDepth: 1000}
	t := L.NewTable()
	t.RawSetString("encode", L.NewFunction(c.encode))
	t.RawSetString("decode", L.NewFunction(c.decode))
	t.RawSetString("null", c.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	depth := func(p *int) lua.LGFunction {
		return func(L *lua.LState) int {
			if L.GetTop() >= 1 {
				*p = L.CheckInt(1)
			}
			L.Push(lua.LNumber(*p))
			return 1
		}
	}
	t.RawSetString("encode_max_depth", L.NewFunction(depth(&c.maxEncodeDepth)))
	t.RawSetString("decode_max_depth", L.NewFunction(depth(&c.maxDecodeDepth)))
	return t
}

func (c *cjson) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	var b strings.Builder
	c.encodeValue(L, &b, L.Get(1), 0)
	L.Push(lua.LString(b.String()))
	return 1
}

// formatNumber is cjson's %.14g.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'g', 14, 64) }

func (c *cjson) encodeValue(L *lua.LState, b *strings.Builder, v lua.LValue, depth int) {
	switch v := v.(type) {
	case lua.LString:
		encodeString(b, string(v))
	case lua.LNumber:
		f := float64(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			L.RaiseError("Cannot serialise number: must not be NaN or Inf")
		}
		b.WriteString(formatNumber(f))
	case lua.LBool:
		if v {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case *lua.LNilType:
		b.WriteString("null")
	case *lua.LUserData:
		if v != c.null {
			L.RaiseError("Cannot serialise userdata: type not supported")
		}
		b.WriteString("null")
	case *lua.LTable:
		depth++
		if depth > c.maxEncodeDepth {
			L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n, ok := arrayLength(L, v); ok {
			b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					b.WriteByte(',')
				}
				c.encodeValue(L, b, v.RawGetInt(i), depth)
			}
			b.WriteByte(']')
			return
		}
		b.WriteByte('{')
		first := true
		v.ForEach(func(k, val lua.LValue) {
			if !first {
				b.WriteByte(',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				encodeString(b, string(k))
			case lua.LNumber:
				b.WriteByte('"')
				b.WriteString(formatNumber(float64(k)))
				b.WriteByte('"')
			default:
				L.RaiseError("Cannot serialise table: table key must be a number or string")
			}
			b.WriteByte(':')
			c.encodeValue(L, b, val, depth)
		})
		b.WriteByte('}')
	default:
		L.RaiseError("Cannot serialise %s: type not supported", v.Type().String())
	}
}

// arrayLength is cjson's lua_array_length: the table is an array when
// every key is a positive integer; one too sparse (more than twice as many
// slots as items, past 10) cannot be encoded. An empty table is an object.
func arrayLength(L *lua.LState, t *lua.LTable) (int, bool) {
	items, max, array := integerKeys(t)
	if !array || items == 0 {
		return 0, false
	}
	if max > items*2 && max > 10 {
		L.RaiseError("Cannot serialise table: excessively sparse array")
	}
	return max, true
}

// integerKeys counts t's keys and finds the largest; array is false when
// one is not a positive integer.
func integerKeys(t *lua.LTable) (count, max int, array bool) {
	array = true
	t.ForEach(func(k, _ lua.LValue) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || float64(n) != math.Floor(float64(n)) {
			array = false
			return
		}
		count++
		if int(n) > max {
			max = int(n)
		}
	})
	return count, max, array
}

// encodeString writes s as a JSON string with cjson's escapes (it escapes
// '/' too).
func encodeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if ch < 0x20 || ch == 0x7f {
				b.WriteString(`\u00`)
				b.WriteByte("0123456789abcdef"[ch>>4])
				b.WriteByte("0123456789abcdef"[ch&15])
			} else {
				b.WriteByte(ch)
			}
		}
	}
	b.WriteByte('"')
}

// jsonDecoder is cjson.decode's parser.
type jsonDecoder struct {
	L     *lua.LState
	c     *cjson
	s     string
	i     int
	depth int
}

func (c *cjson) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		L.ArgError(1, "expected 1 argument")
	}
	d := &jsonDecoder{L: L, c: c, s: L.CheckString(1)}
	v := d.value()
	d.space()
	if d.i < len(d.s) {
		d.fail("the end", d.token())
	}
	L.Push(v)
	return 1
}

func (d *jsonDecoder) space() {
	for d.i < len(d.s) && strings.IndexByte(" \t\r\n", d.s[d.i]) >= 0 {
		d.i++
	}
}

// token names what is at the current position for an error message.
func (d *jsonDecoder) token() string {
	if d.i >= len(d.s) {
		return "T_END"
	}
	switch ch := d.s[d.i]; {
	case ch == '{':
		return "T_OBJ_BEGIN"
	case ch == '}':
		return "T_OBJ_END"
	case ch == '[':
		return "T_ARR_BEGIN"
	case ch == ']':
		return "T_ARR_END"
	case ch == ',':
		return "T_COMMA"
	case ch == ':':
		return "T_COLON"
	case ch == '"':
		return "T_STRING"
	case ch == '-' || ch >= '0' && ch <= '9':
		return "T_NUMBER"
	case strings.HasPrefix(d.s[d.i:], "true"), strings.HasPrefix(d.s[d.i:], "false"):
		return "T_BOOLEAN"
	case strings.HasPrefix(d.s[d.i:], "null"):
		return "T_NULL"
	}
	return "invalid token"
}

func (d *jsonDecoder) fail(want, found string) {
	d.L.RaiseError("Expected %s but found %s at character %d", want, found, d.i+1)
}

func (d *jsonDecoder) value() lua.LValue {
	d.space()
	if d.i >= len(d.s) {
		d.fail("value", "T_END")
	}
	switch ch := d.s[d.i]; {
	case ch == '{':
		return d.object()
	case ch == '[':
		return d.array()
	case ch == '"':
		return lua.LString(d.str())
	case ch == '-' || ch >= '0' && ch <= '9':
		return d.number()
	case strings.HasPrefix(d.s[d.i:], "true"):
		d.i += 4
		return lua.LTrue
	case strings.HasPrefix(d.s[d.i:], "false"):
		d.i += 5
		return lua.LFalse
	case strings.HasPrefix(d.s[d.i:], "null"):
		d.i += 4
		return d.c.null
	}
	d.fail("value", d.token())
	return nil
}

func (d *jsonDecoder) nest() {
	d.depth++
	if d.depth > d.c.maxDecodeDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.i+1)
	}
}

func (d *jsonDecoder) object() lua.LValue {
	d.nest()
	d.i++
	t := d.L.NewTable()
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		d.depth--
		return t
	}
	for {
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			d.fail("object key string", d.token())
		}
		k := d.str()
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			d.fail("colon", d.token())
		}
		d.i++
		t.RawSetString(k, d.value())
		d.space()
		if d.i < len(d.s) && d.s[d.i] == ',' {
			d.i++
			continue
		}
		if d.i < len(d.s) && d.s[d.i] == '}' {
			d.i++
			d.depth--
			return t
		}
		d.fail("comma or object end", d.token())
	}
}

func (d *jsonDecoder) array() lua.LValue {
	d.nest()
	d.i++
	t := d.L.NewTable()
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		d.depth--
		return t
	}
	for n := 1; ; n++ {
		t.RawSetInt(n, d.value())
		d.space()
		if d.i < len(d.s) && d.s[d.i] == ',' {
			d.i++
			continue
		}
		if d.i < len(d.s) && d.s[d.i] == ']' {
			d.i++
			d.depth--
			return t
		}
		d.fail("comma or array end", d.token())
	}
}

func (d *jsonDecoder) number() lua.LValue {
	start := d.i
	for d.i < len(d.s) && strings.IndexByte("+-0123456789.eE", d.s[d.i]) >= 0 {
		d.i++
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	if err != nil {
		d.i = start
		d.fail("value", "invalid number")
	}
	return lua.LNumber(f)
}

func (d *jsonDecoder) str() string {
	d.i++
	var b strings.Builder
	for {
		if d.i >= len(d.s) {
			d.L.RaiseError("Expected value but found unexpected end of string at character %d", d.i+1)
		}
		ch := d.s[d.i]
		if ch == '"' {
			d.i++
			return b.String()
		}
		if ch != '\\' {
			b.WriteByte(ch)
			d.i++
			continue
		}
		if d.i+1 >= len(d.s) {
			d.fail("value", "invalid escape code")
		}
		esc := d.s[d.i+1]
		d.i += 2
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if ok && r >= 0xD800 && r < 0xDC00 && strings.HasPrefix(d.s[d.i:], `\u`) {
				d.i += 2
				lo, ok2 := d.hex4()
				if ok2 && lo >= 0xDC00 && lo < 0xE000 {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
				} else {
					ok = false
				}
			}
			if !ok {
				d.fail("value", "invalid unicode escape code")
			}
			b.WriteString(string(utf8.AppendRune(nil, rune(r))))
		default:
			d.fail("value", "invalid escape code")
		}
	}
}

func (d *jsonDecoder) hex4() (int, bool) {
	if d.i+4 > len(d.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(d.s[d.i:d.i+4], 16, 32)
	d.i += 4
	return int(n), err == nil
}
