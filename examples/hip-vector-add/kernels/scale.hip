#include "common.h"

// x[i] *= s
extern "C" __global__ void __launch_bounds__(VECTOR_ADD_BLOCK)
scale(float* x, float s, unsigned n) {
    unsigned i = global_index();
    if (i < n) x[i] *= s;
}
