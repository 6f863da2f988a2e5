/* offload-build's CUDA prelude: force-included (-include) into every CUDA source that clang
 * compiles without a CUDA toolkit (-nocudainc -nocudalib), so that CUDA as every tutorial
 * spells it compiles: the execution-space and memory-space keywords, threadIdx / blockIdx /
 * blockDim / gridDim / warpSize, __syncthreads, the warp votes, the __threadfence family and
 * the atomics, all from clang's own CUDA headers in its resource directory (as clang's
 * __clang_cuda_runtime_wrapper.h composes them with a toolkit).
 *
 * The toolkit's headers (cuda_runtime.h, cuda_fp16.h, cub, ...) are not here: a source that
 * includes one needs a CUDA toolkit (NVIDIA's pip wheels or a CUDA install). Math functions
 * (expf, sqrtf, ...) need libdevice, which comes with a toolkit too. */
#ifndef OFFLOAD_BUILD_CUDA_PRELUDE_H
#define OFFLOAD_BUILD_CUDA_PRELUDE_H

#define __host__ __attribute__((host))
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))

#include <stddef.h>

/* The vector types the builtin variables convert to (vector_types.h of a toolkit). */
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ constexpr dim3(unsigned int vx = 1, unsigned int vy = 1,
                                     unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  __host__ __device__ constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

#include <__clang_cuda_builtin_vars.h>

/* clang's device functions are written for CUDA 9 and later headers; CUDA_VERSION is set for
 * them only, so that a source can still tell that no toolkit is there. */
#pragma push_macro("CUDA_VERSION")
#undef CUDA_VERSION
#define CUDA_VERSION 12000
#include <__clang_cuda_libdevice_declares.h>
#include <__clang_cuda_device_functions.h>
#pragma pop_macro("CUDA_VERSION")

/* Out-of-line conversions declared by __clang_cuda_builtin_vars.h. */
__device__ inline __cuda_builtin_threadIdx_t::operator dim3() const { return dim3(x, y, z); }
__device__ inline __cuda_builtin_threadIdx_t::operator uint3() const { return {x, y, z}; }
__device__ inline __cuda_builtin_blockIdx_t::operator dim3() const { return dim3(x, y, z); }
__device__ inline __cuda_builtin_blockIdx_t::operator uint3() const { return {x, y, z}; }
__device__ inline __cuda_builtin_blockDim_t::operator dim3() const { return dim3(x, y, z); }
__device__ inline __cuda_builtin_blockDim_t::operator uint3() const { return {x, y, z}; }
__device__ inline __cuda_builtin_gridDim_t::operator dim3() const { return dim3(x, y, z); }
__device__ inline __cuda_builtin_gridDim_t::operator uint3() const { return {x, y, z}; }

/* The atomics of device_atomic_functions.h and sm_60_atomic_functions.h, over clang's
 * __<type>Atomic<Op> functions. */
#define OFFLOAD_BUILD_ATOMIC(NAME, T, IMPL)                                            \
  static __device__ __forceinline__ T NAME(T *address, T val) { return IMPL(address, val); }
OFFLOAD_BUILD_ATOMIC(atomicAdd, int, __iAtomicAdd)
OFFLOAD_BUILD_ATOMIC(atomicAdd, unsigned int, __uAtomicAdd)
OFFLOAD_BUILD_ATOMIC(atomicAdd, unsigned long long, __ullAtomicAdd)
OFFLOAD_BUILD_ATOMIC(atomicAdd, float, __fAtomicAdd)
OFFLOAD_BUILD_ATOMIC(atomicAdd, double, __dAtomicAdd)
OFFLOAD_BUILD_ATOMIC(atomicExch, int, __iAtomicExch)
OFFLOAD_BUILD_ATOMIC(atomicExch, unsigned int, __uAtomicExch)
OFFLOAD_BUILD_ATOMIC(atomicExch, unsigned long long, __ullAtomicExch)
OFFLOAD_BUILD_ATOMIC(atomicExch, float, __fAtomicExch)
OFFLOAD_BUILD_ATOMIC(atomicMin, int, __iAtomicMin)
OFFLOAD_BUILD_ATOMIC(atomicMin, unsigned int, __uAtomicMin)
OFFLOAD_BUILD_ATOMIC(atomicMin, long long, __illAtomicMin)
OFFLOAD_BUILD_ATOMIC(atomicMin, unsigned long long, __ullAtomicMin)
OFFLOAD_BUILD_ATOMIC(atomicMax, int, __iAtomicMax)
OFFLOAD_BUILD_ATOMIC(atomicMax, unsigned int, __uAtomicMax)
OFFLOAD_BUILD_ATOMIC(atomicMax, long long, __illAtomicMax)
OFFLOAD_BUILD_ATOMIC(atomicMax, unsigned long long, __ullAtomicMax)
OFFLOAD_BUILD_ATOMIC(atomicInc, unsigned int, __uAtomicInc)
OFFLOAD_BUILD_ATOMIC(atomicDec, unsigned int, __uAtomicDec)
OFFLOAD_BUILD_ATOMIC(atomicAnd, int, __iAtomicAnd)
OFFLOAD_BUILD_ATOMIC(atomicAnd, unsigned int, __uAtomicAnd)
OFFLOAD_BUILD_ATOMIC(atomicAnd, unsigned long long, __ullAtomicAnd)
OFFLOAD_BUILD_ATOMIC(atomicOr, int, __iAtomicOr)
OFFLOAD_BUILD_ATOMIC(atomicOr, unsigned int, __uAtomicOr)
OFFLOAD_BUILD_ATOMIC(atomicOr, unsigned long long, __ullAtomicOr)
OFFLOAD_BUILD_ATOMIC(atomicXor, int, __iAtomicXor)
OFFLOAD_BUILD_ATOMIC(atomicXor, unsigned int, __uAtomicXor)
OFFLOAD_BUILD_ATOMIC(atomicXor, unsigned long long, __ullAtomicXor)
#undef OFFLOAD_BUILD_ATOMIC
static __device__ __forceinline__ int atomicSub(int *address, int val) {
  return __iAtomicAdd(address, -val);
}
static __device__ __forceinline__ unsigned int atomicSub(unsigned int *address,
                                                         unsigned int val) {
  return __uAtomicAdd(address, (unsigned int)-val);
}
static __device__ __forceinline__ int atomicCAS(int *address, int compare, int val) {
  return __iAtomicCAS(address, compare, val);
}
static __device__ __forceinline__ unsigned int atomicCAS(unsigned int *address,
                                                         unsigned int compare,
                                                         unsigned int val) {
  return __uAtomicCAS(address, compare, val);
}
static __device__ __forceinline__ unsigned long long atomicCAS(unsigned long long *address,
                                                               unsigned long long compare,
                                                               unsigned long long val) {
  return __ullAtomicCAS(address, compare, val);
}

#endif /* OFFLOAD_BUILD_CUDA_PRELUDE_H */
