package scripting

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
)

// FUNCTION DUMP's payload is Redis 7.0's: for each library the RDB opcode
// FUNCTION2 (245) and its code as an RDB string, then the RDB version (10)
// as two little-endian bytes and the CRC64 (Jones polynomial, reflected,
// no final xor) of everything before, as eight little-endian bytes. kvserver
// writes the strings uncompressed and reads Redis's LZF-compressed ones, so
// payloads move between redis-server and kvserver both ways.

const (
	rdbOpcodeFunction2 = 245
	rdbOpcodeFunction  = 246 // the pre-GA format, refused as Redis does
	rdbVersion         = 10
)

// crcTable is Redis's crc64 (Jones) polynomial, reflected.
var crcTable = crc64.MakeTable(0x95AC9329AC4BC9B5)

// redisCRC64 is Redis's crc64(0, b): Go's crc64 with the initial and final
// inversions undone.
func redisCRC64(b []byte) uint64 { return ^crc64.Update(^uint64(0), crcTable, b) }

// RestorePolicy is FUNCTION RESTORE's handling of libraries that exist.
type RestorePolicy int

// The restore policies.
const (
	// RestoreAppend fails on a library or function that exists.
	RestoreAppend RestorePolicy = iota
	// RestoreReplace replaces libraries of the same name.
	RestoreReplace
	// RestoreFlush drops every library first.
	RestoreFlush
)

// FunctionDump serializes every library (FUNCTION DUMP).
func (e *Engine) FunctionDump() []byte {
	var out []byte
	for _, lib := range e.Libraries(nil) {
		out = append(out, rdbOpcodeFunction2)
		out = appendRDBLen(out, uint64(len(lib.Code)))
		out = append(out, lib.Code...)
	}
	out = binary.LittleEndian.AppendUint16(out, rdbVersion)
	return binary.LittleEndian.AppendUint64(out, redisCRC64(out))
}

// appendRDBLen is rdbSaveLen.
func appendRDBLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|0x40, byte(n))
	case n <= 0xffffffff:
		b = append(b, 0x80)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
	b = append(b, 0x81)
	return binary.BigEndian.AppendUint64(b, n)
}

var errShort = errors.New("short payload")

// rdbReader reads RDB strings from a payload.
type rdbReader struct {
	b []byte
	i int
}

func (r *rdbReader) byte() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errShort
	}
	r.i++
	return r.b[r.i-1], nil
}

func (r *rdbReader) take(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.i) {
		return nil, errShort
	}
	out := r.b[r.i : r.i+int(n)]
	r.i += int(n)
	return out, nil
}

// length is rdbLoadLen; encoded is true for the special encodings, whose
// kind the length then is.
func (r *rdbReader) length() (n uint64, encoded bool, err error) {
	c, err := r.byte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case 0:
		return uint64(c & 0x3f), false, nil
	case 1:
		lo, err := r.byte()
		return uint64(c&0x3f)<<8 | uint64(lo), false, err
	case 3:
		return uint64(c & 0x3f), true, nil
	}
	switch c {
	case 0x80:
		b, err := r.take(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case 0x81:
		b, err := r.take(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, errors.New("bad length encoding")
}

// str is rdbGenericLoadStringObject: a plain, integer or LZF string.
func (r *rdbReader) str() ([]byte, error) {
	n, encoded, err := r.length()
	if err != nil {
		return nil, err
	}
	if !encoded {
		return r.take(n)
	}
	switch n {
	case 0, 1, 2: // int8, int16, int32
		b, err := r.take(1 << n)
		if err != nil {
			return nil, err
		}
		var v int64
		switch n {
		case 0:
			v = int64(int8(b[0]))
		case 1:
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		case 2:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		}
		return []byte(itoa(v)), nil
	case 3:
		clen, _, err := r.length()
		if err != nil {
			return nil, err
		}
		ulen, _, err := r.length()
		if err != nil {
			return nil, err
		}
		c, err := r.take(clen)
		if err != nil {
			return nil, err
		}
		return lzfDecompress(c, ulen)
	}
	return nil, errors.New("unknown string encoding")
}

func itoa(v int64) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = uint64(-v)
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// lzfDecompress is liblzf's lzf_decompress into exactly ulen bytes.
func lzfDecompress(in []byte, ulen uint64) ([]byte, error) {
	bad := errors.New("invalid LZF data")
	if ulen > 1<<32 {
		return nil, bad
	}
	out := make([]byte, 0, ulen)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 {
			n := ctrl + 1
			if i+n > len(in) || uint64(len(out)+n) > ulen {
				return nil, bad
			}
			out = append(out, in[i:i+n]...)
			i += n
			continue
		}
		n := ctrl >> 5
		if n == 7 {
			if i >= len(in) {
				return nil, bad
			}
			n += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, bad
		}
		ref := len(out) - (ctrl&0x1f)<<8 - int(in[i]) - 1
		i++
		if ref < 0 || uint64(len(out)+n+2) > ulen {
			return nil, bad
		}
		for k := 0; k < n+2; k++ {
			out = append(out, out[ref+k])
		}
	}
	if uint64(len(out)) != ulen {
		return nil, bad
	}
	return out, nil
}

// FunctionRestore loads the libraries of a FUNCTION DUMP payload (FUNCTION
// RESTORE); it returns the error reply, "" when they were restored.
func (e *Engine) FunctionRestore(payload []byte, policy RestorePolicy) string {
	if len(payload) < 10 {
		return "ERR DUMP payload version or checksum are wrong"
	}
	body := payload[:len(payload)-10]
	footer := payload[len(payload)-10:]
	if binary.LittleEndian.Uint16(footer) > rdbVersion ||
		binary.LittleEndian.Uint64(footer[2:]) != redisCRC64(payload[:len(payload)-8]) {
		return "ERR DUMP payload version or checksum are wrong"
	}
	var codes [][]byte
	r := &rdbReader{b: body}
	for r.i < len(body) {
		op, _ := r.byte()
		if op == rdbOpcodeFunction {
			return "ERR Pre-GA function format not supported"
		}
		if op != rdbOpcodeFunction2 {
			return "ERR given type is not a function"
		}
		code, err := r.str()
		if err != nil {
			return "ERR failed loading the given functions payload"
		}
		codes = append(codes, code)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	defer e.recount()
	// Load into a fresh state first: a payload that fails leaves the
	// libraries as they were.
	fresh := newFunctionState(e)
	for _, code := range codes {
		if _, msg := fresh.load(string(code), false); msg != "" {
			fresh.st.L.Close()
			return msg
		}
	}
	if policy == RestoreFlush {
		e.lib.st.L.Close()
		e.lib = fresh
		return ""
	}
	// Join: the current libraries' code is loaded into the fresh state
	// too, so that every function lives in one Lua state.
	for _, lib := range e.lib.libs {
		if fresh.libs[lib.Name] != nil {
			if policy != RestoreReplace {
				fresh.st.L.Close()
				return "ERR Library " + lib.Name + " already exists"
			}
			continue
		}
		if _, msg := fresh.load(lib.Code, false); msg != "" {
			fresh.st.L.Close()
			return msg
		}
	}
	e.lib.st.L.Close()
	e.lib = fresh
	return ""
}
