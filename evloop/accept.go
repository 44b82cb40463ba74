package evloop

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNotSocketListener is Listen's answer for a listener without a
// descriptor of its own (crypto/tls's): serve its connections the usual way.
var ErrNotSocketListener = errors.New("evloop: listener has no socket descriptor")

// Listener accepts connections of a net.Listener as Conns of a Group. The
// socket is accepted straight into non-blocking mode and never joins the
// Go runtime's poller.
type Listener struct {
	g      *Group
	fd     int // a duplicate of the listener's descriptor
	stopFD int // an eventfd that Close writes
	addr   net.Addr
	closed atomic.Bool
	once   sync.Once
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
	stop, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("evloop: eventfd: %w", err)
	}
	return &Listener{g: g, fd: fd, stopFD: stop, addr: ln.Addr()}, nil
}

// Addr is the listening address.
func (l *Listener) Addr() net.Addr { return l.addr }

// Close makes Accept return net.ErrClosed; the descriptors are closed by
// the Accept that sees it.
func (l *Listener) Close() error {
	if !l.closed.Swap(true) {
		var one = [8]byte{1}
		unix.Write(l.stopFD, one[:])
	}
	return nil
}

// Accept waits for the next connection and returns it running; TCP
// connections get the options net.TCPListener sets (no Nagle delay,
// keep-alive every 15 s). After Close it returns net.ErrClosed.
func (l *Listener) Accept() (*Conn, error) {
	for {
		if l.closed.Load() {
			l.once.Do(func() {
				unix.Close(l.fd)
				unix.Close(l.stopFD)
			})
			return nil, net.ErrClosed
		}
		nfd, sa, err := unix.Accept4(l.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch err {
		case nil:
			return l.conn(nfd, sa)
		case unix.EAGAIN, unix.EINTR, unix.ECONNABORTED:
			fds := []unix.PollFd{{Fd: int32(l.fd), Events: unix.POLLIN}, {Fd: int32(l.stopFD), Events: unix.POLLIN}}
			unix.Poll(fds, -1)
			continue
		}
		return nil, &net.OpError{Op: "accept", Net: l.addr.Network(), Addr: l.addr, Err: os.NewSyscallError("accept4", err)}
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
