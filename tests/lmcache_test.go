package tests

// LMCache's Redis connector, replayed byte for byte: the key layout, the
// put/lookup/get sequence and the exact replies a native client compares.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"
)

// chunkMeta is LMCache's 28-byte metadata: seven little-endian int32s.
type chunkMeta struct {
	Length, Format, Dtype int32
	Shape                 [4]int32
}

// LMCache memory formats and dtypes used below.
const (
	fmtKV2LTD  = 1 // [2, layers, tokens, hidden]
	dtypeBF16  = 3
	bf16Bytes  = 2
	metaLength = 28
)

// bytes encodes m the way LMCache's RedisConnector does.
func (m chunkMeta) bytes() []byte {
	b := make([]byte, 0, metaLength)
	for _, v := range []int32{m.Length, m.Format, m.Dtype, m.Shape[0], m.Shape[1], m.Shape[2], m.Shape[3]} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// kvChunkMeta describes a bf16 KV_2LTD chunk and checks that its length
// matches its shape.
func kvChunkMeta(t *testing.T, layers, tokens, hidden int32) chunkMeta {
	t.Helper()
	m := chunkMeta{Format: fmtKV2LTD, Dtype: dtypeBF16, Shape: [4]int32{2, layers, tokens, hidden}}
	m.Length = 2 * layers * tokens * hidden * bf16Bytes
	return m
}

// chunkHashes returns n prefix hashes chained like LMCache's: each chunk's
// hash covers the previous hash and the chunk's own tokens, so a key names
// the whole prefix up to it.
func chunkHashes(seed string, n int) []string {
	prev := sha256.Sum256([]byte(seed))
	out := make([]string, n)
	for i := range n {
		h := sha256.New()
		h.Write(prev[:])
		fmt.Fprintf(h, "tokens %d..%d", 256*i, 256*(i+1))
		copy(prev[:], h.Sum(nil))
		out[i] = hex.EncodeToString(prev[:])
	}
	return out
}

// lmcacheKeys names one chunk's two keys: <model>@<world>@<worker>@<hash>@<dtype>
// followed by sep and kv_bytes or metadata.
func lmcacheKeys(model string, worker int, hash, sep string) (kv, meta string) {
	base := fmt.Sprintf("%s@1@%d@%s@bfloat16%s", model, worker, hash, sep)
	return base + "kv_bytes", base + "metadata"
}

// TestLMCacheConnectorSequence replays LMCache's put, lookup and get
// sequence in RESP3 (redis-py 8) and RESP2, with LMCache's suffixes and
// with Valkey-style ":kv_bytes"/":metadata", and requires byte-identical
// replies.
func TestLMCacheConnectorSequence(t *testing.T) {
	t.Parallel()
	s := startKVServer(t)
	tests := []struct {
		name  string
		proto int
		sep   string
	}{
		{"RESP3", 3, ""},
		{"RESP2", 2, ""},
		{"RESP3 valkey suffixes", 3, ":"},
		{"RESP2 valkey suffixes", 2, ":"},
	}
	for worker, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runLMCacheSequence(t, s, tt.proto, tt.sep, worker)
		})
	}
}

// runLMCacheSequence is one connection's worth of LMCache traffic; worker
// keeps the keys of concurrent runs apart.
func runLMCacheSequence(t *testing.T, s *server, proto int, sep string, worker int) {
	c := dialRaw(t, s.Addr)
	null := "$-1\r\n"
	if proto == 3 {
		raw := c.Do("HELLO", "3")
		if r, err := parseReply(raw); err != nil || r.Type != '%' {
			t.Fatalf("HELLO 3 = %s, want a map (redis-py drops the connection on an error)", quoteTrunc(raw))
		}
		null = "_\r\n"
	}
	// Redis 7.0, the reference on PATH, predates CLIENT SETINFO (7.2).
	for _, cmd := range [][]string{
		{"CLIENT", "SETINFO", "LIB-NAME", "redis-py"},
		{"CLIENT", "SETINFO", "LIB-VER", "8.0.0"},
	} {
		if diffAgainstRedis() {
			c.Do(cmd...)
		} else {
			checkReply(t, c, "+OK\r\n", cmd...)
		}
	}

	hashes := chunkHashes(fmt.Sprintf("prompt for worker %d", worker), 20)

	t.Run("put lookup get of a 4 MiB chunk", func(t *testing.T) {
		// 32 tokens of a 32-layer model with 8 KV heads of 128: 4 MiB.
		meta := kvChunkMeta(t, 32, 32, 1024)
		if meta.Length != 4<<20 {
			t.Fatalf("test bug: chunk length %d", meta.Length)
		}
		blob := string(randomBytes(uint64(7000+worker), int(meta.Length)))
		metaBytes := string(meta.bytes())
		kv, mk := lmcacheKeys("llama", worker, hashes[0], sep)
		_, missingMeta := lmcacheKeys("llama", worker, hashes[1], sep)

		expectReply(t, c, "+OK\r\n", "SET", kv, blob)
		expectReply(t, c, "+OK\r\n", "SET", mk, metaBytes)
		checkReply(t, c, ":1\r\n", "EXISTS", mk)
		checkReply(t, c, ":0\r\n", "EXISTS", missingMeta)
		checkReply(t, c, "$28\r\n"+metaBytes+"\r\n", "GET", mk)
		checkReply(t, c, "$4194304\r\n"+blob+"\r\n", "GET", kv)

		// The data key is gone (evicted, say): the client sees a null GET,
		// deletes the orphaned metadata and treats the chunk as a miss.
		checkReply(t, c, ":1\r\n", "DEL", kv)
		checkReply(t, c, null, "GET", kv)
		checkReply(t, c, ":1\r\n", "DEL", mk)
		checkReply(t, c, ":0\r\n", "EXISTS", mk)
		checkReply(t, c, null, "GET", mk)
	})

	t.Run("prefix walk stops at the first miss", func(t *testing.T) {
		// Small chunks: 16 tokens of a 4-layer model with hidden size 256.
		meta := kvChunkMeta(t, 4, 16, 256)
		metaBytes := string(meta.bytes())
		const stored = 8
		blobs := make([]string, len(hashes))
		for i := range hashes {
			// Chunks 0..7 and 9: chunk 8 is missing, so 9 is unreachable.
			if i == stored || i > stored+1 {
				continue
			}
			blobs[i] = string(randomBytes(uint64(8000+100*worker+i), int(meta.Length)))
			kv, mk := lmcacheKeys("llama", worker, hashes[i], sep)
			expectReply(t, c, "+OK\r\n", "SET", kv, blobs[i])
			expectReply(t, c, "+OK\r\n", "SET", mk, metaBytes)
		}
		hits := 0
		for i := range hashes {
			_, mk := lmcacheKeys("llama", worker, hashes[i], sep)
			raw := c.Do("EXISTS", mk)
			if string(raw) == ":0\r\n" {
				break
			}
			if string(raw) != ":1\r\n" {
				t.Fatalf("EXISTS chunk %d = %q, want :1 or :0", i, raw)
			}
			hits++
		}
		if hits != stored {
			t.Fatalf("walk found %d leading chunks, want %d", hits, stored)
		}
		for i := range hits {
			kv, mk := lmcacheKeys("llama", worker, hashes[i], sep)
			checkReply(t, c, bulk(metaBytes), "GET", mk)
			checkReply(t, c, bulk(blobs[i]), "GET", kv)
		}
	})
}
