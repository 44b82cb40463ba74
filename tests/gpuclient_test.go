package tests

// gpuclient against the real kvserver: whole-chunk and layer-wise stores
// and retrievals through the CPU device, checked byte for byte against
// the source paged cache, chunks that fail validation, the exact keys and
// bytes LMCache would write (built independently in Python), and the
// layer-wise pipeline's ordering and overlap under injected latency.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kvserver/kvserver/gpuclient"
)

// gpuCase is a model shape for the end-to-end tests.
type gpuCase struct {
	name   string
	paged  gpuclient.PagedLayout
	layers int
	chunk  int // tokens per chunk
}

func gpuCases() []gpuCase {
	return []gpuCase{
		{"flash-attn bf16", gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 24, BlockSize: 4, Heads: 2, HeadSize: 64, DType: gpuclient.BF16}, 4, 16},
		{"flashinfer fp16", gpuclient.PagedLayout{Kind: gpuclient.FlashInfer, NumBlocks: 24, BlockSize: 4, Heads: 3, HeadSize: 32, DType: gpuclient.FP16}, 3, 16},
		{"mla fp8_e4m3", gpuclient.PagedLayout{Kind: gpuclient.MLA, NumBlocks: 24, BlockSize: 4, Heads: 1, HeadSize: 96, DType: gpuclient.FP8E4M3}, 5, 16},
		{"flash-attn fp8_e5m2", gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 24, BlockSize: 4, Heads: 1, HeadSize: 40, DType: gpuclient.FP8E5M2}, 2, 16},
		{"llama-like bf16, 256-token chunks", gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 40, BlockSize: 16, Heads: 8, HeadSize: 128, DType: gpuclient.BF16}, 2, gpuclient.DefaultChunkTokens},
	}
}

// sentinel fills a destination cache so that untouched bytes are visible.
const sentinel = 0xA5

// newKVCache returns layers paged buffers, random when seed != 0, else
// filled with sentinel.
func newKVCache(p gpuclient.PagedLayout, layers int, seed uint64) [][]byte {
	kv := make([][]byte, layers)
	for l := range kv {
		if seed != 0 {
			kv[l] = randomBytes(seed+uint64(l), p.LayerBytes())
		} else {
			kv[l] = bytes.Repeat([]byte{sentinel}, p.LayerBytes())
		}
	}
	return kv
}

// randomSlots gives n tokens distinct random slots, about one in negEvery
// marked absent (-1); negEvery 0: none.
func randomSlots(r *rand.Rand, p gpuclient.PagedLayout, n, negEvery int) []int64 {
	perm := r.Perm(p.Slots())
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(perm[i])
		if negEvery > 0 && r.IntN(negEvery) == 0 {
			s[i] = -1
		}
	}
	return s
}

func randomTokens(r *rand.Rand, n int) []uint32 {
	t := make([]uint32, n)
	for i := range t {
		t[i] = r.Uint32N(1 << 17)
	}
	return t
}

