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
//! //   container(), ARCHS, KERNELS, IMAGES, image(arch) (top level, where the file is included),
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
//! (`libamdhip64.so`); an [`Embed::ContainerOnly`] HIP build's program loads `container()` with it
//! (`hipModuleLoadData`, then `hipModuleGetFunction` by the kernel's name). For both, when a
//! ROCm install is in use and holds that library, the build prints
//! `cargo:rustc-link-search=native=<dir>` and `cargo:rustc-link-lib=dylib=amdhip64`;
//! [`Build::link_hip_runtime`]`(false)` turns that off (a program that opens the runtime with
//! `dlopen` needs no link). A link that fails with
//! `undefined symbol: __hipRegisterFatBinary` has no HIP runtime: install one (Debian 12:
//! `apt-get install libamdhip64-dev`) so that it is found, or link one yourself
//! (`cargo:rustc-link-lib=dylib=amdhip64` with its search path), or use
//! [`Embed::ContainerOnly`] and load the code at run time (`hipModuleLoadData`).
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
//! | `OFFLOAD_BUILD_MAX_JOBS` | unlimited | at most this many jobs at once, on top of Cargo's jobserver |
//! | `OFFLOAD_BUILD_FARM_JOBS` | under sccache, the room `sccache --dist-status` reports; else `0` | how many compiles a build farm takes at once beside the local jobs: those sccache can send (HIP device compiles, and host compiles with clang 16 or later) take a farm slot instead of a job token and count against no local memory |
//! | `OFFLOAD_BUILD_MEMORY` | the cgroup's limit or `MemAvailable`, less a tenth | how much memory the build's jobs may hold at once (`6G`, `6000M`, a number of bytes; `0` or `off`: no limit): a job starts while what the running jobs and it are expected to need fits (the guide's "Memory") |
//! | `OFFLOAD_BUILD_CACHE_DIR` | `$OUT_DIR/offload-build-cache` | where compiled objects and cache records are kept (may be shared between builds) |
//! | `OFFLOAD_BUILD_COMPILE_TIMEOUT` | none | seconds one compile may run before it is killed, with its children; the build fails naming the source and arch (see [`Build::timeout`]; `compile --timeout`, CMake `TIMEOUT`) |
//! | `OFFLOAD_BUILD_PCH` | `1` | `0` (or `false`, `off`) turns precompiled preambles off (see [`Build::pch`]; `compile --no-pch`, CMake `NO_PCH`) |
//! | `OFFLOAD_BUILD_PCH_BACKGROUND` | `1`, `0` when `CI` is set | `0` (or `false`, `off`) makes no precompiled preamble after the build (see [`Build::pch_background`]) |
//! | `OFFLOAD_BUILD_DIRECT` | `1` | `0` (or `false`, `off`) runs every HIP device compile through the clang driver, not as the two commands (cc1, lld) the driver would run, and every nvcc host-code compile as one `nvcc -c`, not as the steps nvcc prints with its chains at once |
//! | `NUM_JOBS` (set by Cargo) | CPUs | parallelism when no jobserver is inherited |
//! | `CXXSTDLIB` | `stdc++` (`c++` on Apple and the BSDs) | the C++ standard library a [`Build::host_code`] build links, as the `cc` crate reads it; empty for none |
//!
//! Values set with [`Build::env`] take precedence over the process environment.
//!
//! # Self-check of the docs
//!
//! [`ENV_VARS`] lists the variables above; a unit test checks that each appears in this table,
//! and that no guide copies its rows.

// Errors carry the failed command's full output by design; a build script's error path is not
// hot, and flat variants are easier for build scripts to match than boxed ones.
#![allow(clippy::result_large_err)]

// A build is a pipeline of rooms, each importing only those below it (ARCHITECTURE.md, checked
// by integration/stages.rs): the shared vocabulary in this folder's files, then cache/,
// toolchain/, pch/, plan/, run/, pack/, host/, emit/; `Build::run` below chains plan → run →
// (host) → pack → emit, and `Build::try_resolve_archs` stops after the plan.
mod arch;
mod built;
mod cache;
mod command;
mod compiled;
mod config;
mod diag;
mod emit;
mod env;
mod error;
mod fs;
mod graph;
mod host;
mod job;
mod job_out;
mod job_slots;
mod memory;
mod options;
mod pack;
mod pch;
mod piece;
mod plan;
mod process;
mod progress;
mod run;
mod toolchain;

pub use arch::{Arch, ArchError, ArchList, DEFAULT_CUDA_ARCHS, DEFAULT_HIP_ARCHS};
pub use command::Command;
pub use compiled::{Compiled, ResolvedArchs};
pub use config::Build;
pub use diag::Diagnostic;
pub use error::Error;
pub use options::{CompilerKind, Container, Embed, Language};
pub use pack::kernels::{amdgpu_kernels, ptx_kernels};
pub use plan::commands::PreambleCommands;
pub use process::CancelToken;
pub use progress::{Progress, ProgressStep};

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
    "OFFLOAD_BUILD_FARM_JOBS",
    "OFFLOAD_BUILD_MEMORY",
    "OFFLOAD_BUILD_CACHE_DIR",
    "OFFLOAD_BUILD_COMPILE_TIMEOUT",
    "OFFLOAD_BUILD_PCH",
    "OFFLOAD_BUILD_PCH_BACKGROUND",
    "OFFLOAD_BUILD_DIRECT",
    "NUM_JOBS",
    "CXXSTDLIB",
];

