package tests

import "testing"

// TestDifferentialACLUsers pins ACL SETUSER, GETUSER, DELUSER, LIST, LOG
// and their errors to Redis 7's replies, and that a connection's
// permissions follow SETUSER at once and end with DELUSER.
func TestDifferentialACLUsers(t *testing.T) {
	t.Parallel()
	runDifferential(t, aclUserScripts())
}

// aclUserScripts are the scripts of TestDifferentialACLUsers. Each deletes
// the users it creates: users outlive the scripts' FLUSHALL.
func aclUserScripts() []script {
	return []script{
		{"setuser getuser deluser", []step{
			do("ACL", "SETUSER", "alice"),
			do("ACL", "GETUSER", "alice"),
			do("ACL", "SETUSER", "alice", "on", ">pw", "~cache:*", "~other:*", "&ch", "+@hash", "-hdel"),
			do("ACL", "GETUSER", "alice"),
			do("ACL", "SETUSER", "alice", "nopass", "allkeys", "allchannels"),
			do("ACL", "GETUSER", "alice"),
			do("ACL", "SETUSER", "alice", "resetpass", "#5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"),
			do("ACL", "GETUSER", "alice"),
			do("ACL", "SETUSER", "alice", "<nosuch"),
			do("ACL", "SETUSER", "alice", "bogus"),
			do("ACL", "SETUSER", "alice", "+nosuchcommand"),
			do("ACL", "SETUSER", "alice", "#tooshort"),
			do("ACL", "SETUSER", "alice", "~*", "~x"),
			do("ACL", "SETUSER", "alice", "off", "reset"),
			do("ACL", "GETUSER", "alice"),
			do("ACL", "LIST"),
			do("ACL", "USERS"),
			do("ACL", "GETUSER", "nobody"),
			do("ACL", "GETUSER"),
			do("ACL", "SETUSER"),
			do("ACL", "DELUSER"),
			do("ACL", "DELUSER", "default"),
			do("ACL", "DELUSER", "alice", "default"),
			do("ACL", "USERS"),
			do("ACL", "DELUSER", "alice", "nobody", "alice"),
			do("ACL", "DELUSER", "alice"),
			do("ACL", "USERS"),
		}},
		{"permissions follow setuser", []step{
			do("ACL", "SETUSER", "bob", "on", ">pw", "~k*", "+get", "+set", "+acl|whoami"),
			onOther(do("AUTH", "bob", "pw")),
			onOther(do("SET", "k1", "v")),
			onOther(do("SET", "other", "v")),
			onOther(do("DEL", "k1")),
			do("ACL", "SETUSER", "bob", "+del", "~other"),
			onOther(do("DEL", "k1")),
			onOther(do("SET", "other", "v")),
			do("ACL", "SETUSER", "bob", "-set"),
			onOther(do("SET", "k2", "v")),
			onOther(do("ACL", "WHOAMI")),
			do("ACL", "SETUSER", "bob", "off"),
			onOther(do("GET", "k1")),
			do("AUTH", "bob", "pw"),
			do("ACL", "DELUSER", "bob"),
			onOther(expectClosed()),
		}},
		{"acl log", []step{
			do("ACL", "LOG", "RESET"),
			do("ACL", "LOG"),
			do("AUTH", "nobody", "wrong"),
			do("AUTH", "nobody", "wrong"),
			typeOnly("ACL", "LOG"),
			do("ACL", "LOG", "0"),
			do("ACL", "LOG", "-1"),
			do("ACL", "LOG", "x"),
			do("ACL", "LOG", "1", "2"),
			do("ACL", "LOG", "RESET"),
			do("ACL", "LOG"),
			do("ACL", "SAVE"),
			do("ACL", "LOAD"),
		}},
	}
}
