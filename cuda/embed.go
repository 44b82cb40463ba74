package cuda

import _ "embed"

// PTX is kvcopy.ptx: the kernels of kvcopy.cu compiled for sm_80 (PTX ISA
// 7.0), ready for cuModuleLoadData. Treat it as read-only.
//
//go:embed kvcopy.ptx
var PTX string

// Arch is the virtual architecture PTX targets; the driver JIT-compiles it
// for any GPU of this compute capability or newer.
const Arch = "sm_80"

// Kernel names (extern "C", so unmangled) of the entries in PTX. The
// parameter lists are documented in kvcopy.cu.
const (
	// KernelGather2LTD gathers all layers into a KV_2LTD chunk [2, L, T, row].
	KernelGather2LTD = "kv_gather_2ltd"
	// KernelScatter2LTD scatters a KV_2LTD chunk into all layers.
	KernelScatter2LTD = "kv_scatter_2ltd"
	// KernelGatherMLA gathers all layers into a KV_MLA_FMT chunk [1, L, T, row].
	KernelGatherMLA = "kv_gather_mla"
	// KernelScatterMLA scatters a KV_MLA_FMT chunk into all layers.
	KernelScatterMLA = "kv_scatter_mla"
	// KernelGatherT2D gathers one layer into a KV_T2D chunk [T, 2, row].
	KernelGatherT2D = "kv_gather_t2d"
	// KernelScatterT2D scatters a KV_T2D chunk into one layer.
	KernelScatterT2D = "kv_scatter_t2d"
	// KernelGatherStrided is the general gather with explicit chunk strides.
	KernelGatherStrided = "kv_gather_strided"
	// KernelScatterStrided is the general scatter with explicit chunk strides.
	KernelScatterStrided = "kv_scatter_strided"
	// KernelGatherLayer gathers one layer, its buffer passed by value, with
	// explicit chunk strides (KV_2TD, KV_T2D, one MLA layer).
	KernelGatherLayer = "kv_gather_layer"
	// KernelScatterLayer is the inverse of KernelGatherLayer.
	KernelScatterLayer = "kv_scatter_layer"
	// KernelDequantScatterInt8 decodes the payload of an int8 blob of package
	// codec and scatters it into all layers in one pass.
	KernelDequantScatterInt8 = "kv_dequant_scatter_int8"
)

// Kernels lists every kernel name PTX declares.
func Kernels() []string {
	return []string{
		KernelGather2LTD, KernelScatter2LTD,
		KernelGatherMLA, KernelScatterMLA,
		KernelGatherT2D, KernelScatterT2D,
		KernelGatherStrided, KernelScatterStrided,
		KernelGatherLayer, KernelScatterLayer,
		KernelDequantScatterInt8,
	}
}
