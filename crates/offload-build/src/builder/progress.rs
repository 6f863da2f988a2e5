//! Progress reports of a build ([`Build::on_progress`](crate::Build::on_progress)).

use std::path::PathBuf;

/// What one finished job was ([`Progress::step`](crate::builder::Progress::step)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProgressStep {
    /// The compile of this source (absolute path) for [`Progress::arch`](crate::builder::Progress::arch).
    Compile(PathBuf),
    /// The device link of the architecture's relocatable objects (`-fgpu-rdc`).
    Link,
    /// Not a job that finished: what the build's memory does to a job
    /// ([`Progress::arch`](crate::builder::Progress::arch) names it, `k.cu for sm_80`): it
    /// waits for memory (how much it is expected to need, and why; how much of the budget
    /// is free), or it was killed for lack of memory and runs again alone.
    Memory(String),
    /// Not a job that finished: what a build farm took
    /// ([`Progress::arch`](crate::builder::Progress::arch) says `build farm`), once, when the
    /// jobs ended: how many compiles it could take at once and how many it ran at once.
    Farm(String),
}

/// A device compile (or device link) that finished, for [`Build::on_progress`](crate::Build::on_progress). Its
/// [`Display`](std::fmt::Display) is the progress line `offload-build compile` prints:
/// `[3/14] gfx90a k.hip 2.1 s`; or what memory does to a job
/// ([`ProgressStep::Memory`]): `[3/14] k.cu for sm_80 waits for memory: …`.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// How many jobs have finished, this one included.
    pub done: usize,
    /// How many jobs run in this build (the compiles whose cache record is not fresh, then
    /// one device link per architecture compiled from several of them).
    pub total: usize,
    /// The architecture.
    pub arch: String,
    /// What finished.
    pub step: ProgressStep,
    /// Seconds it took; `None` for a device link whose result was cached.
    pub seconds: Option<f64>,
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}/{}] {} ", self.done, self.total, self.arch)?;
        if let ProgressStep::Memory(what) | ProgressStep::Farm(what) = &self.step {
            return f.write_str(what);
        }
        match &self.step {
            ProgressStep::Compile(src) => {
                let name = src.file_name().unwrap_or(src.as_os_str());
                write!(f, "{}", name.to_string_lossy())?;
            }
            ProgressStep::Link => f.write_str("device link")?,
            ProgressStep::Memory(_) | ProgressStep::Farm(_) => {}
        }
        match self.seconds {
            Some(s) => write!(f, " {s:.1} s"),
            None => f.write_str(" cached"),
        }
    }
}

/// The callback of [`Build::on_progress`](crate::Build::on_progress) (shared by clones of the builder).
#[derive(Clone)]
pub(crate) struct ProgressHook(pub(crate) std::sync::Arc<dyn Fn(&Progress) + Send + Sync>);

impl ProgressHook {
    pub(crate) fn call(&self, p: &Progress) {
        (self.0)(p)
    }
}

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook(..)")
    }
}
