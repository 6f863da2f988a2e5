// A kernel and the `extern "C"` functions that launch it: what Rust calls (src/main.rs).
#include <cuda_runtime.h>

__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

// Scales `n` floats of host memory by `a` on the GPU: 0 (cudaSuccess), else the CUDA error.
extern "C" int launch_scale(float* host, float a, int n) {
    float* device = nullptr;
    size_t bytes = sizeof(float) * static_cast<size_t>(n);
    cudaError_t e = cudaMalloc(&device, bytes);
    if (e != cudaSuccess) return static_cast<int>(e);
    e = cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        scale<<<(n + 255) / 256, 256>>>(device, a, n);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
    cudaFree(device);
    return static_cast<int>(e);
}

// The name of a CUDA error code (`cudaErrorNoDevice`).
extern "C" const char* cuda_error_name(int e) {
    return cudaGetErrorName(static_cast<cudaError_t>(e));
}
