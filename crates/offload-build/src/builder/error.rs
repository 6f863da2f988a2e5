//! Typed errors of [`Build`](crate::builder::Build).
//!
//! Build scripts can match on the variants (for example to tell "no compiler installed" from
//! "a kernel does not compile"); [`Display`](std::fmt::Display) gives a message meant to be
//! read in Cargo's output: what failed, why, and what to do about it.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// What went wrong in [`Build::try_compile`](crate::builder::Build::try_compile).
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No usable compiler was found.
    ToolNotFound {
        /// The tool looked for (`clang`, `ptxas`, …).
        tool: String,
        /// Every path that was tried, in order.
        searched: Vec<PathBuf>,
    },
    /// An architecture that the compiler does not know.
    ArchUnsupported {
        /// The architecture as requested; several, `;`-separated, when more than one of a
        /// list is unsupported (all are reported at once).
        arch: String,
        /// The compiler asked.
        compiler: PathBuf,
        /// Where the request came from (builder call, environment variable, …).
        origin: String,
        /// The processors this compiler supports.
        supported: Vec<String>,
    },
    /// A variable that names the compiler (`HIPCXX`, `HIP_CLANG_PATH`, `CLANG`) names none:
    /// the build stops rather than fall back to another clang.
    CompilerVar {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
        /// The paths tried for it.
        searched: Vec<PathBuf>,
    },
    /// An architecture the ROCm install's device libraries cannot serve (no
    /// `oclc_isa_version_<N>.bc`, as for gfx1100 in Debian 12's ROCm 5.2).
    DeviceLibMissing {
        /// The architecture as requested; several, `;`-separated, when more than one of a
        /// list cannot be built (all are reported at once).
        arch: String,
        /// Where the request came from.
        origin: String,
        /// The device-library directory.
        device_libs: PathBuf,
        /// The processors it serves.
        served: Vec<String>,
    },
    /// An architecture string that cannot be parsed (bad feature, wrong vendor, …).
    InvalidArch {
        /// The string as given.
        arch: String,
        /// Where it came from.
        origin: String,
        /// Why it is not valid.
        reason: crate::builder::arch::ArchError,
    },
    /// A compiler (or linker, or ptxas) run failed.
    CompileFailed {
        /// The architecture of the failed job.
        arch: String,
        /// The source file, when the job compiled one.
        source: Option<PathBuf>,
        /// The exact command line, shell-quoted.
        command: String,
        /// Exit status (`None` when killed by a signal).
        status: Option<i32>,
        /// What the command printed on stdout.
        stdout: String,
        /// What the command printed on stderr.
        stderr: String,
        /// What offload-build knows about the failure, when it recognises it (for example a
        /// source that includes `hip/hip_runtime.h` while no ROCm install was found).
        hint: Option<String>,
    },
    /// A compile (or device link, or `ptxas`) ran past the compile timeout
    /// ([`Build::timeout`](crate::builder::Build::timeout), `OFFLOAD_BUILD_COMPILE_TIMEOUT`) and was
    /// killed, with its children.
    CompileTimedOut {
        /// The architecture of the job.
        arch: String,
        /// The source file, when the job compiled one.
        source: Option<PathBuf>,
        /// The program that ran too long.
        program: String,
        /// The timeout.
        timeout: std::time::Duration,
    },
    /// A compile (or device link, or `ptxas`) was killed for lack of memory while it ran alone:
    /// it needs more than the build may use ([`OFFLOAD_BUILD_MEMORY`](super#environment-variables),
    /// the cgroup's limit, the memory available). One killed while others ran beside it runs
    /// again alone first.
    OutOfMemory {
        /// The architecture of the job (`host` for a host compile).
        arch: String,
        /// The source file, when the job compiled one.
        source: Option<PathBuf>,
        /// The program that was killed.
        program: String,
        /// The most its processes held, as measured, in bytes.
        peak: u64,
        /// The build's memory budget in bytes, and where it comes from; `None`: no budget
        /// (the machine ran out).
        budget: Option<(u64, String)>,
    },
    /// The compiler launcher ([`OFFLOAD_BUILD_LAUNCHER`](super#environment-variables), or a
    /// caching `RUSTC_WRAPPER`) cannot be run, or failed where the same compile without it
    /// succeeds.
    LauncherFailed {
        /// The launcher's command (program and arguments).
        launcher: String,
        /// What went wrong, in one line.
        reason: String,
    },
    /// A compile produced something that is not the device code it should be (an AMDGPU ELF
    /// code object, a PTX text, a cubin), checked in every mode before packing.
    BadDeviceCode {
        /// The architecture of the job.
        arch: String,
        /// The source file, when the job compiled one (`None` for a device link).
        source: Option<PathBuf>,
        /// The output it was to be (in the cache directory; not written there).
        path: PathBuf,
        /// What it should be (`an AMDGPU ELF code object`, …).
        expected: String,
        /// What it is instead.
        found: String,
    },
    /// The build was cancelled ([`CancelToken::cancel`](crate::builder::CancelToken::cancel)): its
    /// compilers were killed (the program is ending on a signal).
    Stopped,
    /// A command could not be started at all.
    Spawn {
        /// The command line.
        command: String,
        /// The operating system's error.
        error: io::Error,
    },
    /// Reading or writing a file failed.
    Io {
        /// What was being done (`reading`, `writing`, …).
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        error: io::Error,
    },
    /// The builder's settings contradict each other or lack something required.
    Config(String),
    /// Packing the device code into a container failed: the container writer's error
    /// (`offload_formats` `bundle::BundleWriteError`, `CompressError`, `package::PackageWriteError`).
    Pack(Box<dyn std::error::Error + Send + Sync>),
    /// The host object of an [`Embed`](crate::builder::Embed) mode cannot be written.
    Embed {
        /// The mode requested.
        mode: crate::builder::options::Embed,
        /// Why.
        message: String,
    },
    /// The host object of an [`Embed`](crate::builder::Embed) mode cannot be written because the
    /// emitter ([`EmbedError`](crate::embed::EmbedError)) or the archive writer failed;
    /// displayed as [`Error::Embed`] with that error as the message.
    EmbedFailed {
        /// The mode requested.
        mode: crate::builder::options::Embed,
        /// The emitter's or archive writer's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, error: io::Error) -> Error {
        Error::Io {
            action,
            path: path.into(),
            error,
        }
    }
}

