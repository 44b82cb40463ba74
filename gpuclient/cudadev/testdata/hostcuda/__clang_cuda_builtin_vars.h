// Host stand-in for clang's CUDA builtin variables, so that cuda/kvcopy.cu
// compiles as ordinary C++ for hostcuda.cc: the emulated launch sets these
// before calling a kernel for each (block, thread) in turn.
#pragma once
struct hostcuda_dim3 {
  unsigned x, y, z;
};
extern hostcuda_dim3 threadIdx, blockIdx, blockDim, gridDim;