func newConnector(t *testing.T, cl *gpuclient.Client, model string, gc gpuCase, kv [][]byte, dev gpuclient.Device) *gpuclient.Connector {
	t.Helper()
	c, err := gpuclient.NewConnector(cl, gpuclient.Config{
		Prefix: gpuclient.KeyPrefix{Model: model, WorldSize: 1},
		Paged:  gc.paged, Layers: gc.layers, ChunkTokens: gc.chunk, Device: dev,
	}, kv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newGPUClient(t *testing.T, addr string) *gpuclient.Client {
	cl := gpuclient.NewClient(gpuclient.ClientOptions{Addr: addr})
	t.Cleanup(func() { cl.Close() })
	return cl
}

// checkRows checks a destination cache after a retrieval: in layer l, the
// first loaded(l) tokens' rows (at dstSlots) are the source rows (at
// srcSlots; zeros for a token that was absent at store time), a token
// with a negative dstSlot is skipped, and every other slot still holds
// the sentinel.
func checkRows(t *testing.T, p gpuclient.PagedLayout, src [][]byte, srcSlots []int64, dst [][]byte, dstSlots []int64, loaded func(layer int) int) {
	t.Helper()
	row := p.RowBytes()
	zero, fill := make([]byte, row), bytes.Repeat([]byte{sentinel}, row)
	for l := range dst {
		token := map[int64]int{}
		for i, s := range dstSlots[:loaded(l)] {
			if s >= 0 {
				token[s] = i
			}
		}
		for s := range int64(p.Slots()) {
			for kv := range p.KVPlanes() {
				got := dst[l][p.SlotOffset(kv, s):][:row]
				want, what := fill, "untouched"
				if i, ok := token[s]; ok {
					want, what = zero, fmt.Sprintf("token %d (absent at store)", i)
					if srcSlots[i] >= 0 {
						want, what = src[l][p.SlotOffset(kv, srcSlots[i]):][:row], fmt.Sprintf("token %d", i)
					}
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("layer %d slot %d plane %d: want %s row, got %x…", l, s, kv, what, got[:min(8, row)])
				}
			}
		}
	}
}

func allLayers(n int) func(int) int { return func(int) int { return n } }

// TestGPUClientStoreThenRetrieveRestoresPagedBytes: for every paged layout
// and dtype, Store then Retrieve into a different cache at different slots
// gives the source's bytes for every token of the full chunks; the partial
// last chunk is neither stored nor loaded, and tokens with a negative slot
// are stored as zeros and skipped on load.
func TestGPUClientStoreThenRetrieveRestoresPagedBytes(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	cl := newGPUClient(t, s.Addr)
	ctx := context.Background()
	for i, gc := range gpuCases() {
		t.Run(gc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			full := 3
			if gc.chunk*4 > gc.paged.Slots() {
				full = gc.paged.Slots()/gc.chunk - 1
			}
			n := full*gc.chunk + gc.chunk/2 + 1 // and a partial chunk
			tokens := randomTokens(r, n)
			src := newKVCache(gc.paged, gc.layers, uint64(100*i+1))
			srcSlots, dstSlots := randomSlots(r, gc.paged, n, 7), randomSlots(r, gc.paged, n, 9)
			store := newConnector(t, cl, "e2e/"+gc.name, gc, src, nil)
			sr, err := store.Store(ctx, tokens, srcSlots)
			if err != nil {
				t.Fatal(err)
			}
			want := gpuclient.StoreResult{Chunks: full, Stored: full, Bytes: int64(full * store.ChunkShape().Size())}
			if sr != want {
				t.Fatalf("Store = %+v, want %+v", sr, want)
			}
			dst := newKVCache(gc.paged, gc.layers, 0)
			load := newConnector(t, cl, "e2e/"+gc.name, gc, dst, nil)
			rr, err := load.Retrieve(ctx, tokens, dstSlots)
			if err != nil {
				t.Fatal(err)
			}
			if rr.Tokens != full*gc.chunk || rr.Found != full || rr.Loaded != full || len(rr.Failed) != 0 {
				t.Fatalf("Retrieve = %+v, want %d tokens in %d chunks", rr, full*gc.chunk, full)
			}
			checkRows(t, gc.paged, src, srcSlots, dst, dstSlots, allLayers(rr.Tokens))
		})
	}
}

// commandsBy counts the commands the server processed while fn ran, from
// INFO's total_commands_processed (the INFO calls themselves subtracted).
func commandsBy(t *testing.T, c *rawClient, fn func()) int64 {
	t.Helper()
	a := infoInt(t, c, "stats", "total_commands_processed")
	b := infoInt(t, c, "stats", "total_commands_processed")
	fn()
	d := infoInt(t, c, "stats", "total_commands_processed")
	return d - b - (b - a)
}

// TestGPUClientStoreSkipsChunksAlreadyStored: a store first probes, and
// writes only the chunks after the stored prefix; storing the same prefix
// again is one KVC.PROBE and nothing else, as the server counts.
func TestGPUClientStoreSkipsChunksAlreadyStored(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	raw := dialRaw(t, s.Addr)
	cl := newGPUClient(t, s.Addr)
	ctx := context.Background()
	gc := gpuCases()[0]
	r := rand.New(rand.NewPCG(5, 5))
	tokens := randomTokens(r, 4*gc.chunk)
	slots := randomSlots(r, gc.paged, len(tokens), 0)
	c := newConnector(t, cl, "skip", gc, newKVCache(gc.paged, gc.layers, 9), nil)
	size := int64(c.ChunkShape().Size())

	steps := []struct {
		name     string
		tokens   []uint32
		want     gpuclient.StoreResult
		commands int64
	}{
		{"first two chunks", tokens[:2*gc.chunk], gpuclient.StoreResult{Chunks: 2, Stored: 2, Bytes: 2 * size}, 1 + 2*2},
		{"four chunks, two present", tokens, gpuclient.StoreResult{Chunks: 4, Present: 2, Stored: 2, Bytes: 2 * size}, 1 + 2*2},
		{"the same again", tokens, gpuclient.StoreResult{Chunks: 4, Present: 4}, 1},
		{"a prefix of it", tokens[:3*gc.chunk+1], gpuclient.StoreResult{Chunks: 3, Present: 3}, 1},
	}
	for _, st := range steps {
		var res gpuclient.StoreResult
		var err error
		n := commandsBy(t, raw, func() { res, err = c.Store(ctx, st.tokens, slots[:len(st.tokens)]) })
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if res != st.want || n != st.commands {
			t.Fatalf("%s: Store = %+v with %d commands, want %+v with %d", st.name, res, n, st.want, st.commands)
		}
	}
	if got := string(raw.Do("DBSIZE")); got != ":8\r\n" {
		t.Fatalf("DBSIZE = %q, want 8 keys (4 chunks x kv_bytes+metadata)", got)
	}
}

// TestGPUClientRetrieveStopsAtBadChunk: a chunk whose data is gone, of the
// wrong length, or whose metadata is not the expected one is reported as
// failed and never scattered; the loaded prefix stops before it and the
// paged memory of it and every later chunk is untouched. Its keys are then
// deleted, so the next Store writes it again.
func TestGPUClientRetrieveStopsAtBadChunk(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	raw := dialRaw(t, s.Addr)
	cl := newGPUClient(t, s.Addr)
	ctx := context.Background()
	gc := gpuCases()[1]
	const chunks = 4
	other := gpuclient.Chunk{Format: 1, Layers: gc.layers, Tokens: gc.chunk + 1, Paged: gc.paged}
	cases := []struct {
		name   string
		bad    int // the chunk damaged
		damage func(key string, data []byte)
		want   error // nil: a probe miss, not a failure
	}{
		{"data deleted", 1, func(k string, _ []byte) { raw.Do("DEL", k+"kv_bytes") }, gpuclient.ErrChunkMissing},
		{"data one byte short", 1, func(k string, d []byte) { raw.Do("SET", k+"kv_bytes", string(d[:len(d)-1])) }, gpuclient.ErrChunkCorrupt},
		{"data one byte long", 2, func(k string, d []byte) { raw.Do("SET", k+"kv_bytes", string(d)+"x") }, gpuclient.ErrChunkCorrupt},
		{"metadata of another shape", 0, func(k string, _ []byte) { raw.Do("SET", k+"metadata", string(other.Metadata().Encode())) }, gpuclient.ErrChunkCorrupt},
		{"metadata truncated", 1, func(k string, _ []byte) { raw.Do("SET", k+"metadata", "short") }, gpuclient.ErrChunkCorrupt},
		{"last chunk's data deleted", 3, func(k string, _ []byte) { raw.Do("DEL", k+"kv_bytes") }, gpuclient.ErrChunkMissing},
		{"metadata deleted", 2, func(k string, _ []byte) { raw.Do("DEL", k+"metadata") }, nil},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 12))
			tokens := randomTokens(r, chunks*gc.chunk)
			src := newKVCache(gc.paged, gc.layers, uint64(i+1))
			srcSlots, dstSlots := randomSlots(r, gc.paged, len(tokens), 0), randomSlots(r, gc.paged, len(tokens), 0)
			model := "bad/" + tc.name
			store := newConnector(t, cl, model, gc, src, nil)
			if _, err := store.Store(ctx, tokens, srcSlots); err != nil {
				t.Fatal(err)
			}
			key := gpuclient.KeyPrefix{Model: model, WorldSize: 1, DType: gc.paged.DType}.ChunkKey(gpuclient.ChunkHashes(tokens, gc.chunk)[tc.bad])
			data := raw.Do("GET", key+"kv_bytes")
			rep, err := parseReply(data)
			if err != nil {
				t.Fatal(err)
			}
			tc.damage(key, []byte(rep.Str))

			dst := newKVCache(gc.paged, gc.layers, 0)
			load := newConnector(t, cl, model, gc, dst, nil)
			rr, err := load.Retrieve(ctx, tokens, dstSlots)
			if err != nil {
				t.Fatal(err)
			}
			if rr.Tokens != tc.bad*gc.chunk || rr.Loaded != tc.bad {
				t.Fatalf("Retrieve = %+v, want the %d chunks before the bad one", rr, tc.bad)
			}
			if tc.want == nil {
				if len(rr.Failed) != 0 || rr.Found != tc.bad {
					t.Fatalf("Retrieve = %+v: a missing metadata key is a miss, not a failure", rr)
				}
			} else if len(rr.Failed) != 1 || rr.Failed[0].Chunk != tc.bad || !errors.Is(&rr.Failed[0], tc.want) || rr.Failed[0].Key != key+"kv_bytes" {
				t.Fatalf("Failed = %v, want chunk %d with %v", rr.Failed, tc.bad, tc.want)
			}
			checkRows(t, gc.paged, src, srcSlots, dst, dstSlots, allLayers(rr.Tokens))

			// The bad chunk's keys are gone; the next Store rewrites it and
			// everything after it, and then the whole prefix loads.
			if got := string(raw.Do("EXISTS", key+"kv_bytes", key+"metadata")); tc.want != nil && got != ":0\r\n" {
				t.Fatalf("EXISTS after a failed chunk = %q, want its keys deleted", got)
			}
			sr, err := store.Store(ctx, tokens, srcSlots)
			if err != nil || sr.Present != tc.bad || sr.Stored != chunks-tc.bad {
				t.Fatalf("re-Store = %+v, %v: want chunks %d.. written again", sr, err, tc.bad)
			}
			dst2 := newKVCache(gc.paged, gc.layers, 0)
			rr, err = newConnector(t, cl, model, gc, dst2, nil).Retrieve(ctx, tokens, dstSlots)
			if err != nil || rr.Tokens != len(tokens) {
				t.Fatalf("Retrieve after re-Store = %+v, %v", rr, err)
			}
			checkRows(t, gc.paged, src, srcSlots, dst2, dstSlots, allLayers(rr.Tokens))
		})
	}
}

