//! What a compiler is and supports (`--version`, `--print-supported-cpus`), asked once and
//! kept in the cache directory under a stamp of the compiler file.

use crate::builder::command::{self, Domain, KeyBuilder};
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::options::CompilerKind;
use crate::builder::options::Language;
use std::path::Path;

use crate::builder::toolchain::paths::run_text;

/// What the compiler says about itself (`--version`, `--print-supported-cpus` for the
/// language's device target), asked once and kept in `cache_dir` under a stamp of the
/// compiler file (path, size, modification time): the stamp, the version line and the
/// processors.
pub(crate) fn compiler_info(
    env: &Env<'_>,
    clang: &Path,
    kind: CompilerKind,
    lang: Language,
    cache_dir: &Path,
) -> Result<(u128, String, Vec<String>), Error> {
    let stamp = KeyBuilder::new(Domain::CompilerStamp)
        .file_stamp(clang)
        .map_err(|e| Error::io("reading", clang, e))?
        .str(&format!(
            "{lang:?}{}",
            if kind == CompilerKind::Nvcc {
                " nvcc (with the sm_NNa variants)"
            } else {
                ""
            }
        ))
        .finish();
    let info_path = cache_dir.join(format!("compiler-{stamp:032x}.txt"));
    let read = || {
        let text = std::fs::read_to_string(&info_path).ok()?;
        let (v, s) = text.split_once("\n--\n")?;
        Some((v.to_string(), s.lines().map(str::to_string).collect()))
    };
    let mut failed = None;
    let known = crate::builder::cache::read_or_ask(&info_path, read, || {
        match ask_compiler(env, clang, kind, lang) {
            Ok((version, supported)) => {
                // Atomically: builds sharing the cache read it while another writes it.
                let text = format!("{version}\n--\n{}", supported.join("\n"));
                let _ = fs::write_atomic(&info_path, text.as_bytes());
                Some((version, supported))
            }
            Err(e) => {
                failed = Some(e);
                None
            }
        }
    });
    match known {
        Some((version, supported)) => Ok((stamp, version, supported)),
        None => Err(failed.unwrap_or_else(|| Error::Config("a compiler probe failed".into()))),
    }
}

/// Asks the compiler its version line and the processors it supports (both at once: each
/// starts the compiler).
fn ask_compiler(
    env: &Env<'_>,
    clang: &Path,
    kind: CompilerKind,
    lang: Language,
) -> Result<(String, Vec<String>), Error> {
    let (version, supported) = std::thread::scope(|scope| {
        let version = scope.spawn(|| {
            let mut version = command::Command::new(clang);
            version.add_arg("--version");
            run_text(env.processes(), &mut version.to_command(), clang)
        });
        let supported = if kind == CompilerKind::Nvcc {
            let mut codes = command::Command::new(clang);
            codes.add_arg("--list-gpu-code");
            run_text(env.processes(), &mut codes.to_command(), clang)
                .map(|codes| parse_gpu_code(&codes))
        } else {
            supported_cpus(env, clang, lang)
        };
        let version = version
            .join()
            .unwrap_or_else(|_| Err(Error::Config("a compiler probe failed".into())));
        (version, supported)
    });
    let version = version?;
    let supported = supported?;
    let version = if kind == CompilerKind::Nvcc {
        version_line(&version)
    } else {
        version.lines().next().unwrap_or_default().to_string()
    };
    Ok((version, supported))
}

pub(crate) fn parse_major(version: &str) -> u32 {
    version
        .split("version ")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(0)
}

/// Parses `--print-supported-cpus` output: the tab-indented lines after the heading.
pub(crate) fn parse_supported(text: &str, lang: Language) -> Vec<String> {
    let prefix = match lang {
        Language::Hip => "gfx",
        Language::Cuda => "sm_",
    };
    let mut v: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("Available CPUs"))
        .filter(|l| l.starts_with('\t') || l.starts_with(' '))
        .map(|l| l.trim().to_string())
        .filter(|l| l.starts_with(prefix))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The processors clang supports for `lang`'s device target (`--print-supported-cpus`).
pub(crate) fn supported_cpus(
    env: &Env<'_>,
    clang: &Path,
    lang: Language,
) -> Result<Vec<String>, Error> {
    let mut cpus = command::Command::new(clang);
    cpus.add_arg(match lang {
        Language::Hip => "--target=amdgcn-amd-amdhsa",
        Language::Cuda => "--target=nvptx64-nvidia-cuda",
    })
    .add_args(["-nogpulib", "--print-supported-cpus"]);
    let text = run_text(env.processes(), &mut cpus.to_command(), clang)?;
    Ok(parse_supported(&text, lang))
}

/// The real architectures of `nvcc --list-gpu-code` (`sm_75`, …), sorted, with the
/// architecture-specific variants nvcc accepts but does not list: `sm_NNa` from `sm_90`.
/// (nvcc's family-specific `sm_NNf` is not an architecture this crate parses or packs.)
pub(crate) fn parse_gpu_code(text: &str) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for w in text.split_whitespace().filter(|w| w.starts_with("sm_")) {
        v.push(w.to_string());
        let n: u32 = w[3..].parse().unwrap_or(0);
        if n >= 90 {
            v.push(format!("{w}a"));
        }
    }
    v.sort();
    v.dedup();
    v
}

/// The version line of `nvcc --version` (`Cuda compilation tools, release 13.5, V13.5.37`).
pub(crate) fn version_line(text: &str) -> String {
    text.lines()
        .find(|l| l.contains("release"))
        .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or_default()
        .trim()
        .to_string()
}
