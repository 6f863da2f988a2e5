// Shared by both kernel files: ordinary HIP. offload-build finds the ROCm install (Debian 12:
// apt-get install hipcc libamdhip64-dev rocm-device-libs clang-15) and compiles with its clang,
// headers and device libraries, as hipcc would.
#pragma once

#include <hip/hip_runtime.h>

#ifndef VECTOR_ADD_BLOCK
#error "VECTOR_ADD_BLOCK is defined by build.rs"
#endif

static __device__ inline unsigned global_index() {
    return blockIdx.x * blockDim.x + threadIdx.x;
}
