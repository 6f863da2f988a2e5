// Shared memory: a tiled matrix transpose, one template kernel instantiated for float and
// double (so the kernels are `transpose<float>` and `transpose<double>`, C++ names), and a
// block sum with a tree reduction in `__shared__` memory.

#define TILE 32
#define ROWS_PER_PASS 8

// out (cols x rows) = transpose of in (rows x cols), row-major. A block of TILE x
// ROWS_PER_PASS threads moves one TILE x TILE tile through shared memory, so that both the
// reads and the writes are coalesced; the extra column avoids shared-memory bank conflicts.
template <typename T>
__global__ void transpose(T *out, const T *in, int rows, int cols) {
  __shared__ T tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS)
    if (x < cols && y + j < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS)
    if (x < rows && y + j < cols)
      out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

template __global__ void transpose<float>(float *, const float *, int, int);
template __global__ void transpose<double>(double *, const double *, int, int);

// sums[blockIdx.x] = the sum of this block's elements of in; blockDim.x must be 256.
extern "C" __global__ void block_sum_shared(const int *in, int *sums, int n) {
  __shared__ int partial[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    sums[blockIdx.x] = partial[0];
}
