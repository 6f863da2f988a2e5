#include "common.h"

// c[i] = a[i] + b[i]
extern "C" __global__ void __launch_bounds__(VECTOR_ADD_BLOCK)
vector_add(const float* a, const float* b, float* c, unsigned n) {
    unsigned i = global_index();
    if (i < n) c[i] = a[i] + b[i];
}
