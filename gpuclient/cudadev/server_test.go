package cudadev

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/gpuclient/internal/kvtest"
	"github.com/kvserver/kvserver/kvmeta"
)

// startServer starts a kvserver on a free loopback port for the test and
// returns its address. The binary is $KVSERVER_BIN (scripts/gpu-test.sh
// builds one beside the test binary: the GPU machine has no Go), else it
// is built from ./cmd/kvserver.
func startServer(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KVSERVER_BIN")
	dir := t.TempDir()
	if bin == "" {
		bin = filepath.Join(dir, "kvserver")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/kvserver/kvserver/cmd/kvserver").CombinedOutput()
		if err != nil {
			t.Fatalf("building kvserver: %v\n%s", err, out)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", filepath.Join(dir, "data"),
		"--metrics-port", "0", "--maxmemory", "8gb")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting kvserver: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("kvserver did not listen on %s: %v", addr, err)
		}
	}
}

// TestGPUConnectorThroughServer stores and retrieves through a real
// kvserver with the CUDA device: see checkConnectorThroughServer.
func TestGPUConnectorThroughServer(t *testing.T) {
	checkConnectorThroughServer(t, gpuDevice(t, Options{}), serverShape{blocks: 1024, layers: 32, chunks: 16, strict: true})
}

// TestEmulatedConnectorThroughServer runs the same steps, small, on the
// emulation of the driver.
func TestEmulatedConnectorThroughServer(t *testing.T) {
	checkConnectorThroughServer(t, emulatedDevice(t, Options{}), serverShape{blocks: 48, layers: 2, chunks: 2})
}

// serverShape is the cache and transfer sizes of checkConnectorThroughServer.
type serverShape struct {
	blocks, layers, chunks int
	strict                 bool // log the figures as "gpu-server:"
}

