package tests

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestDifferentialBits pins the bitmap commands (SETBIT, GETBIT, BITCOUNT,
// BITPOS, BITOP, BITFIELD, BITFIELD_RO) and LCS to Redis 7's replies,
// including their errors, edge offsets and empty keys.
func TestDifferentialBits(t *testing.T) {
	t.Parallel()
	runDifferential(t, bitScripts())
}

// Offsets at the edges of the default proto-max-bulk-len (512mb): the last
// addressable bit, the first refused one, and ones past int64.
const (
	lastBitOffset  = "4294967295"
	firstBadOffset = "4294967296"
	hugeOffset     = "9223372036854775807"
	overInt64      = "9223372036854775808"
)

// bitScripts are the scripts of TestDifferentialBits.
func bitScripts() []script {
	return append(fixedBitScripts(), script{"random bit operations", randomBitSteps(1, 600)})
}

// fixedBitScripts are the hand-written scripts of TestDifferentialBits.
func fixedBitScripts() []script {
	return []script{
		{"setbit and getbit", []step{
			do("SETBIT", "k", "7", "1"),
			do("GET", "k"),
			do("GETBIT", "k", "7"),
			do("GETBIT", "k", "6"),
			do("SETBIT", "k", "7", "1"),
			do("SETBIT", "k", "7", "0"),
			do("SETBIT", "k", "0", "0"),
			do("GET", "k"),
			do("STRLEN", "k"),
			do("SETBIT", "k", "100", "1"),
			do("STRLEN", "k"),
			do("GET", "k"),
			do("GETBIT", "k", "100"),
			do("GETBIT", "k", "101"),
			do("GETBIT", "k", "1000000"),
			do("GETBIT", "k", lastBitOffset),
			do("GETBIT", "missing", "0"),
			do("GETBIT", "missing", lastBitOffset),
			do("SETBIT", "z", "0", "0"),
			do("GET", "z"),
			do("EXISTS", "z"),
			do("SET", "s", "foobar"),
			do("GETBIT", "s", "1"),
			do("GETBIT", "s", "2"),
			do("SETBIT", "s", "6", "1"),
			do("GET", "s"),
			do("SET", "n", "12"),
			do("SETBIT", "n", "15", "1"),
			do("GET", "n"),
			do("SETBIT", "t", "3", "1"),
			do("EXPIRE", "t", "100"),
			do("SETBIT", "t", "4", "1"),
			approxInt(1, "TTL", "t"),
		}},
		{"setbit and getbit errors", []step{
			do("SETBIT", "k", "-1", "1"),
			do("SETBIT", "k", firstBadOffset, "1"),
			do("SETBIT", "k", hugeOffset, "1"),
			do("SETBIT", "k", overInt64, "1"),
			do("SETBIT", "k", "abc", "1"),
			do("SETBIT", "k", "", "1"),
			do("SETBIT", "k", "0", "2"),
			do("SETBIT", "k", "0", "-1"),
			do("SETBIT", "k", "0", "x"),
			do("SETBIT", "k", "0", ""),
			do("SETBIT", "k", "#1", "1"),
			do("SETBIT", "k", "01", "1"),
			do("SETBIT", "k", "-1", "x"),
			do("GETBIT", "k", "-1"),
			do("GETBIT", "k", firstBadOffset),
			do("GETBIT", "k", overInt64),
			do("GETBIT", "k", "1.5"),
			do("EXISTS", "k"),
		}},
		{"bitcount", []step{
			do("BITCOUNT", "missing"),
			do("BITCOUNT", "missing", "a", "b"),
			do("BITCOUNT", "missing", "0"),
			do("SET", "k", "foobar"),
			do("BITCOUNT", "k"),
			do("BITCOUNT", "k", "0", "0"),
			do("BITCOUNT", "k", "1", "1"),
			do("BITCOUNT", "k", "0", "-1"),
			do("BITCOUNT", "k", "-2", "-1"),
			do("BITCOUNT", "k", "-1", "-2"),
			do("BITCOUNT", "k", "-100", "100"),
			do("BITCOUNT", "k", "5", "2"),
			do("BITCOUNT", "k", "100", "200"),
			do("BITCOUNT", "k", "1", "1", "BYTE"),
			do("BITCOUNT", "k", "5", "30", "BIT"),
			do("BITCOUNT", "k", "5", "30", "bit"),
			do("BITCOUNT", "k", "0", "0", "BIT"),
			do("BITCOUNT", "k", "1", "1", "BIT"),
			do("BITCOUNT", "k", "3", "3", "BIT"),
			do("BITCOUNT", "k", "-5", "-1", "BIT"),
			do("BITCOUNT", "k", "-1", "-5", "BIT"),
			do("BITCOUNT", "k", "0", "47", "BIT"),
			do("BITCOUNT", "k", "0", "1000", "BIT"),
			do("BITCOUNT", "k", "9", "14", "BIT"),
			do("BITCOUNT", "k", "1"),
			do("BITCOUNT", "k", "1", "2", "3", "4"),
			do("BITCOUNT", "k", "a", "1"),
			do("BITCOUNT", "k", "1", "a"),
			do("BITCOUNT", "k", "1", "2", "BITS"),
			do("BITCOUNT", "k", "a", "1", "BITS"),
			do("BITCOUNT", "k", "0", "-1", "BYTE"),
			do("BITCOUNT", "k", "-9223372036854775808", "9223372036854775807"),
			do("BITCOUNT", "k", "-9223372036854775808", "9223372036854775807", "BIT"),
			do("SET", "e", ""),
			do("BITCOUNT", "e"),
			do("BITCOUNT", "e", "0", "-1"),
			do("BITCOUNT", "e", "0", "-1", "BIT"),
			do("SET", "n", "-12345"),
			do("BITCOUNT", "n"),
			do("SET", "big", strings.Repeat("\xff\x0f", 5000)),
			do("BITCOUNT", "big"),
			do("BITCOUNT", "big", "3", "9001", "BIT"),
		}},
		{"bitpos", []step{
			do("BITPOS", "missing", "0"),
			do("BITPOS", "missing", "1"),
			do("BITPOS", "missing", "1", "a"),
			do("BITPOS", "missing", "2"),
			do("BITPOS", "missing", "x"),
			do("SET", "k", "\xff\xf0\x00"),
			do("BITPOS", "k", "0"),
			do("BITPOS", "k", "1"),
			do("BITPOS", "k", "0", "0"),
			do("BITPOS", "k", "0", "2"),
			do("BITPOS", "k", "1", "2"),
			do("BITPOS", "k", "1", "2", "-1"),
			do("BITPOS", "k", "0", "0", "0"),
			do("BITPOS", "k", "0", "1", "1"),
			do("BITPOS", "k", "0", "-1"),
			do("BITPOS", "k", "1", "-1"),
			do("BITPOS", "k", "1", "5", "1"),
			do("BITPOS", "k", "1", "-1", "-5"),
			do("BITPOS", "k", "0", "7", "15", "BIT"),
			do("BITPOS", "k", "0", "3", "5", "BIT"),
			do("BITPOS", "k", "1", "3", "5", "BIT"),
			do("BITPOS", "k", "1", "12", "-1", "BIT"),
			do("BITPOS", "k", "0", "12", "-1", "BIT"),
			do("BITPOS", "k", "1", "9", "13", "BIT"),
			do("BITPOS", "k", "0", "9", "13", "BIT"),
			do("BITPOS", "k", "0", "1", "1", "BYTE"),
			do("BITPOS", "k", "1", "0", "-1", "bit"),
			do("BITPOS", "k", "1", "0", "-1", "BITS"),
			do("BITPOS", "k", "1", "a", "-1", "BIT"),
			do("BITPOS", "k", "1", "0", "a", "BIT"),
			do("BITPOS", "k", "1", "0", "-1", "BIT", "x"),
			do("BITPOS", "k", "1", "a"),
			do("BITPOS", "k", "2"),
			do("BITPOS", "k", "-1"),
			do("SET", "ones", "\xff\xff"),
			do("BITPOS", "ones", "0"),
			do("BITPOS", "ones", "0", "0"),
			do("BITPOS", "ones", "0", "0", "-1"),
			do("BITPOS", "ones", "0", "0", "-1", "BIT"),
			do("BITPOS", "ones", "0", "3", "BIT"),
			do("BITPOS", "ones", "1", "3", "BIT"),
			do("SET", "zeros", "\x00\x00\x00"),
			do("BITPOS", "zeros", "1"),
			do("BITPOS", "zeros", "0"),
			do("BITPOS", "zeros", "1", "0", "-1", "BIT"),
			do("SET", "e", ""),
			do("BITPOS", "e", "0"),
			do("BITPOS", "e", "1"),
			do("BITPOS", "e", "0", "0", "-1"),
			do("BITPOS", "e", "0", "0", "-1", "BIT"),
		}},
		{"bitop", []step{
			do("SET", "a", "foobar"),
			do("SET", "b", "abcdef"),
			do("SET", "c", "x"),
			do("BITOP", "AND", "dest", "a", "b"),
			do("GET", "dest"),
			do("BITOP", "OR", "dest", "a", "b", "c"),
			do("GET", "dest"),
			do("BITOP", "xor", "dest", "a", "c"),
			do("GET", "dest"),
			do("BITOP", "and", "dest", "a", "c"),
			do("GET", "dest"),
			do("BITOP", "AND", "dest", "a", "missing"),
			do("GET", "dest"),
			do("BITOP", "NOT", "dest", "a"),
			do("GET", "dest"),
			do("BITOP", "NOT", "dest", "a", "b"),
			do("BITOP", "NAND", "dest", "a"),
			do("BITOP", "", "dest", "a"),
			do("BITOP", "OR", "dest", "missing1", "missing2"),
			do("EXISTS", "dest"),
			do("BITOP", "NOT", "dest", "missing"),
			do("SET", "dest", "v", "EX", "100"),
			do("BITOP", "OR", "dest", "a"),
			do("TTL", "dest"),
			do("BITOP", "OR", "a", "a", "b"),
			do("GET", "a"),
			do("SET", "e", ""),
			do("BITOP", "OR", "dest", "e"),
			do("EXISTS", "dest"),
			do("SET", "l1", strings.Repeat("\xaa", 100)),
			do("SET", "l2", strings.Repeat("\x0f", 77)),
			do("BITOP", "AND", "dest", "l1", "l2"),
			do("GET", "dest"),
			do("BITOP", "XOR", "dest", "l1", "l2", "l1"),
			do("GET", "dest"),
			do("BITOP", "NOT", "dest", "l2"),
			do("GET", "dest"),
		}},
		{"bitfield", []step{
			do("BITFIELD", "k"),
			do("EXISTS", "k"),
			do("BITFIELD", "k", "GET", "u8", "0"),
			do("EXISTS", "k"),
			do("BITFIELD", "k", "SET", "u8", "0", "255"),
			do("GET", "k"),
			do("BITFIELD", "k", "GET", "u8", "0", "GET", "i8", "0", "GET", "u4", "4", "GET", "i4", "#1"),
			do("BITFIELD", "k", "SET", "i5", "#3", "-7", "GET", "i5", "#3", "GET", "u63", "0", "GET", "i64", "0"),
			do("GET", "k"),
			do("BITFIELD", "k", "INCRBY", "u2", "100", "1", "OVERFLOW", "SAT", "INCRBY", "u2", "102", "1"),
			do("BITFIELD", "k", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "1"),
			do("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "-10"),
			do("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "1", "INCRBY", "u2", "100", "4", "INCRBY", "u2", "100", "-1"),
			do("BITFIELD", "k", "OVERFLOW", "WRAP", "INCRBY", "i8", "200", "127", "INCRBY", "i8", "200", "1", "INCRBY", "i8", "200", "-300"),
			do("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i8", "200", "127", "INCRBY", "i8", "200", "1", "INCRBY", "i8", "200", "-300"),
			do("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i8", "200", "200", "SET", "i8", "200", "-129", "SET", "u8", "200", "256", "SET", "u8", "200", "-1"),
			do("BITFIELD", "k", "overflow", "sat", "SET", "i8", "200", "-129", "SET", "u8", "200", "256", "SET", "u8", "200", "-1", "get", "u8", "200"),
			do("BITFIELD", "k", "SET", "i8", "200", "-129", "SET", "u8", "200", "256", "SET", "u8", "200", "-1", "GET", "i8", "200"),
			do("BITFIELD", "k", "SET", "i64", "0", "-9223372036854775808", "INCRBY", "i64", "0", "-1", "GET", "i64", "0"),
			do("BITFIELD", "k", "OVERFLOW", "SAT", "INCRBY", "i64", "0", "-1", "INCRBY", "i64", "0", "9223372036854775807", "INCRBY", "i64", "0", "9223372036854775807"),
			do("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i64", "0", "1"),
			do("BITFIELD", "k", "SET", "u63", "1", "9223372036854775807", "INCRBY", "u63", "1", "1", "OVERFLOW", "SAT", "INCRBY", "u63", "1", "-5"),
			do("BITFIELD", "k", "SET", "u1", "7", "1", "INCRBY", "i1", "7", "1", "INCRBY", "i1", "7", "-1"),
			do("BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "i1", "7", "-1", "INCRBY", "i1", "7", "1"),
			do("GET", "k"),
			do("BITFIELD", "n", "OVERFLOW", "FAIL", "SET", "u8", "#2", "999"),
			do("GET", "n"),
			do("BITFIELD", "far", "SET", "u8", "#999", "1", "GET", "u16", "#499"),
			do("STRLEN", "far"),
			do("BITFIELD", "k", "GET", "u8", "1000000", "GET", "i64", lastBitOffset),
			do("SET", "t", "abc", "EX", "100"),
			do("BITFIELD", "t", "SET", "u8", "0", "65"),
			approxInt(1, "TTL", "t"),
			do("GET", "t"),
		}},
		{"bitfield errors", []step{
			do("BITFIELD", "k", "GET"),
			do("BITFIELD", "k", "GET", "u8"),
			do("BITFIELD", "k", "SET", "u8", "0"),
			do("BITFIELD", "k", "INCRBY", "u8", "0"),
			do("BITFIELD", "k", "OVERFLOW"),
			do("BITFIELD", "k", "OVERFLOW", "NONE", "GET", "u8", "0"),
			do("BITFIELD", "k", "FOO", "u8", "0"),
			do("BITFIELD", "k", "GET", "u64", "0"),
			do("BITFIELD", "k", "GET", "i65", "0"),
			do("BITFIELD", "k", "GET", "u0", "0"),
			do("BITFIELD", "k", "GET", "i0", "0"),
			do("BITFIELD", "k", "GET", "x8", "0"),
			do("BITFIELD", "k", "GET", "U8", "0"),
			do("BITFIELD", "k", "GET", "u", "0"),
			do("BITFIELD", "k", "GET", "", "0"),
			do("BITFIELD", "k", "GET", "u08", "0"),
			do("BITFIELD", "k", "GET", "u-1", "0"),
			do("BITFIELD", "k", "GET", "u8", "-1"),
			do("BITFIELD", "k", "GET", "u8", "#-1"),
			do("BITFIELD", "k", "GET", "u8", "#"),
			do("BITFIELD", "k", "GET", "u8", "##1"),
			do("BITFIELD", "k", "GET", "u8", "x"),
			do("BITFIELD", "k", "GET", "u8", firstBadOffset),
			do("BITFIELD", "k", "GET", "u8", "#536870912"),
			do("BITFIELD", "k", "GET", "u8", "#536870911"),
			do("BITFIELD", "k", "GET", "i64", "#1152921504606846976"),
			do("BITFIELD", "k", "GET", "u8", hugeOffset),
			do("BITFIELD", "k", "SET", "u8", "0", "x"),
			do("BITFIELD", "k", "SET", "u8", "0", "1.5"),
			do("BITFIELD", "k", "INCRBY", "u8", "0", overInt64),
			do("BITFIELD", "k", "SET", "u8", "0", "1", "GET", "u8"),
			do("BITFIELD", "k", "SET", "u8", "0", "1", "BAD"),
			do("EXISTS", "k"),
			do("BITFIELD", "k", "SET", "u8", "-1", "x"),
			do("BITFIELD", "k", "SET", "x8", "x", "x"),
		}},
		{"bitfield_ro", []step{
			do("BITFIELD_RO", "k"),
			do("BITFIELD_RO", "k", "GET", "u8", "0"),
			do("SET", "k", "\x80\x01"),
			do("BITFIELD_RO", "k", "GET", "u8", "0", "GET", "i8", "0", "GET", "u16", "0", "GET", "i3", "#5"),
			do("BITFIELD_RO", "k", "GET", "u8", "0", "SET", "u8", "0", "1"),
			do("BITFIELD_RO", "k", "INCRBY", "u8", "0", "1"),
			do("BITFIELD_RO", "k", "OVERFLOW", "SAT"),
			do("BITFIELD_RO", "k", "OVERFLOW", "BAD"),
			do("BITFIELD_RO", "k", "GET", "u64", "0"),
			do("BITFIELD_RO", "k", "SET", "u8", "0", "x"),
			do("BITFIELD_RO", "k", "GET"),
			do("GET", "k"),
		}},
		{"lcs", []step{
			do("MSET", "a", "ohmytext", "b", "mynewtext"),
			do("LCS", "a", "b"),
			do("LCS", "a", "b", "LEN"),
			do("LCS", "a", "b", "IDX"),
			do("LCS", "a", "b", "idx", "MINMATCHLEN", "4"),
			do("LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"),
			do("LCS", "a", "b", "IDX", "WITHMATCHLEN"),
			do("LCS", "a", "b", "IDX", "MINMATCHLEN", "-5"),
			do("LCS", "a", "b", "LEN", "MINMATCHLEN", "2"),
			do("LCS", "a", "b", "WITHMATCHLEN"),
			do("LCS", "a", "b", "LEN", "IDX"),
			do("LCS", "a", "b", "IDX", "LEN"),
			do("LCS", "a", "b", "MINMATCHLEN"),
			do("LCS", "a", "b", "MINMATCHLEN", "x"),
			do("LCS", "a", "b", "IDX", "MINMATCHLEN", "x"),
			do("LCS", "a", "b", "BAD"),
			do("LCS", "a", "b", "LEN", "LEN"),
			do("LCS", "a", "missing"),
			do("LCS", "missing", "missing2", "LEN"),
			do("LCS", "missing", "missing2", "IDX"),
			do("LCS", "a", "a", "IDX", "WITHMATCHLEN"),
			do("MSET", "x", "ACCGGTCGAGTGCGCGGAAGCCGGCCGAA", "y", "GTCGTTCGGAATGCCGTTGCTCTGTAAA"),
			do("LCS", "x", "y"),
			do("LCS", "x", "y", "IDX", "WITHMATCHLEN"),
			do("LCS", "x", "y", "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"),
			do("MSET", "p", "abc", "q", "xyz"),
			do("LCS", "p", "q"),
			do("LCS", "p", "q", "IDX"),
			do("SET", "e", ""),
			do("LCS", "e", "a", "IDX"),
		}},
		{"bits near proto-max-bulk-len", []step{
			do("CONFIG", "SET", "proto-max-bulk-len", "1mb"),
			do("SETBIT", "k", "8388607", "1"),
			do("STRLEN", "k"),
			do("SETBIT", "k", "8388608", "1"),
			do("GETBIT", "k", "8388608"),
			do("BITFIELD", "k", "GET", "u8", "#1048575", "GET", "u8", "#1048576"),
			do("BITFIELD", "k", "SET", "u8", "#1048576", "1"),
			do("BITCOUNT", "k"),
			do("BITPOS", "k", "1"),
			do("SET", "a", strings.Repeat("a", 600)),
			do("SET", "b", strings.Repeat("b", 600)),
			do("LCS", "a", "b"),
			do("LCS", "a", "b", "LEN"),
			do("SET", "b", strings.Repeat("ab", 200)),
			do("LCS", "a", "b", "LEN"),
			do("CONFIG", "SET", "proto-max-bulk-len", "512mb"),
		}},
		{"bits arity errors", arity(
			line("SETBIT", "k", "0"),
			line("SETBIT", "k", "0", "1", "1"),
			line("GETBIT", "k"),
			line("GETBIT", "k", "0", "0"),
			line("BITCOUNT"),
			line("BITPOS", "k"),
			line("BITOP", "AND", "dest"),
			line("BITOP"),
			line("BITFIELD"),
			line("BITFIELD_RO"),
			line("LCS", "a"),
			line("lcs"),
		)},
	}
}

// randomBitSteps returns n bitmap commands drawn from a fixed seed over a
// few keys: values with runs of 0x00 and 0xff, ranges in bytes and bits
// with negative ends, and BITFIELD ops of every width, near the limits of
// int64, under each overflow mode: the corners the fixed scripts do not
// name.
func randomBitSteps(seed int64, n int) []step {
	r := rand.New(rand.NewSource(seed))
	keys := []string{"k1", "k2", "k3"}
	key := func() string { return keys[r.Intn(len(keys))] }
	pick := func(s ...string) string { return s[r.Intn(len(s))] }
	index := func() string { return strconv.Itoa(r.Intn(161) - 80) }
	value := func() string {
		b := make([]byte, r.Intn(24))
		for i := range b {
			b[i] = []byte{0, 0xff, byte(r.Intn(256))}[r.Intn(3)]
		}
		return string(b)
	}
	number := func() string {
		switch r.Intn(4) {
		case 0:
			return "9223372036854775807"
		case 1:
			return "-9223372036854775808"
		case 2:
			return strconv.FormatInt(int64(r.Uint64()), 10)
		}
		return strconv.Itoa(r.Intn(601) - 300)
	}
	steps := make([]step, 0, n)
	for len(steps) < n {
		var cmd []string
		switch r.Intn(10) {
		case 0:
			cmd = []string{"SET", key(), value()}
		case 1:
			cmd = []string{"SETBIT", key(), strconv.Itoa(r.Intn(160)), strconv.Itoa(r.Intn(2))}
		case 2:
			cmd = []string{"BITCOUNT", key()}
			if r.Intn(3) > 0 {
				cmd = append(cmd, index(), index())
				if r.Intn(2) == 0 {
					cmd = append(cmd, pick("BIT", "BYTE"))
				}
			}
		case 3, 4:
			cmd = []string{"BITPOS", key(), strconv.Itoa(r.Intn(2))}
			for i := r.Intn(3); i > 0; i-- {
				cmd = append(cmd, index())
			}
			if len(cmd) == 5 && r.Intn(2) == 0 {
				cmd = append(cmd, pick("BIT", "BYTE"))
			}
		case 5:
			cmd = []string{"BITOP", pick("AND", "OR", "XOR", "NOT"), key(), key()}
			if cmd[1] != "NOT" {
				cmd = append(cmd, key(), "k4")[:4+r.Intn(3)]
			}
		case 6, 7:
			cmd = []string{pick("BITFIELD", "BITFIELD", "BITFIELD_RO"), key()}
			for i := 1 + r.Intn(4); i > 0; i-- {
				typ := pick("i", "u") + strconv.Itoa(1+r.Intn(64))
				off := pick(strconv.Itoa(r.Intn(100)), "#"+strconv.Itoa(r.Intn(10)))
				switch r.Intn(4) {
				case 0:
					cmd = append(cmd, "GET", typ, off)
				case 1:
					cmd = append(cmd, "SET", typ, off, number())
				case 2:
					cmd = append(cmd, "INCRBY", typ, off, number())
				default:
					cmd = append(cmd, "OVERFLOW", pick("WRAP", "SAT", "FAIL"))
				}
			}
		case 8:
			cmd = []string{"GET", key()}
		default:
			cmd = []string{"LCS", key(), key()}
			for i := r.Intn(3); i > 0; i-- {
				cmd = append(cmd, pick("IDX", "LEN", "WITHMATCHLEN", "MINMATCHLEN"))
				if cmd[len(cmd)-1] == "MINMATCHLEN" {
					cmd = append(cmd, index())
				}
			}
		}
		steps = append(steps, do(cmd...))
	}
	return steps
}

// TestBitCommandsReadDemotedValues pushes bitmaps to the disk tier and
// checks that each bitmap command and LCS sees their stored bytes: their
// key specs load values only on disk before the handlers run.
func TestBitCommandsReadDemotedValues(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvserver's disk tier has no Redis counterpart")
	}
	t.Parallel()
	s := startKVServer(t, "--maxmemory", "4mb")
	c := dialRaw(t, s.Addr)
	a := randomBytes(7, 256<<10)
	b := randomBytes(8, 256<<10)
	ones := 0
	for _, x := range a {
		for ; x != 0; x &= x - 1 {
			ones++
		}
	}
	bit7 := ":" + strconv.Itoa(int(b[0]&1)) + "\r\n"
	expectReply(t, c, "+OK\r\n", "SET", "bm:count", string(a))
	expectReply(t, c, "+OK\r\n", "SET", "bm:get", string(b))
	expectReply(t, c, "+OK\r\n", "SET", "bm:set", string(a))
	expectReply(t, c, "+OK\r\n", "SET", "bm:field", string(b))
	expectReply(t, c, "+OK\r\n", "SET", "bm:op", string(a))
	expectReply(t, c, "+OK\r\n", "MSET", "lcs:a", "ohmytext"+string(a[:32]), "lcs:b", "mynewtext"+string(a[:32]))
	filler := string(randomBytes(9, 256<<10))
	for i := range 40 { // push them to disk
		expectReply(t, c, "+OK\r\n", "SET", "filler:"+strconv.Itoa(i), filler)
	}
	before := promotions(t, c)
	checkReply(t, c, ":"+strconv.Itoa(ones)+"\r\n", "BITCOUNT", "bm:count")
	checkReply(t, c, bit7, "GETBIT", "bm:get", "7")
	checkReply(t, c, ":0\r\n", "SETBIT", "bm:set", strconv.Itoa(len(a)*8), "1")
	checkReply(t, c, ":"+strconv.Itoa(len(a)+1)+"\r\n", "STRLEN", "bm:set")
	checkReply(t, c, "*1\r\n:"+strconv.Itoa(int(b[0]))+"\r\n", "BITFIELD", "bm:field", "GET", "u8", "0")
	checkReply(t, c, ":"+strconv.Itoa(len(a))+"\r\n", "BITOP", "XOR", "bm:xor", "bm:op", "bm:op")
	checkReply(t, c, ":0\r\n", "BITCOUNT", "bm:xor")
	checkReply(t, c, ":"+strconv.Itoa(6+32)+"\r\n", "LCS", "lcs:a", "lcs:b", "LEN")
	if after := promotions(t, c); after < before+6 {
		t.Errorf("tier_memory_promotions went from %d to %d, want the six bitmaps loaded from disk", before, after)
	}
}

// promotions is INFO's count of values loaded from the disk tier.
func promotions(t *testing.T, c *rawClient) int {
	t.Helper()
	f, err := infoFields(c, "tiers")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(f["tier_memory_promotions"])
	if err != nil {
		t.Fatalf("INFO tier_memory_promotions: %v", err)
	}
	return n
}
