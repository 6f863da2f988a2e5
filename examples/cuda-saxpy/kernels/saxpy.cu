// y = a * x + y, one element per thread. No CUDA headers: offload-build compiles with
// -nocudainc -nocudalib when no CUDA install is found, so the qualifier and the thread
// indices are spelled out (with a CUDA install, <cuda_runtime.h> gives the usual ones).
#ifndef __global__
#define __global__ __attribute__((global))
#endif

extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
          __nvvm_read_ptx_sreg_tid_x();
  if (i < n)
    y[i] = a * x[i] + y[i];
}
