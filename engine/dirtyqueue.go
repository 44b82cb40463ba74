package engine

// dirtyQueue holds the groups in the order they became dirty, each with
// the time it did, so that the write-behind pass finds the ones due
// without looking at the others: a pass once walked every dirty group and
// sorted the due ones under the engine lock, which at 80,000 SETs a second
// held the lock for 17 ms once a second.
//
// An entry is live while its group is dirty with the entry's time as its
// dirtySince; readers skip the others (stale: the group was persisted,
// became dirty anew, or was put back due earlier after a failed write).
// A group marked dirty twice within a millisecond has two live entries;
// the first one taken persists it and leaves the other stale.
type dirtyQueue struct {
	entries []dirtyEntry
	head    int
}

// dirtyEntry is one group in a dirtyQueue.
type dirtyEntry struct {
	g     *group
	since int64
}

// push appends g, dirty since since (unix ms).
func (q *dirtyQueue) push(g *group, since int64) {
	if q.head > 0 && q.head >= len(q.entries)/2 {
		// Reuse the taken half rather than growing: the queue stays about
		// the size of the dirty set.
		n := copy(q.entries, q.entries[q.head:])
		clear(q.entries[n:])
		q.entries, q.head = q.entries[:n], 0
	}
	q.entries = append(q.entries, dirtyEntry{g, since})
}

// front returns the oldest entry, without taking it.
func (q *dirtyQueue) front() (*group, int64, bool) {
	if q.head == len(q.entries) {
		return nil, 0, false
	}
	e := q.entries[q.head]
	return e.g, e.since, true
}

// dirtyQueueKeep is the most entries whose room an empty queue keeps: a
// burst of writes to many keys leaves no array of its size behind.
const dirtyQueueKeep = 4096

// pop takes the oldest entry; the queue must not be empty.
func (q *dirtyQueue) pop() {
	q.entries[q.head] = dirtyEntry{}
	if q.head++; q.head == len(q.entries) {
		q.entries, q.head = q.entries[:0], 0
		if cap(q.entries) > dirtyQueueKeep {
			q.entries = nil
		}
	}
}

// len is the number of entries, stale ones included.
func (q *dirtyQueue) len() int { return len(q.entries) - q.head }
