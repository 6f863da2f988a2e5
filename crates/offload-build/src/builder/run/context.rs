//! What the jobs of one build share: the toolchain, the cache's hashes and lookups, the
//! executor of commands and the PCH lifecycle. Its methods are in the files of each concern
//! ([`crate::builder::run::runner`], [`crate::builder::run::job`], [`crate::builder::run::link`],
//! [`crate::builder::run::nvcc`]).

use std::sync::atomic::AtomicBool;

use crate::builder::cache::ContentHashes;
use crate::builder::cache::lookup::Lookups;
use crate::builder::host::early::Hosts;
use crate::builder::options::Language;
use crate::builder::pch::lifecycle::Lifecycle;
use crate::builder::run::exec::Executor;
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::direct::Direct;

/// What the jobs of one build share.
pub(super) struct Runner<'a> {
    pub(super) tc: &'a Toolchain,
    pub(super) lang: Language,
    pub(super) hashes: &'a ContentHashes,
    /// The environment and include search the compiles depend on.
    pub(super) lookups: &'a Lookups,
    /// Set when a compile left no depfile.
    pub(super) no_depfile: &'a AtomicBool,
    /// Runs the commands; its processes and cache directory are the jobs' too.
    pub(super) exec: &'a Executor<'a>,
    pub(super) pch: Lifecycle<'a>,
    /// The HIP device compiles' driver templates ([`crate::builder::toolchain::direct`]).
    pub(super) direct: Direct,
    /// The host compiles of a host-code build with clang, planned by the host stage
    /// ([`Hosts`]).
    pub(super) hosts: Option<&'a Hosts<'a>>,
}
