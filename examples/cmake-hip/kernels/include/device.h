// Device-side declarations: hip_runtime.h with ROCm, plain attributes without it
// (offload-build compiles with -nogpuinc when no ROCm is installed).
#pragma once
#if __has_include(<hip/hip_runtime.h>)
#include <hip/hip_runtime.h>
#else
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#endif
