#pragma once
#include "device.h"
__device__ inline float scale_one(float x) { return x * SCALE_FACTOR; }
