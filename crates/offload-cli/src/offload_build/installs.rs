//! Whole installs for `inspect` and `check`: directories (walked recursively, symbolic links
//! inside them not followed), zip files such as Python wheels (members read from the archive
//! in memory, nothing unpacked to disk), static archives and any number of each; the
//! `--archs` summary, the `check` verdicts, and the GPUs of this machine (`--gpu native`).

use std::collections::BTreeSet;
use std::io::{self, IsTerminal, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use offload_formats::compat::{self, Fit, Gpu, Mismatch};
use offload_formats::inspect::{EntryReport, Report};
use offload_formats::kind::FileKind;

use crate::fileio::{Input, error_text};

/// One file found under the inputs.
pub(crate) struct Found<'a> {
    /// How it is named in the output: the path, or `ARCHIVE!/MEMBER` for a zip member.
    pub path: &'a str,
    /// Its contents.
    pub data: &'a [u8],
    /// Named on the command line (rather than found in a directory or a zip file): reported
    /// even without device code.
    pub explicit: bool,
}

/// What the walk hands its visitor: a file, or a file or directory that could not be read.
pub(crate) enum Visit<'a> {
    File(Found<'a>),
    Error(String),
}

/// Calls `visit` for every file of `inputs` (in order; a directory's entries sorted by
/// name). Zip files are opened and every member that may hold device code (by its first
/// bytes: an object, a library, an archive, a bundle) is read into memory and visited as
/// `ZIP!/MEMBER`. The visitor's error ends the walk.
pub(crate) fn walk<E>(
    inputs: &[String],
    progress: &Progress,
    visit: &mut dyn FnMut(Visit<'_>) -> Result<(), E>,
) -> Result<(), E> {
    for input in inputs {
        // An input named on the command line is followed if it is a link.
        match std::fs::metadata(input) {
            Ok(m) if m.is_dir() => walk_dir(Path::new(input), progress, visit)?,
            Ok(_) => file(input, true, progress, visit)?,
            Err(e) => visit(Visit::Error(format!("'{input}': {}", error_text(&e))))?,
        }
    }
    Ok(())
}

fn walk_dir<E>(
    dir: &Path,
    progress: &Progress,
    visit: &mut dyn FnMut(Visit<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let shown = dir.display();
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd.collect::<Result<Vec<_>, _>>(),
        Err(e) => Err(e),
    };
    let mut entries = match entries {
        Ok(v) => v,
        Err(e) => return visit(Visit::Error(format!("'{shown}': {}", error_text(&e)))),
    };
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(t) = e.file_type() else { continue };
        // Links are not followed: one pointing into the tree names a file read as itself,
        // one pointing out of it is not part of the install.
        if t.is_symlink() {
            continue;
        }
        if t.is_dir() {
            walk_dir(&path, progress, visit)?;
        } else if t.is_file() {
            file(&path.to_string_lossy(), false, progress, visit)?;
        }
    }
    Ok(())
}

