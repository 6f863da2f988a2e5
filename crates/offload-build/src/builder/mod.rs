//! The build API for `build.rs`: sources and architectures in, a fat binary out.
//!
//! [`Build`] is shaped like `cc::Build`: chained `&mut self` setters, then
//! [`compile`](Build::compile) (panics with a readable message) or
//! [`try_compile`](Build::try_compile) (returns a typed [`Error`]). One device compile runs per
//! (source, architecture), in parallel under Cargo's jobserver, and only when its inputs
//! changed; the code objects are packed with this crate's own bundle / offload-binary writers.
//!
//! ```no_run
//! // build.rs
//! offload_build::Build::new()
//!     .files(["kernels/vector_add.hip", "kernels/scale.hip"])
//!     .include("kernels/include")
//!     .define("BLOCK", "256")
//!     .archs("gfx90a;gfx942:xnack+;gfx1100")
//!     .compile("kernels");
//! // src/main.rs: include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
//! //   fatbin(), ARCHS, KERNELS, IMAGES, image(arch) (top level, where the file is included),
//! //   kernels::<KERNEL> (one constant per kernel)
//! ```
//!
//! # What a build does
//!
//! 1. Finds the compiler ([`tool`](self#toolchain-discovery) order below) and asks it once
//!    which processors it supports (cached by the compiler's path, size and mtime).
//! 2. Resolves the architectures (table below) and checks them against the compiler.
//! 3. Runs one job per (source, architecture):
//!    `clang -x hip --offload-arch=<arch> --cuda-device-only --no-gpu-bundle-output
//!    [-nogpulib -nogpuinc | --rocm-path=<rocm> …] -c -O3 <includes> <defines> <flags> <src>
//!    -o <obj> -MD -MF <depfile>`, prefixed by the launcher when one is set (`-O3` whatever
//!    Cargo's profile, as nvcc and hipcc: [`Build::opt_level`] changes it, [`Build::debug`]
//!    adds `-g`; [`Build::get_compiler`] shows the command). An architecture compiled from
//!    several sources is compiled with `-fgpu-rdc` and device-linked once per architecture
//!    (`clang --target=amdgcn-amd-amdhsa -mcpu=<arch>`). CUDA sources give PTX per `sm_XX`
//!    (`--cuda-path=<toolkit>`, or without one `-nocudainc -nocudalib -include <prelude>`)
//!    and, when `ptxas` is found, a cubin.
//! 4. Skips every job whose inputs (source and every header the depfile names) have the same
//!    content as at its last successful run, with the same compiler and arguments.
//! 5. Packs the results: a HIP fat binary (`.hipfb`: host entry plus
//!    `hipv4-amdgcn-amd-amdhsa--<arch>` entries, 4096-aligned, as clang writes it), optionally
//!    compressed (`CCOB`), or offload binaries (`.llvm.offloading` content).
//! 6. Writes `$OUT_DIR/<name>.rs` (see [`Build::try_compile`]) and, for the object
//!    [`Embed`] modes, a static library `lib<name>-<hash>.a` to link (a name unique to the
//!    build, see [`Embed::HipObject`]).
//! 7. Tells Cargo: `rerun-if-changed` for every source, image and header outside the system
//!    include directories (the compiler's resource directory, `/usr/include`, `/usr/lib/gcc`,
//!    the ROCm install's `include`, the CUDA toolkit's headers: as `-MMD` would list them;
//!    the cache records still track every header, so an edited system header is caught by the
//!    next build that runs), `rerun-if-env-changed` for every variable read (`PATH` included), `warning` for
//!    every fallback and for the compiler's warnings (see [`Build::warnings`]). A failed
//!    [`Build::compile`] prints its error once, on standard output (see there).
//!
//! # Architecture resolution
//!
//! The first source that names at least one architecture wins:
//!
//! | # | Source | Example |
//! |---|---|---|
//! | 1 | `<CRATE>_OFFLOAD_ARCH` (package name upper-cased, `-` → `_`) | `MY_KERNELS_OFFLOAD_ARCH=gfx1100` |
//! | 2 | `OFFLOAD_ARCH` | `OFFLOAD_ARCH="gfx90a;gfx1201"` |
//! | 3 | [`Build::arch`] / [`Build::archs`] (the crate's default) | `.archs("gfx90a;gfx942:xnack+;gfx11-generic")` |
//! | 4 | HIP: `AMDGPU_TARGETS`, `GPU_TARGETS`, `PYTORCH_ROCM_ARCH`, `HIP_ARCHITECTURES`; CUDA: `CUDAARCHS`, `CUDA_COMPUTE_CAP` | `PYTORCH_ROCM_ARCH="gfx90a;gfx942"` |
//! | 5 | this machine's GPUs: `amdgpu-arch` (next to the compiler, then on `PATH`; 30 s timeout), then `/sys/class/kfd`; CUDA: `nvptx-arch`, then `nvidia-smi` — with a `cargo:warning` | |
//! | 6 | the default set [`DEFAULT_HIP_ARCHS`] / [`DEFAULT_CUDA_ARCHS`] (those the compiler knows), with a `cargo:warning` | |
//!
//! Lists are separated by `;`, `,` or white space. An item may be a target ID (`gfx90a`,
//! `gfx90a:xnack+`, `gfx11-generic`), an NVIDIA architecture (`sm_90`, `compute_90`, and the
//! CMake spellings `90`, `90-real`, `90-virtual`), `native` (this machine's GPUs; with none, the
//! default set and a warning — **a build never fails for lack of a GPU**) or `default`.
//! [`Build::file_archs`] replaces the list for the sources it matches.
//!
//! The architectures are the application builder's choice: `OFFLOAD_ARCH=gfx942 cargo build`
//! builds gfx942 even where a dependency's build script calls `.archs("gfx90a")`. A build
//! script whose list is a requirement uses [`Build::archs_exact`]: its list comes first,
//! and a set `<CRATE>_OFFLOAD_ARCH` or `OFFLOAD_ARCH` is ignored with a `cargo:warning`.
//! Every variable of the order is read, whichever source wins, so a change of any of them
//! reruns the build script (`rerun-if-env-changed`).
//!
//! # Toolchain discovery
//!
//! The compiler is the first that exists of: [`Build::compiler`]; `HIPCXX` (path or name on
//! `PATH`); `HIP_CLANG_PATH/clang` (or, in that directory, the ROCm install's `clang-NN`, else
//! the newest `clang-NN`); the clang of a ROCm install named by `ROCM_PATH`/`HIP_PATH`; `CLANG`
//! (path or name on `PATH`); the clang of the ROCm install found (below); `clang-NN` on `PATH`
//! and `/usr/lib/llvm-NN/bin/clang`, newest `NN` first among those with `ld.lld` beside them
//! (Debian's `clang-NN` without `lld-NN` cannot link device code); `/opt/rocm/llvm/bin/clang`;
//! `clang` on `PATH`. When none exists, [`Error::ToolNotFound`] lists every path tried. A
//! variable that names a compiler and names none (`HIPCXX=/nowhere/clang`) is an error
//! ([`Error::CompilerVar`]), never a silent fallback to another clang.
//!
//! ## ROCm
//!
//! For HIP, a ROCm install is looked for in `ROCM_PATH`, `HIP_PATH` (or its parent),
//! `hipconfig` on `PATH` (`--rocmpath`, `--hipclangpath`), `/opt/rocm`, `/opt/rocm-*` (newest
//! first) and the distro layout under `/usr` (Debian 12's ROCm 5.2: `apt-get install hipcc
//! libamdhip64-dev rocm-device-libs clang-15` puts the headers in `/usr/include/hip` and the
//! device libraries in `/usr/lib/<multiarch>/amdgcn/bitcode`). An install has
//! `include/hip/hip_runtime.h` and the device libraries (`ocml.bc`, `oclc_isa_version_<N>.bc`,
//! …). Its clang is `<root>/llvm/bin/clang`, or the one `hipconfig` reports (on Debian
//! `/usr/bin/clang-15`): the HIP headers need the clang they were built for.
//!
//! When the compiler is that clang (or, when the install's clang is unknown, a compiler named by
//! [`Build::compiler`], `HIPCXX` or `HIP_CLANG_PATH`), sources compile as `hipcc` compiles them:
//! `--rocm-path=<root> --rocm-device-lib-path=<device libs>` (and `--hip-path` for a separate
//! HIP directory) `-mllvm -amdgpu-early-inline-all=true -mllvm -amdgpu-function-calls=false`, so
//! `#include <hip/hip_runtime.h>`, `threadIdx`, `__shared__`, `__syncthreads()` and device math
//! (`expf` through ocml) work. An architecture whose `oclc_isa_version_<N>.bc` the install lacks
//! (gfx1100 with Debian's 5.2) is refused before compiling ([`Error::DeviceLibMissing`], naming
//! what is installed). Otherwise sources are compiled with `-nogpulib -nogpuinc`: they must
//! define `__global__` and the builtins themselves, and a failed compile that mentions
//! `hip/hip_runtime.h` says that no ROCm install was found, where discovery looked and how to
//! install one (or that the install found is not used with the chosen compiler). The
//! compiler's LLVM version decides the version-dependent output (offload kind numbering in
//! offload binaries, the compressed-bundle format version).
//!
//! ## CUDA
//!
//! CUDA sources (`.cu`) compile with nvcc or clang. nvcc is the default when one is found, as
//! in CMake: [`Build::compiler`] or `CUDACXX` naming an `nvcc`; `CUDA_PATH`, `CUDA_HOME`,
//! `CUDA_ROOT` (`bin/nvcc`); `nvcc` on `PATH`; `/usr/local/cuda/bin/nvcc`; NVIDIA's wheels
//! (`pip install nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt
//! nvidia-cuda-cccl`: `site-packages/nvidia/cu13/bin/nvcc`) in the virtualenv of
//! `VIRTUAL_ENV`, else in the `site-packages` of `python3` on `PATH`. [`Build::cuda_compiler`]
//! chooses ([`CompilerKind`]); `CUDACXX` or [`Build::compiler`] naming a clang chooses clang.
//!
//! With nvcc, each (source, architecture) is one job: `nvcc -ptx -arch=compute_NN` (with the
//! depfile), then for an architecture with machine code `nvcc -cubin -arch=sm_NN` of that PTX,
//! which is what `nvcc -cubin` runs itself (the cubin is byte-identical to `nvcc -cubin
//! -arch=sm_NN` of the source). The builder's includes, defines and flags reach both
//! (`--use_fast_math`, `--expt-relaxed-constexpr`, `-lineinfo`, `-Xptxas -v`, `-std=c++17`);
//! [`Build::debug`] adds `-G`; [`Build::warnings_into_errors`] adds `-Werror all-warnings`;
//! the host compiler nvcc preprocesses with is `-ccbin` from a flag, else `NVCC_CCBIN`,
//! `CUDAHOSTCXX`, then `CXX`, else nvcc's default. The optimization level is nvcc's own
//! (`-O3` for device code; pass `-Xptxas -O<n>` to change it). [`Build::ptxas`] and `PTXAS`
//! do not apply: nvcc runs its own `ptxas`.
//!
//! With clang, CUDA sources compile with the CUDA toolkit found: a system install
//! (`CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT`, `/usr/local/cuda`, `nvcc` on `PATH`; one with
//! `include/cuda.h` and `nvvm/libdevice`), else NVIDIA's pip wheels in the virtualenv of
//! `VIRTUAL_ENV`, else in the `site-packages` of `python3` on `PATH`: CUDA 13's one tree
//! `nvidia/cu13/{bin,include,include/cccl,nvvm,lib}` (`pip install nvidia-cuda-nvcc
//! nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl`), or CUDA 12's split
//! wheels (`nvidia/cuda_nvcc` with `nvidia/cuda_runtime/include`, and every other
//! `nvidia/*/include`: CCCL, cuRAND, …). clang's `--cuda-path` wants one root, so a toolkit
//! whose headers are spread (the wheels, CUDA 13's `include/cccl`, no cuRAND headers) is laid
//! out once as a directory of links in the cache directory, `cuda-toolkit-<key>` (`bin`,
//! `nvvm`, `lib` linked; `include` linking every entry of the toolkit's include directories,
//! CCCL's and the other wheels'; an empty `curand_mtgp32_kernel.h` when cuRAND's headers are
//! missing, as clang's wrapper includes it unconditionally); the key covers the directories
//! and their stamps, so a changed toolkit gets a new one. `cuda_runtime.h`, `cuda_fp16.h`,
//! `cuda_bf16.h` and cub then compile, and clang picks the PTX ISA from the toolkit's
//! version (`version.json`, else `CUDA_VERSION` in `cuda.h`). A toolkit newer than the newest
//! CUDA the clang knows (clang 15: 11.5, 16: 11.8, 17: 12.1, 18: 12.3, 19: 12.5, 20: 12.8,
//! 21: 12.8, 22: 12.9) is used with `-Wno-unknown-cuda-version` and one `cargo:warning`
//! naming both versions; a compile that fails then carries a hint naming the clang, the
//! newest CUDA it supports, the toolkit's version and place, and what to do (a newer clang,
//! an older toolkit, or nvcc): clang 19 cannot parse CUDA 13's headers.
//!
//! Without any toolkit, CUDA as tutorials spell it still compiles: every compile keeps
//! `-nocudainc -nocudalib` and force-includes (`-include`) this crate's prelude, written once
//! into the cache directory, which defines `__global__`, `__device__`, `__host__`,
//! `__shared__`, `__constant__`, `__forceinline__`, `__launch_bounds__`, `dim3`/`uint3` and
//! the atomics (`atomicAdd`, `atomicSub`, `atomicExch`, `atomicMin`, `atomicMax`,
//! `atomicInc`, `atomicDec`, `atomicCAS`, `atomicAnd`, `atomicOr`, `atomicXor`) over clang's
//! own CUDA headers (`__clang_cuda_builtin_vars.h` for `threadIdx`, `blockIdx`, `blockDim`,
//! `gridDim`, `warpSize`; `__clang_cuda_device_functions.h`; `__syncthreads` is a clang
//! builtin), with one `cargo:warning` saying where a toolkit was looked for and how to get
//! one. Each `sm_NN` then gets the oldest PTX ISA that LLVM accepts for it
//! (`-Xclang -target-feature -Xclang +ptx63` for `sm_75`, `+ptx78` for `sm_90`, …), unless a
//! flag already chooses one (`--cuda-feature=+ptxNN`). A source that includes a toolkit header
//! (`cuda_runtime.h`, `cuda_fp16.h`, cub, …) then fails with a hint naming where a toolkit was
//! looked for and the wheels or install that provide one.
//!
//! `ptxas` makes cubins from the PTX: [`Build::ptxas`], `PTXAS`, the toolkit's `bin/ptxas`,
//! `ptxas` on `PATH`, then NVIDIA's wheels (`site-packages/nvidia/cuda_nvcc/bin/ptxas` of
//! `nvidia-cuda-nvcc-cu12`, or CUDA 13's `nvidia/cu13/bin`) in the virtualenv of
//! `VIRTUAL_ENV`, else in the `site-packages` of `python3` on `PATH`.
//!
//! Images per architecture, in CMake's vocabulary: `sm_90` / `90` gives the cubin and the
//! PTX when `ptxas` is found, the PTX alone otherwise (with one warning for the whole
//! build); `90-real` the cubin alone (an error without `ptxas`); `90-virtual` / `compute_90`
//! the PTX alone; `all-major` every `sm_N0` from `sm_50` the compiler supports; `native` this
//! machine's GPUs (`nvptx-arch`, `nvidia-smi`; without a GPU, the default set). Each image is
//! labelled with its kind in the offload binary (`IMG_Cubin`, `IMG_PTX`). A clang that
//! crashes is reported in one line, with the file that holds its full output.
//!
//! ## The HIP runtime
//!
//! An [`Embed::HipObject`] build links a constructor that calls `__hipRegisterFatBinary`,
//! `__hipRegisterFunction` and `__hipUnregisterFatBinary` from the HIP runtime
//! (`libamdhip64.so`); an [`Embed::FatbinOnly`] HIP build's program loads `fatbin()` with it
//! (`hipModuleLoadData`, then `hipModuleGetFunction` by the kernel's name). For both, when a
//! ROCm install is in use and holds that library, the build prints
//! `cargo:rustc-link-search=native=<dir>` and `cargo:rustc-link-lib=dylib=amdhip64`;
//! [`Build::link_hip_runtime`]`(false)` turns that off (a program that opens the runtime with
//! `dlopen` needs no link). A link that fails with
//! `undefined symbol: __hipRegisterFatBinary` has no HIP runtime: install one (Debian 12:
//! `apt-get install libamdhip64-dev`) so that it is found, or link one yourself
//! (`cargo:rustc-link-lib=dylib=amdhip64` with its search path), or use
//! [`Embed::FatbinOnly`] and load the code at run time (`hipModuleLoadData`).
//!
//! # Environment variables
//!
//! Every variable is read through one gateway that prints `cargo:rerun-if-env-changed`.
//!
//! | Variable | Default | Effect |
//! |---|---|---|
//! | `<CRATE>_OFFLOAD_ARCH` | unset | architectures for this crate only (row 1 above) |
//! | `OFFLOAD_ARCH` | unset | architectures for every crate using offload-build |
//! | `AMDGPU_TARGETS`, `GPU_TARGETS`, `PYTORCH_ROCM_ARCH`, `HIP_ARCHITECTURES` | unset | HIP architectures, as ROCm libraries and PyTorch read them |
//! | `CUDAARCHS`, `CUDA_COMPUTE_CAP` | unset | CUDA architectures (CMake / candle conventions) |
//! | `HIPCXX`, `HIP_CLANG_PATH`, `CLANG` | unset | the compiler (see discovery) |
//! | `CUDACXX` | unset | the CUDA compiler: an `nvcc` or a clang (see [CUDA](self#cuda)) |
//! | `NVCC_CCBIN`, `CUDAHOSTCXX`, `CXX` | unset | nvcc's host compiler (`-ccbin`), first set wins |
//! | `ROCM_PATH`, `HIP_PATH` | unset | ROCm install: its clang, `--rocm-path`, `--rocm-device-lib-path` (see [ROCm](self#rocm)) |
//! | `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT` | `/usr/local/cuda`, else `nvcc`'s on `PATH`, else NVIDIA's wheels | CUDA toolkit: `--cuda-path` and `ptxas` (see [CUDA](self#cuda)) |
//! | `PTXAS` | unset | the `ptxas` that makes cubins (see [CUDA](self#cuda)) |
//! | `VIRTUAL_ENV` | unset | a virtualenv whose `site-packages` may hold NVIDIA's wheels (`nvcc`, `ptxas`, the CUDA headers) |
//! | `PATH` | | where `clang-NN`, `clang`, `nvcc`, `hipconfig`, `ptxas`, `amdgpu-arch` are looked for |
//! | `HIPFLAGS`, `CUDAFLAGS` | unset | extra compiler flags (white-space separated), after the builder's |
//! | `OFFLOAD_BUILD_LAUNCHER` | unset | a compiler launcher put in front of every source compile (`sccache`, `ccache`; may hold arguments) |
//! | `RUSTC_WRAPPER` | unset | used as the launcher when it is `sccache`, `cachepot` or `buildcache` and `OFFLOAD_BUILD_LAUNCHER` is unset |
//! | `OFFLOAD_BUILD_MAX_JOBS` | unlimited | at most this many device compiles at once (on top of Cargo's jobserver) |
//! | `OFFLOAD_BUILD_CACHE_DIR` | `$OUT_DIR/offload-build-cache` | where compiled objects and cache records are kept (may be shared between builds) |
//! | `OFFLOAD_BUILD_COMPILE_TIMEOUT` | none | seconds one compile may run before it is killed, with its children (see [`Build::timeout`]) |
//! | `OFFLOAD_BUILD_PCH` | `1` | `0` (or `false`, `off`) turns precompiled preambles off (see [`Build::pch`]) |
//! | `OFFLOAD_BUILD_PCH_BACKGROUND` | `1`, `0` when `CI` is set | `0` (or `false`, `off`) makes no precompiled preamble after the build (see [`Build::pch_background`]) |
//! | `NUM_JOBS` (set by Cargo) | CPUs | parallelism when no jobserver is inherited |
//!
//! Values set with [`Build::env`] take precedence over the process environment.
//!
//! # Self-check of the docs
//!
//! [`ENV_VARS`] lists the variables above; a unit test checks that each appears in this table
//! and in the README.

