//! What the build tells and refuses about its outputs: an output that is one of its inputs
//! is refused; every header read is told to Cargo, and the directories of absent probes.

use std::path::{Path, PathBuf};

use foldhash::HashSet;

use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::job_out::JobOut;
use crate::builder::plan::Plan;
use crate::builder::toolchain::Toolchain;

/// An error when an output of the build (the container, the generated `<name>.rs`) is one
/// of `inputs` (`kind`: "source", "header"): an `out_dir` that holds the build's own inputs
/// under those names would have them overwritten.
pub(super) fn refuse_clobbering(
    plan: &Plan,
    inputs: &[PathBuf],
    kind: &str,
    id_of: impl Fn(&Path) -> Option<(u64, u64)>,
) -> Result<(), Error> {
    let Some(out) = plan.outputs.as_ref() else {
        return Ok(());
    };
    // Each output's identity once, each input once (the jobs share most headers).
    let outputs = [&out.container_file, &out.generated].map(|o| (o, file_id(o)));
    let mut seen = std::collections::HashSet::new();
    for input in inputs.iter().filter(|i| seen.insert(*i)) {
        let clobbered = outputs.iter().find(|(output, id)| {
            input == *output || (id.is_some() && id_of(input).or_else(|| file_id(input)) == *id)
        });
        if let Some((output, _)) = clobbered {
            return Err(Error::Config(format!(
                "{}: the build would overwrite this {kind} with its output {}; choose another \
                 out_dir or name",
                input.display(),
                output.display()
            )));
        }
    }
    Ok(())
}

/// The device and inode of a file; `None` when it does not exist (or off Unix).
fn file_id(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Tells Cargo of the headers the compiles read (`rerun-if-changed`), and of the directories
/// where a new header would change what they read (the directory of each absent probe,
/// [`crate::builder::cache::lookup::Lookups::probes`]: Cargo looks at a directory's files, so a header
/// created there reruns the build script). The cache records track every header and probe;
/// Cargo is told only of those outside the system include directories (hundreds of lines
/// otherwise), so an edit of a system header is caught by the next build that runs, not by
/// Cargo; nor of a directory that holds the output directory (Cargo would see every build's
/// own files as changes). The architectures of a source read the same headers: each is
/// looked at once.
pub(super) fn tell_headers(
    plan: &Plan,
    tc: &Toolchain,
    outs: &[JobOut],
    env: &Env<'_>,
) -> Result<(), Error> {
    let system = tc.system_include_dirs();
    let outside = |p: &Path| !system.iter().any(|d| p.starts_with(d));
    let mut told: HashSet<&Path> = HashSet::default();
    for dep in outs.iter().flat_map(|o| o.deps.iter().skip(1)) {
        if told.insert(dep) && outside(&fs::lexical(&plan.cwd.join(dep))) {
            env.directives().push_path("rerun-if-changed", dep)?;
        }
    }
    let mut dirs: HashSet<PathBuf> = HashSet::default();
    for probe in outs.iter().flat_map(|o| &o.probes) {
        let Some(dir) = probe.parent().map(fs::lexical) else {
            continue;
        };
        if !dirs.contains(&dir)
            && outside(&dir)
            && !plan.cache_dir.starts_with(&dir)
            && dir.is_dir()
            && !probe.exists()
        {
            env.directives().push_path("rerun-if-changed", &dir)?;
            dirs.insert(dir);
        }
    }
    Ok(())
}
