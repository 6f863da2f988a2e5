//! Integration tests of the `offload-bundler` and `offload-packager` binaries.
//!
//! - `bundler_diff`: the same argument lists run by LLVM 19's and LLVM 22's
//!   `clang-offload-bundler` and by ours, each in its own directory; exit status, stdout, stderr
//!   and the resulting files are compared byte for byte. Every group has two tests:
//!   `<group>::references_agree` (LLVM 19 vs 22: validates the cases and the declared
//!   divergences) and `<group>::ours` (ours vs the case's reference).
//! - `archive_diff`: the same for heterogeneous device archives (`-type=a`) made by llvm-ar
//!   from fat objects that clang 19 compiled; `objects_fixtures` builds those inputs.
//! - `archive_malformed`: damaged archives; ours alone must give one clean error line and
//!   change nothing on disk.
//! - `fatobj_diff`: fat objects (`-type=o` with an object host) written by ours against
//!   llvm-objcopy's, read back by LLVM 19 and 22, and linked by a real HIP `-fgpu-rdc` link.
//! - `bundler_malformed`: inputs on which LLVM crashes, loops or writes corrupt files; ours alone
//!   must report one clean error line.
//! - `packager_diff`: `offload-packager` against clang-offload-packager 19 and
//!   llvm-offload-binary 22 (package bytes, extracted files and names, `--archive`,
//!   errors), `llvm-objdump --offloading` on our output, and our reader on clang 19
//!   HIP objects and `ld -r` of them.
//! - `packager_malformed`: malformed offload binaries: one clean error line, no output.
//! - `build_api`: `offload_build::Build` with clang 19 and a counting launcher: no compile on an
//!   unchanged rebuild, header tracking per arch, arch changes, jobserver bounds, `native`
//!   fallback, typed errors, bundles byte-identical to clang's own.
//!
//! Run: `cargo test --test integration` (all), `cargo test --test integration references_agree`
//! (the reference tools only), `cargo test --test integration ours -- --nocapture` (per-case
//! verdicts of ours). See `support` for the environment knobs (`OFFLOAD_CASE`, …).
//!
//! The reference tools are required: a missing one fails the tests; install them with
//! `build-support/setup.sh` (as root).

mod archive_diff;
mod archive_malformed;
mod build_api;
mod bundler_diff;
mod bundler_malformed;
mod fatobj_diff;
mod objects_fixtures;
mod packager_diff;
mod packager_malformed;
mod support;
