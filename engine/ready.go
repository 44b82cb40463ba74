package engine

// Ready keys: what blocking commands (BLPOP...) need of the keyspace, after
// Redis's signalKeyAsReady. The server says which keys clients are
// blocked on (WaitFor, StopWaiting); every write to one of them (a write,
// an object changed in place or stored, a key renamed or moved onto it, a
// SWAPDB that brings it) queues the key as ready, and the server takes the
// queue (TakeReady) after the command to retry the clients blocked there.
// Deletions do not make a key ready, except a stream's (XREADGROUP answers
// an error then). Keys no one waits on cost one map
// lookup per write, and nothing while no client is blocked.

// ReadyKey names a key clients may block on: its logical database and its
// name.
type ReadyKey struct {
	DB  int
	Key string
}

// waitState is one waited-on key: how many waits hold it and whether it
// is queued as ready.
type waitState struct {
	refs   int
	queued bool
}

// WaitFor starts telling of writes to key in database db, until a
// matching StopWaiting; calls nest.
func (e *Engine) WaitFor(db int, key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.waited == nil {
		e.waited = make(map[ReadyKey]*waitState)
	}
	k := ReadyKey{db, key}
	st := e.waited[k]
	if st == nil {
		st = &waitState{}
		e.waited[k] = st
	}
	st.refs++
}

// StopWaiting ends one WaitFor of key in database db.
func (e *Engine) StopWaiting(db int, key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := ReadyKey{db, key}
	if st := e.waited[k]; st != nil {
		if st.refs--; st.refs <= 0 {
			delete(e.waited, k)
		}
	}
}

// HasReady reports, without the lock, whether a waited-on key was
// written since the last TakeReady.
func (e *Engine) HasReady() bool { return e.readyPending.Load() }

// TakeReady returns the waited-on keys written since the last call, in
// the order of their first write, and empties the queue.
func (e *Engine) TakeReady() []ReadyKey {
	if !e.readyPending.Load() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ready := e.ready
	e.ready = nil
	e.readyPending.Store(false)
	for _, k := range ready {
		if st := e.waited[k]; st != nil {
			st.queued = false
		}
	}
	return ready
}

// signalReadyLocked queues key of database db when a client waits on it.
func (e *Engine) signalReadyLocked(db int, key string) {
	if len(e.waited) == 0 {
		return
	}
	k := ReadyKey{db, key}
	if st := e.waited[k]; st != nil && !st.queued {
		st.queued = true
		e.ready = append(e.ready, k)
		e.readyPending.Store(true)
	}
}

// signalKeyspaceReadyLocked queues the waited-on keys of database db that
// exist in cur, its new contents after a SWAPDB (Redis's
// scanDatabaseForReadyKeys).
func (e *Engine) signalKeyspaceReadyLocked(db int, cur *keyspace) {
	for k := range e.waited {
		if k.DB == db {
			if _, ok := cur.items[k.Key]; ok {
				e.signalReadyLocked(db, k.Key)
			}
		}
	}
}