// Errors carry the failed command's full output by design; a build script's error path is not
// hot, and flat variants are easier for build scripts to match than boxed ones.
#![allow(clippy::result_large_err)]

// A build runs in four stages: plan (`plan.rs`: every decision, before any compile, with
// `clang.rs` spelling the decisions out as `command.rs` values: the complete command of every
// job and its cache key), jobs (`compile.rs` runs those commands, over the runner in
// `jobs.rs`, the cache in `cache.rs` and the compiler-diagnostics grouping in `diag.rs`), pack
// (`pack.rs`: the container bytes) and emit (`emit.rs`, with `embed_glue.rs`: files and
// directives; every file write goes through `fs.rs`). `Build::run` chains them;
// `Build::try_resolve_archs` stops after the plan.
mod arch;
mod cache;
mod clang;
mod command;
mod compile;
mod cuda_toolkit;
mod diag;
mod embed_glue;
mod emit;
mod env;
mod error;
mod fs;
mod jobs;
mod lookup;
mod nvcc;
mod pack;
mod plan;
mod preamble;
mod process;
mod rust_module;
mod tool;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

pub use arch::{Arch, ArchError, DEFAULT_CUDA_ARCHS, DEFAULT_HIP_ARCHS};
pub use command::Command;
pub use diag::Diagnostic;
pub use error::Error;
pub use preamble::PreambleCommands;
pub use process::CancelToken;
pub use rust_module::{amdgpu_kernels, ptx_kernels};