// checkConnectorThroughServer runs the two ways an engine moves KV between
// GPU memory and kvserver, and checks every byte:
//
//   - gpuclient.Connector with d as its Device (Store, then Retrieve into
//     another cache at other slots) gives the same cache as the CPU device
//     retrieving the same chunks, and the source's rows at every token;
//   - chunks gathered from a paged cache in GPU memory (GatherPaged into
//     pinned memory) and SET, then read back with GET and scattered
//     (ScatterPaged) into a second GPU cache at other slots, gather back
//     to the bytes stored. This path is timed: gather+SET and GET+scatter
//     in GB/s of chunk bytes, one connection, one chunk at a time.
func checkConnectorThroughServer(t *testing.T, d *Device, sh serverShape) {
	ctx := context.Background()
	addr := startServer(t)
	r := rand.New(rand.NewPCG(7, 7))
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: sh.blocks, BlockSize: 16, Heads: 8, HeadSize: 128, DType: gpuclient.BF16}
	chunkTokens := gpuclient.DefaultChunkTokens

	t.Run("connector", func(t *testing.T) {
		cl := gpuclient.NewClient(gpuclient.ClientOptions{Addr: addr})
		defer cl.Close()
		const layers = 2
		n := 2*chunkTokens + 17 // two full chunks and a partial one
		tokens := make([]uint32, n)
		for i := range tokens {
			tokens[i] = r.Uint32N(1 << 17)
		}
		src := make([][]byte, layers)
		for l := range src {
			src[l] = kvtest.Bytes(r, p.LayerBytes())
		}
		srcSlots, dstSlots := kvtest.Slots(r, p, n, 7), kvtest.Slots(r, p, n, 9)
		connector := func(kv [][]byte, dev gpuclient.Device) *gpuclient.Connector {
			c, err := gpuclient.NewConnector(cl, gpuclient.Config{
				Prefix: gpuclient.KeyPrefix{Model: "gpu-through-server", WorldSize: 1},
				Paged:  p, Layers: layers, ChunkTokens: chunkTokens, Device: dev,
			}, kv)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		sr, err := connector(src, d).Store(ctx, tokens, srcSlots)
		if err != nil || sr.Stored != 2 {
			t.Fatalf("Store = %+v, %v; want 2 chunks stored", sr, err)
		}
		sentinel := func() [][]byte {
			kv := make([][]byte, layers)
			for l := range kv {
				kv[l] = bytes.Repeat([]byte{0xA5}, p.LayerBytes())
			}
			return kv
		}
		onGPU, onCPU := sentinel(), sentinel()
		for _, run := range []struct {
			kv  [][]byte
			dev gpuclient.Device
		}{{onGPU, d}, {onCPU, gpuclient.CPUDevice{}}} {
			rr, err := connector(run.kv, run.dev).Retrieve(ctx, tokens, dstSlots)
			if err != nil || rr.Loaded != 2 || len(rr.Failed) != 0 {
				t.Fatalf("Retrieve = %+v, %v; want 2 chunks loaded", rr, err)
			}
		}
		row := p.RowBytes()
		for l := range onGPU {
			if !bytes.Equal(onGPU[l], onCPU[l]) {
				t.Fatalf("layer %d: the CUDA device's retrieval differs from the CPU device's", l)
			}
			for i := range 2 * chunkTokens {
				if srcSlots[i] < 0 || dstSlots[i] < 0 {
					continue
				}
				for kv := range p.KVPlanes() {
					got := onGPU[l][p.SlotOffset(kv, dstSlots[i]):][:row]
					if want := src[l][p.SlotOffset(kv, srcSlots[i]):][:row]; !bytes.Equal(got, want) {
						t.Fatalf("layer %d token %d plane %d: retrieved row differs from the stored one", l, i, kv)
					}
				}
			}
		}
	})

	t.Run("device-resident", func(t *testing.T) {
		rc := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute})
		defer rc.Close()
		c := gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: sh.layers, Tokens: chunkTokens, Paged: p}
		srcPC, err := d.AllocPaged(ctx, p, sh.layers)
		if err != nil {
			t.Fatal(err)
		}
		defer d.FreePaged(srcPC)
		dstPC, err := d.AllocPaged(ctx, p, sh.layers)
		if err != nil {
			t.Fatal(err)
		}
		defer d.FreePaged(dstPC)
		host := make([][]byte, sh.layers)
		layer := kvtest.Bytes(r, p.LayerBytes())
		for l := range host {
			host[l] = layer
		}
		if err := d.UploadPaged(ctx, srcPC, host); err != nil {
			t.Fatal(err)
		}
		pinned, err := d.AllocHost(c.Size())
		if err != nil {
			t.Fatal(err)
		}
		defer d.FreeHost(pinned)
		ntok := sh.chunks * chunkTokens
		if ntok > p.Slots() {
			t.Fatalf("%d chunks of %d tokens do not fit %d slots", sh.chunks, chunkTokens, p.Slots())
		}
		srcSlots, dstSlots := blockSlots(r, p, ntok), blockSlots(r, p, ntok)
		key := func(i int) string { return fmt.Sprintf("gpu-resident/%d", i) }
		start := time.Now()
		for i := range sh.chunks {
			if err := d.GatherPaged(ctx, c, srcPC, 0, srcSlots[i*chunkTokens:][:chunkTokens], pinned); err != nil {
				t.Fatal(err)
			}
			if err := rc.Set(ctx, key(i), pinned, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		storeT := time.Since(start)
		start = time.Now()
		for i := range sh.chunks {
			v, err := rc.Get(ctx, key(i)).Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if err := d.ScatterPaged(ctx, c, dstPC, 0, dstSlots[i*chunkTokens:][:chunkTokens], v); err != nil {
				t.Fatal(err)
			}
		}
		loadT := time.Since(start)
		want, got := make([]byte, c.Size()), make([]byte, c.Size())
		for i := range sh.chunks {
			if err := d.GatherPaged(ctx, c, srcPC, 0, srcSlots[i*chunkTokens:][:chunkTokens], want); err != nil {
				t.Fatal(err)
			}
			if err := d.GatherPaged(ctx, c, dstPC, 0, dstSlots[i*chunkTokens:][:chunkTokens], got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("chunk %d: the bytes scattered from the server differ from the ones gathered and stored", i)
			}
		}
		total := sh.chunks * c.Size()
		line, _ := json.Marshal(map[string]any{"gpu": d.info.Name, "chunk_mib": float64(c.Size()) / (1 << 20), "chunks": sh.chunks,
			"gather_set_gbps": gbps(total, storeT), "get_scatter_gbps": gbps(total, loadT)})
		if sh.strict {
			t.Logf("gpu-server: %s", line)
		}
	})
}
