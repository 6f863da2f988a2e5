//! The plan room: every decision of a build, before any job runs ([`Plan::new`]): sources,
//! language, architectures, toolchain, container and embedding, output names, and the job
//! list with each job's complete command (the toolchain room spells them out). The later
//! stages read only the plan. [`Build::try_compile`](crate::Build::try_compile),
//! [`Build::try_resolve_archs`](crate::Build::try_resolve_archs),
//! [`Build::try_get_compiler`](crate::Build::try_get_compiler) and `offload-build compile` all
//! plan with [`Plan::new`], so they agree on every decision.

pub(crate) mod arch_flags;
pub(crate) mod archs;
pub(crate) mod commands;
pub(crate) mod container;
pub(crate) mod decided;
pub(crate) mod estimate;
pub(crate) mod flags;
pub(crate) mod host;
pub(crate) mod jobs;
pub(crate) mod launcher;
pub(crate) mod sources;
#[cfg(test)]
mod tests;

pub(crate) use container::container;
pub(crate) use decided::{Plan, Purpose};
pub(crate) use flags::compile_options;
pub(crate) use jobs::JobSettings;