use offload_formats::bundle::compressed::CompressOptions;

use env::{Directives, Env};
use plan::{Plan, Purpose};

/// Every environment variable the build reads (besides those Cargo sets), as documented in the
/// [module docs](self#environment-variables). `<CRATE>_OFFLOAD_ARCH` is listed by its pattern.
pub const ENV_VARS: &[&str] = &[
    "<CRATE>_OFFLOAD_ARCH",
    "OFFLOAD_ARCH",
    "AMDGPU_TARGETS",
    "GPU_TARGETS",
    "PYTORCH_ROCM_ARCH",
    "HIP_ARCHITECTURES",
    "CUDAARCHS",
    "CUDA_COMPUTE_CAP",
    "HIPCXX",
    "HIP_CLANG_PATH",
    "CLANG",
    "ROCM_PATH",
    "HIP_PATH",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "CUDACXX",
    "NVCC_CCBIN",
    "CUDAHOSTCXX",
    "CXX",
    "PTXAS",
    "VIRTUAL_ENV",
    "PATH",
    "HIPFLAGS",
    "CUDAFLAGS",
    "OFFLOAD_BUILD_LAUNCHER",
    "RUSTC_WRAPPER",
    "OFFLOAD_BUILD_MAX_JOBS",
    "OFFLOAD_BUILD_CACHE_DIR",
    "OFFLOAD_BUILD_COMPILE_TIMEOUT",
    "OFFLOAD_BUILD_PCH",
    "OFFLOAD_BUILD_PCH_BACKGROUND",
    "NUM_JOBS",
];

/// Which compiler compiles CUDA sources ([`Build::cuda_compiler`]).
///
/// # Example
///
/// ```
/// use offload_build::{Build, CompilerKind, Language};
///
/// Build::new()
///     .language(Language::Cuda)
///     .cuda_compiler(CompilerKind::Nvcc);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompilerKind {
    /// clang (`-x cuda --cuda-device-only`, then `ptxas`); HIP is always compiled by clang.
    #[default]
    Clang,
    /// NVIDIA's nvcc (`-ptx`, then `-cubin`), as CMake's CUDA language and the `cc` crate use
    /// it.
    Nvcc,
}

/// The source language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Language {
    /// HIP for AMD GPUs (`.hip`; `-x hip`).
    #[default]
    Hip,
    /// CUDA for NVIDIA GPUs (`.cu`; `-x cuda`), compiled by clang to PTX (and cubin with
    /// `ptxas`).
    Cuda,
}

