package evloop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Handler serves a parked connection that became readable, on a loop's
// goroutine. It reads what arrived (Conn.TryRead), answers it, and returns;
// the connection is parked again unless the handler released it or it
// went running (Detach, or a Read or Write that had to wait): then the
// handler's goroutine is the connection's own, and the loop goes on in
// another goroutine.
type Handler func(c *Conn)

// Group is a set of loops sharing the connections of a server round-robin.
type Group struct {
	loops []*loop
	next  atomic.Uint32
}

// NewGroup starts n loops (at least one) that call h for readable
// connections.
func NewGroup(n int, h Handler) (*Group, error) {
	g := &Group{}
	for range max(n, 1) {
		l, err := newLoop(h)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.loops = append(g.loops, l)
		l.startLeader(nil)
	}
	return g, nil
}

// Close stops the loops. Connections still open are left as they are:
// the caller closes them first.
func (g *Group) Close() error {
	var errs []error
	for _, l := range g.loops {
		l.stopping.Store(true)
		l.wake()
		errs = append(errs, l.waits.close()) // ends wakeWaiters' wait
	}
	for _, l := range g.loops {
		l.leaders.Wait()
	}
	for _, l := range g.loops {
		errs = append(errs, l.close())
	}
	return errors.Join(errs...)
}

// NewConn takes over fd, a connected non-blocking socket, in running mode:
// the caller's goroutine owns it until it calls Park.
func (g *Group) NewConn(fd int, local, remote net.Addr) (*Conn, error) {
	l := g.loops[int(g.next.Add(1))%len(g.loops)]
	c := &Conn{
		fd:     fd,
		l:      l,
		local:  local,
		remote: remote,
		rdy:    make(chan struct{}, 1),
		wdy:    make(chan struct{}, 1),
		rkick:  make(chan struct{}, 1),
		wkick:  make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	if err := l.add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// loop is two epoll instances and the connections registered with them:
// serving holds the parked connections (and the eventfd that Wake writes),
// and at any time one goroutine, the leader, serves what it reports; waits
// holds the one-shot registrations of running connections waiting to read
// or write, and a goroutine of its own only wakes them. A running
// connection's wait never depends on the leader, which may be busy with a
// long command.
type loop struct {
	serving *poller
	// gate is the epoll instance the Go runtime's poller watches for the
	// leader: it holds serving with a one-shot registration, armed only
	// while the leader waits (waitServing).
	gate    *poller
	waits   *poller
	eventFD int
	handler Handler

	mu    sync.RWMutex
	conns []*Conn // by file descriptor

	// wokenMu guards woken: parked connections Wake asked the loop to
	// serve although no bytes arrived.
	wokenMu  sync.Mutex
	woken    []*Conn
	stopping atomic.Bool
	// leaders counts the goroutines that lead or led the loop and have
	// not returned, and the waits goroutine.
	leaders sync.WaitGroup
}

func newLoop(h Handler) (*loop, error) {
	serving, err := newRawPoller()
	if err != nil {
		return nil, err
	}
	gate, err := newPoller()
	if err != nil {
		serving.close()
		return nil, err
	}
	if err := gate.ctl(unix.EPOLL_CTL_ADD, serving.fd, unix.EPOLLONESHOT); err != nil {
		serving.close()
		gate.close()
		return nil, fmt.Errorf("evloop: register the serving poller: %w", err)
	}
	waits, err := newPoller()
	if err != nil {
		serving.close()
		gate.close()
		return nil, err
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		serving.close()
		gate.close()
		waits.close()
		return nil, fmt.Errorf("evloop: eventfd: %w", err)
	}
	l := &loop{serving: serving, gate: gate, waits: waits, eventFD: efd, handler: h}
	if err := serving.ctl(unix.EPOLL_CTL_ADD, efd, unix.EPOLLIN); err != nil {
		l.close()
		waits.close()
		return nil, fmt.Errorf("evloop: register eventfd: %w", err)
	}
	l.leaders.Add(1)
	go func() {
		defer l.leaders.Done()
		l.wakeWaiters()
	}()
	return l, nil
}

// close closes what the loop holds; Group.Close closed waits already,
// to end wakeWaiters.
func (l *loop) close() error {
	return errors.Join(unix.Close(l.eventFD), l.gate.close(), l.serving.close())
}

// wakeWaiters wakes the running connections whose one-shot registration
// fired, until the loop closes.
func (l *loop) wakeWaiters() {
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := l.waits.wait(events)
		if err != nil || l.stopping.Load() {
			return
		}
		for _, ev := range events[:n] {
			if c := l.lookup(ev.Fd); c != nil {
				// Wake both waiters: each looks again and arms again
				// what it still needs.
				signal(c.rdy)
				signal(c.wdy)
			}
		}
	}
}

// poller is an epoll instance. One from newPoller (a loop's gate, its
// waits) is watched by the Go runtime's poller: a goroutine with nothing
// to do parks like any goroutine waiting for a socket, instead of blocking
// a thread in epoll_wait (which made the scheduler hand its P to another
// thread, and sysmon poll every 20 µs, for every wait: it measured worse).
// One from newRawPoller (a loop's serving) is only polled.
type poller struct {
	fd   int
	file *os.File // owns fd; nil for a raw poller
	raw  syscall.RawConn
	// events and n are the state of the wait in progress, tryWait its
	// callback (bound once).
	events  []unix.EpollEvent
	n       int
	tryWait func(fd uintptr) bool
}

func newPoller() (*poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("evloop: epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("evloop: epoll descriptor: %w", err)
	}
	file := os.NewFile(uintptr(fd), "evloop")
	raw, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("evloop: epoll descriptor: %w", err)
	}
	p := &poller{fd: fd, file: file, raw: raw}
	p.tryWait = p.waitOnce
	return p, nil
}

