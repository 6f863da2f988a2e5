// A kernel and the `extern "C"` functions that launch it: what Rust calls (src/main.rs).
#include <hip/hip_runtime.h>

__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

// Scales `n` floats of host memory by `a` on the GPU: 0 (hipSuccess), else the HIP error code.
extern "C" int launch_scale(float* host, float a, int n) {
    float* device = nullptr;
    size_t bytes = sizeof(float) * static_cast<size_t>(n);
    hipError_t e = hipMalloc(&device, bytes);
    if (e != hipSuccess) return static_cast<int>(e);
    e = hipMemcpy(device, host, bytes, hipMemcpyHostToDevice);
    if (e == hipSuccess) {
        scale<<<(n + 255) / 256, 256>>>(device, a, n);
        e = hipGetLastError();
    }
    if (e == hipSuccess) e = hipMemcpy(host, device, bytes, hipMemcpyDeviceToHost);
    hipFree(device);
    return static_cast<int>(e);
}

// The name of a HIP error code (`hipErrorNoDevice`).
extern "C" const char* hip_error_name(int e) {
    return hipGetErrorName(static_cast<hipError_t>(e));
}
