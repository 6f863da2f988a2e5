//! The sources of a build: the files and globs given, checked to exist, the language they
//! say, and the architectures of each (`Build::file_archs`).

use crate::builder::arch::Arch;
use crate::builder::config::Build;
use crate::builder::env::{Directives, Env};
use crate::builder::error::Error;
use crate::builder::options::Language;
use crate::builder::plan::archs::{check_all_supported, expand};
use crate::builder::toolchain::Toolchain;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A compile has something to build, and every source exists (each watched for changes).
pub(crate) fn check_sources(
    build: &Build,
    cwd: &Path,
    sources: &[PathBuf],
    d: &Directives,
) -> Result<(), Error> {
    if sources.is_empty() && build.images.is_empty() {
        return Err(Error::Config(
            "nothing to build: add sources with Build::file/files/glob or images with Build::image"
                .into(),
        ));
    }
    for s in sources {
        // What is there, if not a file (a directory, a socket), or why nothing can be seen.
        let not_a_file = match std::fs::metadata(absolute(cwd, s)) {
            Ok(m) if m.is_file() => None,
            Ok(m) if m.is_dir() => Some(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "a directory, not a source file",
            )),
            Ok(_) => Some(std::io::Error::other("not a regular file")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no such file",
            )),
            Err(e) => Some(e),
        };
        if let Some(e) = not_a_file {
            return Err(Error::io("reading source", s, e));
        }
        d.push_path("rerun-if-changed", s)?;
    }
    Ok(())
}

/// The directory relative paths are taken from: `CARGO_MANIFEST_DIR`, else the current one.
pub(crate) fn cwd(env: &Env<'_>) -> PathBuf {
    env.get_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The language: the one set, else CUDA when every source ends in `.cu`, HIP otherwise.
pub(crate) fn language(set: Option<Language>, sources: &[PathBuf]) -> Language {
    set.unwrap_or_else(|| {
        if !sources.is_empty()
            && sources
                .iter()
                .all(|s| s.extension().is_some_and(|e| e == "cu"))
        {
            Language::Cuda
        } else {
            Language::Hip
        }
    })
}

/// `p` relative to `cwd` when it is relative.
pub(crate) fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// The files and the expanded globs, as given (relative paths stay relative to `cwd`), without
/// duplicates (first occurrence kept).
pub(crate) fn sources(build: &Build, cwd: &Path, d: &Directives) -> Result<Vec<PathBuf>, Error> {
    let mut sources: Vec<PathBuf> = build.files.clone();
    for pattern in &build.globs {
        let full = if Path::new(pattern).is_absolute() {
            pattern.clone()
        } else {
            format!("{}/{pattern}", cwd.display())
        };
        let paths = glob::glob(&full)
            .map_err(|e| Error::Config(format!("bad glob pattern `{pattern}`: {e}")))?;
        let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
        found.sort();
        if found.is_empty() {
            d.warn(&format!("offload-build: glob `{pattern}` matches no file"));
        }
        sources.extend(found);
        let literal: PathBuf = Path::new(&full)
            .components()
            .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
            .collect();
        d.push_path("rerun-if-changed", &literal)?;
    }
    let mut seen = BTreeSet::new();
    sources.retain(|s| seen.insert(absolute(cwd, s)));
    Ok(sources)
}

/// Each source with its architectures: a matching [`Build::file_archs`] override, else the
/// global list; every one checked against the compiler.
#[allow(clippy::too_many_arguments)]
pub(crate) fn per_source_archs(
    build: &Build,
    env: &Env<'_>,
    lang: Language,
    tc: &Toolchain,
    cwd: &Path,
    sources: &[PathBuf],
    global: &[Arch],
    origin: &str,
) -> Result<Vec<(PathBuf, Vec<Arch>)>, Error> {
    let mut out = Vec::new();
    for s in sources {
        // A pattern names the source relative to the working directory or absolutely (CMake
        // passes absolute paths and runs in the top source directory).
        let abs = absolute(cwd, s);
        let rel = abs.strip_prefix(cwd).unwrap_or(&abs).to_path_buf();
        let over = build.file_archs.iter().find(|(pat, _)| {
            [&rel, &abs].iter().any(|name| {
                Path::new(pat) == name.as_path()
                    || glob::Pattern::new(pat).is_ok_and(|p| p.matches_path(name))
            })
        });
        let archs = match over {
            Some((pat, list)) => {
                let origin = format!("Build::file_archs(\"{pat}\")");
                let (a, _) = expand(env, lang, tc, list, &origin)?;
                a
            }
            None => global.to_vec(),
        };
        check_all_supported(&archs, tc, lang, origin)?;
        out.push((abs, archs));
    }
    Ok(out)
}
