package cudadev

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/kvserver/kvserver/gpuclient"
	"github.com/kvserver/kvserver/gpuclient/internal/kvtest"
	"github.com/kvserver/kvserver/kvmeta"
)

// The checks below run twice: on a real GPU (TestGPU*, only with
// KVSERVER_GPU_TESTS=1, see scripts/gpu-test.sh) and on the host
// emulation of the driver in testdata/hostcuda (TestEmulated*), which runs
// the same kernel source on the CPU behind the same purego bindings.

// gpuDevice opens the GPU, or skips the test unless KVSERVER_GPU_TESTS=1
// (then a missing GPU fails it).
func gpuDevice(t *testing.T, opts Options) *Device {
	t.Helper()
	if os.Getenv("KVSERVER_GPU_TESTS") != "1" {
		t.Skip("GPU tests run with KVSERVER_GPU_TESTS=1 (scripts/gpu-test.sh)")
	}
	d, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("KVSERVER_GPU_TESTS=1 but no GPU: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	t.Logf("GPU %d: %s, sm_%d%d, %.1f GiB, driver %d, bus %s", d.info.Ordinal, d.info.Name,
		d.info.ComputeMajor, d.info.ComputeMinor, float64(d.info.TotalMemory)/(1<<30), d.info.DriverVersion, d.info.PCIBusID)
	return d
}

var hostCUDA struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if hostCUDA.dir != "" {
		os.RemoveAll(hostCUDA.dir)
	}
	os.Exit(code)
}