impl Build {
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
    /// - `<name>.rs`, to `include!`, with `pub fn container() -> &'static [u8]` (the container,
    ///   4096-byte aligned; in [`Embed::HipObject`] mode the object's own `.hip_fatbin`), `pub const ARCHS: &[&str]`, `pub const KERNELS: &[&str]`,
    ///   `CONTAINER`, `COMPRESSED`, `pub static IMAGES: &[(&str, &str, &[u8])]` (architecture,
    ///   kind `cubin`/`ptx`/`code-object`/…, the image's bytes as a slice of `container()`; empty
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
            archs: plan.archs.iter().map(Arch::spelling).collect(),
            origin: plan.arch_origin,
            compiler,
            warnings,
            cuda_runtime: plan.cuda_runtime,
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
        plan::commands::compiler_command(self, &env, &plan)
    }

    /// The object [`Embed`] mode for the container this build writes:
    /// [`Embed::HipObject`] for a bundle, [`Embed::NewDriverObject`] for offload binaries, with
    /// the language and container decided as [`Build::try_compile`] decides them (the set ones,
    /// else from the sources' extensions); [`Embed::ContainerOnly`] for an NVIDIA fat binary,
    /// which no host object registers. `offload-build compile --embed object` uses it.
    pub fn object_embed(&self) -> Embed {
        let directives = Directives::new(false);
        let env = Env::new(&self.env, &directives);
        match plan::container(self, &env) {
            Container::Bundle => Embed::HipObject,
            Container::OffloadBinary => Embed::NewDriverObject,
            // No host object registers an NVIDIA fat binary: it is loaded at run time.
            Container::CudaFatbin => Embed::ContainerOnly,
        }
    }

    /// Plan → (the host stage's nodes) → the job graph → (host objects) → pack → emit (see
    /// [`plan`]).
    fn run(&self, name: &str, env: &Env<'_>) -> Result<Compiled, Error> {
        let plan = Plan::new(self, env, Purpose::Compile(name))?;
        let pack = host::packer(&plan);
        let job = host::job_maker(&plan);
        let hosts = host::plan(&plan, &pack, &job);
        let mut built = run::runner::run(&plan, env, &hosts)?;
        let objects = if plan.host_code {
            host::objects(&plan, &mut built, env)?
        } else {
            Vec::new()
        };
        let diagnostics = std::mem::take(&mut built.diagnostics);
        for d in &diagnostics {
            env.directives().diagnostic(d);
        }
        let jobs = (built.jobs_run, built.jobs_cached);
        let pch = (built.pch_made, built.pch_used, built.pch_background);
        let packed = pack::run(&plan, built, env)?;
        let mut c = emit::run(&plan, packed, &objects, jobs, env)?;
        c.diagnostics = diagnostics;
        (c.pch_made, c.pch_used, c.pch_background) = pch;
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The generated items are top level where `<name>.rs` is included (only the kernel
    /// constants are in `kernels`), and the CLI flag that resolves is `--resolve`: the docs
    /// say so.
    #[test]
    fn docs_name_the_generated_items_and_the_resolve_flag_as_they_are() {
        let docs = [
            ("mod.rs", include_str!("mod.rs")),
            ("rust_module.rs", include_str!("emit/rust_module.rs")),
            ("README.md", include_str!("../../../../README.md")),
            (
                "docs/build-rs.md",
                include_str!("../../../../docs/build-rs.md"),
            ),
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
        let symbols = emit::embed_glue::HostSymbols::new(
            Some(("pkg", "0.1.0")),
            "kernels",
            "x86_64-unknown-linux-gnu",
            Path::new("/t/debug/build/pkg-0123/out"),
            b"",
        );
        let generated = emit::rust_module::render(&emit::rust_module::Generated {
            name: "kernels",
            container_file: "/o/kernels.hipfb",
            container_len: 0,
            archs: &["gfx90a".to_string()],
            kernels: &["saxpy".to_string()],
            container: Container::Bundle,
            compressed: false,
            embed: Embed::ContainerOnly,
            symbols: &symbols,
            images: &[],
        });
        let top = generated.split("pub mod kernels").next().unwrap();
        for item in ["pub fn container()", "pub const ARCHS", "pub const KERNELS"] {
            assert!(top.contains(item), "{item} is not top level:\n{generated}");
        }
    }

    #[test]
    fn env_table_documents_every_variable() {
        let docs = include_str!("mod.rs");
        for var in ENV_VARS {
            assert!(
                docs.contains(&format!("`{var}`")),
                "{var} missing from the module docs"
            );
        }
    }

    /// The environment table lives in the module docs only: no guide copies its rows.
    #[test]
    fn env_table_is_written_once() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut files = vec![root.join("README.md")];
        for e in std::fs::read_dir(root.join("docs")).unwrap() {
            files.push(e.unwrap().path());
        }
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "md"))
        {
            let text = std::fs::read_to_string(f).unwrap();
            for var in ENV_VARS {
                let row = format!("| `{var}`");
                assert!(
                    !text.contains(&row),
                    "{} copies the row of {var}",
                    f.display()
                );
            }
        }
    }
}
