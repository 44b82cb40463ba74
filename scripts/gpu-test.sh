#!/usr/bin/env bash
# gpu-test.sh: build the GPU tests on any machine, run them on one with an
# NVIDIA GPU. See DEVELOPERS.md ("GPU tests").
#
#   scripts/gpu-test.sh build [DIR]   build DIR/cudadev.test and DIR/kvserver (default
#                                     DIR: gpu-test) and, where cgo works, DIR/kvbench
#   scripts/gpu-test.sh run [DIR]     run DIR/cudadev.test's GPU tests here
#   scripts/gpu-test.sh [DIR]         build, then run if this machine has a GPU
#
# Building needs Go only: no CUDA SDK, no cgo, no GPU. The test binary is
# linked with CGO_ENABLED=0 (purego opens libcuda.so.1 and
# libnvidia-ml.so.1 at run time), so it depends on nothing but the C
# library's loader and runs on any x86-64 Linux with an NVIDIA driver:
# copy DIR to the GPU machine and run
#
#   KVSERVER_GPU_TESTS=1 KVSERVER_BIN=$PWD/kvserver ./cudadev.test -test.run GPU -test.v
#
# which is what `run` does (after `kvbench gpuinfo`, when it was built:
# go-nvml needs cgo, so that binary needs a C compiler here and glibc 2.34
# or newer there). The tests compare the CUDA device with the CPU
# reference bit for bit (every layout, dtype, format and kernel, the int8
# dequantise-scatter, random slot mappings with absent tokens) and log the
# bandwidth figures as one line starting "gpu-bandwidth:".
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
  local dir=$1
  mkdir -p "$dir"
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -ldflags=-s -o "$dir/cudadev.test" ./gpuclient/cudadev
  CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -o "$dir/kvserver" ./cmd/kvserver
  echo "built $dir/cudadev.test and $dir/kvserver; on a GPU machine: KVSERVER_GPU_TESTS=1 KVSERVER_BIN=$dir/kvserver $dir/cudadev.test -test.run GPU -test.v"
  if [ "$(go env CGO_ENABLED)" = 1 ]; then
    CGO_ENABLED=1 GOOS=linux GOARCH=amd64 go build -ldflags="-s -w" -o "$dir/kvbench" ./cmd/kvbench
    echo "built $dir/kvbench (kvbench gpuinfo)"
  else
    echo "cgo unavailable here (go env CGO_ENABLED=0): no kvbench gpuinfo binary"
  fi
}

run() {
  local dir=$1
  if [ ! -x "$dir/cudadev.test" ]; then
    echo "no $dir/cudadev.test: run '$0 build $dir' first" >&2
    exit 2
  fi
  if [ -x "$dir/kvbench" ]; then
    "$dir/kvbench" gpuinfo
  fi
  KVSERVER_GPU_TESTS=1 KVSERVER_BIN="$(cd "$dir" && pwd)/kvserver" "$dir/cudadev.test" -test.run GPU -test.v -test.count=1
}

has_gpu() {
  [ -e /dev/nvidia0 ] || command -v nvidia-smi >/dev/null 2>&1
}

case "${1:-}" in
build) build "${2:-gpu-test}" ;;
run) run "${2:-gpu-test}" ;;
-h | --help) grep '^#' "$0" | tail -n +2 ;;
*)
  dir=${1:-gpu-test}
  build "$dir"
  if has_gpu; then
    run "$dir"
  else
    echo "no NVIDIA GPU here (/dev/nvidia0, nvidia-smi): copy $dir to a GPU machine and run it there"
  fi
  ;;
esac
