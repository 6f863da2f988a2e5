#include "common.h"

// x[i] *= s
extern "C" __global__ void __launch_bounds__(VECTOR_ADD_BLOCK)
scale(float* x, float s, unsigned n) {
    unsigned i = global_index();
    if (i < n) x[i] *= s;
}

// y[i] = exp(x[i] - max of x over the block): a block-wide reduction in shared memory, then
// device math (expf, from the ROCm device library ocml).
extern "C" __global__ void __launch_bounds__(VECTOR_ADD_BLOCK)
exp_shifted(const float* x, float* y, unsigned n) {
    __shared__ float tile[VECTOR_ADD_BLOCK];
    unsigned i = global_index();
    float v = i < n ? x[i] : -INFINITY;
    tile[threadIdx.x] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) tile[threadIdx.x] = fmaxf(tile[threadIdx.x], tile[threadIdx.x + stride]);
        __syncthreads();
    }
    if (i < n) y[i] = expf(v - tile[0]);
}
