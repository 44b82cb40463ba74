package tests

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// kvChunkBF16 makes a bf16 KV_2LTD chunk [2, layers, tokens, hidden] that
// looks like real KV: keys N(0,1) with a few outlier channels scaled up,
// values N(0,1). It returns the bytes and the float values they encode.
func kvChunkBF16(seed uint64, layers, tokens, hidden int) ([]byte, []float32) {
	rng := rand.New(rand.NewPCG(seed, 7))
	outlier := map[int]float32{3: 30, 77: 45, hidden - 5: 25}
	n := 2 * layers * tokens * hidden
	vals := make([]float32, n)
	out := make([]byte, 2*n)
	for i := range vals {
		x := float32(rng.NormFloat64())
		isKey := i < n/2
		if s, ok := outlier[i%hidden]; ok && isKey {
			x *= s
		}
		b := math.Float32bits(x)
		b += 0x7fff + (b>>16)&1 // round to nearest even
		bf := uint16(b >> 16)
		binary.LittleEndian.PutUint16(out[2*i:], bf)
		vals[i] = math.Float32frombits(uint32(bf) << 16)
	}
	return out, vals
}

// relRMSE compares a bf16 byte buffer with the floats it should hold.
func relRMSE(got []byte, want []float32) float64 {
	var num, den float64
	for i, w := range want {
		g := math.Float32frombits(uint32(binary.LittleEndian.Uint16(got[2*i:])) << 16)
		d := float64(g - w)
		num += d * d
		den += float64(w) * float64(w)
	}
	return math.Sqrt(num / den)
}

// kvMetadata is LMCache's 28-byte metadata for a bf16 KV_2LTD chunk of
// length bytes and shape [2, layers, tokens, hidden].
func kvMetadata(length, layers, tokens, hidden int) string {
	var b [28]byte
	for i, v := range []int32{int32(length), 1, 3, 2, int32(layers), int32(tokens), int32(hidden)} {
		binary.LittleEndian.PutUint32(b[i*4:], uint32(v))
	}
	return string(b[:])
}

// TestQuantizedStorage is issue 4's third acceptance point: by default every
// byte comes back exactly; with --kv-quant int8 bf16 KV chunks take at most
// 60% of their raw memory and come back with relative RMSE at most 1% (fp8
// and int4 are reported), with the original dtype and length.
func TestQuantizedStorage(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("quantization is a kvserver feature")
	}
	t.Parallel()
	const layers, tokens, hidden, chunks = 4, 64, 512, 6
	limits := map[string]struct{ rmse, size float64 }{
		"off":  {0, 1.01},
		"int8": {0.01, 0.60},
		"fp8":  {0.05, 0.60},
		"int4": {0.12, 0.35},
	}
	for _, mode := range []string{"off", "int8", "fp8", "int4"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := startKVServer(t, "--kv-quant", mode)
			c := dialRaw(t, s.Addr)
			var raw int
			want := make([][]float32, chunks)
			data := make([][]byte, chunks)
			for i := range chunks {
				data[i], want[i] = kvChunkBF16(uint64(i+1), layers, tokens, hidden)
				raw += len(data[i])
				k := fmt.Sprintf("llama@1@0@%04x@bfloat16", i)
				expectReply(t, c, "+OK\r\n", "SET", k+"kv_bytes", string(data[i]))
				expectReply(t, c, "+OK\r\n", "SET", k+"metadata", kvMetadata(len(data[i]), layers, tokens, hidden))
			}
			if mode != "off" {
				deadline := time.Now().Add(10 * time.Second)
				for infoInt(t, c, "kvcache", "quantized_chunks") < chunks && time.Now().Before(deadline) {
					time.Sleep(20 * time.Millisecond)
				}
			}
			mem := infoInt(t, c, "tiers", "tier_memory_bytes")
			ratio := float64(mem) / float64(raw)
			worst := 0.0
			for i := range chunks {
				k := fmt.Sprintf("llama@1@0@%04x@bfloat16", i)
				r, err := parseReply(c.Do("GET", k+"kv_bytes"))
				if err != nil || r.Type != '$' || len(r.Str) != len(data[i]) {
					t.Fatalf("GET chunk %d: type %c, %d bytes, want %d (%v)", i, r.Type, len(r.Str), len(data[i]), err)
				}
				if mode == "off" && r.Str != string(data[i]) {
					t.Fatalf("chunk %d is not bit-exact without quantization", i)
				}
				worst = max(worst, relRMSE([]byte(r.Str), want[i]))
				checkReply(t, c, ":"+strconv.Itoa(len(data[i]))+"\r\n", "STRLEN", k+"kv_bytes")
			}
			lim := limits[mode]
			t.Logf("kv-quant %s: memory %d of %d raw bytes (%.3f), worst relative RMSE %.5f", mode, mem, raw, ratio, worst)
			if worst > lim.rmse {
				t.Errorf("relative RMSE %.5f above %.3f", worst, lim.rmse)
			}
			if ratio > lim.size {
				t.Errorf("memory ratio %.3f above %.2f", ratio, lim.size)
			}
			if mode != "off" {
				info := kvcInfo(t, c, "llama@1@0@0000@bfloat16kv_bytes")
				if info["codec"] != mode || info["size"] != strconv.Itoa(len(data[0])) {
					t.Errorf("KVC.INFO codec %q size %q, want %s and %d", info["codec"], info["size"], mode, len(data[0]))
				}
				// A value that is not a recognised chunk is stored untouched.
				expectReply(t, c, "+OK\r\n", "SET", "plain:kv_bytes", string(data[0]))
				time.Sleep(100 * time.Millisecond)
				checkReply(t, c, bulk(string(data[0])), "GET", "plain:kv_bytes")
			}
			// The quantized form survives a restart.
			c.Close()
			s.Restart(t)
			c = dialRaw(t, s.Addr)
			r, err := parseReply(c.Do("GET", "llama@1@0@0000@bfloat16kv_bytes"))
			if err != nil || len(r.Str) != len(data[0]) || relRMSE([]byte(r.Str), want[0]) > lim.rmse+1e-9 {
				t.Errorf("after restart: %d bytes, err %v", len(r.Str), err)
			}
		})
	}
}