/// `bytes` for people: `412 MiB`, `3.4 GiB`.
pub(crate) fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    }
}

fn indent(out: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    for line in text.trim_end().lines() {
        writeln!(out, "    {line}")?;
    }
    Ok(())
}

/// What a job was: `compiling <source> for <arch>`, or `device link for <arch>`.
fn job(f: &mut fmt::Formatter<'_>, source: &Option<PathBuf>, arch: &str) -> fmt::Result {
    match source {
        // The host compile of a host-code build (`Target::Host`).
        Some(s) if arch == "host" => write!(f, "compiling the host code of {}", s.display()),
        Some(s) => write!(f, "compiling {} for {arch}", s.display()),
        None => write!(f, "device link for {arch}"),
    }
}

/// [`Error::OutOfMemory`]: the job, what was killed holding how much, and the budget.
fn out_of_memory(
    f: &mut fmt::Formatter<'_>,
    (source, arch): (&Option<PathBuf>, &str),
    program: &str,
    peak: u64,
    budget: &Option<(u64, String)>,
) -> fmt::Result {
    job(f, source, arch)?;
    let peak = human(peak);
    write!(
        f,
        " ran out of memory: {program} was killed by the kernel while it ran alone, holding \
         {peak}"
    )?;
    match budget {
        Some((b, from)) => write!(
            f,
            ", more than the build's memory budget of {} (from {from}); give the build more \
             memory (OFFLOAD_BUILD_MEMORY, the cgroup's limit)",
            human(*b)
        ),
        None => write!(f, "; the machine has no more memory to give it"),
    }
}

