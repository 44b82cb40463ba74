package cuda

// The flags are the ones the test that checks the embedded PTX re-runs (it
// reads this line), so change them here only.
//go:generate clang++-16 -x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_80 -ffp-contract=off -fno-gpu-flush-denormals-to-zero -O3 -S -o kvcopy.ptx kvcopy.cu
