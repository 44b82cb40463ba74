package resp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBigBulksReadOnTheLoopAtEveryCut sends a pipeline of commands whose
// last argument is a big bulk, between small ones, cut into pieces of
// every size pattern: each command arrives whole and in order, its big
// value read straight into its own slice (never buffered whole).
func TestBigBulksReadOnTheLoopAtEveryCut(t *testing.T) {
	var wire bytes.Buffer
	var want []string
	// Small commands first, so that the buffer grows (pipelining) and
	// later holds whole big bulks with what follows them.
	for i := range 3000 {
		wire.WriteString("*3\r\n$3\r\nSET\r\n$1\r\ns\r\n$" + itoa(i%90) + "\r\n" + strings.Repeat("s", i%90) + "\r\n")
		want = append(want, "SET s "+strings.Repeat("s", i%90))
	}
	for i := range 6 {
		v := strings.Repeat(string(rune('a'+i)), BigBulkThreshold+i*4099)
		wire.WriteString("*3\r\n$3\r\nSET\r\n$2\r\nk" + itoa(i) + "\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n")
		want = append(want, "SET k"+itoa(i)+" "+v)
		wire.WriteString("*2\r\n$3\r\nGET\r\n$2\r\nk" + itoa(i) + "\r\n")
		want = append(want, "GET k"+itoa(i))
	}
	steps := map[string]func(int) int{
		"1 byte":       func(int) int { return 1 },
		"7 bytes":      func(int) int { return 7 },
		"varying":      func(w int) int { return w*7919%9000 + 1 },
		"64 KiB":       func(int) int { return 64 << 10 },
		"all at once":  func(int) int { return wire.Len() },
		"around a big": func(w int) int { return BigBulkThreshold + w%3 - 1 },
		"100 KiB":      func(int) int { return 100 << 10 },
	}
	for name, step := range steps {
		if name == "1 byte" && testing.Short() {
			continue
		}
		got, started, err := readLikeALoop(wire.String(), step)
		if protocolError(err) != "" {
			t.Fatalf("%s: %v", name, err)
		}
		if started != 6 {
			t.Fatalf("%s: %d big bulks read on the loop, want 6", name, started)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d commands, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: command %d differs (%d bytes, want %d)", name, i, len(got[i]), len(want[i]))
			}
		}
	}
}

// refusingBudget never has room at once.
type refusingBudget struct{}

func (refusingBudget) Acquire(context.Context, int64) error { return nil }
func (refusingBudget) TryAcquire(int64) bool                { return false }