/// The container the device code is packed into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Container {
    /// A clang-offload-bundler bundle (what the HIP runtime registers from `.hip_fatbin` and
    /// `hipModuleLoadData` loads). The default for HIP.
    Bundle,
    /// Offload binaries (clang-offload-packager / `.llvm.offloading`, the new offload driver).
    /// The default for CUDA.
    OffloadBinary,
    /// An NVIDIA fat binary ([`crate::nvfatbin`], magic `0xBA55ED50`) holding each cubin and
    /// PTX of a CUDA build, written by this crate (no `fatbinary` tool): what
    /// `cuModuleLoadData` / `cuModuleLoadFatBinary` (and cudarc's, cust's module loaders)
    /// take, and what `cuobjdump` lists. CUDA only, with [`Embed::FatbinOnly`]: on ELF targets
    /// the generated `fatbin()` lies in a `.nv_fatbin` section, where `cuobjdump` and
    /// `offload-build inspect` find it. Each entry is named after the build (`cuobjdump -xelf`
    /// writes `<name>.sm_80.cubin`); PTX is stored as clang wrote it.
    CudaFatbin,
}

/// How the packed device code reaches the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Embed {
    /// A host object with `.hip_fatbin`, the `HIPF` wrapper and a constructor that registers
    /// the fat binary and every kernel with the HIP runtime (what clang emits for a HIP
    /// translation unit); kernels are launched through the handles in the generated `kernels`
    /// module, and the generated `fatbin()` reads the object's own `.hip_fatbin`, so the
    /// device code is in the program once.
    ///
    /// - **Registered whether or not the program names a kernel**: the library is linked
    ///   whole (`cargo:rustc-link-lib=static:+whole-archive=<name>-<hash>`), and the generated
    ///   module also keeps the object with a `#[used]` reference (for links that do not go
    ///   through that directive). Either alone is enough for executables, `cdylib`s and
    ///   programs whose only use of the crate is a constant such as `ARCHS`. A Rust
    ///   `staticlib` linked by a C linker is the exception, as for any static library with a
    ///   constructor: link it whole, or name one of its symbols.
    /// - **Unique per build**: the library `lib<name>-<hash>.a` and every global symbol of the
    ///   object (the kernel handles `__offload_build_<hash>_k_<kernel>`, the bundle's start
    ///   `__offload_build_<hash>_fatbin`), the hash covering the package, its version, the
    ///   build name, the target and the output directory. Two crates each with a kernel
    ///   `saxpy` (and each with a build named `kernels`) link into one program; both fat
    ///   binaries register and each crate's `kernels::SAXPY.handle()` is the handle registered
    ///   for its own fat binary. Outside Cargo (`offload-build compile`, the CMake package)
    ///   the handles keep the kernels' symbol names; `<name>_kernels.h` declares them for C
    ///   and C++ (see [`Build::try_compile`]).
    /// - The generated module compiles without warnings (`-D warnings`) in editions 2021 and
    ///   2024.
    HipObject,
    /// A host object with the container in `.llvm.offloading`, for `clang-linker-wrapper`
    /// (the new offload driver). Linked as `lib<name>-<hash>.a`.
    NewDriverObject,
    /// Only the container file in `OUT_DIR`, included in the program by the generated
    /// `fatbin()` (`include_bytes!`), to load at run time (`hipModuleLoadData`). Links nothing.
    #[default]
    FatbinOnly,
}

/// Values [`Build::archs`] takes: a CMake-style list string, or a collection of [`Arch`]s or
/// strings. Sealed: implemented here only.
///
/// A trait, not one standard bound, because no standard bound takes both a list in one string
/// (`.archs("gfx90a;gfx942")`, as CMake and the environment spell it) and a collection
/// (`.archs(["gfx90a", "gfx942"])`): `&str` is not an `IntoIterator`, and a blanket
/// implementation over `IntoIterator` beside one for `&str` is refused by coherence.
pub trait ArchList: sealed::Sealed {
    /// Appends the items (as strings, parsed when compiling).
    fn append_to(self, out: &mut Vec<String>);
}

mod sealed {
    /// Keeps [`super::ArchList`] implemented by this crate only.
    pub trait Sealed {}
    impl Sealed for &str {}
    impl Sealed for String {}
    impl Sealed for &String {}
    impl Sealed for super::Arch {}
    impl<S: AsRef<str>, const N: usize> Sealed for [S; N] {}
    impl<S: AsRef<str>> Sealed for &[S] {}
    impl<S: AsRef<str>> Sealed for Vec<S> {}
}

impl ArchList for &str {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.to_string());
    }
}

impl ArchList for String {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self);
    }
}

impl ArchList for &String {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.clone());
    }
}

impl ArchList for Arch {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.to_string());
    }
}

impl<S: AsRef<str>, const N: usize> ArchList for [S; N] {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

impl<S: AsRef<str>> ArchList for &[S] {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

impl<S: AsRef<str>> ArchList for Vec<S> {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

/// A `build.rs` builder for GPU device code, in the style of `cc::Build`.
///
/// See the [module docs](self) for what a build does, the architecture resolution order and
/// the environment variables.
///
/// # Written for `cc`
///
/// The setters have `cc::Build`'s signatures, so a `build.rs` written for `cc` compiles
/// against offload-build unchanged (only the sources are device code now):
///
/// ```no_run
/// use std::ffi::OsStr;
/// use std::path::Path;
///
/// let extra: &OsStr = OsStr::new("-ffast-math");
/// offload_build::Build::new()
///     .file("kernels/saxpy.hip")
///     .files(["kernels/scale.hip"])
///     .include(Path::new("kernels/include"))
///     .includes(["include", "third_party/include"])
///     .define("N", "256")
///     .define("X", None)
///     .flag(extra)
///     .flags(["-Wall"])
///     .flag_if_supported("-Wno-unused-parameter")
///     .opt_level(2)
///     .debug(false)
///     .warnings(true)
///     .compile("kernels");
/// ```
// To add a builder option: 1) a field here and its setter below, 2) its decision in `Plan`
// (plan.rs; the jobs, pack and emit stages read only the plan), 3) the CLI flag and its
// mapping in one place (`CompileArgs` and `builder` in crates/offload-cli/src/helper.rs),
// 4) the CMake argument (`_offload_add_fatbin_command` in build-support/cmake/OffloadBuild.cmake).
#[derive(Clone, Debug)]
pub struct Build {
    language: Option<Language>,
    files: Vec<PathBuf>,
    globs: Vec<String>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<OsString>,
    flags_if_supported: Vec<OsString>,
    opt_level: Option<String>,
    debug: bool,
    cancel: Option<CancelToken>,
    archs: Vec<String>,
    archs_exact: bool,
    file_archs: Vec<(String, String)>,
    images: Vec<(String, PathBuf)>,
    container: Option<Container>,
    compress: Option<CompressOptions>,
    compress_auto_version: bool,
    embed: Embed,
    out_dir: Option<PathBuf>,
    cargo_metadata: bool,
    compiler: Option<PathBuf>,
    cuda_compiler: Option<CompilerKind>,
    link_hip_runtime: bool,
    env: BTreeMap<OsString, Option<OsString>>,
    jobserver: Option<jobserver::Client>,
    warnings: bool,
    warnings_into_errors: bool,
    progress: Option<ProgressHook>,
    timeout: Option<std::time::Duration>,
    ptxas: Option<PathBuf>,
    pch: bool,
    pch_background: Option<bool>,
}

/// What one finished job was ([`Progress::step`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgressStep {
    /// The compile of this source (absolute path) for [`Progress::arch`].
    Compile(PathBuf),
    /// The device link of the architecture's relocatable objects (`-fgpu-rdc`).
    Link,
}

/// A device compile (or device link) that finished, for [`Build::on_progress`]. Its
/// [`Display`](std::fmt::Display) is the progress line `offload-build compile` prints:
/// `[3/14] gfx90a k.hip 2.1 s`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How many jobs have finished, this one included.
    pub done: usize,
    /// How many jobs run in this build (the compiles whose cache record is not fresh, then
    /// one device link per architecture compiled from several of them).
    pub total: usize,
    /// The architecture.
    pub arch: String,
    /// What finished.
    pub step: ProgressStep,
    /// Seconds it took; `None` for a device link whose result was cached.
    pub seconds: Option<f64>,
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}/{}] {} ", self.done, self.total, self.arch)?;
        match &self.step {
            ProgressStep::Compile(src) => {
                let name = src.file_name().unwrap_or(src.as_os_str());
                write!(f, "{}", name.to_string_lossy())?;
            }
            ProgressStep::Link => f.write_str("device link")?,
        }
        match self.seconds {
            Some(s) => write!(f, " {s:.1} s"),
            None => f.write_str(" cached"),
        }
    }
}

