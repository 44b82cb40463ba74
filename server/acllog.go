package server

import (
	"sync"
	"time"

	"github.com/kvserver/kvserver/commands"
)

// ACL LOG: the newest ACL denials and failed authentications, as Redis
// 7.0 keeps them (acl.c addACLLogEntry). A denial like one of the newest
// few, within a minute of it, counts into that entry and moves it first.

const (
	// aclLogGroupWindow is ACL_LOG_GROUPING_MAX_TIME_DELTA.
	aclLogGroupWindow = 60 * time.Second
	// aclLogGroupScan is how many of the newest entries a denial is
	// compared with.
	aclLogGroupScan = 10
)

// aclLog is the server's ACL LOG.
type aclLog struct {
	mu sync.Mutex
	// entries are newest first.
	entries []commands.ACLLogEntry
}

// add records a denial; max is acllog-max-len.
func (l *aclLog) add(e commands.ACLLogEntry, max int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 0; i < len(l.entries) && i < aclLogGroupScan; i++ {
		old := l.entries[i]
		if old.Reason == e.Reason && old.Context == e.Context && old.Object == e.Object &&
			old.Username == e.Username && e.Created.Sub(old.Created) <= aclLogGroupWindow {
			e.Count = old.Count + 1
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = e
			return
		}
	}
	e.Count = 1
	l.entries = append(l.entries, commands.ACLLogEntry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
	if len(l.entries) > max {
		clear(l.entries[max:])
		l.entries = l.entries[:max]
	}
}

// newest returns up to n entries, newest first.
func (l *aclLog) newest(n int) []commands.ACLLogEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]commands.ACLLogEntry(nil), l.entries[:min(n, len(l.entries))]...)
}

// reset empties the log.
func (l *aclLog) reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// logACLDenial records that c was refused: reason is "command", "key",
// "channel" or "auth", object what was refused, username whose rules (or,
// for "auth", which name) refused it.
func (s *Server) logACLDenial(c *Client, reason, object, username, cmdName string) {
	context := "toplevel"
	if c.multi != nil || c.queuedArgs != nil {
		context = "multi"
	}
	ci := session{c}.clientInfo(c, time.Now())
	if cmdName != "" {
		ci.LastCmd = cmdName
	}
	s.acllog.add(commands.ACLLogEntry{Reason: reason, Context: context, Object: object,
		Username: username, Created: time.Now(), Client: ci}, int(s.settings.Int("acllog-max-len")))
}

// currentArgs are the arguments of the command c is running: the queued
// command's inside EXEC.
func (c *Client) currentArgs() [][]byte {
	if c.queuedArgs != nil {
		return c.queuedArgs
	}
	return c.cmd.Args
}
