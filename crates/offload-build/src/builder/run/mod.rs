//! The jobs stage: executes the plan's commands (compiles, PCHs, device links) under the
//! jobserver, checks and records what they wrote, and decides nothing.

pub(crate) mod built;
pub(crate) mod check;
pub(crate) mod context;
pub(crate) mod early;
pub(crate) mod exec;
pub(crate) mod graph;
pub(crate) mod job;
pub(crate) mod job_out;
pub(crate) mod link;
pub(crate) mod nodes;
pub(crate) mod nvcc;
pub(crate) mod outputs;
pub(crate) mod piece;
pub(crate) mod runner;
