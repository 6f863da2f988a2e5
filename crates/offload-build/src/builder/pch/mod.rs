//! Precompiled preambles: where a source's preamble ends, the PCH job that precompiles it
//! once per (compiler, architecture, flags, preamble), the family of preambles shared across
//! separate builds, and the PCH's lifecycle in a build (made, adopted, left to the
//! background). The device code is byte-identical to a compile without it. Why it works this
//! way: `docs/design/pch.md`.

pub(crate) mod background;
pub(crate) mod job;
pub(crate) mod lifecycle;
pub(crate) mod preamble;
pub(crate) mod shared;
#[cfg(test)]
mod tests;
pub(crate) mod weight;

pub(crate) use job::{
    PchJob, compile_with_pch, host_pch_job, host_prefix_job, pch_job, prefix_job,
};
pub(crate) use preamble::RUNTIME_PREAMBLE;
pub(crate) use shared::{
    Choice, Hints, hoists_runtime, prefer_fewer, prefer_shared, prefer_wrapper,
};
pub(crate) use weight::Weights;
