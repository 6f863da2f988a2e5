//! How much a preamble stands for: the bytes of the files its preprocessing reads, asked of
//! the compiler once (the PCH job's depfile-only command, `-M`, host side: 0.04 to 0.1 s) and
//! kept beside the PCH's record. Whether sources that share a whole preamble get its PCH or
//! a shorter one the build makes anyway goes by it
//! ([`prefer_fewer`](crate::builder::pch::shared::prefer_fewer)).

use crate::builder::cache::depfile::parse_depfile;
use crate::builder::cache::{JobDir, read_or_ask};
use crate::builder::pch::job::PchJob;
use crate::builder::process::{Processes, probe};
use std::collections::HashMap;
use std::sync::Mutex;
use xxhash_rust::xxh3::xxh3_128;

/// The weights of a build's preambles: asked once per preamble text (the same for every
/// target of a family), kept per PCH.
pub(crate) struct Weights<'a> {
    processes: &'a Processes,
    memo: Mutex<HashMap<u128, Option<u64>>>,
}

impl<'a> Weights<'a> {
    /// The weights asked by processes of `processes` (the build's: cancelled with it).
    pub(crate) fn new(processes: &'a Processes) -> Weights<'a> {
        Weights {
            processes,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The bytes of the headers the preamble of `p` reads (the preamble file left out):
    /// kept (`<record>.weight`), known in this build from another target's preamble of the
    /// same text, or asked of the compiler (once for builds that share the cache:
    /// [`read_or_ask`]). `None` when its preprocessing fails.
    pub(crate) fn of(&self, p: &PchJob) -> Option<u64> {
        let kept = p.record.with_extension("weight");
        let read = || {
            std::fs::read_to_string(&kept)
                .ok()
                .and_then(|t| t.trim().parse().ok())
        };
        read_or_ask(&kept, read, || {
            let text = xxh3_128(&p.preamble);
            let memo = || self.memo.lock().unwrap_or_else(|e| e.into_inner());
            let known = memo().get(&text).copied();
            let w = known.unwrap_or_else(|| ask(p, self.processes));
            memo().insert(text, w);
            if let Some(w) = w {
                let _ = crate::builder::fs::write_atomic(&kept, w.to_string().as_bytes());
            }
            w
        })
    }
}

/// Runs the depfile-only command of `p` on a copy of its preamble in a private directory
/// beside its record ([`JobDir`]), and adds up the sizes of the files the depfile names.
fn ask(p: &PchJob, processes: &Processes) -> Option<u64> {
    // A job's private directory: what a killed run leaves is removed as theirs is.
    let dir = JobDir::new(p.record.parent()?).ok()?;
    let name = p.preamble_file.file_name()?;
    let file = dir.path().join(name);
    std::fs::write(&file, &p.preamble).ok()?;
    let depfile = dir.path().join("preamble.d");
    let cmd = p.deps_only.map_paths(|q| {
        if q == p.preamble_file {
            Some(file.clone())
        } else if q == p.depfile {
            Some(depfile.clone())
        } else {
            None
        }
    });
    let out = probe(processes, &mut cmd.to_command()).ok()??;
    if !out.status.success() {
        return None;
    }
    let deps = parse_depfile(&std::fs::read(&depfile).ok()?);
    let here = cmd.dir.clone().unwrap_or_default();
    Some(
        deps.iter()
            .filter(|d| d.file_name() != Some(name))
            .filter_map(|d| std::fs::metadata(here.join(d)).ok())
            .map(|m| m.len())
            .sum(),
    )
}