func (p *poller) close() error {
	if p.file == nil {
		return unix.Close(p.fd)
	}
	return p.file.Close()
}

// newRawPoller returns an epoll instance the Go runtime does not watch.
func newRawPoller() (*poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("evloop: epoll_create1: %w", err)
	}
	return &poller{fd: fd}, nil
}

// poll is one epoll_pwait of p that does not block: how many events it
// filled, 0 on an error.
func (p *poller) poll(events []unix.EpollEvent) int {
	n, _ := epollPoll(uintptr(p.fd), events)
	return n
}

// epollPoll is one epoll_pwait of the epoll descriptor fd that does not
// block, as a raw system call: the events it filled, or the error.
func epollPoll(fd uintptr, events []unix.EpollEvent) (int, unix.Errno) {
	r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), 0
}

// waitServing fills events with the serving poller's ready descriptors,
// parking the leader while there are none. The serving poller is not in
// the Go runtime's poller: while the leader is busy, sockets that become
// readable wake nothing (in the runtime's poller they woke an idle
// runtime thread, which found the leader running and often preempted its
// thread: two in three of the server's involuntary context switches under
// 50 clients). Only to wait does the leader arm the gate's one-shot
// registration of the serving poller and park on the gate.
func (l *loop) waitServing(events []unix.EpollEvent) (int, error) {
	if n := l.serving.poll(events); n > 0 {
		return n, nil
	}
	for {
		// Armed while the serving poller has something ready, the gate is
		// ready at once: nothing is lost between the poll and the arming.
		if err := l.gate.ctl(unix.EPOLL_CTL_MOD, l.serving.fd, unix.EPOLLIN|unix.EPOLLONESHOT); err != nil {
			return 0, err
		}
		// The wait takes the gate's event, which disarms it.
		if _, err := l.gate.wait(events[:1:1]); err != nil {
			return 0, err
		}
		if n := l.serving.poll(events); n > 0 {
			return n, nil
		}
	}
}

// ctl registers (op) fd for events.
func (p *poller) ctl(op, fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(p.fd, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// wait fills events with what is ready, parking the goroutine in the Go
// runtime's poller while nothing is. It fails once the poller is closed.
// One goroutine at a time waits on a poller (the loop's leader, or
// wakeWaiters), so the callback and its state are the poller's own: a
// closure per wait would be an allocation per wait.
func (p *poller) wait(events []unix.EpollEvent) (int, error) {
	p.events, p.n = events, 0
	err := p.raw.Read(p.tryWait)
	p.events = nil
	return p.n, err
}

// waitOnce is wait's callback: one epoll_pwait that does not block.
func (p *poller) waitOnce(fd uintptr) bool {
	var errno unix.Errno
	p.n, errno = epollPoll(fd, p.events)
	if errno != 0 {
		return errno != unix.EAGAIN && errno != unix.EINTR
	}
	return p.n > 0
}

// wake makes the leader look at the eventfd.
func (l *loop) wake() {
	var one = [8]byte{1}
	unix.Write(l.eventFD, one[:])
}

func (l *loop) add(c *Conn) error {
	l.mu.Lock()
	for c.fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*Conn, len(l.conns)+64)...)
	}
	l.conns[c.fd] = c
	l.mu.Unlock()
	// Registered disarmed with both: Park arms the first, waits the
	// second.
	if err := l.serving.ctl(unix.EPOLL_CTL_ADD, c.fd, unix.EPOLLONESHOT); err != nil {
		l.forget(c)
		return fmt.Errorf("evloop: register fd %d: %w", c.fd, err)
	}
	if err := l.waits.ctl(unix.EPOLL_CTL_ADD, c.fd, unix.EPOLLONESHOT); err != nil {
		l.serving.ctl(unix.EPOLL_CTL_DEL, c.fd, 0)
		l.forget(c)
		return fmt.Errorf("evloop: register fd %d: %w", c.fd, err)
	}
	return nil
}

