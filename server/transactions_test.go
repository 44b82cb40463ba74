package server

import (
	"strconv"
	"strings"
	"testing"
)

// TestQueuedArgumentsOutliveTheirTransaction checks that the values a
// transaction stored stay intact when the connection's next transactions
// reuse the room their arguments were queued in (queueArena): small values
// and big ones, and a transaction whose arguments outgrow the arena's room
// halfway.
func TestQueuedArgumentsOutliveTheirTransaction(t *testing.T) {
	as := startAdminServer(t, Options{})
	c := as.dial(t)
	want := map[string]string{}
	value := func(tx, i, size int) string {
		v := strconv.Itoa(tx) + ":" + strconv.Itoa(i) + ":"
		return v + strings.Repeat(string(rune('a'+(tx+i)%26)), size)
	}
	sizes := []int{1, 100, 5000, 20 << 10, 3}
	for tx := range 6 {
		if got := c.do("MULTI"); got != "+OK\r\n" {
			t.Fatalf("MULTI = %q", got)
		}
		n := 0
		for i, size := range sizes {
			key := "k:" + strconv.Itoa(tx) + ":" + strconv.Itoa(i)
			want[key] = value(tx, i, size)
			if got := c.do("SET", key, want[key]); got != "+QUEUED\r\n" {
				t.Fatalf("SET = %q", got)
			}
			n++
		}
		mset := []string{"MSET"}
		for i := range 300 {
			key := "m:" + strconv.Itoa(tx) + ":" + strconv.Itoa(i)
			want[key] = value(tx, i, 10)
			mset = append(mset, key, want[key])
		}
		if got := c.do(mset...); got != "+QUEUED\r\n" {
			t.Fatalf("MSET = %q", got)
		}
		n++
		if got, all := c.do("EXEC"), "*"+strconv.Itoa(n)+"\r\n"+strings.Repeat("+OK\r\n", n); got != all {
			t.Fatalf("EXEC = %q, want %q", got, all)
		}
	}
	for key, v := range want {
		if got, bulk := c.do("GET", key), "$"+strconv.Itoa(len(v))+"\r\n"+v+"\r\n"; got != bulk {
			t.Fatalf("GET %s = %.60q..., want %.60q...", key, got, bulk)
		}
	}
}

// TestClientListShowsTransactions checks CLIENT LIST's multi and
// multi-mem fields, as redis-server 7.0 gives them: another client sees the
// commands a client queued once their +QUEUED replies went out, and the
// client itself, inside EXEC, sees every queued command.
func TestClientListShowsTransactions(t *testing.T) {
	as := startAdminServer(t, Options{})
	a, b := as.dial(t), as.dial(t)
	a.do("CLIENT", "SETNAME", "A")
	lineOfA := func(list string) string {
		for _, l := range strings.Split(list, "\n") {
			if strings.Contains(l, " name=A ") {
				return l
			}
		}
		t.Fatalf("no line for A in %q", list)
		return ""
	}
	for _, cmd := range [][]string{{"MULTI"}, {"SET", "x", "1"}, {"SET", "y", "2"}} {
		a.do(cmd...)
	}
	if l := lineOfA(b.do("CLIENT", "LIST")); !strings.Contains(l, " multi=2 ") || !strings.Contains(l, " multi-mem=58 ") {
		t.Errorf("A queued two SETs; B sees %q", l)
	}
	a.do("CLIENT", "INFO")
	if l := a.do("EXEC"); !strings.Contains(l, " multi=3 ") || !strings.Contains(l, " multi-mem=84 ") {
		t.Errorf("CLIENT INFO inside EXEC = %q", l)
	}
	if l := lineOfA(b.do("CLIENT", "LIST")); !strings.Contains(l, " multi=-1 ") || !strings.Contains(l, " multi-mem=0 ") {
		t.Errorf("after EXEC, B sees %q", l)
	}
}

// BenchmarkMultiExec runs kvbench types' transaction (MULTI, 10 SETs,
// EXEC, as go-redis's TxPipeline sends it) through a real connection and
// the real dispatch: per transaction (op) one write of the 12 commands and
// one read of their replies, the server side of issue 14's MULTI row.
func BenchmarkMultiExec(b *testing.B) {
	as := startAdminServer(b, Options{})
	c := as.dial(b)
	var req, want strings.Builder
	req.WriteString("*1\r\n$5\r\nMULTI\r\n")
	want.WriteString("+OK\r\n")
	for k := range 10 {
		key := "tx:0:" + strconv.Itoa(k)
		req.WriteString("*3\r\n$3\r\nSET\r\n$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n$1\r\nv\r\n")
		want.WriteString("+QUEUED\r\n")
	}
	req.WriteString("*1\r\n$4\r\nEXEC\r\n")
	want.WriteString("*10\r\n" + strings.Repeat("+OK\r\n", 10))
	benchRoundTrips(b, c, req.String(), want.String(), 1)
}
