//! What a compile's result depends on beside its command and the content of the files it
//! read: the environment variables the compiler reads (`CPATH`, `CPLUS_INCLUDE_PATH`,
//! `HIP_*`, `ROCM_*`, `CUDA_*`, …) and the include search. A header found in one directory of
//! the search list would be shadowed by a new file of the same name in another: the cache
//! record keeps a hash ([`Lookups::context`]) over those variables, the search list and, for
//! every header it read, which search directories hold a file of that relative name, so that
//! a new shadowing header or a changed `CPATH` makes the record stale.
//!
//! Beside those, the *probes* ([`Lookups::probes`]): paths whose existence decided what the
//! compiler read without being read themselves. A quoted `#include "x.h"` is looked for first
//! in the includer's own directory, so `dir/x.h` beside every includer that found `x.h`
//! elsewhere is one; a `__has_include("x.h")` or `__has_include(<x.h>)` asks each search
//! directory (and the includer's, quoted). The record keeps them, and their existence enters
//! the context. A `__has_include` whose argument is a macro cannot be followed: such a compile
//! is not recorded (it runs again next time), as ccache does for what it cannot see.

use foldhash::{HashMap, HashMapExt};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::builder::cache::{ContentHashes, Record, sealed};
use crate::builder::command::{Command, Domain, KeyBuilder};
use crate::builder::env::read_by_compiler;

/// The search path variables, in the order clang searches them after `-I`.
const PATH_VARS: &[&str] = &["CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"];

/// The environment and file-existence answers of one build, shared by its jobs.
#[derive(Debug)]
pub(crate) struct Lookups {
    /// The variables that matter, as this process has them.
    env: Vec<(OsString, OsString)>,
    exists: Mutex<HashMap<PathBuf, bool>>,
    /// What each file read asks of the include search ([`scan`]), by path.
    scans: Mutex<HashMap<PathBuf, std::sync::Arc<Scan>>>,
    /// The scans earlier builds kept ([`Lookups::load_scans`]), by content hash.
    stored: HashMap<u128, std::sync::Arc<Scan>>,
    /// The scans this build made, by content hash, to keep.
    made: Mutex<HashMap<u128, std::sync::Arc<Scan>>>,
    cwd: PathBuf,
}

impl Lookups {
    /// Whether the context `rec` was made in (variables, include search, probes) holds for
    /// `cmd` compiling `source` now, over the inputs `rec` lists.
    pub(crate) fn holds(&self, rec: &Record, cmd: &Command, source: &Path) -> bool {
        let deps: Vec<PathBuf> = rec.deps.iter().map(|(d, _)| d.clone()).collect();
        rec.context == self.context(cmd, source, &deps, &rec.probes)
    }

    /// The lookups of a build whose compilers see the variables `env` (those
    /// [`read_by_compiler`], from [`crate::builder::env::Env::compiler_vars`]), in this process's
    /// working directory.
    pub(crate) fn new(mut env: Vec<(OsString, OsString)>) -> Lookups {
        env.retain(|(k, _)| read_by_compiler(k));
        env.sort();
        Lookups {
            env,
            exists: Mutex::new(HashMap::new()),
            scans: Mutex::new(HashMap::new()),
            stored: HashMap::new(),
            made: Mutex::new(HashMap::new()),
            cwd: std::env::current_dir().unwrap_or_default(),
        }
    }

    /// These lookups with the scans kept in `cache_dir` ([`SCANS`], written by
    /// [`Lookups::save_scans`]): a file whose content an earlier build scanned is not read
    /// again. A damaged table is an empty one.
    pub(crate) fn load_scans(mut self, cache_dir: &Path) -> Lookups {
        let text = std::fs::read(cache_dir.join(SCANS)).unwrap_or_default();
        self.stored = parse_scans(&text).unwrap_or_default();
        self
    }

    /// Writes the scan table of `cache_dir`: those kept before and those this build made;
    /// not written when this build made none.
    pub(crate) fn save_scans(&self, cache_dir: &Path) {
        let made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if made.is_empty() {
            return;
        }
        let mut all: Vec<(&u128, &Scan)> = (self.stored.iter().chain(made.iter()))
            .map(|(h, s)| (h, s.as_ref()))
            .collect();
        all.sort_by_key(|(h, _)| **h);
        all.dedup_by_key(|(h, _)| **h);
        let _ = crate::builder::fs::write_atomic(&cache_dir.join(SCANS), &scans_text(&all));
    }

