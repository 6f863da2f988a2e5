// Device-side declarations: ordinary HIP. offload-build finds the ROCm install (Debian 12:
// apt-get install hipcc libamdhip64-dev rocm-device-libs clang-15) and its clang.
#pragma once
#include <hip/hip_runtime.h>
