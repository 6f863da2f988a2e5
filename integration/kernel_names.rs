//! Kernels by their C++ source names (issue 28, item 1), from sources written as HIP and CUDA
//! tutorials write them: no `extern "C"`, an overloaded kernel, a template kernel instantiated
//! twice and a `__device__` helper.
//!
//! - HIP with Debian's ROCm 5.2 (see `rocm.rs`): a crate outside the repository whose
//!   `build.rs` builds the kernels as an `Embed::HipObject` and whose `main.rs` names the
//!   plain kernel and the template instances by constant (`kernels::SOFTMAX_ROWS`,
//!   `kernels::SCALE_FLOAT`) and finds every kernel at run time by name or, for the overloads,
//!   by signature; its own stand-in for the HIP runtime's registration checks that each
//!   constant's handle is the one registered under the kernel's symbol;
//! - the CMake equivalent: `offload_add_fatbin` and a C++ program that declares the handles
//!   with the generated `kernels_kernels.h` (`&kernels::SOFTMAX_ROWS`, and the overloads by
//!   symbol), linked with a C stand-in runtime that checks the same;
//! - CUDA with clang 19 and no CUDA install: the PTX `.entry` names get the same constants and
//!   lookups, checked by a program compiled against the generated module.

use std::path::Path;
use std::process::{Command, Output};

use crate::support::{BUILD_ENV_VARS, repo_root, require};

const EXE: &str = env!("CARGO_BIN_EXE_offload-build");

/// The kernels, as a HIP tutorial writes them.
const HIP_KERNELS: &str = r#"#include <hip/hip_runtime.h>

__device__ float twice(float x) { return 2.0f * x; }

