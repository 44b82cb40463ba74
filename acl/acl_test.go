package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"testing"
)

// testCatalog is a small command table with Redis 7.0's categories.
func testCatalog() *Catalog {
	return NewCatalog([]Command{
		{Name: "get", Categories: []string{"@read", "@string", "@fast"}},
		{Name: "set", Categories: []string{"@write", "@string", "@slow"}},
		{Name: "flushall", Categories: []string{"@keyspace", "@write", "@slow", "@dangerous"}},
		{Name: "ping", Categories: []string{"@fast", "@connection"}},
		{Name: "config", Categories: []string{"@slow"}, Subcommands: []Command{
			{Name: "config|get", Categories: []string{"@admin", "@slow", "@dangerous"}},
			{Name: "config|set", Categories: []string{"@admin", "@slow", "@dangerous"}},
			{Name: "config|help", Categories: []string{"@slow"}},
		}},
	}, func(p, k []byte) bool {
		ok, _ := path.Match(string(p), string(k))
		return ok
	})
}

func hashHex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestCommandRulesFollowRedis(t *testing.T) {
	cat := testCatalog()
	tests := []struct {
		rules   []string
		allowed []string
		denied  []string
	}{
		{[]string{"+@all"}, []string{"get", "set", "flushall", "config|set", "config"}, nil},
		{nil, nil, []string{"get", "ping", "config|help"}},
		{[]string{"+@read", "+@write", "-@dangerous"}, []string{"get", "set"}, []string{"flushall", "config|get", "ping"}},
		{[]string{"+@all", "-config|set", "-flushall"}, []string{"config|get", "config", "get"}, []string{"config|set", "flushall"}},
		// A container carries its subcommands; a later -sub removes one.
		{[]string{"+config", "-config|get"}, []string{"config", "config|set", "config|help"}, []string{"config|get", "get"}},
		// A category reaches subcommands but not their container.
		{[]string{"+@admin"}, []string{"config|get", "config|set"}, []string{"config", "config|help", "get"}},
		{[]string{"+GET", "+Config|Help"}, []string{"get", "config|help"}, []string{"config|get", "set"}},
		{[]string{"+@all", "-@all", "+ping"}, []string{"ping"}, []string{"get"}},
		{[]string{"allcommands", "nocommands", "+@fast"}, []string{"get", "ping"}, []string{"set"}},
	}
	for _, tt := range tests {
		u := cat.NewUser("u")
		if err := u.SetRules(tt.rules...); err != nil {
			t.Fatalf("%q: %v", tt.rules, err)
		}
		for _, name := range tt.allowed {
			if id, _ := cat.ID(name); !u.CanRun(id) {
				t.Errorf("%q: %s denied, want allowed", tt.rules, name)
			}
		}
		for _, name := range tt.denied {
			if id, _ := cat.ID(name); u.CanRun(id) {
				t.Errorf("%q: %s allowed, want denied", tt.rules, name)
			}
		}
	}
}

func TestPasswordsFollowRedis(t *testing.T) {
	cat := testCatalog()
	u, err := cat.ParseUser("alice on #" + hashHex("secret") + " >other")
	if err != nil {
		t.Fatal(err)
	}
	for pass, want := range map[string]bool{"secret": true, "other": true, "Secret": false, "": false} {
		if got := u.CheckPassword([]byte(pass)); got != want {
			t.Errorf("CheckPassword(%q) = %v, want %v", pass, got, want)
		}
	}
	if err := u.SetRules("<other"); err != nil {
		t.Fatal(err)
	}
	if u.CheckPassword([]byte("other")) {
		t.Error("removed password still accepted")
	}
	if err := u.SetRules("off"); err != nil {
		t.Fatal(err)
	}
	if u.CheckPassword([]byte("secret")) {
		t.Error("a user that is off authenticated")
	}
	np, _ := cat.ParseUser("bob on nopass")
	if !np.CheckPassword([]byte("anything")) {
		t.Error("nopass user rejected a password")
	}
	if err := np.SetRules(">pw"); err != nil || np.NoPass() || np.CheckPassword([]byte("x")) {
		t.Errorf("adding a password did not clear nopass (err %v)", err)
	}
}

