package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kvserver/kvserver/gpuclient/cudadev"
)

// gpuReport is what gpuinfo prints: the driver, and per GPU its memory
// and PCIe link.
type gpuReport struct {
	Driver bool `json:"driver"` // NVML answered
	// Reason says why there is no report when Driver is false.
	Reason        string    `json:"reason,omitempty"`
	DriverVersion string    `json:"driver_version,omitempty"`
	CUDAVersion   int       `json:"cuda_driver_version,omitempty"` // 12040 for 12.4
	GPUs          []gpuInfo `json:"gpus"`
}

// gpuInfo describes one GPU as NVML reports it.
type gpuInfo struct {
	Index        int    `json:"index"`
	Name         string `json:"name"`
	UUID         string `json:"uuid"`
	BusID        string `json:"pci_bus_id"`
	Compute      string `json:"compute_capability"`
	MemoryTotal  uint64 `json:"memory_total_bytes"`
	MemoryFree   uint64 `json:"memory_free_bytes"`
	PCIeMaxGen   int    `json:"pcie_max_gen"`
	PCIeMaxWidth int    `json:"pcie_max_width"`
	PCIeGen      int    `json:"pcie_gen"`   // now: idle GPUs train down
	PCIeWidth    int    `json:"pcie_width"` // now
	// LinkGBps is the maximum link's data rate per direction, 10^9 bytes/s
	// (cudadev.LinkBandwidth), what pinned host copies are measured against.
	LinkGBps float64 `json:"pcie_max_link_gbps"`
}

func runGPUInfo(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("gpuinfo", "[--json]", `
Reports the NVIDIA GPUs NVML sees: name, compute capability, memory, and the
PCIe link (maximum and current generation and width, and the maximum link's
data rate per direction, the figure pinned host-to-device copies are
compared with). On a machine without an NVIDIA driver it says "no NVIDIA
driver" and why, and exits 0. Needs a cgo build (go-nvml); a CGO_ENABLED=0
build says so instead.`)
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rep := queryGPUs()
	if *asJSON {
		return json.NewEncoder(out).Encode(rep)
	}
	return printGPUReport(out, rep)
}

// linkGBps is the per-direction data rate of a PCIe link in GB/s.
func linkGBps(gen, width int) float64 { return cudadev.LinkBandwidth(gen, width) / 1e9 }

func printGPUReport(out io.Writer, rep gpuReport) error {
	if !rep.Driver {
		_, err := fmt.Fprintf(out, "no NVIDIA driver: %s\n", rep.Reason)
		return err
	}
	if _, err := fmt.Fprintf(out, "driver %s, CUDA %d.%d, %d GPU(s)\n", rep.DriverVersion, rep.CUDAVersion/1000, rep.CUDAVersion%1000/10, len(rep.GPUs)); err != nil {
		return err
	}
	for _, g := range rep.GPUs {
		_, err := fmt.Fprintf(out, "GPU %d: %s (sm_%s) %s at %s\n  memory: %.1f GiB total, %.1f GiB free\n  PCIe:   gen %d x%d max (%.1f GB/s per direction), now gen %d x%d\n",
			g.Index, g.Name, g.Compute, g.UUID, g.BusID,
			float64(g.MemoryTotal)/(1<<30), float64(g.MemoryFree)/(1<<30),
			g.PCIeMaxGen, g.PCIeMaxWidth, g.LinkGBps, g.PCIeGen, g.PCIeWidth)
		if err != nil {
			return err
		}
	}
	return nil
}