__global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void saxpy(int n, double a, const double* x, double* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void scale(T* x, T s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * s;
}
template __global__ void scale<float>(float*, float, int);
template __global__ void scale<int>(int*, int, int);

__global__ void softmax_rows(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = expf(twice(x[i]));
}
"#;

/// The symbols clang gives those kernels, sorted.
const SYMBOLS: [&str; 5] = [
    "_Z12softmax_rowsPKfPfi",
    "_Z5saxpyidPKdPd",
    "_Z5saxpyifPKfPf",
    "_Z5scaleIfEvPT_S0_i",
    "_Z5scaleIiEvPT_S0_i",
];

/// The tutorial crate's `main.rs`: it stands in for the HIP runtime's registration entry
/// points (recording each kernel's host handle under its symbol), then gets every kernel by
/// source name.
const MAIN_RS: &str = r#"#![deny(warnings)]
include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::AtomicPtr;
use std::sync::Mutex;

static REGISTERED: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
static FATBIN_HANDLE: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

#[no_mangle]
pub extern "C" fn __hipRegisterFatBinary(_wrapper: *const c_void) -> *mut *mut c_void {
    FATBIN_HANDLE.as_ptr()
}

#[no_mangle]
pub extern "C" fn __hipRegisterFunction(
    _fatbin: *mut *mut c_void, host: *const c_void, _device: *const c_char,
    name: *const c_char, _limit: c_int, _tid: *mut c_void, _bid: *mut c_void,
    _block: *mut c_void, _grid: *mut c_void, _warp: *mut c_int,
) -> c_int {
    // The object's constructor passes the kernel's symbol, a C string.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    REGISTERED.lock().unwrap().push((host as usize, name));
    0
}

/// ROCm's headers define device variables: registered, and not checked here.
#[no_mangle]
pub extern "C" fn __hipRegisterVar(
    _fatbin: *mut *mut c_void, _var: *mut c_void, _host: *const c_char, _device: *const c_char,
    _ext: c_int, _size: usize, _constant: c_int, _global: c_int,
) {}

#[no_mangle]
pub extern "C" fn __hipUnregisterFatBinary(_fatbin: *mut *mut c_void) {}

fn main() {
    // At compile time: the plain kernel and the template instances, by source name.
    const NAMED: [kernels::Kernel; 3] =
        [kernels::SOFTMAX_ROWS, kernels::SCALE_FLOAT, kernels::SCALE_INT];
    assert_eq!(NAMED.map(|k| k.source_name()), ["softmax_rows", "scale<float>", "scale<int>"]);
    // Every handle is the one registered under the kernel's symbol.
    let registered = REGISTERED.lock().unwrap().clone();
    assert_eq!(registered.len(), kernels::ALL.len(), "{registered:?}");
    for k in kernels::ALL {
        let host = registered.iter().find(|(_, n)| n == k.mangled()).map(|(h, _)| *h);
        assert_eq!(host, Some(k.handle() as usize), "{}", k.signature());
        println!("{} = {} [{}]", k.signature(), k.mangled(), k.source_name());
    }
    // At run time: by name, and by signature for the overloads (a name alone is ambiguous).
    assert_eq!(kernels::by_name("softmax_rows"), Some(kernels::SOFTMAX_ROWS));
    assert_eq!(kernels::by_name("scale<int>"), Some(kernels::SCALE_INT));
    assert_eq!(kernels::by_name("saxpy"), None);
    assert_eq!(kernels::by_name("twice"), None);
    let f = kernels::by_signature("saxpy(int, float, float const*, float*)").unwrap();
    let d = kernels::by_signature("saxpy(int, double, double const*, double*)").unwrap();
    assert_eq!((f.mangled(), d.mangled()), ("_Z5saxpyifPKfPf", "_Z5saxpyidPKdPd"));
    assert_eq!(f, kernels::_Z5SAXPYIFPKFPF);
    let sig = "void scale<float>(float*, float, int)";
    assert_eq!(kernels::by_signature(sig), Some(kernels::SCALE_FLOAT));
    println!("ok {} kernels", kernels::ALL.len());
}
"#;

/// The CMake program: the handles from the generated header, checked against what the
/// stand-in runtime (`SHIM_C`) recorded.
const MAIN_CPP: &str = r#"#include <cstdio>
#include <cstring>

#include "kernels_kernels.h"

extern "C" int shim_count(void);
extern "C" const void* shim_host(int i);
extern "C" const char* shim_name(int i);

int main() {
  struct { const void* handle; const char* symbol; } ks[] = {
    {&kernels::SOFTMAX_ROWS, "_Z12softmax_rowsPKfPfi"},
    {&kernels::SCALE_FLOAT, "_Z5scaleIfEvPT_S0_i"},
    {&kernels::SCALE_INT, "_Z5scaleIiEvPT_S0_i"},
    {&kernels::_Z5SAXPYIFPKFPF, "_Z5saxpyifPKfPf"},
    {&kernels::_Z5SAXPYIDPKDPD, "_Z5saxpyidPKdPd"},
  };
  int n = sizeof ks / sizeof ks[0];
  if (shim_count() != n) { std::printf("registered %d kernels\n", shim_count()); return 1; }
  for (int k = 0; k < n; ++k) {
    const void* host = 0;
    for (int i = 0; i < shim_count(); ++i)
      if (std::strcmp(shim_name(i), ks[k].symbol) == 0) host = shim_host(i);
    if (host != ks[k].handle) { std::printf("%s: not its handle\n", ks[k].symbol); return 1; }
  }
  std::printf("ok %d kernels\n", n);
  return 0;
}
"#;

/// The stand-in runtime of the CMake program.
const SHIM_C: &str = r#"#include <stddef.h>
static const void* hosts[16];
static const char* names[16];
static int count;
static void* handle;
void** __hipRegisterFatBinary(const void* w) { (void)w; return &handle; }
int __hipRegisterFunction(void** h, const void* host, const char* dev, const char* name, int t,
                          void* a, void* b, void* c, void* d, int* e) {
  (void)h; (void)dev; (void)t; (void)a; (void)b; (void)c; (void)d; (void)e;
  if (count < 16) { hosts[count] = host; names[count++] = name; }
  return 0;
}
void __hipRegisterVar(void** h, void* var, const char* host, const char* dev, int ext,
                      size_t size, int constant, int global) {
  (void)h; (void)var; (void)host; (void)dev; (void)ext; (void)size; (void)constant; (void)global;
}
void __hipUnregisterFatBinary(void** h) { (void)h; }
int shim_count(void) { return count; }
const void* shim_host(int i) { return hosts[i]; }
const char* shim_name(int i) { return names[i]; }
"#;

/// Writes `files` (relative path, text) under `dir`.
fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// `cmd` with the outer environment's build variables removed (no architecture, compiler or
/// flags from the session that runs the tests).
fn scrubbed(mut cmd: Command) -> Command {
    for &var in BUILD_ENV_VARS
        .iter()
        .chain(&["CLANG", "RUSTFLAGS", "CARGO_MAKEFLAGS", "MAKEFLAGS"])
    {
        cmd.env_remove(var);
    }
    cmd
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn tutorial_crate_gets_every_kernel_by_source_name() {
    crate::rocm::require_rocm();
    let src = tempfile::tempdir().unwrap();
    let dir = src.path();
    let root = repo_root();
    let manifest = format!(
        "[package]\nname = \"tutorial\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
         publish = false\n\n[workspace]\n\n[build-dependencies]\n\
         offload-build = {{ path = {:?} }}\n",
        root.join("crates/offload-build").display().to_string()
    );
    // The program stands in for the HIP runtime: the build links no libamdhip64.
    let build_rs = "fn main() {\n    offload_build::Build::new()\n        \
                    .file(\"src/kernels.hip\")\n        .archs(\"gfx90a\")\n        \
                    .embed(offload_build::Embed::HipObject)\n        \
                    .link_hip_runtime(false)\n        .compile(\"kernels\");\n}\n";
    write_files(
        dir,
        &[
            ("Cargo.toml", &manifest),
            ("build.rs", build_rs),
            ("src/kernels.hip", HIP_KERNELS),
            ("src/main.rs", MAIN_RS),
        ],
    );
    // The workspace's lock file: the same dependency versions, already downloaded.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    // The target directory of `rocm.rs`'s outside crate: its dependencies are built once.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut c = scrubbed(Command::new(cargo));
    c.current_dir(dir)
        .args(["run", "--offline", "--quiet"])
        .env(
            "CARGO_TARGET_DIR",
            crate::support::outside_crate_target_dir(),
        )
        .env("CARGO_BUILD_JOBS", "1")
        .env("PKG_CONFIG", "/nonexistent/pkg-config");
    let o = c.output().unwrap();
    let out = text(&o);
    assert!(
        o.status.success(),
        "cargo run of the tutorial crate failed:\n{out}"
    );
    assert!(out.contains("ok 5 kernels"), "{out}");
    for line in [
        "softmax_rows(float const*, float*, int) = _Z12softmax_rowsPKfPfi [softmax_rows]",
        "void scale<int>(int*, int, int) = _Z5scaleIiEvPT_S0_i [scale<int>]",
        "saxpy(int, double, double const*, double*) = _Z5saxpyidPKdPd [saxpy]",
    ] {
        assert!(out.contains(line), "no {line:?} in\n{out}");
    }
}

#[test]
fn cmake_program_declares_the_handles_with_the_generated_header() {
    crate::rocm::require_rocm();
    require("/usr/bin/cmake");
    require("/usr/bin/ninja");
    let src = tempfile::tempdir().unwrap();
    let dir = src.path();
    let lists = format!(
        "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES C CXX)\n\
         include({:?})\n\
         offload_add_fatbin(kernels SOURCES kernels.hip ARCHITECTURES gfx90a)\n\
         add_executable(app main.cpp shim.c)\n\
         target_link_libraries(app PRIVATE kernels)\n",
        repo_root()
            .join("build-support/cmake/OffloadBuild.cmake")
            .display()
            .to_string()
    );
    write_files(
        dir,
        &[
            ("CMakeLists.txt", &lists),
            ("kernels.hip", HIP_KERNELS),
            ("main.cpp", MAIN_CPP),
            ("shim.c", SHIM_C),
        ],
    );
    let mut configure = scrubbed(Command::new("cmake"));
    configure
        .arg("-S")
        .arg(dir)
        .arg("-B")
        .arg(dir.join("b"))
        .args(["-G", "Ninja"])
        .arg(format!("-DOFFLOAD_BUILD_EXECUTABLE={EXE}"));
    let o = configure.output().expect("cmake");
    assert!(o.status.success(), "{}", text(&o));
    let o = scrubbed(Command::new("cmake"))
        .arg("--build")
        .arg(dir.join("b"))
        .output()
        .expect("cmake --build");
    assert!(o.status.success(), "{}", text(&o));
    let header = std::fs::read_to_string(dir.join("b/kernels.offload-build/kernels_kernels.h"))
        .expect("the generated header");
    for s in SYMBOLS {
        assert!(header.contains(&format!("(\"{s}\")")), "{s}:\n{header}");
    }
    let o = Command::new(dir.join("b/app")).output().expect("run app");
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok 5 kernels\n");
}

/// The CUDA kernels, as written for clang without a CUDA install.
const CUDA_KERNELS: &str = "#define __global__ __attribute__((global))\n\
    #define __device__ __attribute__((device))\n\
    __device__ float twice(float x) { return 2.0f * x; }\n\
    __global__ void saxpy(int n, float a, const float* x, float* y) { y[0] = a * twice(x[0]); }\n\
    __global__ void saxpy(int n, double a, const double* x, double* y) { y[0] = a * x[0]; }\n\
    template <typename T> __global__ void scale(T* x, T s) { x[0] = x[0] * s; }\n\
    template __global__ void scale<float>(float*, float);\n\
    template __global__ void scale<double>(double*, double);\n\
    __global__ void fill(float* x) { x[0] = 1.0f; }\n";

/// Checks the generated module of the CUDA build, included by a program.
const CUDA_MAIN_RS: &str = "#![deny(warnings)]\ninclude!(env!(\"GENERATED\"));\n\
    fn main() {\n    \
    assert_eq!(kernels::FILL.mangled(), \"_Z4fillPf\");\n    \
    assert_eq!(kernels::SCALE_DOUBLE.signature(), \"void scale<double>(double*, double)\");\n    \
    assert_eq!(kernels::by_name(\"scale<float>\"), Some(kernels::SCALE_FLOAT));\n    \
    assert_eq!(kernels::by_name(\"saxpy\"), None);\n    \
    let k = kernels::by_signature(\"saxpy(int, double, double const*, double*)\").unwrap();\n    \
    assert_eq!(k.name, \"_Z5saxpyidPKdPd\");\n    \
    assert!(image(\"sm_75\").is_some());\n    \
    println!(\"ok {}\", kernels::ALL.len());\n}\n";

#[test]
fn cuda_ptx_kernels_get_the_same_source_names() {
    // `cuda_compile.rs`'s project: clang 19, no CUDA install, no ptxas.
    let p = crate::cuda_compile::Project::new();
    let dir = p.path("");
    write_files(&dir, &[("v.cu", CUDA_KERNELS), ("main.rs", CUDA_MAIN_RS)]);
    let b = p.build(19, "sm_75");
    let c = b.try_compile("kernels").expect("CUDA build");
    assert_eq!(
        c.kernels,
        [
            "_Z4fillPf",
            "_Z5saxpyidPKdPd",
            "_Z5saxpyifPKfPf",
            "_Z5scaleIdEvPT_S0_",
            "_Z5scaleIfEvPT_S0_"
        ]
    );
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let o = Command::new(rustc)
        .current_dir(&dir)
        .args(["--edition", "2021", "main.rs", "-o", "main"])
        .env("GENERATED", &c.generated)
        .output()
        .expect("rustc");
    assert!(o.status.success(), "{}", text(&o));
    let o = Command::new(dir.join("main")).output().expect("run");
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ok 5\n", "{}", text(&o));
}