func TestKeyPatterns(t *testing.T) {
	cat := testCatalog()
	u, err := cat.ParseUser("u on ~cache:* ~meta")
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"cache:1": true, "meta": true, "metadata": false, "other": false} {
		if got := u.KeyAllowed([]byte(key)); got != want {
			t.Errorf("KeyAllowed(%q) = %v, want %v", key, got, want)
		}
	}
	if err := u.SetRule("~*"); err != nil || !u.AllKeys() || !u.KeyAllowed([]byte("other")) {
		t.Errorf("~* did not allow every key (err %v)", err)
	}
	if err := u.SetRule("~x"); !errors.Is(err, ErrKeyAfterAll) {
		t.Errorf("~x after ~* = %v, want ErrKeyAfterAll", err)
	}
	if err := u.SetRules("resetkeys", "~x"); err != nil || u.KeyAllowed([]byte("other")) {
		t.Errorf("resetkeys did not clear the patterns (err %v)", err)
	}
}

func TestRuleErrors(t *testing.T) {
	cat := testCatalog()
	tests := map[string]error{
		"+@nosuch":                    ErrUnknownCommand,
		"+nosuch":                     ErrUnknownCommand,
		"-config|nosub":               ErrUnknownCommand,
		"+get|x":                      ErrUnsupported,
		"#abc":                        ErrBadHash,
		"#" + hashHex("x")[:63] + "G": ErrBadHash,
		"<notset":                     ErrNoSuchPassword,
		"%R~k*":                       ErrUnsupported,
		"(+get)":                      ErrUnsupported,
		"bogus":                       ErrSyntax,
	}
	for rule, want := range tests {
		u := cat.NewUser("u")
		if err := u.SetRules(rule); !errors.Is(err, want) {
			t.Errorf("rule %q: %v, want %v", rule, err, want)
		}
	}
}

func TestDescribeLikeACLList(t *testing.T) {
	cat := testCatalog()
	us, err := NewUsers(cat, "", []string{
		"carol on >c ~* +@all -config|set",
		"alice on #" + hashHex("secret") + " ~cache:* +@read +@write -@dangerous",
		"bob off nopass &chan +ping",
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range us.List() {
		got = append(got, u.Describe())
	}
	want := []string{
		"user alice on #" + hashHex("secret") + " ~cache:* resetchannels -@all +@read +@write -@dangerous",
		"user bob off nopass resetchannels &chan -@all +ping",
		// Redis 7.0.15's ACL LIST prints these two lines exactly so.
		"user carol on #" + hashHex("c") + " ~* resetchannels +@all -config|set",
		"user default on nopass ~* &* +@all",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Describe:\n%q\nwant\n%q", got, want)
	}
}

func TestUsersDefaultAndRequirePass(t *testing.T) {
	cat := testCatalog()
	us, err := NewUsers(cat, "pw", nil)
	if err != nil {
		t.Fatal(err)
	}
	if def := us.Default(); def.NoPass() || !def.CheckPassword([]byte("pw")) || !def.Unrestricted() {
		t.Errorf("requirepass default user: %s", def.Describe())
	}
	old := us.Default()
	us.SetDefaultPassword("")
	if !us.Default().NoPass() {
		t.Error("SetDefaultPassword(\"\") did not make default nopass")
	}
	if old.NoPass() {
		t.Error("SetDefaultPassword modified the User a connection may hold")
	}
	us.SetDefaultPassword("new")
	if us.Authenticate([]byte("default"), []byte("new")) == nil || us.Authenticate([]byte("default"), []byte("pw")) != nil {
		t.Error("default user after SetDefaultPassword(new) does not take exactly the new password")
	}

	// A line for default resets it: requirepass no longer applies.
	us, err = NewUsers(cat, "pw", []string{"default on >other ~* +@read"})
	if err != nil {
		t.Fatal(err)
	}
	if def := us.Default(); def.CheckPassword([]byte("pw")) || !def.CheckPassword([]byte("other")) {
		t.Errorf("default line did not replace requirepass: %s", def.Describe())
	}
	if _, err := NewUsers(cat, "", []string{"a on", "a off"}); err == nil {
		t.Error("a user defined twice was accepted")
	}
	if _, err := NewUsers(cat, "", []string{"a on +nosuch"}); !errors.Is(err, ErrUnknownCommand) {
		t.Errorf("bad rule: %v", err)
	}
	if us.Authenticate([]byte("nobody"), []byte("x")) != nil {
		t.Error("unknown user authenticated")
	}
}
