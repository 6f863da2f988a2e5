// y = a * x + y, one element per thread: standard CUDA, as every tutorial spells it. No
// include is needed: nvcc, and clang in CUDA mode, declare `__global__` and the thread
// indices themselves.
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
