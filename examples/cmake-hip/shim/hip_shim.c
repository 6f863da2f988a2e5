/* A recording stand-in for the HIP runtime's registration entry points (as in the crate's
 * host-object tests): it keeps the fat binaries and kernels registered by the constructors of
 * linked host objects, for the example program to print. */
#include <stddef.h>

struct hip_fatbin_wrapper {
  unsigned magic, version;
  const void* data;
  void* unused;
};

#define MAX_RECORDS 64
static const void* fatbins[MAX_RECORDS];
static int n_fatbins;
static const char* functions[MAX_RECORDS];
static int n_functions;
static void* handle;

void** __hipRegisterFatBinary(const struct hip_fatbin_wrapper* w) {
  if (n_fatbins < MAX_RECORDS) fatbins[n_fatbins++] = w->data;
  return &handle;
}

void __hipRegisterFunction(void** h, const void* host, const char* dev, const char* name, int t,
                           void* a, void* b, void* c, void* d, int* e) {
  (void)h; (void)host; (void)dev; (void)t; (void)a; (void)b; (void)c; (void)d; (void)e;
  if (n_functions < MAX_RECORDS) functions[n_functions++] = name;
}

void __hipRegisterVar(void** h, void* host, const char* dev, const char* name, int ext,
                      size_t size, int c, int g) {
  (void)h; (void)host; (void)dev; (void)name; (void)ext; (void)size; (void)c; (void)g;
}

void __hipUnregisterFatBinary(void** h) { (void)h; }

int hip_shim_fatbin_count(void) { return n_fatbins; }
const void* hip_shim_fatbin(int i) { return fatbins[i]; }
int hip_shim_function_count(void) { return n_functions; }
const char* hip_shim_function(int i) { return functions[i]; }