/// The callback of [`Build::on_progress`] (shared by clones of the builder).
#[derive(Clone)]
pub(crate) struct ProgressHook(std::sync::Arc<dyn Fn(&Progress) + Send + Sync>);

impl ProgressHook {
    pub(crate) fn call(&self, p: &Progress) {
        (self.0)(p)
    }
}

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook(..)")
    }
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

/// What [`Build::try_compile`] produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Compiled {
    /// The container file in `OUT_DIR` (`<name>.hipfb` or `<name>.offloadbin`).
    pub fatbin: PathBuf,
    /// The generated `<name>.rs` in `OUT_DIR`.
    pub generated: PathBuf,
    /// The static library holding the host object (object [`Embed`] modes only):
    /// `lib<name>-<hash>.a` in the output directory.
    pub library: Option<PathBuf>,
    /// The architectures in the container, sorted.
    pub archs: Vec<String>,
    /// Where the architectures came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, …).
    pub arch_origin: String,
    /// Kernel symbol names found in the device code, sorted.
    pub kernels: Vec<String>,
    /// The container format.
    pub container: Container,
    /// Whether the container is a compressed bundle.
    pub compressed: bool,
    /// The compiler used (none when only [`Build::image`]s were packed).
    pub compiler: Option<PathBuf>,
    /// Its `--version` line.
    pub compiler_version: Option<String>,
    /// Jobs (compiles and device links) that ran.
    pub jobs_run: usize,
    /// Jobs whose cached result was used.
    pub jobs_cached: usize,
    /// Precompiled preambles made by this build ([`Build::pch`]), one per preamble and
    /// architecture, counting those an earlier build made in the background and this one
    /// adopted ([`Build::pch_background`]).
    pub pch_made: usize,
    /// Compiles of this build that used a precompiled preamble.
    pub pch_used: usize,
    /// Precompiled preambles this build started making in the background
    /// ([`Build::pch_background`]), for the next build.
    pub pch_background: usize,
    /// Every `cargo:` directive of this build (without the `cargo:` prefix), in order.
    pub cargo_directives: Vec<String>,
    /// The warnings among them: offload-build's own (fallbacks), not the compiler's.
    pub warnings: Vec<String>,
    /// What the compiler printed for the device compiles (its warnings), one entry per
    /// distinct diagnostic with the architectures that printed it; replayed from the cache
    /// for compiles that did not run. Empty with [`Build::warnings`]`(false)`.
    pub diagnostics: Vec<Diagnostic>,
}

/// What [`Build::try_resolve_archs`] found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResolvedArchs {
    /// The architectures, in resolution order, without duplicates.
    pub archs: Vec<String>,
    /// Where they came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, `default`, …).
    pub origin: String,
    /// The compiler they were checked against.
    pub compiler: PathBuf,
    /// The fallback warnings (no GPU for `native`, no architecture set).
    pub warnings: Vec<String>,
}

impl Build {
    /// A builder with nothing set: HIP, architectures from the environment, a bundle, no
    /// compression, [`Embed::FatbinOnly`], Cargo directives printed.
    pub fn new() -> Build {
        Build {
            language: None,
            files: Vec::new(),
            globs: Vec::new(),
            includes: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
            flags_if_supported: Vec::new(),
            opt_level: None,
            debug: false,
            cancel: None,
            archs: Vec::new(),
            archs_exact: false,
            file_archs: Vec::new(),
            images: Vec::new(),
            container: None,
            compress: None,
            compress_auto_version: true,
            embed: Embed::default(),
            out_dir: None,
            cargo_metadata: true,
            compiler: None,
            cuda_compiler: None,
            link_hip_runtime: true,
            env: BTreeMap::new(),
            jobserver: None,
            warnings: true,
            warnings_into_errors: false,
            progress: None,
            timeout: None,
            ptxas: None,
            pch: true,
            pch_background: None,
        }
    }

    /// The source language; by default CUDA when every source ends in `.cu`, HIP otherwise.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().language(offload_build::Language::Cuda);
    /// ```
    pub fn language(&mut self, language: Language) -> &mut Build {
        self.language = Some(language);
        self
    }

    /// Adds a source file.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().file("kernels/saxpy.hip");
    /// ```
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds source files.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().files(["kernels/a.hip", "kernels/b.hip"]);
    /// ```
    pub fn files<P: AsRef<Path>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut Build {
        for p in paths {
            self.file(p);
        }
        self
    }

    /// Adds the source files matching a glob pattern (`kernels/**/*.hip`), expanded (sorted)
    /// when compiling; the pattern's directory is watched for new files.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().glob("kernels/**/*.hip");
    /// ```
    pub fn glob(&mut self, pattern: &str) -> &mut Build {
        self.globs.push(pattern.to_string());
        self
    }

    /// Adds an include directory (`-I`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().include("kernels/include");
    /// ```
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds include directories (`-I`), in order.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().includes(["kernels/include", "third_party/include"]);
    /// ```
    pub fn includes<P: AsRef<Path>>(&mut self, dirs: impl IntoIterator<Item = P>) -> &mut Build {
        for d in dirs {
            self.include(d);
        }
        self
    }

    /// Defines a macro: `-DVAR=VAL` with a value, `-DVAR` with `None` (as `cc::Build::define`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new()
    ///     .define("BLOCK", "256") // -DBLOCK=256
    ///     .define("USE_FAST_MATH", None); // -DUSE_FAST_MATH
    /// ```
    pub fn define<'a, V: Into<Option<&'a str>>>(&mut self, var: &str, val: V) -> &mut Build {
        self.defines
            .push((var.to_string(), val.into().map(str::to_string)));
        self
    }

    /// Adds a compiler flag, passed to every device compile after the crate's own flags (a
    /// `-O` flag here overrides [`Build::opt_level`]).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().flag("-ffast-math");
    /// ```
    pub fn flag(&mut self, flag: impl AsRef<OsStr>) -> &mut Build {
        self.flags.push(flag.as_ref().to_os_string());
        self
    }

    /// Adds compiler flags, in order.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().flags(["-ffast-math", "-Wall"]);
    /// ```
    pub fn flags<S: AsRef<OsStr>>(&mut self, flags: impl IntoIterator<Item = S>) -> &mut Build {
        for f in flags {
            self.flag(f);
        }
        self
    }

    /// Adds a compiler flag when the device compiler accepts it: the compiler is asked once
    /// per flag (a device compile of an empty source with the flag, unknown and unused flags
    /// made errors), and the answer is kept in the cache directory with the other probes.
    /// Flags it refuses are left out silently, as with `cc::Build::flag_if_supported`.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().flag_if_supported("-fgpu-flush-denormals-to-zero");
    /// ```
    pub fn flag_if_supported(&mut self, flag: impl AsRef<OsStr>) -> &mut Build {
        self.flags_if_supported.push(flag.as_ref().to_os_string());
        self
    }

    /// The optimization level of the device code (`-O<level>`; default 3). Device code keeps
    /// `-O3` whatever Cargo's profile: as `nvcc` and `hipcc`, the build does not read
    /// `OPT_LEVEL`, since debug builds of the host still want fast kernels. `ptxas` gets the
    /// same level (3 for levels it does not know).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().opt_level(2); // -O2
    /// ```
    pub fn opt_level(&mut self, level: u32) -> &mut Build {
        self.opt_level = Some(level.to_string());
        self
    }

    /// The optimization level as clang spells it after `-O` (`"s"`, `"z"`, `"fast"`, `"2"`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().opt_level_str("s"); // -Os
    /// ```
    pub fn opt_level_str(&mut self, level: &str) -> &mut Build {
        self.opt_level = Some(level.to_string());
        self
    }

    /// Whether device debug information is generated (`-g`; default `false`). Like the
    /// optimization level, it does not follow Cargo's `DEBUG`: device debug information is
    /// asked for explicitly.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().debug(true); // -g
    /// ```
    pub fn debug(&mut self, debug: bool) -> &mut Build {
        self.debug = debug;
        self
    }

