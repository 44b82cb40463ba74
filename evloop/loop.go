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

// loop is one epoll instance and the connections registered with it. At
// any time one goroutine, the leader, waits in epoll_wait for it.
type loop struct {
	epfd    int
	eventFD int
	handler Handler
	// file owns epfd; raw waits on it through the Go runtime's poller.
	file *os.File
	raw  syscall.RawConn

	mu    sync.RWMutex
	conns []*Conn // by file descriptor

	// wokenMu guards woken: parked connections Wake asked the loop to
	// serve although no bytes arrived.
	wokenMu  sync.Mutex
	woken    []*Conn
	stopping atomic.Bool
	// leaders counts the goroutines that lead or led the loop and have
	// not returned.
	leaders sync.WaitGroup
}

func newLoop(h Handler) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("evloop: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("evloop: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("evloop: register eventfd: %w", err)
	}
	// The Go runtime's poller watches the epoll descriptor itself: a
	// leader with nothing to do parks like any goroutine waiting for a
	// socket, instead of blocking a thread in epoll_wait (which made the
	// scheduler hand its P to another thread, and sysmon poll every
	// 20 µs, for every wait).
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("evloop: epoll descriptor: %w", err)
	}
	file := os.NewFile(uintptr(epfd), "evloop")
	raw, err := file.SyscallConn()
	if err != nil {
		unix.Close(efd)
		file.Close()
		return nil, fmt.Errorf("evloop: epoll descriptor: %w", err)
	}
	return &loop{epfd: epfd, eventFD: efd, handler: h, file: file, raw: raw}, nil
}

func (l *loop) close() error {
	return errors.Join(unix.Close(l.eventFD), l.file.Close())
}

// wait fills events with what is ready, parking the goroutine in the Go
// runtime's poller while nothing is. It fails once the loop is closed.
func (l *loop) wait(events []unix.EpollEvent) (int, error) {
	n := 0
	err := l.raw.Read(func(fd uintptr) bool {
		r, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, fd, uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
		n = int(r)
		if errno != 0 {
			n = 0
			return errno != unix.EAGAIN && errno != unix.EINTR
		}
		return n > 0
	})
	return n, err
}

// wake makes the leader return from epoll_wait.
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
	// Registered disarmed: a running connection arms it for each wait.
	ev := unix.EpollEvent{Events: unix.EPOLLONESHOT, Fd: int32(c.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
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

// ready is one connection the leader is to look at.
type ready struct {
	c      *Conn
	events uint32
}

// leader is one goroutine's turn at leading a loop.
type leader struct {
	l     *loop
	batch []ready
	i     int
	// lost is set when a handler detached its connection: the loop
	// goes on in another goroutine, this one stays with the connection.
	lost bool
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
			n, err := l.wait(events)
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
					batch = append(batch, ready{c, ev.Events})
				}
			}
		}
		if l.stopping.Load() {
			return
		}
		ld.batch = batch
		for ld.i = 0; ld.i < len(batch); ld.i++ {
			l.serve(ld, batch[ld.i])
			if ld.lost {
				return
			}
		}
	}
}

// takeWoken drains the eventfd and appends the woken connections.
func (l *loop) takeWoken(batch []ready) []ready {
	var buf [8]byte
	unix.Read(l.eventFD, buf[:])
	l.wokenMu.Lock()
	for _, c := range l.woken {
		batch = append(batch, ready{c, unix.EPOLLIN})
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
		c.state = stateServing
		c.leader = ld
		c.mu.Unlock()
	case stateRunning:
		c.mu.Unlock()
		// A one-shot registration fired: wake both waiters, each looks
		// again and arms again what it still needs.
		signal(c.rdy)
		signal(c.wdy)
		return
	default: // being served (woken twice in one batch) or released
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
	ld.lost = true
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
