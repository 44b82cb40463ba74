package resp

import (
	"bytes"
	"sync/atomic"
	"testing"
)

func TestUninitializedHasExactlyTheLengthAsked(t *testing.T) {
	for _, n := range []int{0, 1, 7, 16 << 10, 1<<20 + 3, 4 << 20} {
		b := uninitialized(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("uninitialized(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b {
			b[i] = byte(i)
		}
		if n > 0 && b[n-1] != byte(n-1) {
			t.Fatalf("uninitialized(%d): last byte not writable", n)
		}
	}
}

// TestBigBulksOverwriteReusedMemory reads many big bulks of different
// contents through the same Reader, so that the memory of dropped ones is
// reused: each must read back exactly as sent, never with bytes of an
// earlier one.
func TestBigBulksOverwriteReusedMemory(t *testing.T) {
	var in bytes.Buffer
	const n = 300
	for i := range n {
		v := bytes.Repeat([]byte{byte('a' + i%26)}, BigBulkThreshold+i*997)
		in.WriteString("*2\r\n$3\r\nSET\r\n")
		in.WriteString("$" + itoa(len(v)) + "\r\n")
		in.Write(v)
		in.WriteString("\r\n")
	}
	var maxBulk atomic.Int64
	maxBulk.Store(1 << 30)
	r := NewReader(&in, &maxBulk)
	var cmd Command
	for i := range n {
		if err := r.ReadCommand(&cmd); err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		v := cmd.Args[1]
		want := BigBulkThreshold + i*997
		if len(v) != want || bytes.Count(v, []byte{byte('a' + i%26)}) != want {
			t.Fatalf("command %d: %d bytes, not %d of %q", i, len(v), want, rune('a'+i%26))
		}
		r.DropArgs(&cmd)
	}
}
