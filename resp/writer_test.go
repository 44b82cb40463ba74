package resp

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// failingWriter records what it is given and fails once failAfter bytes
// have been written.
type failingWriter struct {
	buf       bytes.Buffer
	failAfter int
}

var errWriteFailed = errors.New("write failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.failAfter {
		n := w.failAfter - w.buf.Len()
		w.buf.Write(p[:n])
		return n, errWriteFailed
	}
	return w.buf.Write(p)
}

// fillReplies queues small and zero-copy replies on w.
func fillReplies(w *Writer) {
	big := bytes.Repeat([]byte("v"), zeroCopyThreshold+3)
	w.Simple("OK")
	w.Bulk(big)
	w.Int(42)
	w.Bulk(bytes.Repeat([]byte("w"), 3*zeroCopyThreshold))
	w.BulkString("tail")
}

func TestFlushNWritesPrefixesThatAddUpToFlush(t *testing.T) {
	var whole bytes.Buffer
	ref := NewWriter(&whole)
	fillReplies(ref)
	if err := ref.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, piece := range []int{1, 7, 100, zeroCopyThreshold - 1, zeroCopyThreshold + 5, 1 << 20} {
		var got bytes.Buffer
		w := NewWriter(&got)
		fillReplies(w)
		total := w.Pending()
		if total != whole.Len() {
			t.Fatalf("Pending = %d, want %d", total, whole.Len())
		}
		for w.Pending() > 0 {
			before := w.Pending()
			if err := w.FlushN(piece); err != nil {
				t.Fatal(err)
			}
			if sent := before - w.Pending(); sent != min(piece, before) {
				t.Fatalf("piece %d: FlushN sent %d bytes, want %d", piece, sent, min(piece, before))
			}
			if got.Len() != total-w.Pending() {
				t.Fatalf("piece %d: %d bytes written, Pending %d of %d", piece, got.Len(), w.Pending(), total)
			}
		}
		if !bytes.Equal(got.Bytes(), whole.Bytes()) {
			t.Errorf("piece %d: FlushN pieces differ from one Flush", piece)
		}
		if n := w.BytesWritten(); n != int64(total) {
			t.Errorf("piece %d: BytesWritten = %d, want %d", piece, n, total)
		}
		// The writer is reusable afterwards.
		w.Simple("again")
		if err := w.Flush(); err != nil || !strings.HasSuffix(got.String(), "+again\r\n") {
			t.Errorf("piece %d: write after FlushN: %v", piece, err)
		}
	}
}

func TestFlushNKeepsWhatAFailedWriteDidNotSend(t *testing.T) {
	var whole bytes.Buffer
	ref := NewWriter(&whole)
	fillReplies(ref)
	ref.Flush()

	cw := &failingWriter{failAfter: zeroCopyThreshold + 2}
	w := NewWriter(cw)
	fillReplies(w)
	total := w.Pending()
	if err := w.FlushN(total - 10); !errors.Is(err, errWriteFailed) {
		t.Fatalf("FlushN = %v, want the write error", err)
	}
	if w.Pending() != total-cw.buf.Len() {
		t.Errorf("Pending = %d after %d of %d bytes went out", w.Pending(), cw.buf.Len(), total)
	}
	if !bytes.Equal(cw.buf.Bytes(), whole.Bytes()[:cw.buf.Len()]) {
		t.Error("the bytes written before the failure are not the replies' prefix")
	}
	if err := w.Flush(); !errors.Is(err, errWriteFailed) {
		t.Errorf("Flush after a failed FlushN = %v, want the same error", err)
	}
}

