//! Command-line front ends. Each tool is a `run` function over argument strings and
//! output streams, so the binaries in `src/bin/` stay a few lines long and the tools
//! can be tested in-process.
//!
//! - [`bundler`]: `offload-bundler` (clang-offload-bundler).
//! - [`packager`]: `offload-packager` (clang-offload-packager, llvm-offload-binary).
//! - [`offload_build`]: `offload-build` (inspect, extract, embed; no LLVM counterpart).

pub mod bundler;
pub mod cl;
pub mod offload_build;
pub mod packager;
