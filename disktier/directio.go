package disktier

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// Direct appends. A value-log append through the page cache copies the
// payload into freshly allocated cache pages (copy_folio_from_iter took
// 46% of the server's CPU under 1 MiB SETs), and the copy then sits in the
// cache beside the memory tier's own. Appends therefore go through a second
// descriptor opened with O_DIRECT where the file system allows it: the
// device reads the payload from the caller's memory, and the kernel only
// pins its pages. Reads, truncation and fsync keep using the ordinary
// descriptor; the kernel keeps the page cache coherent with direct writes
// (it drops cached pages over a range a direct write covers).
//
// Direct I/O wants the file offset, the length and the memory address
// aligned to the device's block size. Every record in a segment therefore
// starts at a multiple of directAlign (the gap after a record is never
// read), a payload whose memory is aligned (a large value the server read
// into an allocation of its own) is written in place up to its last whole
// block, and the rest, or all of an unaligned payload, goes through an
// aligned bounce buffer.

// directAlign is the alignment of records in a segment, and of the memory
// and lengths of direct writes: the page size, which is a multiple of any
// logical block size Linux supports.
const directAlign = 4096

// directBounceSize is the size of a bounce buffer for unaligned payloads.
const directBounceSize = 1 << 20

// alignUp rounds n up to a multiple of directAlign.
func alignUp(n int64) int64 { return (n + directAlign - 1) &^ (directAlign - 1) }

// aligned reports whether b's memory starts at a multiple of directAlign.
func aligned(b []byte) bool {
	return len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%directAlign == 0
}

// alignedBuffer returns n bytes whose memory starts at a multiple of
// directAlign.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	skip := int((directAlign - uintptr(unsafe.Pointer(unsafe.SliceData(b)))%directAlign) % directAlign)
	return b[skip : skip+n : skip+n]
}

// directWriter writes payloads through O_DIRECT descriptors, with a pool
// of bounce buffers for what cannot be written in place.
type directWriter struct {
	bounce sync.Pool // *[]byte of directBounceSize, aligned
}

func (d *directWriter) getBounce() *[]byte {
	if b, ok := d.bounce.Get().(*[]byte); ok {
		return b
	}
	b := alignedBuffer(directBounceSize)
	return &b
}

// writeAt writes p at off (a multiple of directAlign) through f, an
// O_DIRECT descriptor. The bytes after p up to the next multiple of
// directAlign are written too, as zeros.
func (d *directWriter) writeAt(f *os.File, p []byte, off int64) error {
	whole := len(p) &^ (directAlign - 1)
	if whole > 0 && aligned(p) {
		if _, err := f.WriteAt(p[:whole], off); err != nil {
			return err
		}
		p, off = p[whole:], off+int64(whole)
	}
	if len(p) == 0 {
		return nil
	}
	bp := d.getBounce()
	defer d.bounce.Put(bp)
	bounce := *bp
	for len(p) > 0 {
		n := copy(bounce, p)
		padded := int(alignUp(int64(n)))
		clear(bounce[n:padded])
		if _, err := f.WriteAt(bounce[:padded], off); err != nil {
			return err
		}
		p, off = p[n:], off+int64(padded)
	}
	return nil
}

// openDirectWriter opens path for direct appends, or returns nil when the
// file system does not do direct I/O (the caller then writes through the
// page cache).
func openDirectWriter(path string) *os.File {
	f, err := openDirect(path)
	if err != nil {
		return nil
	}
	return f
}

// isNoSpace reports whether err says the disk or the quota is full.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
