//! The plan: everything a build decides before any compile runs.
//!
//! A build runs in four stages: **plan** (this module, with [`crate::builder::toolchain::clang`]) → **jobs**
//! ([`crate::builder::run`]: runs the planned compiles and device links, with the cache) → **pack**
//! ([`crate::builder::pack`]: the container bytes) → **emit** ([`crate::builder::emit`]: the files in the output
//! directory and the Cargo directives). [`Plan::new`] is the one place that reads the
//! [`Build`]'s settings and the environment and turns them into decisions: the toolchain, the
//! language, the architectures (globally and per source), the sources, the container and
//! embedding, the output names, and every job's complete command
//! ([`Command`]): [`compile_options`] decides the compiler's
//! arguments (optimization, debug information, flags, the depfile request, `-cuid`, the PTX
//! ISA) and [`crate::builder::toolchain::clang`] spells them out, per (source, architecture) and per device link.
//! The later stages read only the [`Plan`]. [`Build::try_compile`],
//! [`Build::try_resolve_archs`], [`Build::try_get_compiler`] and the `offload-build compile`
//! command (through those) all plan with [`Plan::new`], so they agree on every decision.
//!
//! To add a builder option: 1) a field and a setter in [`Build`], 2) the decision in [`Plan`]
//! (read from the `Build` in [`Plan::new`], or in [`compile_options`] for the compiler's
//! arguments; the later stages see only the plan), 3) the CLI flag and its mapping in one place
//! (`builder` in `crates/offload-cli/src/helper.rs`), 4) the CMake argument
//! (`_offload_add_fatbin_command` in `build-support/cmake/OffloadBuild.cmake`).

pub(crate) mod archs;
pub(crate) mod commands;
pub(crate) mod container;
pub(crate) mod decided;
pub(crate) mod flags;
pub(crate) mod jobs;
pub(crate) mod launcher;
pub(crate) mod sources;
#[cfg(test)]
mod tests;

pub(crate) use container::container;
pub(crate) use decided::{Plan, Purpose};
pub(crate) use flags::compile_options;
pub(crate) use jobs::JobSettings;