    /// Stops this build when `token` is cancelled ([`CancelToken::cancel`]): its compilers
    /// are killed with their children (they run in process groups of their own) and the
    /// build ends with [`Error::Stopped`]. For programs that handle SIGINT and SIGTERM
    /// themselves (`offload-build compile`); a `build.rs` needs none.
    ///
    /// # Example
    ///
    /// ```
    /// let token = offload_build::builder::CancelToken::new();
    /// offload_build::Build::new().cancel_token(&token);
    /// ```
    pub fn cancel_token(&mut self, token: &CancelToken) -> &mut Build {
        self.cancel = Some(token.clone());
        self
    }

    /// Adds architectures: one [`Arch`], or a CMake-style list such as
    /// `"gfx90a;gfx942:xnack+;gfx11-generic"` (also `native`, `default`). This is the crate's
    /// default: whoever builds overrides it with `<CRATE>_OFFLOAD_ARCH` or `OFFLOAD_ARCH`, and
    /// it takes precedence over the rest of the environment (see the
    /// [resolution order](self#architecture-resolution); [`Build::archs_exact`] makes the
    /// list a requirement). Checked when compiling.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().arch("gfx90a").arch("gfx942:xnack+");
    /// ```
    pub fn arch(&mut self, arch: impl AsRef<str>) -> &mut Build {
        self.archs.push(arch.as_ref().to_string());
        self
    }

    /// Adds several architectures: a CMake-style list (`"gfx90a;gfx942"`), or a collection of
    /// [`Arch`] values or strings (each may itself be a list). As with [`Build::arch`], a
    /// default that `<CRATE>_OFFLOAD_ARCH` and `OFFLOAD_ARCH` override.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new()
    ///     .archs("gfx90a;gfx1100")
    ///     .archs(["gfx942", "gfx1201"]);
    /// ```
    pub fn archs(&mut self, archs: impl ArchList) -> &mut Build {
        archs.append_to(&mut self.archs);
        self
    }

    /// Adds architectures, as [`Build::archs`], and makes the builder's list exact: the
    /// environment no longer overrides it. For code that builds only for these architectures
    /// (inline assembly of one ISA, MFMA-only kernels); when `<CRATE>_OFFLOAD_ARCH` or
    /// `OFFLOAD_ARCH` is set all the same, the build says with a `cargo:warning` that it is
    /// ignored. `offload-build compile --arch/--archs` (and so CMake's architectures) set
    /// the list this way.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().archs_exact("gfx942");
    /// ```
    pub fn archs_exact(&mut self, archs: impl ArchList) -> &mut Build {
        archs.append_to(&mut self.archs);
        self.archs_exact = true;
        self
    }

    /// Compiles the sources matching `pattern` (a path or a glob, relative like the sources)
    /// for `archs` instead of the resolved list, for example MFMA kernels only for
    /// `"gfx90a;gfx942"`. The first matching override wins.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().file_archs("kernels/mfma_*.hip", "gfx90a;gfx942");
    /// ```
    pub fn file_archs(&mut self, pattern: &str, archs: &str) -> &mut Build {
        self.file_archs
            .push((pattern.to_string(), archs.to_string()));
        self
    }

    /// Packs a code object built elsewhere (by rustc for `amdgcn-amd-amdhsa`, by another tool)
    /// for `arch`, alongside or instead of compiled sources. For CUDA a `.ptx`/`.s` file is a
    /// PTX image and a `.cubin` a cubin.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().image("gfx90a", "prebuilt/k-gfx90a.co");
    /// ```
    pub fn image(&mut self, arch: impl AsRef<str>, path: impl AsRef<Path>) -> &mut Build {
        self.images
            .push((arch.as_ref().to_string(), path.as_ref().to_path_buf()));
        self
    }

    /// The container format (default: [`Container::Bundle`] for HIP,
    /// [`Container::OffloadBinary`] for CUDA; [`Container::CudaFatbin`] for CUDA code that
    /// the CUDA driver loads).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().container(offload_build::Container::OffloadBinary);
    /// ```
    pub fn container(&mut self, container: Container) -> &mut Build {
        self.container = Some(container);
        self
    }

    /// Compresses the bundle (`CCOB`, zstd level 3 with long-distance matching, as
    /// `clang --offload-compress`; format version 2 for LLVM ≤ 21, 3 from LLVM 22). Bundles only.
    ///
    /// Needs the crate's `compression` feature; without it the build fails with
    /// [`Error::Config`] naming the feature.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().compress(true);
    /// ```
    pub fn compress(&mut self, compress: bool) -> &mut Build {
        self.compress = compress.then(CompressOptions::default);
        self.compress_auto_version = true;
        self
    }

    /// Compresses with these exact options (method, level, format version).
    ///
    /// # Example
    ///
    /// ```
    /// use offload_build::bundle::compressed::CompressOptions;
    /// offload_build::Build::new().compress_with(CompressOptions::default());
    /// ```
    pub fn compress_with(&mut self, options: CompressOptions) -> &mut Build {
        self.compress = Some(options);
        self.compress_auto_version = false;
        self
    }

    /// How the device code is embedded (default [`Embed::FatbinOnly`]).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().embed(offload_build::Embed::HipObject);
    /// ```
    pub fn embed(&mut self, embed: Embed) -> &mut Build {
        self.embed = embed;
        self
    }

    /// The output directory (default: `OUT_DIR`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().out_dir("target/kernels");
    /// ```
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to print `cargo:` directives on stdout (default `true`). They are returned in
    /// [`Compiled::cargo_directives`] either way.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().cargo_metadata(false);
    /// ```
    pub fn cargo_metadata(&mut self, print: bool) -> &mut Build {
        self.cargo_metadata = print;
        self
    }

    /// Uses this compiler instead of discovering one.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().compiler("/opt/rocm/llvm/bin/clang");
    /// ```
    pub fn compiler(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.compiler = Some(path.as_ref().to_path_buf());
        self
    }

    /// Chooses the CUDA compiler: nvcc or clang. By default nvcc when one is found
    /// (`CUDACXX`, the CUDA install of `CUDA_PATH`/`CUDA_HOME`/`CUDA_ROOT`, `PATH`,
    /// `/usr/local/cuda`, NVIDIA's `nvidia-cuda-nvcc` wheel), as in CMake, else clang; see
    /// [CUDA](self#cuda). A [`Build::compiler`] or `CUDACXX` of the other kind is an error.
    ///
    /// # Example
    ///
    /// ```
    /// use offload_build::{Build, CompilerKind};
    ///
    /// Build::new().cuda_compiler(CompilerKind::Clang);
    /// ```
    pub fn cuda_compiler(&mut self, kind: CompilerKind) -> &mut Build {
        self.cuda_compiler = Some(kind);
        self
    }

    /// Uses this `ptxas` (CUDA) to turn PTX into cubins, instead of looking for one (`PTXAS`,
    /// the CUDA install, `PATH`, NVIDIA's `nvidia-cuda-nvcc-cu12` wheel in `VIRTUAL_ENV` or
    /// the `site-packages` of `python3`; see [CUDA](self#cuda)).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().ptxas("/usr/local/cuda/bin/ptxas");
    /// ```
    pub fn ptxas(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.ptxas = Some(path.as_ref().to_path_buf());
        self
    }

    /// Whether an [`Embed::HipObject`] or [`Embed::FatbinOnly`] HIP build links the HIP runtime
    /// (default `true`): when a ROCm install is in use and has `libamdhip64.so`, the build
    /// prints `cargo:rustc-link-search=native=<its directory>` and
    /// `cargo:rustc-link-lib=dylib=amdhip64`, because the object's constructor calls
    /// `__hipRegisterFatBinary` (HipObject) or the program loads `fatbin()` with
    /// `hipModuleLoadData` (FatbinOnly). Turn it off to link a runtime of your own (a
    /// stand-in, or one opened with `dlopen`); without any, a HipObject link fails with
    /// `undefined symbol: __hipRegisterFatBinary` (see the [module docs](self#the-hip-runtime)).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().link_hip_runtime(false);
    /// ```
    pub fn link_hip_runtime(&mut self, link: bool) -> &mut Build {
        self.link_hip_runtime = link;
        self
    }