    fn exists(&self, p: &Path) -> bool {
        let mut memo = self.exists.lock().unwrap_or_else(|e| e.into_inner());
        *memo.entry(p.to_path_buf()).or_insert_with(|| p.exists())
    }

    /// The variables `cmd` runs with (its own settings over this process's).
    pub(crate) fn env_of(&self, cmd: &Command) -> Vec<(OsString, OsString)> {
        let mut env = self.env.clone();
        for (k, v) in cmd.env() {
            if !read_by_compiler(k) {
                continue;
            }
            env.retain(|(n, _)| n != k);
            if let Some(v) = v {
                env.push((k.clone(), v.clone()));
            }
        }
        env.sort();
        env
    }

    /// The include search list of `cmd` compiling `source`: the source's directory, the
    /// `-iquote`, `-I`, `-isystem` and `-idirafter` directories, then the search path
    /// variables' (an empty entry is the working directory); absolute.
    fn search_list(
        &self,
        cmd: &Command,
        source: &Path,
        env: &[(OsString, OsString)],
    ) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = source.parent().map(Path::to_path_buf).into_iter().collect();
        let args = cmd.args();
        const FLAGS: [&str; 5] = [
            "-iquote",
            "-isystem",
            "-idirafter",
            "--include-directory=",
            "-I",
        ];
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_encoded_bytes();
            if let Some(flag) = FLAGS.iter().find(|f| a.starts_with(f.as_bytes())) {
                let rest = &a[flag.len()..];
                if !rest.is_empty() {
                    dirs.push(path_of(rest));
                } else if let Some(next) = args.get(i + 1).filter(|_| !flag.ends_with('=')) {
                    dirs.push(PathBuf::from(next));
                    i += 1;
                }
            }
            i += 1;
        }
        for var in PATH_VARS {
            if let Some((_, v)) = env.iter().find(|(k, _)| k == var) {
                dirs.extend(std::env::split_paths(v).map(|p| {
                    if p.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        p
                    }
                }));
            }
        }
        dirs.into_iter().map(|d| self.cwd.join(d)).collect()
    }

    /// The hash over what a compile by `cmd` of `source` that read `deps` depends on beside
    /// their content: the variables, the search list, for each header under a search
    /// directory which search directories hold a file of its name relative to that one, and
    /// which of the `probes` ([`Lookups::probes`]) exist.
    pub(crate) fn context(
        &self,
        cmd: &Command,
        source: &Path,
        deps: &[PathBuf],
        probes: &[PathBuf],
    ) -> u128 {
        let env = self.env_of(cmd);
        let dirs = self.search_list(cmd, source, &env);
        let mut k = KeyBuilder::new(Domain::Context);
        k.u64(env.len() as u64);
        for (n, v) in &env {
            k.os(n).os(v);
        }
        k.u64(dirs.len() as u64);
        for d in &dirs {
            k.os(d);
        }
        for dep in deps.iter().skip(1) {
            for found_in in dirs.iter().filter(|d| dep.starts_with(d)) {
                let Ok(rel) = dep.strip_prefix(found_in) else {
                    continue;
                };
                for other in &dirs {
                    let candidate = other.join(rel);
                    k.u64(u64::from(candidate != *dep && self.exists(&candidate)));
                }
            }
        }
        k.u64(probes.len() as u64);
        for p in probes {
            k.os(p).u64(u64::from(self.exists(p)));
        }
        k.finish()
    }

    /// The probes of a compile by `cmd` of `source` that read `deps` (the source first), each
    /// file's content hash from `hashes` (a scan kept for that content is not made again):
    /// the paths, other than `deps`, whose existence decided what it read — beside each file
    /// that includes `"x.h"`, its directory's `x.h`; for each `__has_include`, the paths it
    /// asks about. Sorted. `None` when a `__has_include` names its header through a macro
    /// (what it asks cannot be known: the compile is not to be recorded).
    pub(crate) fn probes(
        &self,
        cmd: &Command,
        source: &Path,
        deps: &[PathBuf],
        hashes: &ContentHashes,
    ) -> Option<Vec<PathBuf>> {
        let env = self.env_of(cmd);
        let dirs = self.search_list(cmd, source, &env);
        let read: std::collections::HashSet<&Path> = deps.iter().map(PathBuf::as_path).collect();
        let mut probes = std::collections::BTreeSet::new();
        for dep in deps {
            let scan = self.scan_of(dep, hashes);
            if scan.opaque {
                return None;
            }
            let here = self.cwd.join(dep.parent().unwrap_or(Path::new("")));
            for name in &scan.quoted {
                let p = here.join(name);
                if !read.contains(p.as_path())
                    && !read.contains(dep.parent().unwrap_or(Path::new("")).join(name).as_path())
                {
                    probes.insert(p);
                }
            }
            for name in &scan.has_quoted {
                probes.insert(here.join(name));
            }
            for name in scan.has_quoted.iter().chain(&scan.has_angled) {
                probes.extend(dirs.iter().map(|d| d.join(name)));
            }
        }
        Some(probes.into_iter().collect())
    }

    /// What `path` asks of the include search, read once a build (outside the memo's lock:
    /// the jobs scan their headers at once), and not at all when an earlier build kept the
    /// scan of its content (its hash from `hashes`).
    fn scan_of(&self, path: &Path, hashes: &ContentHashes) -> std::sync::Arc<Scan> {
        let memo = || self.scans.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = memo().get(path) {
            return known.clone();
        }
        let hash = hashes.file(path);
        let kept = hash.and_then(|h| self.stored.get(&h)).cloned();
        let scanned = kept.unwrap_or_else(|| {
            let text = std::fs::read(path).unwrap_or_default();
            let s = std::sync::Arc::new(scan(&text));
            // Kept when what was read is what was hashed.
            if let Some(h) = hash.filter(|&h| xxhash_rust::xxh3::xxh3_128(&text) == h) {
                let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
                made.insert(h, s.clone());
            }
            s
        });
        memo().entry(path.to_path_buf()).or_insert(scanned).clone()
    }
}

