# The generated HIP sources the benchmarks share (sourced by benches/pch.sh and caches.sh).

# source_n N: a source of usual shape, index N in its names: hip_runtime.h and a common
# header (SCALE) in the preamble, a template with shared memory and a barrier, expf and an
# atomic in the kernel.
source_n() { # $1: the index
  cat <<SRC
#include <hip/hip_runtime.h>
#include "common.h"

template <int Tile> __device__ float block_sum_$1(const float* x, int n) {
  __shared__ float tile[Tile];
  int i = blockIdx.x * Tile + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] * SCALE + $1 : 0.0f;
  __syncthreads();
  for (int s = Tile / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  return tile[0];
}

extern "C" __global__ void reduce_$1(const float* x, float* out, int n) {
  float v = block_sum_$1<256>(x, n);
  if (threadIdx.x == 0) atomicAdd(out, expf(v));
}
SRC
}