    /// Sets an environment variable as this build sees it (and as its compiler processes see
    /// it), without changing the process environment: for tests and for tools that drive a
    /// build outside Cargo.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().env("OFFLOAD_ARCH", "gfx90a");
    /// ```
    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Build {
        self.env.insert(
            name.as_ref().to_os_string(),
            Some(value.as_ref().to_os_string()),
        );
        self
    }

    /// Hides an environment variable from this build (and its compiler processes).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().env_remove("HIPFLAGS");
    /// ```
    pub fn env_remove(&mut self, name: impl AsRef<OsStr>) -> &mut Build {
        self.env.insert(name.as_ref().to_os_string(), None);
        self
    }

    /// Uses this jobserver instead of the one inherited from Cargo. As under Cargo, the build
    /// holds one implicit token: a client with `n` free tokens allows `n + 1` concurrent jobs.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().jobserver(jobserver::Client::new(4).unwrap());
    /// ```
    pub fn jobserver(&mut self, client: jobserver::Client) -> &mut Build {
        self.jobserver = Some(client);
        self
    }

    /// Whether the compiler's warnings are shown (default `true`): every diagnostic clang
    /// prints for a successful device compile becomes `cargo:warning=` lines, the first
    /// prefixed with the architectures whose compiles printed it
    /// (`[gfx90a, gfx1100] k.hip:3:5: warning: unused variable 'x'`), once per distinct
    /// diagnostic however many architectures print it; they are also in
    /// [`Compiled::diagnostics`]. A compile whose cached result is used shows the warnings it
    /// printed when it ran (they are kept in its cache record), so a warning does not vanish
    /// on the next build. `false` compiles with `-w` and shows nothing.
    ///
    /// Unlike `cc`, `true` adds no `-Wall`/`-Wextra`: add them with [`Build::flag`].
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().warnings(false); // -w
    /// ```
    pub fn warnings(&mut self, warnings: bool) -> &mut Build {
        self.warnings = warnings;
        self
    }

    /// Whether HIP sources compiled by clang get a precompiled preamble (default `true`):
    /// the leading `#include`s and definitions of a source (clang's preamble) are compiled
    /// once per architecture into a PCH in the cache and the device compile reads it instead
    /// of parsing them again; the device code is byte-identical. A PCH is made only where it
    /// is used again (sources of this build sharing the preamble, or an earlier build that
    /// compiled it: see the module `builder::preamble`); a compile that fails or prints
    /// anything with it runs again without. `OFFLOAD_BUILD_PCH=0` turns it off too.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().pch(false);
    /// ```
    pub fn pch(&mut self, pch: bool) -> &mut Build {
        self.pch = pch;
        self
    }

    /// Whether a preamble that only one compile of this build would use, and that no earlier
    /// build compiled, is precompiled after the build, in the background (default `true`,
    /// `false` when the environment variable `CI` is set: a one-off build never edits). The
    /// build's compiles do not wait for it (a cold build costs what it would without PCH);
    /// the detached compiler starts once the machine is idle, at the lowest priority, and the
    /// next build (the one after the first edit of a kernel body) uses its PCH when every
    /// header it read and the context are as they were when it started; one that still runs
    /// is taken over (killed), never waited for. As clangd does with the preamble of a file
    /// it opens. Without it, that next build makes the PCH itself. No effect with
    /// [`Build::pch`]`(false)`; `OFFLOAD_BUILD_PCH_BACKGROUND=0` turns it off, `1` on.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().pch_background(false);
    /// ```
    pub fn pch_background(&mut self, background: bool) -> &mut Build {
        self.pch_background = Some(background);
        self
    }

    /// Makes every warning an error (`-Werror`, before the builder's flags, so a
    /// `-Wno-error=<warning>` flag can exempt one). Default `false`; no effect with
    /// [`Build::warnings`]`(false)` (`-w` silences every warning).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().warnings_into_errors(true); // -Werror
    /// ```
    pub fn warnings_into_errors(&mut self, into_errors: bool) -> &mut Build {
        self.warnings_into_errors = into_errors;
        self
    }

    /// Calls `hook` on the building thread as each device compile (and device link)
    /// finishes, with a [`Progress`] whose `Display` is a line such as
    /// `[3/14] gfx90a k.hip 2.1 s`; compiles whose cached result is used are not counted.
    /// `offload-build compile` prints these lines on standard error.
    ///
    /// In `build.rs`, Cargo shows a build script's output only when it fails, or live with
    /// `cargo build -vv`; a long build can print its progress there:
    /// `.on_progress(|p| eprintln!("{p}"))`. By default nothing is printed.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().on_progress(|p| eprintln!("{p}"));
    /// ```
    pub fn on_progress(&mut self, hook: impl Fn(&Progress) + Send + Sync + 'static) -> &mut Build {
        self.progress = Some(ProgressHook(std::sync::Arc::new(hook)));
        self
    }

    /// Kills a compile that runs longer than `timeout` (each process of a job: the compile,
    /// `ptxas`, a device link), with every process it started (it runs in a process group of
    /// its own), and fails the build with [`Error::CompileTimedOut`], one line naming the
    /// source, the architecture and the timeout. Off by default; overrides
    /// `OFFLOAD_BUILD_COMPILE_TIMEOUT` (seconds). A zero duration means no timeout.
    ///
    /// With a timeout the compilers are in process groups of their own, which a terminal's
    /// Ctrl-C does not reach: a compile running when Cargo is interrupted runs to its end.
    /// The version and `native` probes always have a 30 s timeout.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().timeout(std::time::Duration::from_secs(600));
    /// ```
    pub fn timeout(&mut self, timeout: std::time::Duration) -> &mut Build {
        self.timeout = Some(timeout);
        self
    }

    /// Compiles, packs and embeds; panics on failure.
    ///
    /// As cc-rs does, the error (with the compiler's output) is printed once, on standard
    /// output, which Cargo shows under `--- stdout` when the build script fails, and the
    /// panic message is its first line. Without [`Build::cargo_metadata`] nothing is printed
    /// and the panic message is the whole error. See [`Build::try_compile`].
    pub fn compile(&self, name: &str) -> Compiled {
        match self.try_compile(name) {
            Ok(c) => c,
            Err(e) => {
                let text = e.to_string();
                if !self.cargo_metadata {
                    panic!("\n\nerror occurred in offload-build: {text}\n\n");
                }
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                for line in text.lines() {
                    // Cargo reads a line that starts with `cargo:` as a directive.
                    let pad = if line.starts_with("cargo:") { " " } else { "" };
                    let _ = writeln!(out, "{pad}{line}");
                }
                drop(out);
                let first = text.lines().next().unwrap_or_default();
                panic!(
                    "\n\nerror occurred in offload-build: {first} \
                     (the whole error is printed above, under `--- stdout`)\n\n"
                );
            }
        }
    }

