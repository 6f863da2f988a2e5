//! Whole installs for `inspect` and `check`: directories (walked recursively, symbolic links
//! inside them not followed), zip files such as Python wheels (members read from the archive
//! in memory, nothing unpacked to disk), static archives and any number of each; the
//! `--archs` summary, the `check` verdicts, and the GPUs of this machine (`--gpu native`).

use std::collections::BTreeSet;
use std::io::{self, IsTerminal, Read};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use offload_formats::compat::{self, Fit, Gpu, Mismatch, Rule};
use offload_formats::inspect::{ContainerReport, EntryReport, Report};
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
        // `-` is standard input; an input named on the command line is followed if it is
        // a link. Names are text that holds their bytes (offload_formats::id::spell).
        if input == "-" {
            file(input, true, progress, visit)?;
            continue;
        }
        let os = offload_formats::id::spell::os(input);
        match std::fs::metadata(&os) {
            Ok(m) if m.is_dir() => walk_dir(Path::new(&os), progress, visit)?,
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
    let shown = crate::fileio::path_text(dir);
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
            file(&crate::fileio::path_text(&path), false, progress, visit)?;
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
    // From the start: reading a slow file (a pipe, a network file system) is part of it.
    progress.start(path);
    let input = match Input::open(path) {
        Ok(i) => i,
        Err(e) => {
            progress.done();
            return visit(Visit::Error(format!("'{path}': {}", error_text(&e))));
        }
    };
    let data = &input.data[..];
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
    /// How many containers hold device code (each bundle is registered with the runtime on
    /// its own, so each needs a code object for the GPU; the offload binaries of one section
    /// count as one).
    pub containers: usize,
    /// The entry the runtime would load from the first container (`A or B` when it depends
    /// on a setting the GPU was named without), and the rule; `None` when a container has
    /// no code object for the GPU.
    pub chosen: Option<(String, Rule)>,
    /// When the GPU was named without its xnack/sramecc settings and only some settings
    /// find code in every container: those settings (`xnack+`, `sramecc+:xnack-`), any of
    /// which suffices. Empty: it loads whatever the settings.
    pub conditions: Vec<String>,
    /// The containers (their indices in the report) without a code object for the GPU.
    pub missing: Vec<usize>,
    /// The first such container's device entries, each with the reason it does not fit.
    pub rejected: Vec<(String, Mismatch)>,
}

/// One GPU with every setting known: the first container's best entry, or the containers
/// without code and the first one's reasons.
struct Exact {
    containers: usize,
    chosen: Option<(String, Rule)>,
    missing: Vec<usize>,
    rejected: Vec<(String, Mismatch)>,
}

/// The GPU with each xnack/sramecc setting it supports but was named without set both
/// ways, with the settings assumed (`["xnack+"]`).
fn variants(gpu: &Gpu) -> Vec<(Gpu, Vec<String>)> {
    let mut out = vec![(gpu.clone(), Vec::new())];
    let Gpu::Amd { processor, .. } = gpu else {
        return out;
    };
    let Some(p) = offload_formats::id::target_id::amdgpu_processor(processor) else {
        return out;
    };
    for name in ["sramecc", "xnack"] {
        let supported = if name == "xnack" { p.xnack } else { p.sramecc };
        let mut next = Vec::new();
        for (g, assumed) in out {
            let Gpu::Amd {
                processor,
                xnack,
                sramecc,
            } = g
            else {
                unreachable!("an AMD GPU stays one")
            };
            let setting = if name == "xnack" { xnack } else { sramecc };
            if !supported || setting.is_some() {
                next.push((
                    Gpu::Amd {
                        processor,
                        xnack,
                        sramecc,
                    },
                    assumed,
                ));
                continue;
            }
            for on in [true, false] {
                let mut a = assumed.clone();
                a.push(format!("{name}{}", if on { '+' } else { '-' }));
                let (x, s) = if name == "xnack" {
                    (Some(on), sramecc)
                } else {
                    (xnack, Some(on))
                };
                next.push((
                    Gpu::Amd {
                        processor,
                        xnack: x,
                        sramecc: s,
                    },
                    a,
                ));
            }
        }
        out = next;
    }
    out
}