func (l *loop) forget(c *Conn) {
	l.mu.Lock()
	if c.fd < len(l.conns) && l.conns[c.fd] == c {
		l.conns[c.fd] = nil
	}
	l.mu.Unlock()
}

func (l *loop) lookup(fd int32) *Conn {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if int(fd) < len(l.conns) {
		return l.conns[fd]
	}
	return nil
}

// startLeader starts a goroutine leading the loop, serving pending first.
func (l *loop) startLeader(pending []ready) {
	l.leaders.Add(1)
	go func() {
		defer l.leaders.Done()
		l.lead(pending)
	}()
}

// ready is one connection the leader is to look at; again is set for a
// Defer's second run of its handler.
type ready struct {
	c      *Conn
	events uint32
	again  bool
}

// leader is one goroutine's turn at leading a loop.
type leader struct {
	l     *loop
	batch []ready
	i     int
	// lost is set when a handler detached its connection: the loop
	// goes on in another goroutine, this one stays with the connection.
	lost atomic.Bool
}

// lead waits for events and serves them until the loop stops or a handler
// takes this goroutine for its connection. It first serves pending, the
// rest of the batch of the leader before it.
func (l *loop) lead(pending []ready) {
	ld := &leader{l: l}
	events := make([]unix.EpollEvent, 128)
	var batch []ready
	for {
		if pending != nil {
			batch, pending = pending, nil
		} else {
			n, err := l.waitServing(events)
			if err != nil {
				return // the loop was closed
			}
			batch = batch[:0]
			for _, ev := range events[:n] {
				if int(ev.Fd) == l.eventFD {
					batch = l.takeWoken(batch)
					continue
				}
				if c := l.lookup(ev.Fd); c != nil {
					batch = append(batch, ready{c: c, events: ev.Events})
				}
			}
		}
		if l.stopping.Load() {
			return
		}
		// Handlers append to the batch (Defer) as it is served.
		ld.batch = batch
		for ld.i = 0; ld.i < len(ld.batch); ld.i++ {
			l.serve(ld, ld.batch[ld.i])
			if ld.lost.Load() {
				return
			}
		}
		batch = ld.batch
		clear(batch) // let go of the connections until the next wait
	}
}

// takeWoken drains the eventfd and appends the woken connections.
func (l *loop) takeWoken(batch []ready) []ready {
	var buf [8]byte
	unix.Read(l.eventFD, buf[:])
	l.wokenMu.Lock()
	for _, c := range l.woken {
		batch = append(batch, ready{c: c, events: unix.EPOLLIN})
	}
	clear(l.woken)
	l.woken = l.woken[:0]
	l.wokenMu.Unlock()
	return batch
}

// serve runs the handler of a parked connection, or wakes the goroutine of
// a running one.
func (l *loop) serve(ld *leader, r ready) {
	c := r.c
	c.mu.Lock()
	switch c.state {
	case stateParked:
		// Set here, under the lock, never after the handler: a handler
		// that detaches may park the connection again, and another leader
		// serve it, before this goroutine is back from it.
		c.state, c.leader, c.again = stateServing, ld, r.again
		c.mu.Unlock()
	default: // running (woken before it left), being served (woken twice
		// in one batch) or released
		c.mu.Unlock()
		return
	}
	l.handler(c)
	c.mu.Lock()
	if c.state == stateServing && c.leader == ld {
		c.state = stateParked
		c.leader = nil
	}
	c.mu.Unlock()
}

// handOff passes the loop to a new goroutine, with the rest of ld's batch.
func (ld *leader) handOff() {
	ld.lost.Store(true)
	rest := append([]ready(nil), ld.batch[ld.i+1:]...)
	if rest == nil {
		rest = []ready{}
	}
	ld.l.startLeader(rest)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
