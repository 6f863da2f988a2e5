// A small HIP kernel: the main job compiles it for several GPU architectures
// with clang and packs the code objects into one HIP fat binary.
#include <stddef.h>

#define __global__ __attribute__((global))

extern "C" __global__ void saxpy(float a, const float *x, float *y, size_t n) {
    size_t i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
    if (i < n)
        y[i] = a * x[i] + y[i];
}
