package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestACLLogRecordsDenials checks the fields of ACL LOG entries that the
// differential suite cannot compare byte for byte (ages and client lines
// differ): reason, context, object, username and the grouping of repeated
// denials, newest first.
func TestACLLogRecordsDenials(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	s := startKVServer(t)
	admin := dialRaw(t, s.Addr)
	expectReply(t, admin, "+OK\r\n", "ACL", "SETUSER", "carol", "on", ">pw", "~k*", "+get", "+multi", "+exec")
	c := dialRaw(t, s.Addr)
	expectReply(t, c, "+OK\r\n", "AUTH", "carol", "pw")
	c.Call("GET", "other")
	c.Call("GET", "other")
	c.Call("DEL", "k1")
	c.Call("MULTI")
	c.Call("GET", "other")
	c.Call("EXEC")
	c.Call("auth", "nobody", "x")

	raw, err := admin.Call("ACL", "LOG")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	want := []string{
		// newest first: the failed AUTH, the key denied inside MULTI, the
		// DEL, then the two GETs of "other" counted as one entry.
		"$6\r\nreason\r\n$4\r\nauth\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n$4\r\nauth\r\n$8\r\nusername\r\n$6\r\nnobody",
		"$6\r\nreason\r\n$3\r\nkey\r\n$7\r\ncontext\r\n$5\r\nmulti\r\n$6\r\nobject\r\n$5\r\nother\r\n$8\r\nusername\r\n$5\r\ncarol",
		"$6\r\nreason\r\n$7\r\ncommand\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n$3\r\ndel\r\n$8\r\nusername\r\n$5\r\ncarol",
		"$5\r\ncount\r\n:2\r\n$6\r\nreason\r\n$3\r\nkey\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n$5\r\nother",
	}
	if !strings.HasPrefix(text, "*4\r\n") {
		t.Fatalf("ACL LOG has not 4 entries: %q", text)
	}
	last := 0
	for _, w := range want {
		i := strings.Index(text, w)
		if i < last {
			t.Fatalf("ACL LOG lacks, or has out of order, %q:\n%q", w, text)
		}
		last = i
	}
	if !strings.Contains(text, "cmd=del user=carol") {
		t.Errorf("the client line of the DEL denial does not name the command: %q", text)
	}
	expectReply(t, admin, "+OK\r\n", "ACL", "LOG", "RESET")
	expectReply(t, admin, "*0\r\n", "ACL", "LOG")
}

// TestACLSaveAndLoadUseTheConfigFile checks that ACL SAVE writes the users
// to the config file (replacing a block list of user lines) and ACL LOAD
// brings the file's users back, closing connections of users it drops.
func TestACLSaveAndLoadUseTheConfigFile(t *testing.T) {
	t.Parallel()
	skipInRedisMode(t)
	path := filepath.Join(t.TempDir(), "kvserver.yaml")
	conf := "# users\nuser:\n  - \"old on nopass ~* +@all\"\ntimeout: 300\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startKVServer(t, "--config", path)
	c := dialRaw(t, s.Addr)
	expectReply(t, c, "*2\r\n$7\r\ndefault\r\n$3\r\nold\r\n", "ACL", "USERS")
	expectReply(t, c, "+OK\r\n", "ACL", "SETUSER", "dave", "on", ">secret", "~d:*", "+get")
	expectReply(t, c, "+OK\r\n", "ACL", "SAVE")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	file := string(data)
	if strings.Contains(file, "  - \"old") || !strings.Contains(file, "\"dave on #") {
		t.Fatalf("ACL SAVE wrote:\n%s", file)
	}
	if !strings.Contains(file, "timeout: 300") || !strings.Contains(file, "# users") {
		t.Fatalf("ACL SAVE lost the rest of the file:\n%s", file)
	}

	old := dialRaw(t, s.Addr)
	expectReply(t, old, "+OK\r\n", "AUTH", "old", "x")
	expectReply(t, c, ":1\r\n", "ACL", "DELUSER", "dave")
	expectReply(t, c, ":0\r\n", "EXISTS", "x")
	// The file still has dave and old: LOAD brings dave back.
	expectReply(t, c, "+OK\r\n", "ACL", "LOAD")
	expectReply(t, c, "*3\r\n$4\r\ndave\r\n$7\r\ndefault\r\n$3\r\nold\r\n", "ACL", "USERS")
	d := dialRaw(t, s.Addr)
	expectReply(t, d, "+OK\r\n", "AUTH", "dave", "secret")
	// A file without old: LOAD drops old and closes its connection.
	if err := os.WriteFile(path, []byte("user: [\"dave on #"+sha256Hex("secret")+" ~d:* -@all +get\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expectReply(t, c, "+OK\r\n", "ACL", "LOAD")
	expectClosedConn(t, old)
	expectReply(t, d, "$-1\r\n", "GET", "d:1")
	expectReply(t, d, "-NOPERM this user has no permissions to run the 'set' command\r\n", "SET", "d:1", "v")
}