/// What one file's text asks of the include search beside the files it includes: the names
/// it includes quoted (`#include "x.h"`, `#include_next`, `#import`), and those its
/// `__has_include` and `__has_include_next` ask about, quoted and angled. Read as text: a
/// directive in a comment or a skipped `#if` branch counts too (a probe more, never one
/// less).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    pub quoted: Vec<PathBuf>,
    pub has_quoted: Vec<PathBuf>,
    pub has_angled: Vec<PathBuf>,
    /// A `__has_include` whose argument is neither `"…"` nor `<…>` (a macro).
    pub opaque: bool,
}

/// The scan table's file in the cache directory: a header line, then per content hash
/// (32 hex digits) what [`scan`] found, one line each (`q`, `hq`, `ha` and the name; `o`
/// for opaque; `-` for nothing), the last line the hash of the others.
pub(crate) const SCANS: &str = "scans";

const SCANS_HEADER: &str = "offload-build scans 1";

/// The text of the scan table of `all` (sorted by hash); a scan with a name that is not
/// UTF-8 is left out.
fn scans_text(all: &[(&u128, &Scan)]) -> Vec<u8> {
    let mut text = String::new();
    for (h, s) in all {
        let names = [
            ("q", &s.quoted),
            ("hq", &s.has_quoted),
            ("ha", &s.has_angled),
        ];
        let mut lines = Vec::new();
        for (tag, list) in names {
            for n in list.iter() {
                lines.push(n.to_str().map(|n| format!("{h:032x} {tag} {n}\n")));
            }
        }
        if s.opaque {
            lines.push(Some(format!("{h:032x} o\n")));
        }
        if lines.is_empty() {
            lines.push(Some(format!("{h:032x} -\n")));
        }
        if let Some(lines) = lines.into_iter().collect::<Option<Vec<String>>>() {
            text.extend(lines);
        }
    }
    sealed::seal(SCANS_HEADER, &text).into_bytes()
}

/// The scans of a table [`scans_text`] wrote; `None` when it is damaged.
fn parse_scans(text: &[u8]) -> Option<HashMap<u128, std::sync::Arc<Scan>>> {
    let body = sealed::unseal(SCANS_HEADER, std::str::from_utf8(text).ok()?)?;
    let mut out: HashMap<u128, Scan> = HashMap::new();
    for line in body.lines() {
        let mut f = line.splitn(3, ' ');
        let h = u128::from_str_radix(f.next()?, 16).ok()?;
        let s = out.entry(h).or_default();
        match (f.next()?, f.next()) {
            ("q", Some(n)) => s.quoted.push(PathBuf::from(n)),
            ("hq", Some(n)) => s.has_quoted.push(PathBuf::from(n)),
            ("ha", Some(n)) => s.has_angled.push(PathBuf::from(n)),
            ("o", None) => s.opaque = true,
            ("-", None) => {}
            _ => return None,
        }
    }
    Some(
        out.into_iter()
            .map(|(h, s)| (h, std::sync::Arc::new(s)))
            .collect(),
    )
}