    /// Compiles, packs and embeds.
    ///
    /// Writes into the output directory:
    /// - `<name>.hipfb` (bundle), `<name>.offloadbin` (offload binaries) or `<name>.fatbin`
    ///   (an NVIDIA fat binary);
    /// - `<name>.rs`, to `include!`, with `pub fn fatbin() -> &'static [u8]` (the container,
    ///   4096-byte aligned; in [`Embed::HipObject`] mode the object's own `.hip_fatbin`), `pub const ARCHS: &[&str]`, `pub const KERNELS: &[&str]`,
    ///   `CONTAINER`, `COMPRESSED`, `pub static IMAGES: &[(&str, &str, &[u8])]` (architecture,
    ///   kind `cubin`/`ptx`/`code-object`/…, the image's bytes as a slice of `fatbin()`; empty
    ///   for a compressed bundle) with `pub fn image(arch: &str) -> Option<&'static [u8]>`
    ///   (machine code first), and a `kernels` module with one constant per kernel (with
    ///   the host handle for `hipLaunchKernel` in [`Embed::HipObject`] mode);
    /// - for the object [`Embed`] modes, `lib<name>-<hash>.a` (a name unique to this build),
    ///   with the `cargo:rustc-link-*` directives to link it, and for [`Embed::HipObject`]
    ///   `<name>_kernels.h`, the handles' declarations for C and C++ host code.
    ///
    /// # Kernels by their source names
    ///
    /// HIP and CUDA kernels written without `extern "C"` have C++ symbols
    /// (`_Z5saxpyifPKfPf`); the generated module demangles them:
    ///
    /// - `KERNELS` lists the symbols (what `hipModuleGetFunction` / `cuModuleGetFunction`
    ///   take), and every kernel has the constant of its symbol (`kernels::VADD` for an
    ///   `extern "C"` kernel `vadd`, `kernels::_Z5SAXPYIFPKFPF`), as before;
    /// - a C++ kernel also has the constant of its source name (`kernels::SAXPY` for
    ///   `saxpy`, `kernels::SCALE_FLOAT` for the instance `scale<float>`, `kernels::NS_F` for
    ///   `ns::f`) when no other kernel's name gives that identifier and no symbol constant
    ///   has it: overloads, and names that differ only in case or punctuation, get none;
    /// - `kernels::by_name("saxpy")` finds the only kernel of that source name (or symbol),
    ///   `None` when there are several; `kernels::by_signature("saxpy(int, float, float
    ///   const*, float*)")` finds one by its signature as `c++filt` prints it
    ///   (`void scale<float>(float*, float)` for a template instance); `kernels::ALL` lists
    ///   them all in symbol order;
    /// - `Kernel::mangled()` (the same as its `name` field), `Kernel::source_name()` and
    ///   `Kernel::signature()` give each name (an `extern "C"` kernel's are its symbol).
    ///
    /// `<name>_kernels.h` declares each kernel's handle under the same identifier as its
    /// constant (the source-name one when there is one), in C++ namespace `<name>` and
    /// prefixed `<name>_` in C: `hipLaunchKernel(&kernels::SAXPY, …)` from C++ for a build
    /// named `kernels`. The CMake package adds its directory to the include path of the
    /// target `offload_add_fatbin` creates.
    ///
    /// Unchanged outputs are not rewritten, so an unchanged rebuild changes no file.
    pub fn try_compile(&self, name: &str) -> Result<Compiled, Error> {
        let directives = Directives::new(self.cargo_metadata);
        let env = Env::new(&self.env, &directives).with_cancel(self.cancel.as_ref());
        let result = self.run(name, &env);
        let (lines, warnings) = directives.take();
        result.map(|mut c| {
            c.cargo_directives = lines;
            c.warnings = warnings;
            c
        })
    }

    /// Resolves the architectures as [`Build::try_compile`] would (toolchain discovery, the
    /// resolution order above, the check against the compiler) without compiling anything.
    /// `offload-build compile --resolve` and the CMake package's configure step use it, so
    /// a missing compiler or an unknown architecture is reported before the build starts.
    pub fn try_resolve_archs(&self) -> Result<ResolvedArchs, Error> {
        let directives = Directives::new(self.cargo_metadata);
        let env = Env::new(&self.env, &directives).with_cancel(self.cancel.as_ref());
        let plan = Plan::new(self, &env, Purpose::Resolve)?;
        let (_, warnings) = directives.take();
        let compiler = plan
            .toolchain
            .expect("a resolve plan always discovers the toolchain")
            .clang;
        Ok(ResolvedArchs {
            archs: plan.archs.iter().map(Arch::to_string).collect(),
            origin: plan.arch_origin,
            compiler,
            warnings,
        })
    }

    /// The device compiler's command for one device compile, as the build would run it: the
    /// compiler, the launcher, the arguments up to the user's flags (for the first resolved
    /// architecture; no source, output or depfile) and the environment changes. Panics with a
    /// readable message on failure; see [`Build::try_get_compiler`].
    ///
    /// # Example
    ///
    /// ```no_run
    /// let cmd = offload_build::Build::new().arch("gfx90a").opt_level(2).get_compiler();
    /// assert!(cmd.args().iter().any(|a| a == "-O2"));
    /// println!("{}", cmd.path().display());
    /// ```
    pub fn get_compiler(&self) -> Command {
        match self.try_get_compiler() {
            Ok(c) => c,
            Err(e) => panic!("\n\nerror occurred in offload-build: {e}\n\n"),
        }
    }

    /// The device compiler's command ([`Build::get_compiler`]), or why there is none (no
    /// compiler, an unsupported architecture).
    pub fn try_get_compiler(&self) -> Result<Command, Error> {
        let directives = Directives::new(false);
        let env = Env::new(&self.env, &directives).with_cancel(self.cancel.as_ref());
        let plan = Plan::new(self, &env, Purpose::Resolve)?;
        plan::compiler_command(self, &env, &plan)
    }

    /// The object [`Embed`] mode for the container this build writes:
    /// [`Embed::HipObject`] for a bundle, [`Embed::NewDriverObject`] for offload binaries, with
    /// the language and container decided as [`Build::try_compile`] decides them (the set ones,
    /// else from the sources' extensions); [`Embed::FatbinOnly`] for an NVIDIA fat binary,
    /// which no host object registers. `offload-build compile --embed object` uses it.
    pub fn object_embed(&self) -> Embed {
        let directives = Directives::new(false);
        let env = Env::new(&self.env, &directives);
        match plan::container(self, &env) {
            Container::Bundle => Embed::HipObject,
            Container::OffloadBinary => Embed::NewDriverObject,
            // No host object registers an NVIDIA fat binary: it is loaded at run time.
            Container::CudaFatbin => Embed::FatbinOnly,
        }
    }

    /// Plan → jobs → pack → emit (see [`plan`]).
    fn run(&self, name: &str, env: &Env<'_>) -> Result<Compiled, Error> {
        let plan = Plan::new(self, env, Purpose::Compile(name))?;
        let mut built = compile::run(&plan, env)?;
        let diagnostics = std::mem::take(&mut built.diagnostics);
        for d in &diagnostics {
            env.directives().diagnostic(d);
        }
        let jobs = (built.jobs_run, built.jobs_cached);
        let pch = (built.pch_made, built.pch_used, built.pch_background);
        let packed = pack::run(&plan, built, env)?;
        let mut c = emit::run(&plan, packed, jobs, env)?;
        c.diagnostics = diagnostics;
        (c.pch_made, c.pch_used, c.pch_background) = pch;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated items are top level where `<name>.rs` is included (only the kernel
    /// constants are in `kernels`), and the CLI flag that resolves is `--resolve`: the docs
    /// say so.
    #[test]
    fn docs_name_the_generated_items_and_the_resolve_flag_as_they_are() {
        let docs = [
            ("mod.rs", include_str!("mod.rs")),
            ("rust_module.rs", include_str!("rust_module.rs")),
            ("README.md", include_str!("../../../../README.md")),
        ];
        let wrong = [
            format!("{}::{}()", "kernels", "fatbin"),
            format!("{}::{}", "kernels", "ARCHS"),
            format!("{}::{}", "kernels", "KERNELS"),
            format!("--{}-archs", "print"),
        ];
        for (file, text) in docs {
            for w in &wrong {
                assert!(!text.contains(w.as_str()), "{file} says `{w}`");
            }
        }
        let symbols = embed_glue::HostSymbols::new(
            Some(("pkg", "0.1.0")),
            "kernels",
            "x86_64-unknown-linux-gnu",
            Path::new("/t/debug/build/pkg-0123/out"),
            b"",
        );
        let generated = rust_module::render(&rust_module::Generated {
            name: "kernels",
            fatbin_file: "/o/kernels.hipfb",
            fatbin_len: 0,
            archs: &["gfx90a".to_string()],
            kernels: &["saxpy".to_string()],
            container: Container::Bundle,
            compressed: false,
            embed: Embed::FatbinOnly,
            symbols: &symbols,
            images: &[],
        });
        let top = generated.split("pub mod kernels").next().unwrap();
        for item in ["pub fn fatbin()", "pub const ARCHS", "pub const KERNELS"] {
            assert!(top.contains(item), "{item} is not top level:\n{generated}");
        }
    }

    #[test]
    fn env_table_documents_every_variable() {
        let docs = include_str!("mod.rs");
        let readme = include_str!("../../../../README.md");
        for var in ENV_VARS {
            assert!(
                docs.contains(&format!("`{var}`")),
                "{var} missing from the module docs"
            );
            assert!(
                readme.contains(&format!("`{var}`")),
                "{var} missing from README.md"
            );
        }
    }
}
