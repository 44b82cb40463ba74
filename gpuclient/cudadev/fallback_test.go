package cudadev

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/kvserver/kvserver/gpuclient"
)

// TestNewWithoutDriverFails: a driver library that is not there gives an
// error wrapping ErrUnavailable that names it, not a panic.
func TestNewWithoutDriverFails(t *testing.T) {
	_, err := New(context.Background(), Options{Library: "libcuda-not-installed.so.1"})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "libcuda-not-installed.so.1") {
		t.Errorf("error %q does not name the library", err)
	}
}

// TestNewDeviceFallsBackToCPU: without a driver NewDevice returns the CPU
// device, which works, and logs why.
func TestNewDeviceFallsBackToCPU(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	dev := NewDevice(context.Background(), Options{Library: "libcuda-not-installed.so.1", Logger: log})
	defer CloseDevice(dev)
	if _, ok := dev.(gpuclient.CPUDevice); !ok {
		t.Fatalf("NewDevice returned %T, want gpuclient.CPUDevice", dev)
	}
	if !strings.Contains(logs.String(), "libcuda-not-installed.so.1") {
		t.Errorf("log %q does not give the reason", logs.String())
	}
	// The fallback is a working device.
	p := gpuclient.PagedLayout{Kind: gpuclient.FlashAttn, NumBlocks: 2, BlockSize: 2, Heads: 1, HeadSize: 8, DType: gpuclient.FP16}
	c := gpuclient.Chunk{Format: 1, Layers: 1, Tokens: 1, Paged: p}
	layer := bytes.Repeat([]byte{7}, p.LayerBytes())
	dst := make([]byte, c.Size())
	if err := dev.Gather(context.Background(), c, [][]byte{layer}, []int64{3}, dst); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst, bytes.Repeat([]byte{7}, c.Size())) {
		t.Fatalf("fallback gathered %x", dst)
	}
}

// TestNewDeviceWithDefaultDriver: with the default library NewDevice gives
// the CUDA device exactly when New can open one, and the CPU device
// otherwise (on a machine without a GPU, this machine's case).
func TestNewDeviceWithDefaultDriver(t *testing.T) {
	d, err := New(context.Background(), Options{})
	if err == nil {
		d.Close()
	} else if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New: %v does not wrap ErrUnavailable", err)
	}
	dev := NewDevice(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)})
	defer CloseDevice(dev)
	switch dev.(type) {
	case *Device:
		if err != nil {
			t.Fatalf("New failed (%v) but NewDevice gave a CUDA device", err)
		}
	case gpuclient.CPUDevice:
		if err == nil {
			t.Fatal("New opened a GPU but NewDevice fell back to the CPU")
		}
		t.Logf("no GPU here: %v", err)
	default:
		t.Fatalf("NewDevice returned %T", dev)
	}
}

func TestNVMLWithoutDriver(t *testing.T) {
	if _, err := New(context.Background(), Options{}); err == nil {
		t.Skip("a GPU is present")
	}
	if _, err := PCIeLinkOf("0000:00:00.0"); err == nil {
		t.Fatal("PCIeLinkOf succeeded without a driver")
	}
}

func TestLinkBandwidth(t *testing.T) {
	tests := []struct {
		gen, width int
		gbps       float64 // GB/s per direction
	}{
		{1, 1, 0.25},
		{2, 16, 8},
		{3, 16, 15.754},
		{4, 16, 31.508},
		{5, 16, 63.015},
		{5, 8, 31.508},
		{6, 16, 121},
		{7, 16, 0},
	}
	for _, tc := range tests {
		got := LinkBandwidth(tc.gen, tc.width) / 1e9
		if math.Abs(got-tc.gbps) > 0.001 {
			t.Errorf("gen %d x%d: %.3f GB/s, want %.3f", tc.gen, tc.width, got, tc.gbps)
		}
	}
}

// TestParamsBlock: each kernel argument's pointer points at its value, 8
// bytes apart, as cuLaunchKernel reads them.
func TestParamsBlock(t *testing.T) {
	mem := make([]byte, paramBytes)
	p := &params{mem: mem}
	p.u64(0x1122334455667788)
	p.i32(-2)
	p.i64(-3)
	for i, want := range []uint64{0x1122334455667788, uint64(uint32(0xfffffffe)), uint64(0xfffffffffffffffd)} {
		addr := uintptr(leU64(mem[8*i:]))
		off := int(addr - uintptrOf(mem))
		if off != 8*maxParams+8*i {
			t.Fatalf("param %d points at offset %d", i, off)
		}
		got := leU64(mem[off:])
		if i == 1 {
			got &= 0xffffffff
		}
		if got != want {
			t.Errorf("param %d = %#x, want %#x", i, got, want)
		}
	}
}