/// Reads `text` for [`Scan`].
pub(crate) fn scan(text: &[u8]) -> Scan {
    let mut s = Scan::default();
    let skip_ws = |t: &[u8], mut i: usize| {
        while i < t.len() && matches!(t[i], b' ' | b'\t') {
            i += 1;
        }
        i
    };
    // `"name"` or `<name>` at `i`: the name and whether it was quoted.
    let delimited = |t: &[u8], i: usize| -> Option<(PathBuf, bool)> {
        let close = match t.get(i)? {
            b'"' => b'"',
            b'<' => b'>',
            _ => return None,
        };
        let len = t[i + 1..].iter().position(|&c| c == close || c == b'\n')?;
        let name = &t[i + 1..i + 1 + len];
        (t[i + 1 + len] == close && !name.is_empty()).then(|| (path_of(name), close == b'"'))
    };
    for line in text.split(|&c| c == b'\n') {
        let i = skip_ws(line, 0);
        if line.get(i) != Some(&b'#') {
            continue;
        }
        let i = skip_ws(line, i + 1);
        let rest = &line[i..];
        let word = ["include_next", "include", "import"]
            .iter()
            .find(|w| rest.starts_with(w.as_bytes()));
        if let Some(w) = word {
            if let Some((name, true)) = delimited(line, skip_ws(line, i + w.len())) {
                s.quoted.push(name);
            }
        }
    }
    for at in memchr::memmem::find_iter(text, b"__has_include") {
        let mut i = at + "__has_include".len();
        if text[i..].starts_with(b"_next") {
            i += "_next".len();
        }
        // `defined(__has_include)`, `#ifdef __has_include`: not a probe.
        let i = skip_ws(text, i);
        if text.get(i) != Some(&b'(') {
            continue;
        }
        match delimited(text, skip_ws(text, i + 1)) {
            Some((name, true)) => s.has_quoted.push(name),
            Some((name, false)) => s.has_angled.push(name),
            None => s.opaque = true,
        }
    }
    s
}

