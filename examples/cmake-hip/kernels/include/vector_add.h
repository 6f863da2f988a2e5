#pragma once
#include "device.h"
__device__ inline float add(float a, float b) { return a + b; }
