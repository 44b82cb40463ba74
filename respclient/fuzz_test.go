package respclient

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReadReply feeds arbitrary bytes to ReadReply and the typed readers:
// nothing may panic; a reply read successfully is a prefix of the input
// that reads back as itself; an error is io.EOF, io.ErrUnexpectedEOF or a
// protocol error.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "$5\r\nhello\r\n", "*2\r\n:1\r\n$-1\r\n", "%1\r\n+a\r\n,1.5\r\n",
		"|1\r\n+a\r\n+b\r\n#t\r\n", "=7\r\ntxt:abc\r\n", "-ERR x\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, rep, err := NewReader(bytes.NewReader(data), 16).ReadReply(nil)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrProtocol) {
				t.Fatalf("ReadReply(%q): unexpected error %v", data, err)
			}
		} else {
			if !bytes.HasPrefix(data, raw) || !bytes.Equal(rep.Raw, raw) {
				t.Fatalf("ReadReply(%q) read %q (Raw %q), not a prefix of the input", data, raw, rep.Raw)
			}
			again, _, err := NewReader(bytes.NewReader(raw), 0).ReadReply(nil)
			if err != nil || !bytes.Equal(again, raw) {
				t.Fatalf("re-reading %q: %q, %v", raw, again, err)
			}
		}
		r := NewReader(bytes.NewReader(data), 16)
		if n, err := r.ReadBulkLen(); err == nil && n >= 0 {
			_ = r.ReadBody(n, make([]byte, min(n, 64)))
		}
		_, _ = r.ReadInt()
		_ = r.ReadOK()
	})
}
