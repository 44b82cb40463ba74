package evloop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrNotSocketListener is Listen's answer for a listener without a
// descriptor of its own (crypto/tls's): serve its connections the usual way.
var ErrNotSocketListener = errors.New("evloop: listener has no socket descriptor")

// Listener accepts connections of a net.Listener as Conns of a Group. It
// waits for a connection in the Go runtime's poller, where the loops wait
// too, and accepts it with accept4 straight into non-blocking mode; the
// connection's socket never joins the runtime's poller.
type Listener struct {
	g      *Group
	file   *os.File // a duplicate of the listener's descriptor, in the runtime's poller
	raw    syscall.RawConn
	addr   net.Addr
	closed atomic.Bool
	once   sync.Once
	// tryAccept is Accept's callback, bound once; nfd, sa and err are
	// what its last call accepted, or why it failed.
	tryAccept func(fd uintptr) bool
	nfd       int
	sa        unix.Sockaddr
	err       error
}

// Listen accepts the connections of ln (a *net.TCPListener or
// *net.UnixListener) for g. ln stays the caller's to close; Close the
// Listener too.
func (g *Group) Listen(ln net.Listener) (*Listener, error) {
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, ErrNotSocketListener
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("evloop: listener descriptor: %w", err)
	}
	fd := -1
	var derr error
	if err := raw.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, fmt.Errorf("evloop: listener descriptor: %w", err)
	}
	if derr != nil {
		return nil, fmt.Errorf("evloop: duplicate listener descriptor: %w", derr)
	}
	// Non-blocking before NewFile, so that the file joins the runtime's
	// poller and a wait in Accept parks the goroutine, as the loops'
	// waits do, instead of blocking a thread in poll.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("evloop: listener descriptor: %w", err)
	}
	file := os.NewFile(uintptr(fd), "evloop-listener")
	fraw, err := file.SyscallConn()
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("evloop: listener descriptor: %w", err)
	}
	l := &Listener{g: g, file: file, raw: fraw, addr: ln.Addr()}
	l.tryAccept = l.acceptOnce
	return l, nil
}

// Addr is the listening address.
func (l *Listener) Addr() net.Addr { return l.addr }

// Close makes Accept return net.ErrClosed; the duplicate descriptor is
// closed by the Accept that sees it.
func (l *Listener) Close() error {
	if !l.closed.Swap(true) {
		// Wakes an Accept waiting in the poller; it sees closed.
		return l.file.SetReadDeadline(time.Unix(1, 0))
	}
	return nil
}

// Accept waits for the next connection and returns it running; TCP
// connections get the options net.TCPListener sets (no Nagle delay,
// keep-alive every 15 s). After Close it returns net.ErrClosed. One
// goroutine at a time may call it.
func (l *Listener) Accept() (*Conn, error) {
	for {
		if l.closed.Load() {
			l.once.Do(func() { l.file.Close() })
			return nil, net.ErrClosed
		}
		l.nfd, l.sa, l.err = -1, nil, nil
		werr := l.raw.Read(l.tryAccept)
		if l.nfd >= 0 {
			return l.conn(l.nfd, l.sa)
		}
		if l.closed.Load() {
			continue
		}
		err := l.err
		if err != nil {
			err = os.NewSyscallError("accept4", err)
		} else if werr != nil {
			err = werr
		} else {
			continue
		}
		return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: err}
	}
}

// acceptOnce is Accept's callback: accept4 without waiting, true when it
// accepted a connection or failed for good, false to wait for the next.
func (l *Listener) acceptOnce(fd uintptr) bool {
	for {
		nfd, sa, err := unix.Accept4(int(fd), unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			l.nfd, l.sa = nfd, sa
			return true
		case unix.EINTR, unix.ECONNABORTED:
			continue
		case unix.EAGAIN:
			return false
		}
		l.err = err
		return true
	}
}

func (l *Listener) conn(nfd int, sa unix.Sockaddr) (*Conn, error) {
	local, remote := sockAddr(nil, l.addr), sockAddr(sa, l.addr)
	if lsa, err := unix.Getsockname(nfd); err == nil {
		local = sockAddr(lsa, l.addr)
	}
	if _, isTCP := l.addr.(*net.TCPAddr); isTCP {
		setTCPOptions(nfd)
	}
	c, err := l.g.NewConn(nfd, local, remote)
	if err != nil {
		unix.Close(nfd)
		return nil, err
	}
	return c, nil
}

// setTCPOptions sets what net.TCPListener.Accept sets by default.
func setTCPOptions(fd int) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 15)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, 15)
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, 9)
}

// sockAddr converts a socket address; like is the listener's address, which
// gives the network of an address the kernel left out.
func sockAddr(sa unix.Sockaddr, like net.Addr) net.Addr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: append(net.IP(nil), a.Addr[:]...), Port: a.Port}
	case *unix.SockaddrUnix:
		return &net.UnixAddr{Name: a.Name, Net: "unix"}
	}
	if _, ok := like.(*net.UnixAddr); ok {
		return &net.UnixAddr{Net: "unix"}
	}
	return like
}
