//! The jobs stage: executes the plan's commands (compiles, PCHs, device links) under the
//! jobserver, checks and records what they wrote, and decides nothing.

pub(crate) mod check;
pub(crate) mod context;
pub(crate) mod exec;
pub(crate) mod job;
pub(crate) mod link;
pub(crate) mod nodes;
pub(crate) mod nvcc;
pub(crate) mod outputs;
pub(crate) mod runner;
