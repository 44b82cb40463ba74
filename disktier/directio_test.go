//go:build linux

package disktier

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestValueLogAppendsAreAlignedAndReadBack appends payloads of awkward
// lengths, from memory that is and is not aligned, through the direct
// descriptor and, with it taken away, through the page cache: every
// record starts at a multiple of directAlign and reads back as written,
// also after the log is reopened.
func TestValueLogAppendsAreAlignedAndReadBack(t *testing.T) {
	for _, direct := range []bool{true, false} {
		name := map[bool]string{true: "direct", false: "page-cache"}[direct]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			v, err := openValueLog(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !direct {
				for id, f := range v.direct {
					f.Close()
					delete(v.direct, id)
				}
			} else if len(v.direct) == 0 {
				t.Skip("the file system under the test's temporary directory refuses O_DIRECT")
			}
			rng := rand.New(rand.NewPCG(1, 2))
			type written struct {
				ptr  vlogPointer
				want []byte
			}
			var all []written
			for _, n := range []int{1, 100, 4095, 4096, 4097, 8191, 1 << 20, 1<<20 + 3, 3<<20 - 1, 5 << 20} {
				for _, shift := range []int{0, 1, 512} {
					mem := alignedBuffer(n + shift)
					p := mem[shift:]
					for i := range p {
						p[i] = byte(rng.Uint32())
					}
					ptr, err := v.append(p)
					if err != nil {
						t.Fatalf("append of %d bytes at memory offset %d: %v", n, shift, err)
					}
					v.settle(ptr)
					if ptr.off%directAlign != 0 {
						t.Fatalf("a record of %d bytes starts at %d, not a multiple of %d", n, ptr.off, directAlign)
					}
					all = append(all, written{ptr, bytes.Clone(p)})
				}
			}
			check := func(v *valueLog, when string) {
				t.Helper()
				for _, w := range all {
					got, _, err := v.read(w.ptr, pieceHash(flagXXH3))
					if err != nil || !bytes.Equal(got, w.want) {
						t.Fatalf("%s: record of %d bytes at %d: %v, equal %v", when, w.ptr.n, w.ptr.off, err, bytes.Equal(got, w.want))
					}
				}
			}
			check(v, "before reopen")
			v.close()
			if v, err = openValueLog(dir); err != nil {
				t.Fatal(err)
			}
			defer v.close()
			check(v, "after reopen")
		})
	}
}

// TestValueLogAppendsBypassThePageCache: where the file system does direct
// I/O, an appended payload is on the device and not also in the page
// cache beside the memory tier's copy (mincore of the segment finds none
// of its pages resident).
func TestValueLogAppendsBypassThePageCache(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("tmpfs keeps every file in the page cache")
	}
	// The file system itself first: one that takes O_DIRECT and still
	// caches what is written (as some do) is no test of the log.
	probePath := filepath.Join(dir, "probe")
	probe, err := os.OpenFile(probePath, os.O_CREATE|os.O_WRONLY|unix.O_DIRECT, 0o644)
	if err != nil {
		t.Skipf("the file system under the test's temporary directory refuses O_DIRECT: %v", err)
	}
	_, err = probe.WriteAt(alignedBuffer(1<<20), 0)
	probe.Close()
	if err != nil {
		t.Skipf("the file system under the test's temporary directory refuses direct writes: %v", err)
	}
	if n := residentPages(t, probePath, 1<<20); n > 0 {
		t.Skipf("the file system under the test's temporary directory caches direct writes (%d pages)", n)
	}
	v, err := openValueLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	payload := alignedBuffer(4<<20 + 100)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	ptr, err := v.append(payload)
	if err != nil {
		t.Fatal(err)
	}
	v.settle(ptr)
	size := int(alignUp(int64(ptr.n)))
	if n := residentPages(t, filepath.Join(dir, segmentName(ptr.seg)), size); n > 0 {
		t.Fatalf("%d of the %d pages of a direct append are in the page cache", n, size/os.Getpagesize())
	}
	if got, _, err := v.read(ptr, pieceHash(flagXXH3)); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read back: %v", err)
	}
}

// TestValueLogFallsBackToThePageCacheWhenDirectWritesFail: a direct
// descriptor whose writes fail (here one opened read-only, as a file
// system that accepts O_DIRECT at open and refuses the writes would) does
// not fail the append: it and the later ones, in new segments too, go
// through the page cache.
func TestValueLogFallsBackToThePageCacheWhenDirectWritesFail(t *testing.T) {
	dir := t.TempDir()
	v, err := openValueLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	if len(v.direct) == 0 {
		t.Skip("the file system under the test's temporary directory refuses O_DIRECT")
	}
	v.mu.Lock()
	v.direct[v.cur].Close()
	ro, err := os.Open(filepath.Join(dir, segmentName(v.cur)))
	if err != nil {
		v.mu.Unlock()
		t.Fatal(err)
	}
	v.direct[v.cur] = ro
	v.mu.Unlock()
	payload := alignedBuffer(1 << 20)
	for i := range payload {
		payload[i] = byte(i / 4096)
	}
	ptr, err := v.append(payload)
	if err != nil {
		t.Fatalf("append with a failing direct descriptor: %v", err)
	}
	v.settle(ptr)
	if got, _, err := v.read(ptr, pieceHash(flagXXH3)); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read back: %v", err)
	}
	v.mu.Lock()
	err = v.rotateLocked()
	directs := len(v.direct)
	v.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if directs != 0 {
		t.Fatalf("%d direct descriptors after a direct write failed, want none", directs)
	}
	if ptr, err = v.append(payload); err != nil {
		t.Fatal(err)
	}
	v.settle(ptr)
	if got, _, err := v.read(ptr, pieceHash(flagXXH3)); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("read back from the next segment: %v", err)
	}
}

// residentPages counts the pages of the first size bytes of the file at
// path that are in the page cache (mincore).
func residentPages(t *testing.T, path string, size int) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	pages := make([]byte, (size+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&pages[0]))); errno != 0 {
		t.Fatal(errno)
	}
	resident := 0
	for _, p := range pages {
		resident += int(p & 1)
	}
	return resident
}