fn file<E>(
    path: &str,
    explicit: bool,
    progress: &Progress,
    visit: &mut dyn FnMut(Visit<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let input = match Input::open(path) {
        Ok(i) => i,
        Err(e) => return visit(Visit::Error(format!("'{path}': {}", error_text(&e)))),
    };
    let data = &input.data[..];
    progress.start(path);
    let r = if FileKind::sniff(data) == FileKind::Zip {
        zip_members(path, data, progress, visit)
    } else {
        visit(Visit::File(Found {
            path,
            data,
            explicit,
        }))
    };
    progress.done();
    r
}

/// Whether a file starting with `head` may hold device code.
fn may_hold_device_code(head: &[u8]) -> bool {
    !matches!(
        FileKind::sniff(head),
        FileKind::Unknown | FileKind::Zip | FileKind::Wasm | FileKind::ZstdFrame
    )
}

fn zip_members<E>(
    path: &str,
    data: &[u8],
    progress: &Progress,
    visit: &mut dyn FnMut(Visit<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut zip = match zip::ZipArchive::new(io::Cursor::new(data)) {
        Ok(z) => z,
        Err(e) => {
            return visit(Visit::Error(format!(
                "'{path}': not a readable zip file: {e}"
            )));
        }
    };
    for i in 0..zip.len() {
        let mut member = match zip.by_index(i) {
            Ok(m) => m,
            Err(e) => {
                visit(Visit::Error(format!("'{path}', member {i}: {e}")))?;
                continue;
            }
        };
        if !member.is_file() {
            continue;
        }
        let name = format!("{path}!/{}", member.name());
        // The first 4 KiB tell (a PE header may lie a little way in); only then the rest.
        let mut bytes = Vec::new();
        let read = (&mut member)
            .take(4096)
            .read_to_end(&mut bytes)
            .and_then(|_| {
                if may_hold_device_code(&bytes) {
                    progress.start(&name);
                    member.read_to_end(&mut bytes).map(|_| true)
                } else {
                    Ok(false)
                }
            });
        match read {
            Ok(true) => visit(Visit::File(Found {
                path: &name,
                data: &bytes,
                explicit: false,
            }))?,
            Ok(false) => {}
            Err(e) => visit(Visit::Error(format!("'{name}': {}", error_text(&e))))?,
        }
    }
    Ok(())
}

/// The target IDs (architectures) of a report's device code, sorted and distinct: every
/// entry that is not host code.
pub(crate) fn archs(r: &Report) -> Vec<String> {
    let set: BTreeSet<&str> = r
        .entries()
        .map(|(_, e)| e)
        .filter(|e| is_device(e))
        .map(|e| e.arch.as_str())
        .filter(|a| !a.is_empty())
        .collect();
    set.into_iter().map(str::to_owned).collect()
}

fn is_device(e: &EntryReport) -> bool {
    e.offload_kind != "host" && !e.triple.is_empty()
}

/// The verdict for one file and one GPU.
pub(crate) struct Verdict {
    /// The GPU as given.
    pub gpu: String,
    /// The entry the runtime would load, and why: fits without conditions first, exact
    /// processors before generic ones, machine code before PTX.
    pub chosen: Option<(String, Fit)>,
    /// Every device entry with the reason it does not fit (empty when one fits).
    pub rejected: Vec<(String, Mismatch)>,
}

/// Checks a report's device entries against `gpu`. `None`: the file has no device code.
pub(crate) fn check(r: &Report, gpu_name: &str, gpu: &Gpu) -> Option<Verdict> {
    let mut fits = Vec::new();
    let mut rejected = Vec::new();
    let mut any = false;
    for (c, e) in r.entries() {
        if !is_device(e) {
            continue;
        }
        any = true;
        let verdict = if c.kind == "fat-object-section" {
            Err(Mismatch::NotLoadable(
                "device code of a relocatable fat object, linked at build time".to_owned(),
            ))
        } else {
            compat::compatible_entry(&e.offload_kind, &e.triple, &e.arch, e.image_kind, gpu)
        };
        match verdict {
            Ok(f) => fits.push((e.id.clone(), f)),
            Err(m) => rejected.push((e.id.clone(), m)),
        }
    }
    if !any {
        return None;
    }
    // The runtimes' preferences: an exact code object before a generic one (HIP), machine
    // code before PTX (CUDA).
    let rank = |f: &Fit| {
        (
            !f.requires.is_empty(),
            matches!(
                f.rule,
                compat::Rule::GenericProcessor(_) | compat::Rule::Ptx
            ),
        )
    };
    fits.sort_by_key(|(_, f)| rank(f));
    let chosen = fits.into_iter().next();
    if chosen.is_some() {
        rejected.clear();
    }
    Some(Verdict {
        gpu: gpu_name.to_owned(),
        chosen,
        rejected,
    })
}

/// Where `--gpu native` looks: the KFD topology under this root (`/sys` unless the
/// environment variable `OFFLOAD_BUILD_SYSFS` names another, for tests), then `amdgpu-arch`
/// or `rocminfo`, and `nvidia-smi`, from `PATH`.
pub(crate) fn native_gpus() -> Vec<String> {
    let sysfs = std::env::var_os("OFFLOAD_BUILD_SYSFS").unwrap_or_else(|| "/sys".into());
    let mut gpus = BTreeSet::new();
    let nodes = Path::new(&sysfs).join("class/kfd/kfd/topology/nodes");
    if let Ok(rd) = std::fs::read_dir(&nodes) {
        for node in rd.flatten() {
            let Ok(text) = std::fs::read_to_string(node.path().join("properties")) else {
                continue;
            };
            for line in text.lines() {
                if let Some(v) = line.strip_prefix("gfx_target_version ") {
                    if let Some(name) = gfx_name(v.trim()) {
                        gpus.insert(name);
                    }
                }
            }
        }
    }
    if gpus.is_empty() {
        if let Some(out) = tool_output("amdgpu-arch", &[]) {
            gpus.extend(
                out.split_whitespace()
                    .filter(|w| w.starts_with("gfx"))
                    .map(str::to_owned),
            );
        }
    }
    if gpus.is_empty() {
        if let Some(out) = tool_output("rocminfo", &[]) {
            for line in out.lines() {
                if let Some(n) = line.trim().strip_prefix("Name:") {
                    let n = n.trim();
                    let n = n.strip_prefix("amdgcn-amd-amdhsa--").unwrap_or(n);
                    if n.starts_with("gfx") && Gpu::parse(n).is_ok() {
                        gpus.insert(n.to_owned());
                    }
                }
            }
        }
    }
    if let Some(out) = tool_output(
        "nvidia-smi",
        &["--query-gpu=compute_cap", "--format=csv,noheader"],
    ) {
        gpus.extend(
            out.lines()
                .map(str::trim)
                .filter(|l| Gpu::parse(l).is_ok())
                .map(str::to_owned),
        );
    }
    gpus.into_iter().collect()
}

/// `gfx_target_version` (major·10000 + minor·100 + stepping) as a processor name:
/// 90010 → `gfx90a`, 110501 → `gfx1151`; 0 (a CPU node) → none.
pub(crate) fn gfx_name(v: &str) -> Option<String> {
    let v: u32 = v.parse().ok()?;
    if v == 0 {
        return None;
    }
    let (major, minor, step) = (v / 10000, v / 100 % 100, v % 100);
    if minor > 15 || step > 15 {
        return None;
    }
    Some(format!("gfx{major}{minor:x}{step:x}"))
}

fn tool_output(tool: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(tool)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A progress line on standard error for an input that takes more than a second, only when
/// standard error is a terminal (`offload-build: reading PATH (3 s)`, erased when done).
pub(crate) struct Progress {
    state: Option<Arc<Mutex<ProgressState>>>,
}

struct ProgressState {
    current: Option<(String, Instant)>,
    shown: bool,
    finished: bool,
}

impl Progress {
    /// A progress reporter: active when standard error is a terminal.
    pub(crate) fn new() -> Progress {
        if !io::stderr().is_terminal() {
            return Progress { state: None };
        }
        let state = Arc::new(Mutex::new(ProgressState {
            current: None,
            shown: false,
            finished: false,
        }));
        let s = Arc::clone(&state);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(250));
                let Ok(mut st) = s.lock() else { return };
                if st.finished {
                    return;
                }
                if let Some((path, since)) = &st.current {
                    let secs = since.elapsed().as_secs();
                    if secs >= 1 {
                        let _ = write!(
                            io::stderr().lock(),
                            "\r\x1b[Koffload-build: reading {path} ({secs} s)"
                        );
                        st.shown = true;
                    }
                }
            }
        });
        Progress { state: Some(state) }
    }

    fn start(&self, path: &str) {
        if let Some(s) = &self.state {
            if let Ok(mut st) = s.lock() {
                st.current = Some((path.to_owned(), Instant::now()));
            }
        }
    }

    fn done(&self) {
        if let Some(s) = &self.state {
            if let Ok(mut st) = s.lock() {
                st.current = None;
                if st.shown {
                    let _ = write!(io::stderr().lock(), "\r\x1b[K");
                    st.shown = false;
                }
            }
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done();
        if let Some(s) = &self.state {
            if let Ok(mut st) = s.lock() {
                st.finished = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx_target_versions() {
        assert_eq!(gfx_name("90010").as_deref(), Some("gfx90a"));
        assert_eq!(gfx_name("110501").as_deref(), Some("gfx1151"));
        assert_eq!(gfx_name("100300").as_deref(), Some("gfx1030"));
        assert_eq!(gfx_name("90400").as_deref(), Some("gfx940"));
        assert_eq!(gfx_name("90402").as_deref(), Some("gfx942"));
        assert_eq!(gfx_name("0"), None);
        assert_eq!(gfx_name("x"), None);
    }
}