// lmcacheCheckPy builds, independently of gpuclient, the keys and values
// LMCache's Redis connector writes for a chunk: the key string
// model@world_size@worker_id@<hash hex>@<dtype name>[@layer] + suffix, the
// 28-byte metadata struct.pack('<7i', length, format, dtype, *shape)
// (lmcache/v1/protocol.py), the whole-chunk value in KV_2LTD [2, L, T, D]
// (KV_MLA_FMT [1, L, T, D] for MLA) and the layer-wise value in KV_T2D
// [T, 2, D] with shape padded [T, 2, D, 0], gathered from the raw paged
// cache with plain index arithmetic from vLLM's tensor shapes. Chunk hashes
// follow gpuclient's documented definition (SHA-256 over the previous hash
// and the tokens as little-endian uint32). It reads every key from the
// server with redis-py and reports what differs.
const lmcacheCheckPy = `
import hashlib, json, struct, sys, redis
p = json.load(open(sys.argv[1]))
cache = open(p["cache"], "rb").read()
L, T, H, D, NB, BS, es = p["layers"], p["chunk"], p["heads"], p["head_size"], p["num_blocks"], p["block_size"], p["elem"]
mla = p["kind"] == "mla"
row = H * D * es
layer_bytes = (1 if mla else 2) * NB * BS * row
planes = 1 if mla else 2
def paged_row(layer, kv, slot):
    if slot < 0:
        return bytes(row)
    b, o = divmod(slot, BS)
    if p["kind"] == "flash-attn":   # [2, NB, BS, H, D]
        i = (kv * NB + b) * BS + o
    elif p["kind"] == "flashinfer": # [NB, 2, BS, H, D]
        i = (b * 2 + kv) * BS + o
    else:                           # [NB, BS, D]
        i = b * BS + o
    off = layer * layer_bytes + i * row
    return cache[off:off + row]
r = redis.Redis(host="127.0.0.1", port=p["port"])
errors, prev, n = [], b"", len(p["tokens"]) // T
for c in range(n):
    toks = p["tokens"][c * T:(c + 1) * T]
    slots = p["slots"][c * T:(c + 1) * T]
    prev = hashlib.sha256(prev + struct.pack("<%dI" % T, *toks)).digest()
    key = "%s@%d@%d@%s@%s" % (p["model"], p["world_size"], p["worker_id"], prev.hex(), p["dtype_name"])
    if mla:
        whole = b"".join(paged_row(l, 0, s) for l in range(L) for s in slots)
        wmeta = struct.pack("<7i", len(whole), 6, p["dtype_code"], 1, L, T, H * D)
    else:
        whole = b"".join(paged_row(l, kv, s) for kv in range(2) for l in range(L) for s in slots)
        wmeta = struct.pack("<7i", len(whole), 1, p["dtype_code"], 2, L, T, H * D)
    for k, v in ((key + "kv_bytes", whole), (key + "metadata", wmeta)):
        got = r.get(k)
        if got != v:
            errors.append("%s: %s" % (k, "missing" if got is None else "differs (%d bytes, want %d)" % (len(got), len(v))))
    for l in range(L):
        lk = "%s@%d" % (key, l)
        if mla:
            lv = b"".join(paged_row(l, 0, s) for s in slots)
            lmeta = struct.pack("<7i", len(lv), 6, p["dtype_code"], 1, 1, T, H * D)
        else:
            lv = b"".join(paged_row(l, kv, s) for s in slots for kv in range(2))
            lmeta = struct.pack("<7i", len(lv), 2, p["dtype_code"], T, 2, H * D, 0)
        for k, v in ((lk + "kv_bytes", lv), (lk + "metadata", lmeta)):
            got = r.get(k)
            if got != v:
                errors.append("%s: %s" % (k, "missing" if got is None else "differs"))
print(json.dumps({"chunks": n, "dbsize": r.dbsize(), "errors": errors[:10]}))
`

