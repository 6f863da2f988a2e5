#include "scale.h"

extern "C" __global__ void scale(float* x, int n) {
  int i = __builtin_amdgcn_workitem_id_x();
  if (i < n) x[i] = scale_one(x[i]);
}
