// Half-precision arithmetic: y = a * x + y in fp16 (`__half`, cuda_fp16.h) and bf16
// (`__nv_bfloat16`, cuda_bf16.h), with the fused multiply-add of each type. The scale comes
// in as a float and is converted on the device, so the host passes only 16-bit bit patterns
// in the buffers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void axpy_half(int n, float a, const __half *x, __half *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __hfma(__float2half(a), x[i], y[i]);
}

extern "C" __global__ void axpy_bf16(int n, float a, const __nv_bfloat16 *x,
                                     __nv_bfloat16 *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = __hfma(__float2bfloat16(a), x[i], y[i]);
}

// Two fp16 values per thread through the paired type `__half2`: y = x * x + y.
extern "C" __global__ void square_add_half2(int n2, const __half2 *x, __half2 *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2)
    y[i] = __hadd2(__hmul2(x[i], x[i]), y[i]);
}