// TestGPUClientChunksAreLMCacheBytes: what gpuclient writes, whole-chunk
// and layer-wise, is byte for byte what the independent Python
// construction of LMCache's format expects, keys included; the partial last
// chunk is not stored.
func TestGPUClientChunksAreLMCacheBytes(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	cl := newGPUClient(t, s.Addr)
	ctx := context.Background()
	dtypes := map[gpuclient.DType]struct {
		name string
		code int
	}{
		gpuclient.FP16: {"half", 2}, gpuclient.BF16: {"bfloat16", 3},
		gpuclient.FP8E4M3: {"fp8_e4m3", 7}, gpuclient.FP8E5M2: {"fp8_e5m2", 8},
	}
	var total int
	for i, gc := range gpuCases()[:4] {
		t.Run(gc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 13))
			const chunks = 2
			tokens := randomTokens(r, chunks*gc.chunk+5)
			src := newKVCache(gc.paged, gc.layers, uint64(i+40))
			slots := randomSlots(r, gc.paged, len(tokens), 6)
			model := "lmcache/" + gc.name
			c, err := gpuclient.NewConnector(cl, gpuclient.Config{
				Prefix: gpuclient.KeyPrefix{Model: model, WorldSize: 4, WorkerID: 3},
				Paged:  gc.paged, Layers: gc.layers, ChunkTokens: gc.chunk,
			}, src)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Store(ctx, tokens, slots); err != nil {
				t.Fatal(err)
			}
			storeAllLayers(t, c, tokens, slots, gc.layers)
			total += chunks * 2 * (1 + gc.layers)

			dir := t.TempDir()
			cache := filepath.Join(dir, "cache")
			if err := os.WriteFile(cache, bytes.Join(src, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			kind := map[gpuclient.PagedKind]string{gpuclient.FlashAttn: "flash-attn", gpuclient.FlashInfer: "flashinfer", gpuclient.MLA: "mla"}[gc.paged.Kind]
			params, _ := json.Marshal(map[string]any{
				"port": s.Port, "model": model, "world_size": 4, "worker_id": 3,
				"dtype_name": dtypes[gc.paged.DType].name, "dtype_code": dtypes[gc.paged.DType].code,
				"elem": gc.paged.DType.Size(), "kind": kind, "layers": gc.layers, "chunk": gc.chunk,
				"heads": gc.paged.Heads, "head_size": gc.paged.HeadSize,
				"num_blocks": gc.paged.NumBlocks, "block_size": gc.paged.BlockSize,
				"tokens": tokens, "slots": slots, "cache": cache,
			})
			pf := filepath.Join(dir, "params.json")
			if err := os.WriteFile(pf, params, 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("/usr/bin/python3", "-c", lmcacheCheckPy, pf).CombinedOutput()
			if err != nil {
				t.Fatalf("python: %v\n%s", err, out)
			}
			var got struct {
				Chunks int      `json:"chunks"`
				Errors []string `json:"errors"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("python output %q: %v", out, err)
			}
			if got.Chunks != chunks || len(got.Errors) > 0 {
				t.Fatalf("python checked %d chunks, differences: %q", got.Chunks, got.Errors)
			}
		})
	}
	// Nothing else was written: no partial chunk, no stray key.
	if got := string(dialRaw(t, s.Addr).Do("DBSIZE")); got != ":"+strconv.Itoa(total)+"\r\n" {
		t.Fatalf("DBSIZE = %q, want %d", got, total)
	}
}

// TestGPUClientLayerwiseRoundTrip: a layer-wise store then a layer-wise
// retrieval restores every layer; storing again skips every chunk; a chunk
// layer that is gone fails at that layer: from it on, that chunk and the
// later ones are not scattered (earlier layers of them were, with their
// own valid bytes), and the loaded prefix stops before it.
func TestGPUClientLayerwiseRoundTrip(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	raw := dialRaw(t, s.Addr)
	cl := newGPUClient(t, s.Addr)
	for i, gc := range []gpuCase{gpuCases()[0], gpuCases()[2]} {
		t.Run(gc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 14))
			const chunks = 4
			tokens := randomTokens(r, chunks*gc.chunk+3)
			src := newKVCache(gc.paged, gc.layers, uint64(i+70))
			srcSlots, dstSlots := randomSlots(r, gc.paged, len(tokens), 8), randomSlots(r, gc.paged, len(tokens), 8)
			store := newConnector(t, cl, "layers/"+gc.name, gc, src, nil)
			storeAll := func() gpuclient.StoreResult { return storeAllLayers(t, store, tokens, srcSlots, gc.layers) }
			if res := storeAll(); res.Stored != chunks || res.Present != 0 || res.Bytes != int64(chunks*gc.layers*store.LayerShape().Size()) {
				t.Fatalf("StoreLayers = %+v", res)
			}
			if res := storeAll(); res.Stored != 0 || res.Present != chunks {
				t.Fatalf("second StoreLayers = %+v, want every chunk present", res)
			}
			load := func(dst [][]byte) gpuclient.RetrieveResult {
				return retrieveAllLayers(t, newConnector(t, cl, "layers/"+gc.name, gc, dst, nil), tokens, dstSlots, gc.layers)
			}
			dst := newKVCache(gc.paged, gc.layers, 0)
			if res := load(dst); res.Tokens != chunks*gc.chunk || len(res.Failed) != 0 {
				t.Fatalf("RetrieveLayers = %+v", res)
			}
			checkRows(t, gc.paged, src, srcSlots, dst, dstSlots, allLayers(chunks*gc.chunk))

			const badChunk, badLayer = 1, 1
			key := gpuclient.KeyPrefix{Model: "layers/" + gc.name, WorldSize: 1, DType: gc.paged.DType}.LayerKey(gpuclient.ChunkHashes(tokens, gc.chunk)[badChunk], badLayer)
			raw.Do("DEL", key+"kv_bytes")
			dst = newKVCache(gc.paged, gc.layers, 0)
			res := load(dst)
			if res.Tokens != badChunk*gc.chunk || len(res.Failed) != 1 || res.Failed[0].Chunk != badChunk || res.Failed[0].Layer != badLayer || !errors.Is(&res.Failed[0], gpuclient.ErrChunkMissing) {
				t.Fatalf("RetrieveLayers with chunk %d layer %d gone = %+v", badChunk, badLayer, res)
			}
			checkRows(t, gc.paged, src, srcSlots, dst, dstSlots, func(l int) int {
				if l < badLayer {
					return chunks * gc.chunk
				}
				return badChunk * gc.chunk
			})
		})
	}
}

// traceEvent is one step of the layer-wise pipeline as the test saw it.
type traceEvent struct {
	what  string // "req" (a GET or SET batch written), "dev<" / "dev>" (device copy start/end), "wait" (WaitLayer returned), "done" (LayerDone called)
	layer int
	at    time.Duration
}

// tracer records events from the test's goroutine, the connection wrapper
// and the device wrapper.
type tracer struct {
	start time.Time
	ch    chan traceEvent
}

func newTracer() *tracer { return &tracer{start: time.Now(), ch: make(chan traceEvent, 4096)} }

func (tr *tracer) add(what string, layer int) {
	tr.ch <- traceEvent{what: what, layer: layer, at: time.Since(tr.start)}
}

func (tr *tracer) events() []traceEvent {
	var out []traceEvent
	for {
		select {
		case e := <-tr.ch:
			out = append(out, e)
		default:
			return out
		}
	}
}

// find returns the index of the first event what/layer, or -1.
func find(evs []traceEvent, what string, layer int) int {
	for i, e := range evs {
		if e.what == what && e.layer == layer {
			return i
		}
	}
	return -1
}

// slowConn delays every batch of requests by delay (its trip to the server)
// and records which layers a GET or SET batch asks for and, through
// onRead, how many reply bytes have arrived. The server behind it is real.
type slowConn struct {
	net.Conn
	delay time.Duration
	tr    *tracer
	// extra, when not nil, is an additional delay in nanoseconds that the
	// test can change while the connection is pooled.
	extra *atomic.Int64
	// onRead, when not nil, is called with the total bytes read so far.
	onRead func(total int64)
	read   *atomic.Int64
}

// Write delays the writes that start a batch of commands; the later pieces
// of a vectored write (values, written one by one through this wrapper)
// go straight through.
func (c slowConn) Write(b []byte) (int, error) {
	for _, l := range batchLayers(b) {
		c.tr.add("req", l)
	}
	if len(b) > 0 && b[0] == '*' {
		d := c.delay
		if c.extra != nil {
			d += time.Duration(c.extra.Load())
		}
		time.Sleep(d)
	}
	return c.Conn.Write(b)
}

func (c slowConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.onRead != nil && n > 0 {
		c.onRead(c.read.Add(int64(n)))
	}
	return n, err
}

// batchLayers returns, sorted, the layers of the layer keys
// ("…@<layer>kv_bytes" or "…@<layer>metadata") a GET or SET batch names.
func batchLayers(b []byte) []int {
	if !bytes.HasPrefix(b, []byte("*2\r\n$3\r\nGET\r\n")) && !bytes.HasPrefix(b, []byte("*3\r\n$3\r\nSET\r\n")) {
		return nil
	}
	var out []int
	seen := map[int]bool{}
	for _, suffix := range [][]byte{[]byte("metadata\r\n"), []byte("kv_bytes\r\n")} {
		for rest := b; ; {
			end := bytes.Index(rest, suffix)
			if end < 0 {
				break
			}
			at := bytes.LastIndexByte(rest[:end], '@')
			if l, err := strconv.Atoi(string(rest[at+1 : end])); at >= 0 && err == nil && !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
			rest = rest[end+len(suffix):]
		}
	}
	slices.Sort(out)
	return out
}

// slowDevice is the CPU device with a delay on every copy (a slow PCIe
// link), recording which layer it copies.
type slowDevice struct {
	delay time.Duration
	kv    [][]byte
	tr    *tracer
}

func (d slowDevice) layerOf(layers [][]byte) int {
	for l, b := range d.kv {
		if &b[0] == &layers[0][0] {
			return l
		}
	}
	return -1
}

func (d slowDevice) Gather(ctx context.Context, c gpuclient.Chunk, layers [][]byte, slots []int64, dst []byte) error {
	l := d.layerOf(layers)
	d.tr.add("dev<", l)
	time.Sleep(d.delay)
	err := gpuclient.CPUDevice{}.Gather(ctx, c, layers, slots, dst)
	d.tr.add("dev>", l)
	return err
}

func (d slowDevice) Scatter(ctx context.Context, c gpuclient.Chunk, layers [][]byte, slots []int64, src []byte) error {
	l := d.layerOf(layers)
	d.tr.add("dev<", l)
	time.Sleep(d.delay)
	err := gpuclient.CPUDevice{}.Scatter(ctx, c, layers, slots, src)
	d.tr.add("dev>", l)
	return err
}

// TestGPUClientLayerwisePipelineOverlapsUnderLatency runs the layer-wise
// retriever and storer against a real server with injected latency: every
// request write waits netDelay, every device copy devDelay, and the
// simulated compute of a layer takes compute. It checks the order (layers
// copied 0..L-1; WaitLayer(l) only after layer l's scatter ended; a layer
// gathered only after LayerDone for it and sent only after its gather) and
// the overlap: pipelined, layer l+1's replies have arrived before layer
// l's scatter ends, and the whole run takes well under the sequential
// time; sequential, layer l+1 is requested and received only after
// WaitLayer(l) returned.
func TestGPUClientLayerwisePipelineOverlapsUnderLatency(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	const (
		netDelay = 10 * time.Millisecond
		devDelay = 20 * time.Millisecond
		compute  = 10 * time.Millisecond
	)
	gc := gpuCase{"pipeline", gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 8, BlockSize: 4, Heads: 2, HeadSize: 16, DType: gpuclient.BF16}, 8, 16}
	r := rand.New(rand.NewPCG(1, 15))
	tokens := randomTokens(r, gc.chunk)
	srcSlots, dstSlots := randomSlots(r, gc.paged, gc.chunk, 0), randomSlots(r, gc.paged, gc.chunk, 0)
	src := newKVCache(gc.paged, gc.layers, 99)

	// Replies of a retrieval, after the probe's ":8\r\n": per layer the
	// metadata's and the data's bulk strings. onRead turns the bytes read
	// into "got" events: layer l's replies have all arrived.
	layerSize := gpuclient.Chunk{Format: 2, Layers: 1, Tokens: gc.chunk, Paged: gc.paged}.Size()
	perLayer := int64(len("$28\r\n") + 28 + 2 + len(fmt.Sprintf("$%d\r\n", layerSize)) + layerSize + 2)
	const probeReply = int64(len(":8\r\n"))
	setup := func(kv [][]byte, model string) (*gpuclient.Connector, *tracer) {
		tr := newTracer()
		var got atomic.Int64
		onRead := func(total int64) {
			for n := (total - probeReply) / perLayer; got.Load() < n; {
				tr.add("got", int(got.Add(1)-1))
			}
		}
		cl := gpuclient.NewClient(gpuclient.ClientOptions{Addr: s.Addr, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return slowConn{Conn: c, delay: netDelay, tr: tr, onRead: onRead, read: new(atomic.Int64)}, nil
		}})
		t.Cleanup(func() { cl.Close() })
		return newConnector(t, cl, model, gc, kv, slowDevice{delay: devDelay, kv: kv, tr: tr}), tr
	}

	// Timings on a shared machine are noisy: each mode runs attempts times,
	// alternating, and the fastest run of each is compared. The order
	// checks hold for every run.
	const attempts = 3
	best := func(d *time.Duration, x time.Duration) {
		if *d == 0 || x < *d {
			*d = x
		}
	}

	// The storer: every run into its own namespace, so nothing is present.
	runs := 0
	storeRun := func(sequential bool) (time.Duration, []traceEvent) {
		runs++
		c, tr := setup(src, fmt.Sprintf("store-%d", runs))
		st, err := c.StoreLayers(ctx, tokens, srcSlots, gpuclient.LayerOptions{Sequential: sequential})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for l := range gc.layers {
			time.Sleep(compute) // the engine computes layer l
			tr.add("done", l)
			if err := st.LayerDone(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		res, err := st.Wait(ctx)
		if err != nil || res.Stored != 1 {
			t.Fatalf("StoreLayers: %+v, %v", res, err)
		}
		elapsed := time.Since(start)
		evs := tr.events()
		var serial []int // pipelined layers computed only after the previous one's gather
		for l := range gc.layers {
			done, g0, g1, req := find(evs, "done", l), find(evs, "dev<", l), find(evs, "dev>", l), find(evs, "req", l)
			if !(done >= 0 && done < g0 && g0 < g1 && g1 < req) {
				t.Fatalf("store layer %d: LayerDone at %d, gather %d..%d, SET at %d: want that order\n%v", l, done, g0, g1, req, evs)
			}
			if l > 0 && find(evs, "dev<", l-1) > g0 {
				t.Fatalf("store: layer %d gathered before layer %d", l, l-1)
			}
			next := find(evs, "done", l+1)
			switch {
			case l+1 == gc.layers:
			case sequential && next < req:
				t.Fatalf("sequential store: LayerDone(%d) returned before layer %d was sent\n%v", l, l, evs)
			case !sequential && next > g1:
				serial = append(serial, l+1)
			}
		}
		// A CPU-starved test process fires the engine's and the device's
		// timers together now and then, so one layer may miss its overlap;
		// an implementation that serialises misses it for most.
		if len(serial) > (gc.layers-1)/2 {
			t.Errorf("pipelined store: the engine finished layers %v only after the previous layer was gathered: no overlap\n%v", serial, evs)
		}
		return elapsed, evs
	}
	var seqStore, pipeStore time.Duration
	for range attempts {
		d, _ := storeRun(true)
		best(&seqStore, d)
		d, _ = storeRun(false)
		best(&pipeStore, d)
	}
	if pipeStore > seqStore*8/10 {
		t.Errorf("pipelined store took %v, sequential %v: want under 0.8x", pipeStore, seqStore)
	}
	t.Logf("store (best of %d): sequential %v, pipelined %v (%.2fx)", attempts, seqStore, pipeStore, float64(pipeStore)/float64(seqStore))

	retrieveRun := func(sequential bool) time.Duration {
		dst := newKVCache(gc.paged, gc.layers, 0)
		c, tr := setup(dst, "store-1")
		start := time.Now()
		lr, err := c.RetrieveLayers(ctx, tokens, dstSlots, gpuclient.LayerOptions{Sequential: sequential})
		if err != nil {
			t.Fatal(err)
		}
		for l := range gc.layers {
			if err := lr.WaitLayer(ctx, l); err != nil {
				t.Fatal(err)
			}
			tr.add("wait", l)
			time.Sleep(compute) // the engine computes layer l
		}
		res, err := lr.Result(ctx)
		if err != nil || res.Tokens != gc.chunk {
			t.Fatalf("RetrieveLayers: %+v, %v", res, err)
		}
		elapsed := time.Since(start)
		checkRows(t, gc.paged, src, srcSlots, dst, dstSlots, allLayers(gc.chunk))
		evs := tr.events()
		var serial []int // pipelined layers received only after the previous one's scatter
		for l := range gc.layers {
			s0, s1, wait := find(evs, "dev<", l), find(evs, "dev>", l), find(evs, "wait", l)
			if !(s0 >= 0 && s0 < s1 && s1 < wait) {
				t.Fatalf("retrieve layer %d: scatter %d..%d, WaitLayer returned at %d: want that order\n%v", l, s0, s1, wait, evs)
			}
			if l > 0 && find(evs, "dev<", l-1) > s0 {
				t.Fatalf("retrieve: layer %d scattered before layer %d", l, l-1)
			}
			req, got := find(evs, "req", l+1), find(evs, "got", l+1)
			switch {
			case l+1 == gc.layers:
			case sequential && (req < wait || got < wait):
				t.Fatalf("sequential: layer %d requested (%d) or received (%d) before WaitLayer(%d) returned (%d)\n%v", l+1, req, got, l, wait, evs)
			case !sequential && !(got >= 0 && got < s1):
				serial = append(serial, l+1)
			}
		}
		if len(serial) > (gc.layers-1)/2 { // see storeRun
			t.Errorf("pipelined: layers %v received only after the previous layer's scatter ended: no overlap\n%v", serial, evs)
		}
		return elapsed
	}
	var seqLoad, pipeLoad time.Duration
	for range attempts {
		best(&seqLoad, retrieveRun(true))
		best(&pipeLoad, retrieveRun(false))
	}
	if pipeLoad > seqLoad*8/10 {
		t.Errorf("pipelined retrieval took %v, sequential %v: want under 0.8x", pipeLoad, seqLoad)
	}
	t.Logf("retrieve (best of %d): sequential %v, pipelined %v (%.2fx)", attempts, seqLoad, pipeLoad, float64(pipeLoad)/float64(seqLoad))
}

// TestKVBenchLayerwiseJSON runs `kvbench layerwise --json` against a
// started server and checks that it verified every byte and printed the
// documented fields. The pipelined/sequential ratio is a benchmark figure,
// not asserted here.
func TestKVBenchLayerwiseJSON(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("kvbench layerwise needs kvserver")
	}
	t.Parallel()
	s := startKVServer(t)
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "kvbench")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kvbench")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kvbench: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "layerwise", "--addr", s.Addr, "--json", "--layers", "8", "--chunks", "1", "--rounds", "1").Output()
	if err != nil {
		t.Fatalf("kvbench layerwise: %v\n%s", err, out)
	}
	var res struct {
		Layers     int      `json:"layers"`
		Bytes      int64    `json:"bytes"`
		Sequential *float64 `json:"sequential_s"`
		Pipelined  *float64 `json:"pipelined_s"`
		Verified   *bool    `json:"verified"`
	}
	if bytes.Count(bytes.TrimSpace(out), []byte("\n")) != 0 {
		t.Fatalf("want one JSON line, got %q", out)
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if res.Verified == nil || !*res.Verified || res.Layers != 8 || res.Bytes != 8<<20 ||
		res.Sequential == nil || *res.Sequential <= 0 || res.Pipelined == nil || *res.Pipelined <= 0 {
		t.Fatalf("kvbench layerwise = %s", out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// TestGPUClientStopsCleanly: a deadline that expires mid-retrieval, a
// layer-wise retrieval or store abandoned half-way, and a server that went
// away all end in errors, not hangs, and leave the client usable.
func TestGPUClientStopsCleanly(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	ctx := context.Background()
	gc := gpuCases()[0]
	r := rand.New(rand.NewPCG(3, 16))
	tokens := randomTokens(r, 3*gc.chunk)
	slots := randomSlots(r, gc.paged, len(tokens), 0)
	src := newKVCache(gc.paged, gc.layers, 5)
	var delay atomic.Int64
	cl := gpuclient.NewClient(gpuclient.ClientOptions{Addr: s.Addr, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return slowConn{Conn: c, extra: &delay, tr: newTracer()}, nil
	}})
	t.Cleanup(func() { cl.Close() })
	c := newConnector(t, cl, "stops", gc, src, nil)
	if _, err := c.Store(ctx, tokens, slots); err != nil {
		t.Fatal(err)
	}
	st, err := c.StoreLayers(ctx, tokens, slots, gpuclient.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range gc.layers {
		st.LayerDone(ctx, l)
	}
	if _, err := st.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	// A deadline shorter than one request's trip.
	delay.Store(int64(200 * time.Millisecond))
	dst := newKVCache(gc.paged, gc.layers, 0)
	slow := newConnector(t, cl, "stops", gc, dst, nil)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = slow.Retrieve(short, tokens, slots)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Retrieve past its deadline: %v, want DeadlineExceeded", err)
	}
	delay.Store(0)
	if res, err := slow.Retrieve(ctx, tokens, slots); err != nil || res.Tokens != len(tokens) {
		t.Fatalf("Retrieve after a timed-out one: %+v, %v", res, err)
	}

	// A sequential layer-wise retrieval abandoned after layer 0.
	lr, err := slow.RetrieveLayers(ctx, tokens, slots, gpuclient.LayerOptions{Sequential: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := lr.WaitLayer(ctx, 0); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { lr.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("LayerRetriever.Close hangs")
	}
	if err := lr.WaitLayer(ctx, 1); err == nil {
		t.Fatal("WaitLayer(1) after Close succeeded")
	}
	if _, err := lr.Result(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Result after Close: %v, want Canceled", err)
	}

	// A layer-wise store abandoned before its last layer.
	other := randomTokens(r, len(tokens))
	st, err = c.StoreLayers(ctx, other, slots, gpuclient.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.LayerDone(ctx, 1); err == nil {
		t.Fatal("LayerDone(1) before LayerDone(0) accepted")
	}
	st.LayerDone(ctx, 0)
	st.Close()
	if _, err := st.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after Close: %v, want Canceled", err)
	}

	// The server goes away.
	s.Terminate(t)
	if _, err := c.Store(ctx, other, slots); err == nil {
		t.Fatal("Store with the server gone succeeded")
	}
	if res, err := slow.Retrieve(ctx, tokens, slots); err == nil || res.Tokens != 0 {
		t.Fatalf("Retrieve with the server gone: %+v, %v", res, err)
	}
	if _, err := slow.RetrieveLayers(ctx, tokens, slots, gpuclient.LayerOptions{}); err == nil {
		t.Fatal("RetrieveLayers with the server gone succeeded")
	}
}

// TestGPUClientPipelinesMoreRequestsThanSocketsHold: a retrieval whose
// GET requests alone (long keys) are more than the sockets buffer, and
// whose replies are more still. The server stops reading requests while
// its replies wait for the client, so a client that finished writing all
// its requests before reading any reply would wait forever; gpuclient
// writes and reads at once.
func TestGPUClientPipelinesMoreRequestsThanSocketsHold(t *testing.T) {
	if diffAgainstRedis() {
		t.Skip("gpuclient needs KVC.PROBE")
	}
	t.Parallel()
	s := startKVServer(t)
	cl := newGPUClient(t, s.Addr)
	const chunks = 600
	gc := gpuCase{"wide", gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: chunks * 4, BlockSize: 4, Heads: 4, HeadSize: 64, DType: gpuclient.BF16}, 2, 16}
	model := string(bytes.Repeat([]byte("m"), 16<<10)) // 16 KiB keys: 19 MiB of GETs
	r := rand.New(rand.NewPCG(9, 17))
	tokens := randomTokens(r, chunks*gc.chunk)
	slots := randomSlots(r, gc.paged, len(tokens), 0)
	src := newKVCache(gc.paged, gc.layers, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if res, err := newConnector(t, cl, model, gc, src, nil).Store(ctx, tokens, slots); err != nil || res.Stored != chunks {
		t.Fatalf("Store: %+v, %v", res, err)
	}
	dst := newKVCache(gc.paged, gc.layers, 0)
	res, err := newConnector(t, cl, model, gc, dst, nil).Retrieve(ctx, tokens, slots)
	if err != nil || res.Tokens != len(tokens) {
		t.Fatalf("Retrieve: %+v, %v", res, err)
	}
	for l := range dst {
		if !bytes.Equal(dst[l], src[l]) {
			t.Fatalf("layer %d differs after the round trip", l)
		}
	}
	// The same layer by layer: all layers' GETs at once (pipelined) or one
	// layer's (sequential).
	c := newConnector(t, cl, model, gc, src, nil)
	st, err := c.StoreLayers(ctx, tokens, slots, gpuclient.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range gc.layers {
		st.LayerDone(ctx, l)
	}
	if res, err := st.Wait(ctx); err != nil || res.Stored != chunks {
		t.Fatalf("StoreLayers: %+v, %v", res, err)
	}
	for _, sequential := range []bool{false, true} {
		dst := newKVCache(gc.paged, gc.layers, 0)
		lr, err := newConnector(t, cl, model, gc, dst, nil).RetrieveLayers(ctx, tokens, slots, gpuclient.LayerOptions{Sequential: sequential})
		if err != nil {
			t.Fatal(err)
		}
		res, err := lr.Result(ctx)
		if err != nil || res.Tokens != len(tokens) {
			t.Fatalf("RetrieveLayers (sequential %v): %+v, %v", sequential, res, err)
		}
		for l := range dst {
			if !bytes.Equal(dst[l], src[l]) {
				t.Fatalf("sequential %v: layer %d differs after the round trip", sequential, l)
			}
		}
	}
}

// storeAllLayers stores tokens layer by layer, signalling every layer done
// at once, and returns the result.
func storeAllLayers(t *testing.T, c *gpuclient.Connector, tokens []uint32, slots []int64, layers int) gpuclient.StoreResult {
	t.Helper()
	ctx := context.Background()
	st, err := c.StoreLayers(ctx, tokens, slots, gpuclient.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range layers {
		if err := st.LayerDone(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// retrieveAllLayers loads tokens layer by layer, waiting for each layer in
// turn, and returns the result.
func retrieveAllLayers(t *testing.T, c *gpuclient.Connector, tokens []uint32, slots []int64, layers int) gpuclient.RetrieveResult {
	t.Helper()
	ctx := context.Background()
	lr, err := c.RetrieveLayers(ctx, tokens, slots, gpuclient.LayerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for l := range layers {
		if err := lr.WaitLayer(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	res, err := lr.Result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}