/// [`Error::ToolNotFound`]: every place searched, then how to get the tool.
fn tool_not_found(f: &mut fmt::Formatter<'_>, tool: &str, searched: &[PathBuf]) -> fmt::Result {
    writeln!(f, "no {tool} found; searched, in order:")?;
    for p in searched {
        writeln!(f, "    {}", p.display())?;
    }
    if tool.starts_with("nvcc") {
        return write!(
            f,
            "set CUDACXX (or Build::compiler, or CUDA_PATH) to NVIDIA's nvcc, or install it: \
             `pip install nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt \
             nvidia-cuda-cccl` in the virtualenv of VIRTUAL_ENV; or compile with clang \
             (Build::cuda_compiler(CompilerKind::Clang))"
        );
    }
    if tool.starts_with("ptxas") {
        return write!(
            f,
            "set PTXAS (or Build::ptxas) to NVIDIA's ptxas, or install it: \
             `pip install nvidia-cuda-nvcc-cu12` in the virtualenv of VIRTUAL_ENV"
        );
    }
    write!(
        f,
        "set CLANG (or HIPCXX, HIP_CLANG_PATH, ROCM_PATH) to a clang with AMDGPU/NVPTX support, \
         or install one (Debian: apt-get install clang-19 lld-19)"
    )
}

/// [`Error::CompilerVar`]: every place tried, then how to fix the variable.
fn compiler_var(
    f: &mut fmt::Formatter<'_>,
    var: &str,
    value: &str,
    searched: &[PathBuf],
) -> fmt::Result {
    writeln!(f, "{var}=`{value}` names no compiler; tried, in order:")?;
    for p in searched {
        writeln!(f, "    {}", p.display())?;
    }
    write!(
        f,
        "fix {var} (a clang path, a name on PATH{}) or unset it; offload-build does \
         not fall back to another clang when {var} is set",
        if var == "HIP_CLANG_PATH" {
            ", or for HIP_CLANG_PATH a directory holding clang"
        } else {
            ""
        }
    )
}

impl Error {
    /// The errors of one job: a failed or timed-out compile, a failed launcher, wrong device
    /// code.
    fn fmt_job(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::CompileFailed {
                arch,
                source,
                command,
                status,
                stdout,
                stderr,
                hint,
            } => {
                job(f, source, arch)?;
                match status {
                    Some(c) => writeln!(f, " failed (exit status {c})")?,
                    None => writeln!(f, " failed (killed by a signal)")?,
                }
                writeln!(f, "command:\n    {command}")?;
                for (name, text) in [("stdout", stdout), ("stderr", stderr)] {
                    if !text.trim().is_empty() {
                        writeln!(f, "{name}:")?;
                        indent(f, text)?;
                    }
                }
                if let Some(h) = hint {
                    writeln!(f, "note: {h}")?;
                }
                Ok(())
            }
            Error::CompileTimedOut {
                arch,
                source,
                program,
                timeout,
            } => {
                job(f, source, arch)?;
                write!(
                    f,
                    " did not finish within the compile timeout of {} s (Build::timeout, \
                         OFFLOAD_BUILD_COMPILE_TIMEOUT): {program} was killed",
                    timeout.as_secs_f64()
                )
            }
            Error::OutOfMemory {
                arch,
                source,
                program,
                peak,
                budget,
            } => out_of_memory(f, (source, arch), program, *peak, budget),
            Error::LauncherFailed { launcher, reason } => {
                write!(f, "the compiler launcher `{launcher}` {reason}")
            }
            Error::BadDeviceCode {
                arch,
                source,
                path,
                expected,
                found,
            } => {
                job(f, source, arch)?;
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                write!(
                    f,
                    " wrote {found} as {name}, not {expected}: the compiler (or its launcher) \
                         is not what it should be"
                )
            }
            _ => unreachable!("fmt_job is called for job errors only"),
        }
    }
}

