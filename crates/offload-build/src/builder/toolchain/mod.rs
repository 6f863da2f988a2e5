//! Toolchain discovery: which clang compiles the device code, which ROCm / CUDA install it
//! uses, and what that compiler supports.
//!
//! The compiler is the first that exists of:
//!
//! 1. [`Build::compiler`](crate::builder::Build::compiler);
//! 2. `HIPCXX` (a path, or a name looked up on `PATH`);
//! 3. `HIP_CLANG_PATH/clang` (else the ROCm install's clang in that directory, else its
//!    newest `clang-NN`);
//! 4. the clang of a ROCm install named by `ROCM_PATH` / `HIP_PATH`;
//! 5. `CLANG` (a path, or a name looked up on `PATH`);
//! 6. the clang of the ROCm install found ([`find_rocm`]: `hipconfig`, `/opt/rocm*`, `/usr`);
//! 7. `clang-NN` on `PATH` and `/usr/lib/llvm-NN/bin/clang`, newest `NN` first, among those
//!    with `ld.lld` beside them (needed to link device code);
//! 8. `/opt/rocm/llvm/bin/clang`;
//! 9. `clang` on `PATH`.
//!
//! `HIPCXX`, `HIP_CLANG_PATH` or `CLANG` set to something that is no compiler is an error
//! naming the variable. The ROCm install is used (`--rocm-path`, …) only with the clang it was
//! built for (see [`Toolchain::rocm`]).
//!
//! What the compiler supports is asked once (`--version`, `--print-supported-cpus`) and kept in
//! the cache directory, keyed by the compiler's path, size and modification time, so an
//! unchanged rebuild starts no process.

pub(crate) mod clang;
pub(crate) mod cuda;
pub(crate) mod discover;
pub(crate) mod found;
pub(crate) mod info;
pub(crate) mod nvcc;
pub(crate) mod paths;
pub(crate) mod ptxas;
pub(crate) mod rocm;

pub(crate) use discover::{Wanted, discover, flag_supported};
pub(crate) use found::Toolchain;