/// Checks a report's device entries against `gpu`, container by container, for every
/// setting the GPU was named without. `None`: the file has no device code.
pub(crate) fn check(r: &Report, gpu_name: &str, gpu: &Gpu) -> Option<Verdict> {
    let variants = variants(gpu);
    let results: Vec<Exact> = variants
        .iter()
        .map(|(g, _)| check_exact(r, g))
        .collect::<Option<_>>()?;
    let fitting: Vec<usize> = (0..results.len())
        .filter(|&i| results[i].chosen.is_some())
        .collect();
    let first = &results[0];
    let mut v = Verdict {
        gpu: gpu_name.to_owned(),
        containers: first.containers,
        chosen: None,
        conditions: Vec::new(),
        missing: first.missing.clone(),
        rejected: Vec::new(),
    };
    if fitting.is_empty() {
        v.rejected = results.into_iter().next()?.rejected;
        return Some(v);
    }
    let mut ids: Vec<&str> = Vec::new();
    for &i in &fitting {
        let (id, _) = results[i].chosen.as_ref()?;
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    let rule = results[fitting[0]].chosen.as_ref()?.1;
    v.chosen = Some((ids.join(" or "), rule));
    v.missing.clear();
    if fitting.len() < variants.len() {
        let sets: Vec<Vec<String>> = fitting.iter().map(|&i| variants[i].1.clone()).collect();
        v.conditions = simplify(sets).iter().map(|c| c.join(":")).collect();
    }
    Some(v)
}

/// Drops from alternative settings (`[[sramecc+, xnack-], [sramecc-, xnack-]]`) every
/// feature whose value does not matter (→ `[[xnack-]]`).
fn simplify(mut sets: Vec<Vec<String>>) -> Vec<Vec<String>> {
    let flip = |s: &str| {
        let (name, sign) = s.split_at(s.len() - 1);
        format!("{name}{}", if sign == "+" { '-' } else { '+' })
    };
    let names: Vec<String> = sets
        .first()
        .map(|s| s.iter().map(|f| f[..f.len() - 1].to_owned()).collect())
        .unwrap_or_default();
    for name in names {
        let at = |set: &Vec<String>| set.iter().position(|f| f[..f.len() - 1] == name);
        let closed = sets.iter().all(|set| {
            let Some(i) = at(set) else { return true };
            let mut other = set.clone();
            other[i] = flip(&set[i]);
            sets.contains(&other)
        });
        if closed {
            for set in &mut sets {
                if let Some(i) = at(set) {
                    set.remove(i);
                }
            }
            sets.dedup();
            let mut seen = Vec::new();
            sets.retain(|s| {
                let new = !seen.contains(s);
                seen.push(s.clone());
                new
            });
        }
    }
    sets
}

fn check_exact(r: &Report, gpu: &Gpu) -> Option<Exact> {
    // The runtimes' preferences: an exact code object before a generic one (HIP), machine
    // code before PTX (CUDA).
    let rank = |f: &Fit| {
        (
            !f.requires.is_empty(),
            matches!(f.rule, Rule::GenericProcessor(_) | Rule::Ptx),
        )
    };
    let mut v = Exact {
        containers: 0,
        chosen: None,
        missing: Vec::new(),
        rejected: Vec::new(),
    };
    let mut first_chosen = None;
    // Each bundle is registered with the runtime on its own (one per translation unit in
    // a linked `.hip_fatbin`); the offload binaries of one section (or file, or archive
    // member) are the alternatives one link chooses among, so they count as one group.
    let mut groups: Vec<(usize, Vec<&ContainerReport>)> = Vec::new();
    let mut last_key = None;
    for c in &r.containers {
        let key = (c.kind == "offload-binary").then_some((&c.member, &c.section));
        match (groups.last_mut(), key.is_some() && key == last_key) {
            (Some((_, g)), true) => g.push(c),
            _ => groups.push((c.index, vec![c])),
        }
        last_key = key;
    }
    for (index, group) in groups {
        let mut fits = Vec::new();
        let mut rejected = Vec::new();
        for (c, e) in group
            .iter()
            .flat_map(|c| c.entries.iter().map(move |e| (c, e)))
            .filter(|(_, e)| is_device(e))
        {
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
        if fits.is_empty() && rejected.is_empty() {
            continue;
        }
        v.containers += 1;
        fits.sort_by_key(|(_, f)| rank(f));
        match fits.into_iter().next() {
            Some((id, fit)) => {
                first_chosen.get_or_insert((id, fit.rule));
            }
            None => {
                if v.missing.is_empty() {
                    v.rejected = rejected;
                }
                v.missing.push(index);
            }
        }
    }
    if v.containers == 0 {
        return None;
    }
    if v.missing.is_empty() {
        v.chosen = first_chosen;
    }
    Some(v)
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

/// Writes to file descriptor 2 directly: the command holds `io::stderr()`'s lock for its
/// whole run, so the progress thread must not take it.
fn write_stderr(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writing an initialized buffer of that length to descriptor 2.
        let n = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
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
                        let line = format!("\r\x1b[Koffload-build: reading {path} ({secs} s)");
                        write_stderr(line.as_bytes());
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
                    write_stderr(b"\r\x1b[K");
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
    fn settings_that_do_not_matter_are_dropped() {
        let v = |s: &[&[&str]]| -> Vec<Vec<String>> {
            s.iter()
                .map(|x| x.iter().map(|f| f.to_string()).collect())
                .collect()
        };
        assert_eq!(
            simplify(v(&[&["sramecc+", "xnack-"], &["sramecc-", "xnack-"]])),
            v(&[&["xnack-"]])
        );
        assert_eq!(
            simplify(v(&[&["sramecc+", "xnack-"], &["sramecc-", "xnack+"]])),
            v(&[&["sramecc+", "xnack-"], &["sramecc-", "xnack+"]])
        );
        assert_eq!(simplify(v(&[&["xnack+"]])), v(&[&["xnack+"]]));
    }

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
