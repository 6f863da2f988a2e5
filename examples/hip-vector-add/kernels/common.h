// Shared by both kernel files. With ROCm installed the real HIP headers are used; without
// (offload-build then compiles with -nogpulib -nogpuinc) the few pieces needed are defined
// from clang builtins, so the example builds on a machine with nothing but clang.
#pragma once

#if __has_include(<hip/hip_runtime.h>)
#include <hip/hip_runtime.h>
static __device__ inline unsigned global_index() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}
#else
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
static __device__ inline unsigned global_index() {
    return __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
           __builtin_amdgcn_workitem_id_x();
}
#endif

#ifndef VECTOR_ADD_BLOCK
#error "VECTOR_ADD_BLOCK is defined by build.rs"
#endif
