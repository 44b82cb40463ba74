package evloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The socket calls of a loop never block: every descriptor is
// non-blocking, so a call either moves bytes at once or fails with
// EAGAIN. They are made as raw system calls, without telling the Go
// scheduler (entersyscall and exitsyscall): that bookkeeping, the wake-up of
// sysmon it often causes, and the hand-off of the P when sysmon finds a call
// slow, cost more than the call itself for a small command. The longest
// such call copies one socket buffer's worth of bytes (a few MiB, well
// under a millisecond).

// rawRead is read(2) on a non-blocking descriptor.
func rawRead(fd int, p []byte) (int, error) { return rawIO(unix.SYS_READ, fd, p) }

// rawWrite is write(2) on a non-blocking descriptor.
func rawWrite(fd int, p []byte) (int, error) { return rawIO(unix.SYS_WRITE, fd, p) }

// rawIO is read(2) or write(2) (trap) of p on a non-blocking descriptor.
func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	n, _, errno := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// iovMax is Linux's IOV_MAX: the most buffers one writev takes.
const iovMax = 1024

// rawWritev is writev(2) of the first iovMax of bufs on a non-blocking
// descriptor, with iov as the room for the vector (reused between calls).
func rawWritev(fd int, bufs [][]byte, iov []unix.Iovec) (int, []unix.Iovec, error) {
	if len(bufs) > iovMax {
		bufs = bufs[:iovMax]
	}
	iov = iov[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		v := unix.Iovec{Base: unsafe.SliceData(b)}
		v.SetLen(len(b))
		iov = append(iov, v)
	}
	if len(iov) == 0 {
		return 0, iov, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	clear(iov) // no references to written buffers are kept
	if errno != 0 {
		return -1, iov, errno
	}
	return int(n), iov, nil
}
