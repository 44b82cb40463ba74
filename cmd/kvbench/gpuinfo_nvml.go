//go:build cgo

package main

import (
	"fmt"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// queryGPUs asks NVML (go-nvml, which opens libnvidia-ml.so.1 at run time
// through cgo's dlopen) for every GPU. A machine without the driver gives a
// report with Driver false and the reason.
func queryGPUs() gpuReport {
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		reason := nvml.ErrorString(ret)
		switch ret {
		case nvml.ERROR_LIBRARY_NOT_FOUND:
			reason = "libnvidia-ml.so.1 not found (" + reason + ")"
		case nvml.ERROR_DRIVER_NOT_LOADED:
			reason = "the NVIDIA kernel driver is not loaded (" + reason + ")"
		}
		return gpuReport{Reason: reason, GPUs: []gpuInfo{}}
	}
	defer nvml.Shutdown()
	rep := gpuReport{Driver: true, GPUs: []gpuInfo{}}
	rep.DriverVersion, _ = nvml.SystemGetDriverVersion()
	rep.CUDAVersion, _ = nvml.SystemGetCudaDriverVersion()
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS {
		rep.Driver, rep.Reason = false, "nvmlDeviceGetCount: "+nvml.ErrorString(ret)
		return rep
	}
	for i := range n {
		dev, ret := nvml.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			continue
		}
		g := gpuInfo{Index: i}
		g.Name, _ = dev.GetName()
		g.UUID, _ = dev.GetUUID()
		if pci, ret := dev.GetPciInfo(); ret == nvml.SUCCESS {
			g.BusID = cString(pci.BusId[:])
		}
		if major, minor, ret := dev.GetCudaComputeCapability(); ret == nvml.SUCCESS {
			g.Compute = fmt.Sprintf("%d%d", major, minor)
		}
		if mem, ret := dev.GetMemoryInfo(); ret == nvml.SUCCESS {
			g.MemoryTotal, g.MemoryFree = mem.Total, mem.Free
		}
		g.PCIeMaxGen, _ = dev.GetMaxPcieLinkGeneration()
		g.PCIeMaxWidth, _ = dev.GetMaxPcieLinkWidth()
		g.PCIeGen, _ = dev.GetCurrPcieLinkGeneration()
		g.PCIeWidth, _ = dev.GetCurrPcieLinkWidth()
		g.LinkGBps = linkGBps(g.PCIeMaxGen, g.PCIeMaxWidth)
		rep.GPUs = append(rep.GPUs, g)
	}
	return rep
}

// cString is the NUL-terminated prefix of a C char array.
func cString(b []int8) string {
	var s strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		s.WriteByte(byte(c))
	}
	return s.String()
}