func TestDiscardDropsRepliesSinceTheMark(t *testing.T) {
	big := bytes.Repeat([]byte("v"), zeroCopyThreshold+10)
	for _, tc := range []struct {
		name    string
		dropped func(w *Writer)
	}{
		{"small replies", func(w *Writer) { w.Int(7); w.Bulk([]byte("x")) }},
		{"a large bulk", func(w *Writer) { w.Bulk(big) }},
		{"large bulks and small replies", func(w *Writer) { w.OK(); w.Bulk(big); w.Int(1); w.Bulk(big); w.Null() }},
		{"nothing", func(w *Writer) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := NewWriter(&out)
			w.Simple("before")
			w.Bulk(big)
			w.Int(1)
			m := w.Mark()
			tc.dropped(w)
			w.Discard(m)
			w.Simple("after")
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			want := "+before\r\n$" + strconv.Itoa(len(big)) + "\r\n" + string(big) + "\r\n:1\r\n+after\r\n"
			if out.String() != want {
				t.Fatalf("wrote %d bytes %.60q..., want %d", out.Len(), out.String(), len(want))
			}
			if w.Pending() != 0 {
				t.Fatalf("%d bytes still pending", w.Pending())
			}
		})
	}
}

func TestBulkCopyDoesNotReferenceTheBytes(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	b := bytes.Repeat([]byte("v"), 2*zeroCopyThreshold)
	w.BulkCopy(b)
	b[0] = 'x'
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "$32768\r\n" + strings.Repeat("v", len(b)) + "\r\n"
	if out.String() != want {
		t.Fatalf("BulkCopy sent bytes changed after the call")
	}
}

// buffersRecorder is a BuffersWriter that records what it is given.
type buffersRecorder struct{ bytes.Buffer }

func (r *buffersRecorder) WriteBuffers(bufs [][]byte) (int64, error) {
	var n int64
	for _, b := range bufs {
		m, _ := r.Write(b)
		n += int64(m)
	}
	return n, nil
}

// TestCarvedBuffersMatchPlainEncoding writes random sequences of replies,
// referenced stored values among them (whose headers are carved from one
// buffer), with marks discarded and partial flushes, and compares the bytes
// with the same replies encoded by plain appends. A value changed after it
// was written to the Writer would show there too: the test changes none,
// so any difference is the Writer's.
func TestCarvedBuffersMatchPlainEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 10, storedZeroCopyThreshold - 1, storedZeroCopyThreshold, 4096, zeroCopyThreshold, 3 * zeroCopyThreshold}
	for round := range 300 {
		out := &buffersRecorder{}
		w := NewWriter(out)
		var want, pending []byte
		var mark ReplyMark
		marked := false
		for range rng.IntN(200) {
			switch op := rng.IntN(10); {
			case op < 5:
				v := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, sizes[rng.IntN(len(sizes))])
				if op < 3 {
					w.StoredBulk(v)
				} else {
					w.Bulk(v)
				}
				pending = append(pending, "$"+strconv.Itoa(len(v))+"\r\n"...)
				pending = append(append(pending, v...), "\r\n"...)
			case op < 7:
				n := rng.Int64()
				w.Int(n)
				pending = append(pending, ":"+strconv.FormatInt(n, 10)+"\r\n"...)
			case op == 7:
				mark, marked = w.Mark(), true
				want = append(want, pending...)
				pending = pending[:0]
			case op == 8 && marked:
				w.Discard(mark)
				pending = pending[:0]
			default:
				if rng.IntN(2) == 0 {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
				} else if err := w.FlushN(rng.IntN(w.Pending() + 1)); err != nil {
					t.Fatal(err)
				}
				want = append(want, pending...)
				pending, marked = pending[:0], false
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		want = append(want, pending...)
		if !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("round %d: wrote %d bytes, want %d; first difference at %d", round, out.Len(), len(want), firstDiff(out.Bytes(), want))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestStoredBulkReferencesWithoutAllocating checks that referencing stored
// values costs no allocation per reply once the buffers exist: one value
// per flush (an unpipelined GET, whose flush once made a new segment array
// every time) and 16.
func TestStoredBulkReferencesWithoutAllocating(t *testing.T) {
	v := bytes.Repeat([]byte("x"), 4096)
	for _, perFlush := range []int{1, 16} {
		w := NewWriter(&buffersRecorder{})
		allocs := testing.AllocsPerRun(100, func() {
			for range perFlush {
				w.StoredBulk(v)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 0 {
			t.Fatalf("%.1f allocations per %d referenced values and a flush, want 0", allocs, perFlush)
		}
	}
}
