package server

import (
	"sync"
	"time"

	"github.com/kvserver/kvserver/commands"
	"github.com/kvserver/kvserver/engine"
)

// blockRegistry is the server's clients blocked on keys (Redis's
// blocking_keys and blocked.c): for each (database, key) the clients
// waiting there, oldest first. A blocked client's goroutine sleeps on its
// own channel, with its connection's context and its timeout; nothing
// polls. The engine queues the waited-on keys that writes touch
// (engine/ready.go), and the client whose command wrote them serves the
// blocked clients after that command (serveReady), the way Redis's
// handleClientsBlockedOnKeys runs after each command: in order, each
// client's serve function running as one engine step, until a key has
// nothing left to give.
type blockRegistry struct {
	eng *engine.Engine
	// mu orders registration, serving and leaving; it is taken before the
	// engine lock, never inside it.
	mu    sync.Mutex
	byKey map[engine.ReadyKey][]*blockedClient
}

// blockedClient is one client blocked in a command.
type blockedClient struct {
	db    int
	keys  []string
	serve func(tx *engine.Tx, key []byte) bool
	// done is closed when the client was served; served says so under
	// blockRegistry.mu.
	done   chan struct{}
	served bool
}

func newBlockRegistry(eng *engine.Engine) *blockRegistry {
	return &blockRegistry{eng: eng, byKey: make(map[engine.ReadyKey][]*blockedClient)}
}

// addLocked registers b on its keys.
func (r *blockRegistry) addLocked(b *blockedClient) {
	for _, k := range b.keys {
		rk := engine.ReadyKey{DB: b.db, Key: k}
		r.byKey[rk] = append(r.byKey[rk], b)
		r.eng.WaitFor(b.db, k)
	}
}

// removeLocked takes b off its keys.
func (r *blockRegistry) removeLocked(b *blockedClient) {
	for _, k := range b.keys {
		rk := engine.ReadyKey{DB: b.db, Key: k}
		q := r.byKey[rk]
		for i, o := range q {
			if o == b {
				q = append(q[:i], q[i+1:]...)
				break
			}
		}
		if len(q) == 0 {
			delete(r.byKey, rk)
		} else {
			r.byKey[rk] = q
		}
		r.eng.StopWaiting(b.db, k)
	}
}

// tryLocked runs b's serve function on key as one engine step; when it
// takes what b waits for, b leaves the registry and is woken.
func (r *blockRegistry) tryLocked(b *blockedClient, key string) bool {
	served := false
	r.eng.Update(b.db, func(tx *engine.Tx) { served = b.serve(tx, []byte(key)) })
	if served {
		r.removeLocked(b)
		b.served = true
		close(b.done)
	}
	return served
}

// serveReady serves the clients blocked on the keys that writes made
// ready, repeating while serving them makes more ready (BLMOVE pushes).
// The caller holds Server.exclusive for reading, so that no EXEC runs in
// between.
func (r *blockRegistry) serveReady() {
	for {
		ready := r.eng.TakeReady()
		if len(ready) == 0 {
			return
		}
		r.mu.Lock()
		for _, rk := range ready {
			for len(r.byKey[rk]) > 0 && r.tryLocked(r.byKey[rk][0], rk.Key) {
			}
		}
		r.mu.Unlock()
	}
}

// block is commands.KeyBlocking.BlockOnKeys for client c. The wait itself
// is the connection's (Client.block in blocking.go): it counts as blocked
// there, for INFO, CLIENT LIST and CLIENT UNBLOCK.
func (r *blockRegistry) block(c *Client, keys [][]byte, timeout time.Duration, serve func(tx *engine.Tx, key []byte) bool) commands.Unblocked {
	b := &blockedClient{db: c.DB(), serve: serve, done: make(chan struct{})}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[string(k)] {
			seen[string(k)] = true
			b.keys = append(b.keys, string(k))
		}
	}
	r.mu.Lock()
	r.addLocked(b)
	// A write between the command's own attempt and the registration
	// queued no key: try once more, now that later writes will.
	for _, k := range b.keys {
		if r.tryLocked(b, k) {
			r.mu.Unlock()
			return commands.UnblockedReady
		}
	}
	r.mu.Unlock()

	// Let other commands, EXEC's included, run while this one waits.
	defer c.leaveShared()()
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	why := c.block(deadline, b.done, true)
	r.mu.Lock()
	defer r.mu.Unlock()
	if b.served {
		// Served while the wait ended for another reason: the elements
		// are taken, the client must get them.
		return commands.UnblockedReady
	}
	r.removeLocked(b)
	return why
}

var _ commands.KeyBlocking = session{}

func (s session) BlockOnKeys(keys [][]byte, timeout time.Duration, serve func(tx *engine.Tx, key []byte) bool) commands.Unblocked {
	return s.c.srv.keyWaits.block(s.c, keys, timeout, serve)
}

// CanBlock is false inside EXEC (Redis's CLIENT_DENY_BLOCKING).
func (s session) CanBlock() bool { return s.c.queuedArgs == nil }