// emulatedDevice opens the host emulation of the driver, building it with
// clang++-16 once per test binary; without clang++-16 the test is skipped.
func emulatedDevice(t *testing.T, opts Options) *Device {
	t.Helper()
	hostCUDA.once.Do(func() {
		cxx, err := exec.LookPath("clang++-16")
		if err != nil {
			hostCUDA.err = err
			return
		}
		dir, err := os.MkdirTemp("", "hostcuda")
		if err != nil {
			hostCUDA.err = err
			return
		}
		hostCUDA.dir, hostCUDA.path = dir, filepath.Join(dir, "libcuda.so.1")
		out, err := exec.Command(cxx, "-std=c++17", "-O2", "-shared", "-fPIC", "-w",
			"-Itestdata/hostcuda", "-o", hostCUDA.path, "testdata/hostcuda/hostcuda.cc").CombinedOutput()
		if err != nil {
			hostCUDA.err = fmt.Errorf("building the host emulation: %v\n%s", err, out)
		}
	})
	if errors.Is(hostCUDA.err, exec.ErrNotFound) {
		t.Skipf("clang++-16 not on PATH, cannot build the host emulation of the driver (apt-get install clang-16)")
	}
	if hostCUDA.err != nil {
		t.Fatal(hostCUDA.err)
	}
	opts.Library = hostCUDA.path
	d, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

var kernelSets = []struct {
	name string
	set  kernelSet
}{{"specific", kernelsSpecific}, {"strided", kernelsStrided}, {"layer", kernelsLayer}}

// checkCopiesMatchCPU: Gather and Scatter through d equal CPUDevice's bit
// for bit for every case, with each set of kernels. every > 1 runs only
// every every-th case (the emulation is slow).
func checkCopiesMatchCPU(t *testing.T, d *Device, every int) {
	ctx := context.Background()
	cpu := gpuclient.CPUDevice{}
	for _, ks := range kernelSets {
		d.kernels = ks.set
		for i, tc := range kvtest.CopyCases() {
			if i%every != 0 {
				continue
			}
			r := rand.New(rand.NewPCG(uint64(i), uint64(ks.set)))
			c := tc.Chunk
			layers := kvtest.Layers(r, c)
			slots := kvtest.Slots(r, c.Paged, c.Tokens, tc.NegEvery)
			got, want := kvtest.Bytes(r, c.Size()), make([]byte, c.Size())
			if err := d.Gather(ctx, c, layers, slots, got); err != nil {
				t.Fatalf("%s/%s: Gather: %v", ks.name, tc.Name, err)
			}
			if err := cpu.Gather(ctx, c, layers, slots, want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s/%s: Gather differs from the CPU (slots %v)", ks.name, tc.Name, slots)
			}
			src := kvtest.Bytes(r, c.Size())
			gotL, wantL := kvtest.Clone(layers), kvtest.Clone(layers)
			if err := d.Scatter(ctx, c, gotL, slots, src); err != nil {
				t.Fatalf("%s/%s: Scatter: %v", ks.name, tc.Name, err)
			}
			if err := cpu.Scatter(ctx, c, wantL, slots, src); err != nil {
				t.Fatal(err)
			}
			for l := range gotL {
				if !bytes.Equal(gotL[l], wantL[l]) {
					t.Fatalf("%s/%s: Scatter into layer %d differs from the CPU (slots %v)", ks.name, tc.Name, l, slots)
				}
			}
		}
	}
	d.kernels = kernelsSpecific
}

// checkDequantMatchesCPU: the fused int8 dequantise-scatter through d
// equals CPUDevice's (itself equal to codec.Decode then Scatter).
func checkDequantMatchesCPU(t *testing.T, d *Device, every int) {
	ctx := context.Background()
	for i, tc := range kvtest.QuantCases() {
		if i%every != 0 {
			continue
		}
		r := rand.New(rand.NewPCG(uint64(i), 9))
		c := tc.Chunk
		_, blob, err := kvtest.Int8Blob(r, c)
		if err != nil {
			t.Fatal(err)
		}
		slots := kvtest.Slots(r, c.Paged, c.Tokens, tc.NegEvery)
		got := kvtest.Layers(r, c)
		want := kvtest.Clone(got)
		if err := d.DequantScatter(ctx, c, got, slots, blob); err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		if err := (gpuclient.CPUDevice{}).DequantScatter(ctx, c, want, slots, blob); err != nil {
			t.Fatal(err)
		}
		for l := range got {
			if !bytes.Equal(got[l], want[l]) {
				t.Fatalf("%s: layer %d differs from the CPU", tc.Name, l)
			}
		}
	}
}

// checkPagedCache drives a device-resident cache the way an engine does:
// upload once, then move chunks (multi-layer, and single layers at an
// offset into the cache), through pageable and pinned host memory, with a
// chunk larger than the staging buffers, and compares with the same steps
// on the CPU.
func checkPagedCache(t *testing.T, d *Device) {
	ctx := context.Background()
	cpu := gpuclient.CPUDevice{}
	r := rand.New(rand.NewPCG(5, 5))
	for _, kind := range []gpuclient.PagedKind{gpuclient.FlashAttn, gpuclient.FlashInfer, gpuclient.MLA} {
		heads := 8
		if kind == gpuclient.MLA {
			heads = 1
		}
		p := gpuclient.PagedLayout{Kind: kind, NumBlocks: 64, BlockSize: 16, Heads: heads, HeadSize: 128, DType: gpuclient.BF16}
		const nl = 4
		pc, err := d.AllocPaged(ctx, p, nl)
		if err != nil {
			t.Fatal(err)
		}
		host := make([][]byte, nl)
		for l := range host {
			host[l] = kvtest.Bytes(r, p.LayerBytes())
		}
		if err := d.UploadPaged(ctx, pc, host); err != nil {
			t.Fatal(err)
		}
		pinned, err := d.AllocHost(4 << 20)
		if err != nil {
			t.Fatal(err)
		}
		for f, layers := range kvtest.Formats(kind, nl) {
			for _, first := range []int{0, nl - layers} {
				for _, usePinned := range []bool{false, true} {
					name := fmt.Sprintf("%s/%s/first=%d/pinned=%v", kind, f, first, usePinned)
					c := gpuclient.Chunk{Format: f, Layers: layers, Tokens: 256, Paged: p}
					slots := kvtest.Slots(r, p, c.Tokens, 5)
					buf := func(n int) []byte {
						if usePinned {
							return pinned[:n]
						}
						return make([]byte, n)
					}
					// Store: gather from the cache.
					got, want := buf(c.Size()), make([]byte, c.Size())
					if err := d.GatherPaged(ctx, c, pc, first, slots, got); err != nil {
						t.Fatalf("%s: GatherPaged: %v", name, err)
					}
					if err := cpu.Gather(ctx, c, host[first:first+layers], slots, want); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, want) {
						t.Fatalf("%s: GatherPaged differs from the CPU", name)
					}
					// Load: scatter another chunk in.
					src := buf(c.Size())
					copy(src, kvtest.Bytes(r, c.Size()))
					if err := d.ScatterPaged(ctx, c, pc, first, slots, src); err != nil {
						t.Fatalf("%s: ScatterPaged: %v", name, err)
					}
					if err := cpu.Scatter(ctx, c, host[first:first+layers], slots, src); err != nil {
						t.Fatal(err)
					}
					// Load a quantized chunk.
					if f != kvmeta.FormatKV2TD || !usePinned {
						_, blob, err := kvtest.Int8Blob(r, c)
						if err != nil {
							t.Fatal(err)
						}
						if err := d.DequantScatterPaged(ctx, c, pc, first, slots, blob); err != nil {
							t.Fatalf("%s: DequantScatterPaged: %v", name, err)
						}
						if err := cpu.DequantScatter(ctx, c, host[first:first+layers], slots, blob); err != nil {
							t.Fatal(err)
						}
					}
					back := make([][]byte, nl)
					for l := range back {
						back[l] = make([]byte, p.LayerBytes())
					}
					if err := d.DownloadPaged(ctx, pc, back); err != nil {
						t.Fatal(err)
					}
					for l := range back {
						if !bytes.Equal(back[l], host[l]) {
							t.Fatalf("%s: cache layer %d differs from the CPU's", name, l)
						}
					}
				}
			}
		}
		if err := d.FreeHost(pinned); err != nil {
			t.Fatal(err)
		}
		if err := d.FreePaged(pc); err != nil {
			t.Fatal(err)
		}
	}
}