/// "offload arch `a`", or "offload archs `a`, `b`" for a `;`-separated list.
fn arch_names(list: &str) -> String {
    let names: Vec<String> = list.split(';').map(|a| format!("`{a}`")).collect();
    match names.len() {
        1 => format!("offload arch {}", names[0]),
        _ => format!("offload archs {}", names.join(", ")),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ToolNotFound { tool, searched } => tool_not_found(f, tool, searched),
            Error::ArchUnsupported {
                arch,
                compiler,
                origin,
                supported,
            } => write!(
                f,
                "{} (from {origin}) {} not supported by {}; it supports: {}",
                arch_names(arch),
                if arch.contains(';') { "are" } else { "is" },
                compiler.display(),
                supported.join(", ")
            ),
            Error::CompilerVar {
                var,
                value,
                searched,
            } => compiler_var(f, var, value, searched),
            Error::DeviceLibMissing {
                arch,
                origin,
                device_libs,
                served,
            } => write!(
                f,
                "{} (from {origin}) cannot be built with this ROCm install: its device \
                 libraries ({}) have no oclc_isa_version file for {}; they serve: {}. Choose \
                 one of those, or install a newer ROCm (and point ROCM_PATH at it)",
                arch_names(arch),
                device_libs.display(),
                if arch.contains(';') { "them" } else { "it" },
                served.join(", ")
            ),
            Error::InvalidArch {
                arch,
                origin,
                reason,
            } => write!(f, "invalid offload arch `{arch}` (from {origin}): {reason}"),
            Error::CompileFailed { .. }
            | Error::CompileTimedOut { .. }
            | Error::OutOfMemory { .. }
            | Error::LauncherFailed { .. }
            | Error::BadDeviceCode { .. } => self.fmt_job(f),
            Error::Stopped => f.write_str("stopped: the compilers were killed"),
            Error::Spawn { command, error } => write!(f, "could not run `{command}`: {error}"),
            Error::Io {
                action,
                path,
                error,
            } => write!(f, "{action} {}: {error}", path.display()),
            Error::Config(msg) => f.write_str(msg),
            Error::Pack(msg) => write!(f, "packing device code: {msg}"),
            Error::Embed { mode, message } => {
                write!(
                    f,
                    "embedding device code as a host object ({mode:?}): {message}"
                )
            }
            Error::EmbedFailed { mode, source } => {
                write!(
                    f,
                    "embedding device code as a host object ({mode:?}): {source}"
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { error, .. } | Error::Spawn { error, .. } => Some(error),
            Error::InvalidArch { reason, .. } => Some(reason),
            Error::Pack(e) | Error::EmbedFailed { source: e, .. } => Some(&**e),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;
    use crate::embed::EmbedError;
    use offload_formats::bundle::BundleWriteError;
    use offload_formats::id::target_id::TargetIdError;

    #[test]
    fn wrappers_return_their_source() {
        let reason = crate::builder::arch::Arch::new("gfx90a:xnack").unwrap_err();
        let e = Error::InvalidArch {
            arch: "gfx90a:xnack".into(),
            origin: "test".into(),
            reason: reason.clone(),
        };
        assert_eq!(
            e.to_string(),
            format!("invalid offload arch `gfx90a:xnack` (from test): {reason}")
        );
        let arch_error = e.source().unwrap();
        assert_eq!(
            arch_error.downcast_ref::<crate::builder::arch::ArchError>(),
            Some(&reason)
        );
        // The chain goes on to the target-ID parser's error.
        assert!(arch_error.source().unwrap().is::<TargetIdError>());

        let e = Error::Pack(BundleWriteError::ZeroAlignment.into());
        assert_eq!(
            e.to_string(),
            format!("packing device code: {}", BundleWriteError::ZeroAlignment)
        );
        assert_eq!(
            e.source()
                .and_then(|s| s.downcast_ref::<BundleWriteError>()),
            Some(&BundleWriteError::ZeroAlignment)
        );

        let inner = EmbedError::UnsupportedTarget("'x': no".into());
        let e = Error::EmbedFailed {
            mode: crate::builder::options::Embed::HipObject,
            source: inner.clone().into(),
        };
        assert_eq!(
            e.to_string(),
            format!("embedding device code as a host object (HipObject): {inner}")
        );
        assert_eq!(
            e.source().and_then(|s| s.downcast_ref::<EmbedError>()),
            Some(&inner)
        );
    }
}
