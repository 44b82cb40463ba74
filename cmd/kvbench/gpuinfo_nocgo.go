//go:build !cgo

package main

// noCgoReason is what a CGO_ENABLED=0 build of gpuinfo reports: go-nvml
// loads NVML through cgo.
const noCgoReason = "kvbench was built with CGO_ENABLED=0; gpuinfo needs cgo (github.com/NVIDIA/go-nvml): rebuild with CGO_ENABLED=1 and a C compiler"

// queryGPUs cannot ask NVML without cgo.
func queryGPUs() gpuReport {
	return gpuReport{Reason: noCgoReason, GPUs: []gpuInfo{}}
}
