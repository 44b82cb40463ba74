// Package codec stores float16 and bfloat16 KV-cache chunks quantized: an
// opt-in, lossy, bounded-error encoding that roughly halves (int8, fp8) or
// thirds (int4) a chunk's size, so that more prefixes fit in memory and on
// disk.
//
// It is for the data value of a chunk whose metadata (package kvmeta) says
// KV_2LTD, KV_T2D, KV_2TD or KV_MLA_FMT with a 16-bit float dtype. It is not
// for anything else: opaque formats, float32, data that is already fp8,
// chunks holding infinities or NaN, and multi-group metadata as a whole
// (encode each group's tensor with its own Metadata, or store the chunk
// raw) are refused with an error wrapping ErrUnsupported, and the caller
// keeps the raw bytes. It is not a lossless compressor either; compressing
// the disk tier is package disktier's job. A client that needs its bytes back
// bit for bit must not be served from a quantized copy, so quantization is
// an operator's opt-in; Off is the zero Mode.
//
// # Scheme
//
// Symmetric quantization with a float32 scale per group: code =
// round(x / scale), scale = max|x| / qmax over the group, qmax 127 for int8,
// 448 for fp8 (float8_e4m3fn, rounded to nearest even, saturating) and 7 for
// int4 (two codes per byte, low nibble first). Decoding computes code*scale
// in float32 and rounds it to the original dtype, nearest even.
//
// Keys (the first half of KV_2LTD and KV_2TD, the K row of each token in
// KV_T2D) get a scale per channel, computed over a block of tokens. Key
// caches have outlier channels, a few channels 20-50x larger than the rest
// for every token (KIVI and KVQuant report this); a scale shared across
// channels is set by the outliers and leaves the ordinary channels a handful
// of levels. Values (and MLA latents,
// which are a single tensor) have no such channel structure but vary by
// token, so they get a scale per token over groups of channels.
//
// Block and group sizes: 64 tokens per key scale and 64 channels per value
// scale for int8 and fp8, 32 and 32 for int4. Smaller groups cost 4 bytes of
// scale per group and buy accuracy; measured on the synthetic data of
// TestAccuracyAndSize (bfloat16, int8 / int4 relative RMSE, int8 / int4
// size as a share of the raw chunk):
//
//	key block x value group   int8     int4      size int8 / int4
//	256 (whole chunk) x 64    0.712%   12.44%    52.0% / 27.0%
//	128 x 64                  0.666%   11.61%    52.3% / 27.3%
//	 64 x 64                  0.621%   10.71%    53.1% / 28.1%
//	 32 x 32                  0.565%    9.67%    56.3% / 31.3%
//
// The synthetic data is stationary; real key caches are not (the first,
// "attention sink" tokens of a sequence have keys unlike the rest), which
// makes small key blocks worth more than the table shows. Blocks of a fixed
// token count also behave the same for 256-token LMCache chunks, 512-token
// Mooncake chunks and the short last chunk of a prompt, and a 64-row block
// (128 KiB for Llama-3.1-8B) stays in cache between the two passes the
// encoder makes over it. The sizes are written into every blob, so a decoder
// does not depend on these constants.
//
// Scales are float32, not float16: a bfloat16 group's maximum can be 3e38
// (its int8 scale would overflow float16) or 1e-38 (its fp8 scale would
// underflow), and 4 bytes per 64 elements is 3% of the raw chunk. Groups
// whose magnitudes are all below qmax*2^-126 (about 1e-36, reachable only in
// bfloat16) are quantized with the absolute step 2^-126 instead of a
// relative one, because their exact inverse scale is not a float32.
//
// # Blob layout
//
// Little-endian throughout.
//
//	off  size
//	0    8     magic "\x89KVQ\r\n\x1a\n"
//	8    1     version, 1
//	9    1     mode: 1 int8, 2 fp8, 3 int4
//	10   2     flags, 0
//	12   2     key block: tokens per key scale
//	14   2     value group: channels per value scale
//	16   28    the original metadata, kvmeta's 28-byte form
//	44   4     reserved, 0
//	48   ...   the K planes (one per layer), then the V planes
//
// A plane is one [T, D] tensor of the chunk (for KV_T2D, the K rows and the
// V rows of its tokens). A key plane is, per block of tokens, D float32
// scales followed by the codes of the block's rows. A value plane is, per
// token, ceil(D/group) float32 scales followed by the codes of the row. A
// row of codes is D bytes (int8, fp8) or ceil(D/2) bytes (int4). There is no
// padding, and the blob's size is a function of the header alone, which
// Decode checks before allocating anything: the output is at most 4x the
// blob. Scales that an encoder cannot produce (negative, infinite, NaN) are
// rejected. Decode never panics on any input (FuzzDecode).
//
// IsEncoded only sniffs the magic. A server should record that it stored a
// value encoded (in its own value header) rather than rely on the sniff, since
// raw KV bytes can start with anything.
//
// # Measured figures
//
// Accuracy and size, synthetic chunk of 4 layers x 256 tokens x 1024
// channels, keys N(0,1) with two outlier channels per 128 scaled x20-50,
// values N(0,1); relative RMSE = ||x-x'||/||x|| over the chunk:
//
//	go test ./codec -run 'TestAccuracyAndSize|TestPerChannelKeysBeatPerTensor' -v
//
//	           int8     fp8      int4     size int8, fp8 / int4
//	bfloat16   0.621%   2.506%   9.665%   53.1% / 31.3%
//	float16    0.592%   2.500%   9.660%   53.1% / 31.3%
//
// (bfloat16's floor is higher because the decoded value is rounded to
// bfloat16's 8-bit mantissa.) The same int8 codes on the keys of a 2-layer
// chunk, against schemes the codec does not use:
//
//	                          keys     ordinary (non-outlier) key channels
//	per channel (this codec)  0.612%   0.612%
//	per token                 4.014%   18.10%
//	per tensor                8.298%   37.41%
//
// Throughput, one goroutine, KV_2LTD chunk of 32 layers x 256 tokens x 1024
// channels (32 MiB, as Llama-3.1-8B stores one; MB/s of raw 16-bit input,
// 10^6 bytes/s; the float16 rows are BenchmarkEncodeInt8FP16 and
// BenchmarkDecodeInt8FP16):
//
//	go test ./codec -run '^$' -bench . -benchtime=5x
//
//	                median (range) of 8 runs
//	                encode            decode
//	int8 bfloat16    990 (890-1050)   1260 (860-1460)
//	fp8 bfloat16     570 (410-650)     800 (660-1130)
//	int4 bfloat16    710 (460-820)     800 (630-960)
//	int8 float16     670 (470-760)     620 (500-670)
//
// Those encode figures include allocating (and so zeroing) each blob. The
// benchmarks now measure both directions into reused buffers, as a caller
// of EncodeInto and DecodeInto runs them (BenchmarkEncodeInt8Alloc keeps
// the allocating form). Medians of 5 runs, load average about 1.3:
//
//	go test ./codec -run '^$' -bench 'Int8' -benchtime=5x -count=5
//
//	int8 bfloat16   EncodeInto 1570 (1060-1590)   DecodeInto 1080 (910-1540)
//	                Encode (allocating) 980 (870-1310)
//
// Measured on a 2-vCPU AMD EPYC VM (2.6 GHz) that other builds were loading
// (load average about 3) while it ran, so the spread is the neighbours'; an
// unshared core should do at least the best figure. The int8 bfloat16 path
// has fused
// loops (kernels_bf16.go) that quantize straight from the raw row and round
// straight into it; the other paths go through a float32 row. Each Encode
// makes one allocation of the blob's size plus scratch of a few rows; each
// Decode one of the chunk's size (none with DecodeInto). Calls are safe for
// concurrent use; parallelism across chunks is the caller's.
package codec
