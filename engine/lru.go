package engine

// lruList is an intrusive doubly linked list of items, most recently used
// at the front. The zero value is an empty list.
type lruList struct {
	head, tail *item
	n          int
}

func (l *lruList) pushFront(it *item) {
	it.prev = nil
	it.next = l.head
	if l.head != nil {
		l.head.prev = it
	}
	l.head = it
	if l.tail == nil {
		l.tail = it
	}
	l.n++
}

func (l *lruList) remove(it *item) {
	if it.prev != nil {
		it.prev.next = it.next
	} else {
		l.head = it.next
	}
	if it.next != nil {
		it.next.prev = it.prev
	} else {
		l.tail = it.prev
	}
	it.prev, it.next = nil, nil
	l.n--
}

func (l *lruList) moveToFront(it *item) {
	if l.head == it {
		return
	}
	l.remove(it)
	l.pushFront(it)
}
