//! What the jobs stage hands on: a finished compile job ([`JobOut`]: what it wrote, what it
//! read, what it printed; compiled or taken from the cache) and a finished device link
//! ([`Linked`]).

use std::path::PathBuf;

use offload_formats::package::ImageKind;

use crate::builder::arch::Target;
use crate::builder::job::CompileJob;

/// A finished compile job.
pub(crate) struct JobOut {
    pub(crate) source: PathBuf,
    pub(crate) target: Target,
    pub(crate) rdc: bool,
    pub(crate) outputs: Vec<(ImageKind, PathBuf)>,
    /// The content of each output, as checked (read once: another build may replace the
    /// files meanwhile).
    pub(crate) images: Vec<Vec<u8>>,
    pub(crate) deps: Vec<PathBuf>,
    pub(crate) ran: bool,
    /// Seconds the compile took (0 for a cache hit).
    pub(crate) seconds: f64,
    /// What the compiler printed (cleaned; replayed from the record on a cache hit).
    pub(crate) stderr: Vec<String>,
    /// Whether the compile used a precompiled preamble.
    pub(crate) used_pch: bool,
    /// The paths whose existence decided what the compile read (from its record).
    pub(crate) probes: Vec<PathBuf>,
}

impl JobOut {
    /// The result of `job`: compiled in `seconds` (`Some`), or taken from the cache (`None`).
    pub(super) fn of(
        job: &CompileJob,
        images: Vec<Vec<u8>>,
        deps: Vec<PathBuf>,
        stderr: Vec<String>,
        seconds: Option<f64>,
    ) -> JobOut {
        JobOut {
            source: job.source.clone(),
            target: job.target.clone(),
            rdc: job.rdc,
            outputs: job.outputs.clone(),
            images,
            deps,
            ran: seconds.is_some(),
            seconds: seconds.unwrap_or(0.0),
            stderr,
            used_pch: false,
            probes: Vec::new(),
        }
    }
}

/// A finished device link.
pub(crate) struct Linked {
    pub(crate) target: Target,
    /// The linked code object, as checked (read once: another build may replace the file
    /// meanwhile, as with a compile job's images).
    pub(crate) data: Vec<u8>,
    /// The cached file those bytes are in.
    pub(crate) path: std::path::PathBuf,
    pub(crate) ran: bool,
    pub(crate) seconds: f64,
    pub(crate) stderr: Vec<String>,
}
