package server

import (
	"testing"
	"time"

	"github.com/kvserver/kvserver/commands"
)

func TestUnblockEndsAWaitOnce(t *testing.T) {
	var r blockedClients
	w := &blockedWait{unblock: make(chan commands.Unblocked, 1), unblockable: true, timeout: true}
	r.add(7, w)
	if b, to := r.counts(); b != 1 || to != 1 || !r.isBlocked(7) {
		t.Fatalf("counts %d, %d after add", b, to)
	}
	if !r.unblock(7, commands.UnblockedError) {
		t.Fatal("unblock of a blocked client failed")
	}
	if got := <-w.unblock; got != commands.UnblockedError {
		t.Fatalf("reason %v", got)
	}
	if r.unblock(7, commands.UnblockedTimeout) {
		t.Fatal("a client was unblocked twice")
	}
	r.remove(7, w) // the waiter's own cleanup after CLIENT UNBLOCK removed it
	if b, to := r.counts(); b != 0 || to != 0 {
		t.Fatalf("counts %d, %d after unblock", b, to)
	}
}

func TestPausedWaitIsNotUnblockable(t *testing.T) {
	var r blockedClients
	w := &blockedWait{unblock: make(chan commands.Unblocked, 1)}
	r.add(3, w)
	if r.unblock(3, commands.UnblockedTimeout) {
		t.Fatal("CLIENT UNBLOCK ended a paused command's wait")
	}
	if b, to := r.counts(); b != 1 || to != 0 {
		t.Fatalf("a paused client counts %d blocked, %d in the timeout table; want 1, 0", b, to)
	}
	r.remove(3, w)
}

func TestPauseExtendsToLaterEndAndStricterMode(t *testing.T) {
	var p clientPause
	if _, _, ok := p.holds(true); ok {
		t.Fatal("the zero pause holds commands")
	}
	now := time.Now()
	p.pause(now.Add(time.Hour), false)
	if _, _, ok := p.holds(false); ok {
		t.Fatal("WRITE pause holds a read")
	}
	until, changed, ok := p.holds(true)
	if !ok || !until.Equal(now.Add(time.Hour)) {
		t.Fatalf("WRITE pause: holds %v until %v", ok, until)
	}
	p.pause(now.Add(time.Minute), true)
	select {
	case <-changed:
	default:
		t.Fatal("a new pause did not wake the waiting commands")
	}
	if until, _, ok := p.holds(false); !ok || !until.Equal(now.Add(time.Hour)) {
		t.Fatalf("after PAUSE ALL for less time: holds reads %v until %v; want the later end, all commands", ok, until)
	}
	_, changed, _ = p.holds(true)
	p.unpause()
	<-changed
	if _, _, ok := p.holds(true); ok {
		t.Fatal("UNPAUSE left the pause in force")
	}
	p.pause(now.Add(-time.Second), true)
	if _, _, ok := p.holds(true); ok {
		t.Fatal("a pause that ended holds commands")
	}
}