/// A path from the bytes of an argument (after a flag).
fn path_of(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shadowing_header_or_a_changed_cpath_changes_the_context() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["inc1", "inc2"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        std::fs::write(d.join("inc2/a.h"), "").unwrap();
        let source = d.join("k.hip");
        let mut cmd = Command::new("clang");
        cmd.add_arg(format!("-I{}", d.join("inc1").display()))
            .add_args(["-I".into(), d.join("inc2").into_os_string()]);
        let deps = [source.clone(), d.join("inc2/a.h")];
        let context = |cmd: &Command| Lookups::new(Vec::new()).context(cmd, &source, &deps, &[]);
        let before = context(&cmd);
        assert_eq!(before, context(&cmd));
        std::fs::write(d.join("inc1/a.h"), "").unwrap();
        let shadowed = context(&cmd);
        assert_ne!(before, shadowed);
        let mut with_cpath = cmd.clone();
        with_cpath
            .env
            .push(("CPATH".into(), Some(d.as_os_str().into())));
        assert_ne!(shadowed, context(&with_cpath));
        let mut with_other = cmd.clone();
        with_other
            .env
            .push(("MAKEFLAGS".into(), Some("-j3".into())));
        assert_eq!(shadowed, context(&with_other));
    }

    #[test]
    fn scan_finds_quoted_includes_and_has_include_probes() {
        let text = b"#include \"a.h\"\n  #  include_next \"b/c.h\"\n#include <sys.h>\n\
            #import \"d.h\"\n#if __has_include(\"e.h\") && __has_include_next( <f.h> )\n\
            #endif\n#ifdef __has_include\n#if defined(__has_include)\n";
        let s = scan(text);
        assert_eq!(
            s.quoted,
            ["a.h", "b/c.h", "d.h"].map(PathBuf::from).to_vec()
        );
        assert_eq!(s.has_quoted, [PathBuf::from("e.h")]);
        assert_eq!(s.has_angled, [PathBuf::from("f.h")]);
        assert!(!s.opaque);
        assert!(scan(b"#if __has_include(HEADER)\n").opaque);
    }

    #[test]
    fn probes_are_beside_includers_and_where_has_include_asks() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("inc")).unwrap();
        std::fs::create_dir_all(d.join("dir2")).unwrap();
        let source = d.join("k.hip");
        std::fs::write(
            &source,
            "#include \"inc/a.h\"\n#if __has_include(<opt.h>)\n#endif\n",
        )
        .unwrap();
        std::fs::write(d.join("inc/a.h"), "#include \"val.h\"\n").unwrap();
        std::fs::write(d.join("dir2/val.h"), "").unwrap();
        let mut cmd = Command::new("clang");
        cmd.add_arg(format!("-I{}", d.join("dir2").display()));
        let deps = [source.clone(), d.join("inc/a.h"), d.join("dir2/val.h")];
        let l = Lookups::new(Vec::new());
        let hashes = ContentHashes::default();
        let probes = l.probes(&cmd, &source, &deps, &hashes).unwrap();
        // inc/a.h was found beside k.hip: no probe; val.h beside a.h is one; opt.h in every
        // search directory.
        assert!(!probes.contains(&d.join("inc/a.h")), "{probes:?}");
        assert!(probes.contains(&d.join("inc/val.h")), "{probes:?}");
        assert!(probes.contains(&d.join("opt.h")), "{probes:?}");
        assert!(probes.contains(&d.join("dir2/opt.h")), "{probes:?}");
        let before = l.context(&cmd, &source, &deps, &probes);
        std::fs::write(d.join("inc/val.h"), "").unwrap();
        let after = Lookups::new(Vec::new()).context(&cmd, &source, &deps, &probes);
        assert_ne!(
            before, after,
            "a header beside its includer changes the context"
        );
        std::fs::write(d.join("k2.hip"), "#if __has_include(MACRO)\n#endif\n").unwrap();
        let k2 = d.join("k2.hip");
        assert_eq!(
            l.probes(&cmd, &k2, std::slice::from_ref(&k2), &hashes),
            None
        );
    }

    #[test]
    fn scans_are_kept_by_content_and_a_damaged_table_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let source = d.join("k.hip");
        std::fs::write(&source, "#include \"inc/a.h\"\n").unwrap();
        std::fs::create_dir(d.join("inc")).unwrap();
        std::fs::write(
            d.join("inc/a.h"),
            "#include \"val.h\"\n#if __has_include(<o.h>)\n#endif\n",
        )
        .unwrap();
        let deps = [source.clone(), d.join("inc/a.h")];
        let cmd = Command::new("clang");
        let hashes = ContentHashes::default();
        let l = Lookups::new(Vec::new()).load_scans(d);
        let first = l.probes(&cmd, &source, &deps, &hashes).unwrap();
        l.save_scans(d);
        let table = std::fs::read(d.join(SCANS)).unwrap();
        let kept = parse_scans(&table).unwrap();
        let a = hashes.file(&d.join("inc/a.h")).unwrap();
        assert_eq!(kept[&a].quoted, [PathBuf::from("val.h")]);
        assert_eq!(kept[&a].has_angled, [PathBuf::from("o.h")]);
        // A kept scan is what the next build uses for that content (here one that names
        // another header: the file is not read).
        let mut other = kept.clone();
        other.insert(
            a,
            std::sync::Arc::new(Scan {
                quoted: vec![PathBuf::from("other.h")],
                ..Scan::default()
            }),
        );
        let mut all: Vec<(&u128, &Scan)> = other.iter().map(|(h, s)| (h, s.as_ref())).collect();
        all.sort_by_key(|(h, _)| **h);
        std::fs::write(d.join(SCANS), scans_text(&all)).unwrap();
        let next = Lookups::new(Vec::new()).load_scans(d);
        let probes = next
            .probes(&cmd, &source, &deps, &ContentHashes::default())
            .unwrap();
        assert!(probes.contains(&d.join("inc/other.h")), "{probes:?}");
        assert!(!probes.contains(&d.join("inc/val.h")), "{probes:?}");
        assert!(first.contains(&d.join("inc/val.h")), "{first:?}");
        // One byte changed: the table is not used at all.
        let mut damaged = std::fs::read(d.join(SCANS)).unwrap();
        let at = damaged.len() / 2;
        damaged[at] ^= 1;
        assert!(parse_scans(&damaged).is_none());
    }
}
