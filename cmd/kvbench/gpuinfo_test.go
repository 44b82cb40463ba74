package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestGPUInfoWithoutDriverSaysSoAndSucceeds: on a machine without an
// NVIDIA driver (or in a build without cgo), gpuinfo prints "no NVIDIA
// driver" with the reason and exits 0; --json says driver false.
func TestGPUInfoWithoutDriverSaysSoAndSucceeds(t *testing.T) {
	if queryGPUs().Driver {
		t.Skip("this machine has an NVIDIA driver")
	}
	var out bytes.Buffer
	if err := runGPUInfo(context.Background(), nil, &out); err != nil {
		t.Fatalf("gpuinfo failed: %v", err)
	}
	if !strings.HasPrefix(out.String(), "no NVIDIA driver: ") || len(strings.TrimSpace(out.String())) <= len("no NVIDIA driver:") {
		t.Fatalf("output %q", out.String())
	}
	out.Reset()
	if err := runGPUInfo(context.Background(), []string{"--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep gpuReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	if rep.Driver || rep.Reason == "" || rep.GPUs == nil || len(rep.GPUs) != 0 {
		t.Fatalf("report %+v", rep)
	}
}

// TestGPUInfoReportsWhatNVMLSees: with a driver, every GPU NVML lists has a
// name, memory and a PCIe link with a known data rate.
func TestGPUInfoReportsWhatNVMLSees(t *testing.T) {
	rep := queryGPUs()
	if !rep.Driver {
		t.Skipf("no NVIDIA driver: %s", rep.Reason)
	}
	for _, g := range rep.GPUs {
		if g.Name == "" || g.MemoryTotal == 0 || g.PCIeMaxWidth == 0 || g.LinkGBps == 0 {
			t.Errorf("GPU %d: %+v", g.Index, g)
		}
	}
	var out bytes.Buffer
	if err := printGPUReport(&out, rep); err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
}

func TestPrintGPUReport(t *testing.T) {
	rep := gpuReport{Driver: true, DriverVersion: "550.54.15", CUDAVersion: 12040, GPUs: []gpuInfo{{
		Index: 0, Name: "NVIDIA H100 80GB HBM3", UUID: "GPU-x", BusID: "00000000:19:00.0", Compute: "90",
		MemoryTotal: 80 << 30, MemoryFree: 79 << 30, PCIeMaxGen: 5, PCIeMaxWidth: 16, PCIeGen: 1, PCIeWidth: 16,
		LinkGBps: linkGBps(5, 16),
	}}}
	var out bytes.Buffer
	if err := printGPUReport(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"driver 550.54.15, CUDA 12.4, 1 GPU(s)", "GPU 0: NVIDIA H100 80GB HBM3 (sm_90)", "80.0 GiB total", "gen 5 x16 max (63.0 GB/s per direction), now gen 1 x16"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
