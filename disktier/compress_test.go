package disktier

import (
	"bytes"
	"fmt"
	"testing"
)

func TestShuffleIsInvertibleForAllLengths(t *testing.T) {
	for n := range 40 {
		src := randomBytes(uint64(n), n)
		sh, back := make([]byte, n), make([]byte, n)
		shuffle2(sh, src)
		unshuffle2(back, sh)
		if !bytes.Equal(back, src) {
			t.Fatalf("n=%d: unshuffle2(shuffle2(x)) != x", n)
		}
	}
	got := make([]byte, 5)
	shuffle2(got, []byte{0x01, 0xa1, 0x02, 0xa2, 0xff})
	if want := []byte{0x01, 0x02, 0xa1, 0xa2, 0xff}; !bytes.Equal(got, want) {
		t.Fatalf("shuffle2 = %x, want low bytes, high bytes, odd tail: %x", got, want)
	}
}

func TestCompressionRoundTripsEveryCodecWithAndWithoutShuffle(t *testing.T) {
	c := newCodecs(MaxValueLen)
	defer c.close()
	inputs := map[string][]byte{
		"empty":     {},
		"one":       {42},
		"odd-kv":    bf16KV(1, 100_001),
		"kv":        bf16KV(2, 1<<20),
		"random":    randomBytes(3, 65_537),
		"zeros":     make([]byte, 300_000),
		"short-odd": bf16KV(4, 17),
	}
	for _, codec := range []Compression{CompressionNone, CompressionS2, CompressionZstd} {
		for _, shuffle := range []bool{false, true} {
			for name, in := range inputs {
				t.Run(fmt.Sprintf("%v/shuffle=%v/%s", codec, shuffle, name), func(t *testing.T) {
					src := in
					if shuffle {
						src = make([]byte, len(in))
						shuffle2(src, in)
					}
					payload, used, err := c.compress(codec, nil, src)
					if err != nil {
						t.Fatal(err)
					}
					if len(payload) > len(in) {
						t.Fatalf("payload %d bytes for %d input bytes", len(payload), len(in))
					}
					if used != CompressionNone && used != codec {
						t.Fatalf("compress used %v for %v", used, codec)
					}
					out := make([]byte, len(in))
					if err := c.decompress(used, out, payload); err != nil {
						t.Fatal(err)
					}
					if shuffle {
						back := make([]byte, len(out))
						unshuffle2(back, out)
						out = back
					}
					if !bytes.Equal(out, in) {
						t.Fatal("round trip changed the bytes")
					}
				})
			}
		}
	}
}

func TestCompressRejectsTruncatedAndMislabelledPayloads(t *testing.T) {
	c := newCodecs(MaxValueLen)
	defer c.close()
	// Text-like data, which both codecs compress.
	in := bytes.Repeat([]byte("llama@1@0@00ff@bfloat16kv_bytes "), 2000)
	for _, codec := range []Compression{CompressionS2, CompressionZstd} {
		payload, used, err := c.compress(codec, nil, in)
		if err != nil || used != codec {
			t.Fatalf("%v: compress = %v, %v", codec, used, err)
		}
		out := make([]byte, len(in))
		if err := c.decompress(codec, out, payload[:len(payload)/2]); err == nil {
			t.Errorf("%v: truncated payload decoded", codec)
		}
		if err := c.decompress(codec, out[:len(out)-1], payload); err == nil {
			t.Errorf("%v: payload decoded into the wrong length", codec)
		}
	}
}

// TestCompressionRatiosOnKVData logs the ratios that doc.go quotes (run with
// -v). It pins down what the design relies on: the shuffle is what makes
// bf16 data compressible at all, and zstd (an entropy coder) gets there
// while S2 (LZ matching only) does not.
func TestCompressionRatiosOnKVData(t *testing.T) {
	c := newCodecs(MaxValueLen)
	defer c.close()
	in := bf16KV(7, 4<<20)
	shuffled := make([]byte, len(in))
	shuffle2(shuffled, in)
	ratio := map[string]float64{}
	for _, codec := range []Compression{CompressionS2, CompressionZstd} {
		for _, shuffle := range []bool{false, true} {
			src := in
			if shuffle {
				src = shuffled
			}
			out, err := c.encode(codec, nil, src)
			if err != nil {
				t.Fatal(err)
			}
			r := float64(len(out)) / float64(len(in))
			ratio[fmt.Sprintf("%v/%v", codec, shuffle)] = r
			t.Logf("%-4v shuffle=%-5v codec output/raw = %.3f", codec, shuffle, r)
		}
	}
	if r := ratio["zstd/true"]; r > 0.8 {
		t.Errorf("zstd on shuffled bf16 stores %.3f of the bytes, want < 0.8", r)
	}
	if ratio["zstd/true"] >= ratio["zstd/false"] {
		t.Errorf("shuffle did not help zstd: %v", ratio)
	}
}

func benchmarkCompress(b *testing.B, codec Compression, shuffle bool) {
	c := newCodecs(MaxValueLen)
	defer c.close()
	in := bf16KV(7, 4<<20)
	tmp := make([]byte, len(in))
	var dst []byte
	var stored int
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for range b.N {
		src := in
		if shuffle {
			shuffle2(tmp, in)
			src = tmp
		}
		out, _, err := c.compress(codec, dst, src)
		if err != nil {
			b.Fatal(err)
		}
		dst, stored = out[:0], len(out)
	}
	b.ReportMetric(float64(stored)/float64(len(in)), "stored/raw")
}

func benchmarkDecompress(b *testing.B, codec Compression, shuffle bool) {
	c := newCodecs(MaxValueLen)
	defer c.close()
	in := bf16KV(7, 4<<20)
	src := in
	if shuffle {
		src = make([]byte, len(in))
		shuffle2(src, in)
	}
	payload, used, err := c.compress(codec, nil, src)
	if err != nil {
		b.Fatal(err)
	}
	out, tmp := make([]byte, len(in)), make([]byte, len(in))
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for range b.N {
		if shuffle {
			if err := c.decompress(used, tmp, payload); err != nil {
				b.Fatal(err)
			}
			unshuffle2(out, tmp)
		} else if err := c.decompress(used, out, payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompressS2(b *testing.B)          { benchmarkCompress(b, CompressionS2, false) }
func BenchmarkCompressS2Shuffle(b *testing.B)   { benchmarkCompress(b, CompressionS2, true) }
func BenchmarkCompressZstd(b *testing.B)        { benchmarkCompress(b, CompressionZstd, false) }
func BenchmarkCompressZstdShuffle(b *testing.B) { benchmarkCompress(b, CompressionZstd, true) }

func BenchmarkDecompressS2(b *testing.B)          { benchmarkDecompress(b, CompressionS2, false) }
func BenchmarkDecompressS2Shuffle(b *testing.B)   { benchmarkDecompress(b, CompressionS2, true) }
func BenchmarkDecompressZstd(b *testing.B)        { benchmarkDecompress(b, CompressionZstd, false) }
func BenchmarkDecompressZstdShuffle(b *testing.B) { benchmarkDecompress(b, CompressionZstd, true) }

func BenchmarkShuffle(b *testing.B) {
	in := bf16KV(7, 4<<20)
	out := make([]byte, len(in))
	b.SetBytes(int64(len(in)))
	for range b.N {
		shuffle2(out, in)
	}
}

func BenchmarkUnshuffle(b *testing.B) {
	in := bf16KV(7, 4<<20)
	out := make([]byte, len(in))
	b.SetBytes(int64(len(in)))
	for range b.N {
		unshuffle2(out, in)
	}
}