// checkRefusals: bad arguments fail with ErrLayout before anything is
// written, and a closed device says so.
func checkRefusals(t *testing.T, d *Device) {
	ctx := context.Background()
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 4, BlockSize: 4, Heads: 2, HeadSize: 8, DType: gpuclient.FP16}
	c := gpuclient.Chunk{Format: kvmeta.FormatKV2LTD, Layers: 2, Tokens: 3, Paged: p}
	layers := [][]byte{make([]byte, p.LayerBytes()), make([]byte, p.LayerBytes())}
	if err := d.Scatter(ctx, c, layers, []int64{0, 16, 1}, bytes.Repeat([]byte{1}, c.Size())); !errors.Is(err, gpuclient.ErrLayout) {
		t.Errorf("slot beyond the cache: %v", err)
	}
	if err := d.Scatter(ctx, c, layers, []int64{0, 1, 2}, make([]byte, c.Size()-1)); !errors.Is(err, gpuclient.ErrLayout) {
		t.Errorf("short chunk: %v", err)
	}
	for l, b := range layers {
		if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
			t.Errorf("layer %d written despite the error", l)
		}
	}
	pc, err := d.AllocPaged(ctx, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	other := c
	other.Paged.HeadSize = 16
	if err := d.ScatterPaged(ctx, other, pc, 0, []int64{0, 1, 2}, make([]byte, other.Size())); !errors.Is(err, gpuclient.ErrLayout) {
		t.Errorf("chunk of another layout: %v", err)
	}
	one := gpuclient.Chunk{Format: kvmeta.FormatKVT2D, Layers: 1, Tokens: 3, Paged: p}
	if err := d.ScatterPaged(ctx, one, pc, 2, []int64{0, 1, 2}, make([]byte, one.Size())); !errors.Is(err, gpuclient.ErrLayout) {
		t.Errorf("layer beyond the cache: %v", err)
	}
	if err := d.GatherOn(ctx, c, pc.Layers, []int64{0, 1, 2}, 0); !errors.Is(err, gpuclient.ErrLayout) {
		t.Errorf("null chunk pointer: %v", err)
	}
	if err := d.Free(pc.base + 1); err == nil {
		t.Error("Free of an address Alloc did not return succeeded")
	}
	if err := d.FreePaged(pc); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.Gather(cctx, c, layers, []int64{0, 1, 2}, make([]byte, c.Size())); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Gather(ctx, c, layers, []int64{0, 1, 2}, make([]byte, c.Size())); !errors.Is(err, ErrClosed) {
		t.Errorf("closed device: %v", err)
	}
}

func TestGPUCopiesMatchCPU(t *testing.T) { checkCopiesMatchCPU(t, gpuDevice(t, Options{}), 1) }
func TestGPUDequantScatterMatchesCPU(t *testing.T) {
	checkDequantMatchesCPU(t, gpuDevice(t, Options{}), 1)
}

// The staging buffers are made smaller than the 4 MiB chunks (and of an
// odd size), so that copies take the pipelined, parallel path.
func TestGPUPagedCache(t *testing.T) {
	checkPagedCache(t, gpuDevice(t, Options{StagingBytes: 2<<20 + 8}))
}
func TestGPURefusals(t *testing.T) { checkRefusals(t, gpuDevice(t, Options{})) }

func TestEmulatedCopiesMatchCPU(t *testing.T) {
	checkCopiesMatchCPU(t, emulatedDevice(t, Options{}), 7)
}
func TestEmulatedDequantScatterMatchesCPU(t *testing.T) {
	checkDequantMatchesCPU(t, emulatedDevice(t, Options{}), 1)
}
func TestEmulatedPagedCache(t *testing.T) {
	checkPagedCache(t, emulatedDevice(t, Options{StagingBytes: 2<<20 + 8}))
}
func TestEmulatedRefusals(t *testing.T) { checkRefusals(t, emulatedDevice(t, Options{})) }
