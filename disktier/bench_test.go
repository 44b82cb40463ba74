package disktier

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The Put/Get benchmarks and the RawFile ones move the same bytes through the
// same file system, so their MB/s ratio is the cost of the store over plain
// sequential I/O. Run them with a bounded count, e.g.
//
//	go test ./disktier/ -run '^$' -bench 'Put|Get|RawFile' -benchtime=64x
//
// Values are random (incompressible) and the store runs with compression
// none, so the comparison is of I/O paths, not codecs.

func chunkKey(i int) []byte {
	return fmt.Appendf(nil, "llama@1@0@%016x@bfloat16kv_bytes", i)
}

func benchmarkPut(b *testing.B, size int, opts Options) {
	if opts.Compression == CompressionDefault {
		opts.Compression = CompressionNone
	}
	s := openTest(b, opts)
	values := make([][]byte, 4)
	for i := range values {
		if opts.Compression == CompressionNone {
			values[i] = randomBytes(uint64(i), size)
		} else {
			values[i] = bf16KV(uint64(i), size)
		}
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := range b.N {
		if err := s.Put(ctx, 0, chunkKey(i), values[i%len(values)], RecordMeta{Shuffle: true}); err != nil {
			b.Fatal(err)
		}
	}
	// Count the time to get everything to disk, as the raw write's fsync does.
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(st.WriteAmp, "write-amp")
	b.ReportMetric(float64(st.WriteStoredBytes)/float64(st.WriteBytes), "stored/raw")
}

func benchmarkGet(b *testing.B, size, count int, opts Options) {
	if opts.Compression == CompressionDefault {
		opts.Compression = CompressionNone
	}
	s := openTest(b, opts)
	for i := range count {
		v := randomBytes(uint64(i), size)
		if opts.Compression != CompressionNone {
			v = bf16KV(uint64(i), size)
		}
		if err := s.Put(ctx, 0, chunkKey(i), v, RecordMeta{Shuffle: true}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := range b.N {
		v, _, err := s.Get(ctx, 0, chunkKey(i%count))
		if err != nil || len(v) != size {
			b.Fatalf("Get: %d bytes, %v", len(v), err)
		}
	}
}

func BenchmarkPut1MiB(b *testing.B)  { benchmarkPut(b, 1<<20, Options{}) }
func BenchmarkPut32MiB(b *testing.B) { benchmarkPut(b, 32<<20, Options{}) }

// The WAL variants show what the write-ahead log costs (Options.WAL).
func BenchmarkPut1MiBWAL(b *testing.B)  { benchmarkPut(b, 1<<20, Options{WAL: true}) }
func BenchmarkPut32MiBWAL(b *testing.B) { benchmarkPut(b, 32<<20, Options{WAL: true}) }

// The Zstd variants store shuffled bf16 data with zstd.
func BenchmarkPut1MiBZstd(b *testing.B) {
	benchmarkPut(b, 1<<20, Options{Compression: CompressionZstd})
}
func BenchmarkPut32MiBZstd(b *testing.B) {
	benchmarkPut(b, 32<<20, Options{Compression: CompressionZstd})
}

// Get reads a working set of 128 MiB (1 MiB values) or 256 MiB (32 MiB
// values), flushed to blob files; the page cache holds it, as it holds the
// raw file in BenchmarkRawFileRead.
func BenchmarkGet1MiB(b *testing.B)  { benchmarkGet(b, 1<<20, 128, Options{}) }
func BenchmarkGet32MiB(b *testing.B) { benchmarkGet(b, 32<<20, 8, Options{}) }
func BenchmarkGet1MiBZstd(b *testing.B) {
	benchmarkGet(b, 1<<20, 128, Options{Compression: CompressionZstd})
}
func BenchmarkGet32MiBZstd(b *testing.B) {
	benchmarkGet(b, 32<<20, 8, Options{Compression: CompressionZstd})
}

func benchmarkRawWrite(b *testing.B, size int) {
	f, err := os.Create(filepath.Join(b.TempDir(), "raw"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	values := make([][]byte, 4)
	for i := range values {
		values[i] = randomBytes(uint64(i), size)
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.Write(values[i%len(values)]); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
}

func benchmarkRawRead(b *testing.B, size, count int) {
	path := filepath.Join(b.TempDir(), "raw")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for i := range count {
		if _, err := f.Write(randomBytes(uint64(i), size)); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := range b.N {
		if _, err := f.ReadAt(buf, int64(i%count)*int64(size)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRawFileWrite1MiB(b *testing.B)  { benchmarkRawWrite(b, 1<<20) }
func BenchmarkRawFileWrite32MiB(b *testing.B) { benchmarkRawWrite(b, 32<<20) }
func BenchmarkRawFileRead1MiB(b *testing.B)   { benchmarkRawRead(b, 1<<20, 128) }
func BenchmarkRawFileRead32MiB(b *testing.B)  { benchmarkRawRead(b, 32<<20, 8) }

// BenchmarkRebuild1M measures what a restart costs with 1,000,000 small
// records (28-byte values, LMCache's metadata size): Open, whose header scan
// rebuilds the accounting, and one Iterate, the engine's index rebuild. It
// runs one round whatever -benchtime says; the setup (1M Puts) is reported as
// put-us/op.
func BenchmarkRebuild1M(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	opts := Options{Dir: dir, MaxDisk: -1}
	s, err := Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	value := randomBytes(1, 28)
	start := time.Now()
	for i := range n {
		if err := s.Put(ctx, i%4, fmt.Appendf(nil, "llama@1@0@%016x@bfloat16metadata", i), value, RecordMeta{}); err != nil {
			b.Fatal(err)
		}
	}
	put := time.Since(start)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start = time.Now()
	s, err = Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	open := time.Since(start)
	start = time.Now()
	count := 0
	if err := s.Iterate(ctx, func(int, []byte, RecordMeta, int64) error { count++; return nil }); err != nil {
		b.Fatal(err)
	}
	iter := time.Since(start)
	b.StopTimer()
	if count != n {
		b.Fatalf("Iterate saw %d records, want %d", count, n)
	}
	st := s.Stats()
	_ = s.Close()
	b.ReportMetric(float64(put.Microseconds())/n, "put-us/op")
	b.ReportMetric(open.Seconds(), "open-s")
	b.ReportMetric(iter.Seconds(), "iterate-s")
	b.ReportMetric(float64(st.PhysicalBytes)/n, "disk-B/record")
}

// benchmarkWriteBehind4KiB rewrites 100,000 keys of 4 KiB each (the
// engine's write-behind under redis-benchmark -d 4096 -r 100000), perCall
// groups per call: 1 is a PutGroup per group, more is PutGroups. Every
// record replaces an older one, so its header is read for the accounting.
//
//	go test ./disktier/ -run '^$' -bench WriteBehind4KiB -benchtime=200000x
func benchmarkWriteBehind4KiB(b *testing.B, perCall int) {
	const keys = 100_000
	s := openTest(b, Options{Compression: CompressionNone})
	value := randomBytes(1, 4096)
	writes := make([]GroupWrite, 0, perCall)
	flush := func() {
		if err := s.PutGroups(ctx, writes); err != nil {
			b.Fatal(err)
		}
		writes = writes[:0]
	}
	for i := range keys {
		writes = append(writes, GroupWrite{Entries: []Entry{{Key: fmt.Appendf(nil, "key:%06d", i), Value: value, Fresh: true}}})
		if len(writes) == 1000 {
			flush()
		}
	}
	flush()
	b.SetBytes(4096)
	cpu0 := processCPU(b)
	b.ResetTimer()
	for i := range b.N {
		writes = append(writes, GroupWrite{Entries: []Entry{{Key: fmt.Appendf(nil, "key:%06d", (i*7919)%keys), Value: value}}})
		if len(writes) == perCall {
			flush()
		}
	}
	flush()
	b.StopTimer()
	// CPU of the whole process, Pebble's flushes and compactions included.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkWriteBehind4KiBOneGroupPerCall(b *testing.B) { benchmarkWriteBehind4KiB(b, 1) }
func BenchmarkWriteBehind4KiB1000GroupsPerCall(b *testing.B) {
	benchmarkWriteBehind4KiB(b, 1000)
}