// TestStartBigRefusesWhatReadCommandMustRead: a big bulk that is not the
// command's last argument, or whose budget is not free at once, is left to
// ReadCommand (which may wait, off the loop), and nothing is consumed.
func TestStartBigRefusesWhatReadCommandMustRead(t *testing.T) {
	v := strings.Repeat("v", BigBulkThreshold)
	for _, tc := range []struct {
		name, wire string
		budget     BulkBudget
		args       int
	}{
		{"not last", "*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n$1\r\nb\r\n$1\r\nc\r\n", nil, 5},
		{"no budget", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n", refusingBudget{}, 3},
	} {
		r := loopReader(t, []byte(tc.wire))
		if tc.budget != nil {
			r.SetBulkBudget(context.Background(), tc.budget)
		}
		if got := r.Next(); got != NextBig {
			t.Fatalf("%s: Next %v, want NextBig", tc.name, got)
		}
		if r.StartBig() || r.BigPending() || r.BigHeld() != 0 {
			t.Fatalf("%s: StartBig took the bulk", tc.name)
		}
		var cmd Command
		if err := r.ReadCommand(&cmd); err != nil {
			t.Fatalf("%s: ReadCommand after the refusal: %v", tc.name, err)
		}
		if len(cmd.Args) != tc.args || len(cmd.Args[2]) != len(v) {
			t.Fatalf("%s: ReadCommand read %d arguments", tc.name, len(cmd.Args))
		}
	}
}

// TestABigBulkOnTheLoopSurvivesACompaction: the command whose big bulk is
// read on the loop sits at the end of a full buffer; when its CRLF comes,
// the buffer is compacted (and grown) under it, and the command still
// reads whole.
func TestABigBulkOnTheLoopSurvivesACompaction(t *testing.T) {
	header := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20000\r\n"
	fill := DefaultReadBuffer - len(header) - len("*2\r\n$4\r\nECHO\r\n$16332\r\n\r\n")
	echo := "*2\r\n$4\r\nECHO\r\n$" + itoa(fill) + "\r\n" + strings.Repeat("e", fill) + "\r\n"
	if len(echo)+len(header) != DefaultReadBuffer {
		t.Fatalf("setup: %d bytes, want %d", len(echo)+len(header), DefaultReadBuffer)
	}
	value := strings.Repeat("v", 20000)
	rest := value + "\r\n"
	var maxBulk atomic.Int64
	maxBulk.Store(512 << 20)
	r := NewReader(readerFunc(func([]byte) (int, error) { return 0, errNeedMore }), &maxBulk)
	src := func(s *string) func([]byte) (int, error) {
		return func(p []byte) (int, error) {
			n := copy(p, *s)
			*s = (*s)[n:]
			return n, nil
		}
	}
	first := echo + header
	if n, err := r.Fill(src(&first)); n != DefaultReadBuffer || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	var cmd Command
	if r.Next() != NextWhole || r.ReadCommand(&cmd) != nil || string(cmd.Args[0]) != "ECHO" {
		t.Fatal("the ECHO before it did not read whole")
	}
	r.DropArgs(&cmd)
	if r.Next() != NextBig || !r.StartBig() {
		t.Fatal("the big bulk was not started on the loop")
	}
	for r.BigPending() {
		if _, err := r.FillBig(src(&rest)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Fill(src(&rest)); err != nil || rest != "" {
		t.Fatalf("CRLF read: %q left, %v", rest, err)
	}
	if got := r.Next(); got != NextWhole {
		t.Fatalf("Next after the compaction: %v, want NextWhole", got)
	}
	if err := r.ReadCommand(&cmd); err != nil || len(cmd.Args) != 3 || string(cmd.Args[2]) != value {
		t.Fatalf("SET after the compaction: %d arguments, %v", len(cmd.Args), err)
	}
	if r.Buffered() {
		t.Fatal("bytes left after the SET")
	}
}

// FuzzBigBulksOnTheLoop puts arbitrary bytes around and inside pipelines
// with big bulks and reads them two ways: as the event loop does (pieces
// of a fuzzed size, StartBig/FillBig, ReadCommand only for what Next calls
// whole, and a blocking ReadCommand where StartBig refuses), and with
// ReadCommand alone over the whole input. Both must read the same commands
// and end with the same protocol error, if any.
func FuzzBigBulksOnTheLoop(f *testing.F) {
	f.Add([]byte(""), []byte(""), uint16(1000), uint8(3))
	f.Add([]byte("*1\r\n$4\r\nPING\r\n"), []byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), uint16(7), uint8(1))
	f.Add([]byte("PING\r\n"), []byte("*1\r\n$x\r\n"), uint16(65535), uint8(2))
	f.Add([]byte("*3\r\n$3\r\nSET\r\n"), []byte("\r\n\r\n*0\r\n"), uint16(16383), uint8(0))
	f.Fuzz(func(t *testing.T, before, after []byte, step uint16, shape uint8) {
		v := strings.Repeat("v", BigBulkThreshold+int(step)%5000)
		var big string
		switch shape % 4 {
		case 0: // last argument
			big = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n"
		case 1: // not the last argument
			big = "*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$" + itoa(len(v)) + "\r\n" + v + "\r\n$1\r\nb\r\n$1\r\nc\r\n"
		case 2: // cut short, then garbage
			big = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(len(v)) + "\r\n" + v[:len(v)/2]
		case 3: // no CRLF after the bulk
			big = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(len(v)) + "\r\n" + v + "XX"
		}
		wire := string(before) + big + string(after) + big
		want, wantErr := readAllCommands(wire)
		got, _, gotErr := readLikeALoop(wire, func(int) int { return max(int(step), 1) })
		if len(got) != len(want) {
			t.Fatalf("%d commands on the loop, %d by ReadCommand (errors %v / %v)", len(got), len(want), gotErr, wantErr)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("command %d differs", i)
			}
		}
		if protocolError(gotErr) != protocolError(wantErr) {
			t.Fatalf("loop ended with %v, ReadCommand with %v", gotErr, wantErr)
		}
	})
}

// protocolError is err's message if it is a protocol error, "" otherwise
// (the input simply ended).
func protocolError(err error) string {
	var perr *ProtocolError
	if errors.As(err, &perr) {
		return perr.Msg
	}
	return ""
}

// readAllCommands reads commands with ReadCommand alone until it fails.
func readAllCommands(wire string) ([]string, error) {
	var maxBulk atomic.Int64
	maxBulk.Store(512 << 20)
	r := NewReader(strings.NewReader(wire), &maxBulk)
	var cmds []string
	for {
		var cmd Command
		if err := r.ReadCommand(&cmd); err != nil {
			return cmds, err
		}
		cmds = append(cmds, string(bytes.Join(cmd.Args, []byte(" "))))
		r.DropArgs(&cmd)
	}
}

// readLikeALoop reads commands as the server's event loop does: one read
// per wake-up, of step(wake) bytes at most (FillBig while a big bulk
// StartBig started lacks bytes, Fill otherwise), then every whole
// command, starting the big bulks Next reports on the loop and reading
// with a blocking ReadCommand those StartBig refuses, until the input is
// used up or a command fails. It returns the commands, each as its
// arguments joined by spaces, how many big bulks were read on the loop,
// and the error that ended it.
func readLikeALoop(wire string, step func(int) int) (cmds []string, started int, err error) {
	src := []byte(wire)
	var maxBulk atomic.Int64
	maxBulk.Store(512 << 20)
	// A blocking read (ReadCommand where StartBig refused) takes from the
	// same input, all of what is left.
	r := NewReader(readerFunc(func(p []byte) (int, error) {
		if len(src) == 0 {
			return 0, io.EOF
		}
		n := copy(p, src)
		src = src[n:]
		return n, nil
	}), &maxBulk)
	wake := 0
	piece := func(p []byte) (int, error) {
		if len(src) == 0 {
			return 0, errNeedMore
		}
		n := copy(p, src[:min(step(wake), len(src))])
		src = src[n:]
		return n, nil
	}
	read := func() error {
		var cmd Command
		if err := r.ReadCommand(&cmd); err != nil {
			return err
		}
		cmds = append(cmds, string(bytes.Join(cmd.Args, []byte(" "))))
		r.DropArgs(&cmd)
		return nil
	}
	for ; len(src) > 0; wake++ {
		if r.BigPending() {
			r.FillBig(piece)
		} else {
			r.Fill(piece)
		}
	serve:
		for !r.BigPending() {
			switch r.Next() {
			case NextEmpty, NextPartial:
				break serve
			case NextBig:
				if r.StartBig() {
					started++
					continue
				}
				if err := read(); err != nil {
					return cmds, started, err
				}
			case NextWhole:
				if err := read(); err != nil {
					return cmds, started, err
				}
			}
		}
	}
	// The input ended: what is left is read as the blocking reader would.
	for {
		if err := read(); err != nil {
			return cmds, started, err
		}
	}
}
