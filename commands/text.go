package commands

import (
	"strconv"
	"strings"
)

// InfoWriter accumulates "key:value" lines with Redis's "\r\n" line ends,
// the format of INFO and CLUSTER INFO.
type InfoWriter struct{ b strings.Builder }

// Str writes the line k:v.
func (w *InfoWriter) Str(k, v string) {
	w.b.WriteString(k)
	w.b.WriteByte(':')
	w.b.WriteString(v)
	w.b.WriteString("\r\n")
}

// Int writes the line k:n.
func (w *InfoWriter) Int(k string, n int64) { w.Str(k, strconv.FormatInt(n, 10)) }

// Section starts a section: "# title", after a blank line unless it is
// the first.
func (w *InfoWriter) Section(title string) {
	if w.b.Len() > 0 {
		w.b.WriteString("\r\n")
	}
	w.b.WriteString("# " + title + "\r\n")
}

// String returns the lines written so far.
func (w *InfoWriter) String() string { return w.b.String() }

// Sanitize replaces newlines, which cannot appear in an error reply.
func Sanitize(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
