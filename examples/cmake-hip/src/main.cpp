// Prints the GPU architectures embedded in this program and the kernels it registered.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// The kernels' host handles, defined in libkernels.a (what hipLaunchKernel takes).
extern "C" char vector_add, scale;

#ifdef OFFLOAD_EXAMPLE_SHIM
extern "C" {
int hip_shim_fatbin_count(void);
const void* hip_shim_fatbin(int i);
int hip_shim_function_count(void);
const char* hip_shim_function(int i);
}

// The architectures of a clang-offload-bundler bundle: after the 24-byte magic, the entry
// count, then per entry offset, size, ID length and ID ("hipv4-amdgcn-amd-amdhsa--gfx90a").
static std::vector<std::string> bundle_archs(const void* data) {
  const char* p = static_cast<const char*>(data);
  std::vector<std::string> archs;
  if (std::memcmp(p, "CCOB", 4) == 0) {
    archs.push_back("(compressed bundle)");
    return archs;
  }
  if (std::memcmp(p, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0) return archs;
  uint64_t n;
  std::memcpy(&n, p + 24, 8);
  const char* e = p + 32;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t len;
    std::memcpy(&len, e + 16, 8);
    std::string id(e + 24, len);
    e += 24 + len;
    size_t dash = id.rfind("--");
    if (id.rfind("host-", 0) == 0 || dash == std::string::npos) continue;
    archs.push_back(id.substr(dash + 2));
  }
  return archs;
}
#endif

int main() {
  std::printf("kernel handles: %s\n", &vector_add != &scale ? "distinct" : "SAME");
#ifdef OFFLOAD_EXAMPLE_SHIM
  for (int i = 0; i < hip_shim_fatbin_count(); ++i) {
    std::printf("embedded archs:");
    for (const std::string& a : bundle_archs(hip_shim_fatbin(i))) std::printf(" %s", a.c_str());
    std::printf("\n");
  }
  for (int i = 0; i < hip_shim_function_count(); ++i)
    std::printf("registered kernel: %s\n", hip_shim_function(i));
#endif
  return 0;
}
