#include "vector_add.h"

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  if (i < n) c[i] = add(a[i], b[i]);
}
