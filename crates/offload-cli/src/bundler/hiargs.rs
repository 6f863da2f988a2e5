//! The validated options of `offload-bundler`: [`LowArgs`] checked in clang-offload-bundler
//! 22's order (same messages), combined with the environment that LLVM's
//! `OffloadBundlerConfig` reads (`OFFLOAD_BUNDLER_*`, `COMPRESSED_BUNDLE_FORMAT_VERSION`)
//! and offload-build's own variables, into the [`Action`] to run.

use std::mem::take;

use super::flags::LowArgs;
use crate::{Ctx, Exit};
use offload_formats::bundle::compressed::{CompressOptions, Limits, Method, Version};
use offload_formats::bundle::targets::{Mode, Targets};

/// What the command line asks for.
pub(crate) enum Action {
    /// `-list`: print the bundle IDs of `input`.
    List {
        file_type: String,
        input: String,
        verbose: bool,
        limits: Limits,
    },
    /// Bundle `job.inputs` into `job.outputs[0]`.
    Bundle(Job),
    /// `-unbundle`: extract from `job.inputs[0]`.
    Unbundle(Job),
}

/// A bundling or unbundling run, validated.
pub(crate) struct Job {
    pub(crate) file_type: String,
    /// The `-targets`, checked.
    pub(crate) targets: Targets,
    pub(crate) inputs: Vec<String>,
    pub(crate) outputs: Vec<String>,
    pub(crate) align: u64,
    pub(crate) allow_missing: bool,
    pub(crate) hip_openmp: bool,
    pub(crate) compression: Compression,
    pub(crate) verbose: bool,
    /// `-###`: print the llvm-objcopy commands LLVM would run instead of fat-object work.
    pub(crate) print_only: bool,
    /// `-check-input-archive`.
    pub(crate) check_archive: bool,
}

/// How compressed bundles are written and read in this run.
#[derive(Clone, Copy)]
pub(crate) struct Compression {
    pub(crate) enabled: bool,
    pub(crate) options: CompressOptions,
    pub(crate) limits: Limits,
}

impl Action {
    /// Validates `low` as clang-offload-bundler 22 does, in its order: the environment
    /// (its warnings come before any error about the command line), the deprecated
    /// `-inputs`/`-outputs`, `-list`, the mode's counts, then the targets.
    pub(crate) fn new(ctx: &mut Ctx<'_>, mut low: LowArgs) -> Result<Action, Exit> {
        let env = read_env(ctx);
        let (verbose, compression) = compression(&low, &env);
        let inputs = merge_deprecated(ctx, take(&mut low.input), take(&mut low.inputs), "input")?;
        let outputs =
            merge_deprecated(ctx, take(&mut low.output), take(&mut low.outputs), "output")?;
        if low.list {
            check_list(ctx, &low, &inputs, &outputs)?;
            let input = inputs.into_iter().next().unwrap_or_default();
            return Ok(Action::List {
                file_type: low.file_type,
                input,
                verbose,
                limits: compression.limits,
            });
        }
        check_counts(ctx, &low, &inputs, &outputs)?;
        let mode = if low.unbundle {
            Mode::Unbundle
        } else {
            Mode::Bundle
        };
        let targets = Targets::check(low.targets.iter().cloned(), mode, |target, id| {
            let tid = id.dropped_processor().unwrap_or_default();
            ctx.warning(format_args!(
                "target '{target}': no clang knows the processor of '{tid}'; it is left out of the bundle ID '{id}' as clang-offload-bundler 22 does"
            ));
        })
        .map_err(|e| ctx.error(e))?;
        let job = Job {
            file_type: low.file_type,
            targets,
            inputs,
            outputs,
            align: low.bundle_align.map_or(1, u64::from),
            allow_missing: low.allow_missing_bundles,
            hip_openmp: low.hip_openmp_compatible,
            compression,
            verbose,
            print_only: low.print_only,
            check_archive: low.check_input_archive,
        };
        Ok(if low.unbundle {
            Action::Unbundle(job)
        } else {
            Action::Bundle(job)
        })
    }
}

/// `-verbose` and the compression settings: the options given, else the environment.
fn compression(low: &LowArgs, env: &EnvConfig) -> (bool, Compression) {
    let verbose = low.verbose.or(env.verbose).unwrap_or(false);
    let compression = Compression {
        enabled: low.compress.or(env.compress).unwrap_or(false),
        options: CompressOptions {
            method: Method::Zstd,
            level: low.compression_level.or(env.level),
            version: env.version,
            threads: low.compression_threads.unwrap_or(env.threads),
        },
        limits: Limits {
            max_size: env.max_size.unwrap_or(Limits::default().max_size),
            strict_hash: low.strict_hash,
            // Off by default, as in LLVM: the MD5 of a large bundle takes longer than the
            // whole unbundling. -verbose prints the recalculated hash, as LLVM does.
            verify_hash: low.verify_hash.unwrap_or(env.verify_hash) || verbose,
            hooks: crate::process::HOOKS,
        },
    };
    (verbose, compression)
}

/// `-input` (or `-output`) with the deprecated comma list `-inputs` (`-outputs`) appended,
/// which may not be used together.
fn merge_deprecated(
    ctx: &mut Ctx<'_>,
    mut current: Vec<String>,
    deprecated: Vec<String>,
    name: &str,
) -> Result<Vec<String>, Exit> {
    if !current.is_empty() && !deprecated.is_empty() {
        return Err(ctx.error(format_args!(
            "-{name}s and -{name} cannot be used together, use only -{name} instead"
        )));
    }
    if !deprecated.is_empty() {
        ctx.warning(format_args!("-{name}s is deprecated, use -{name} instead"));
        current.extend(deprecated);
    }
    Ok(current)
}

fn check_list(
    ctx: &mut Ctx<'_>,
    low: &LowArgs,
    inputs: &[String],
    outputs: &[String],
) -> Result<(), Exit> {
    let problem = if low.unbundle {
        "-unbundle and -list cannot be used together"
    } else if inputs.len() != 1 {
        "only one input file supported for -list"
    } else if !outputs.is_empty() {
        "-outputs option is invalid for -list"
    } else if !low.targets.is_empty() {
        "-targets option is invalid for -list"
    } else {
        return Ok(());
    };
    Err(ctx.error(problem))
}

/// The checks of a bundling or unbundling run before its targets are read.
fn check_counts(
    ctx: &mut Ctx<'_>,
    low: &LowArgs,
    inputs: &[String],
    outputs: &[String],
) -> Result<(), Exit> {
    let archive = low.file_type == "a";
    let targets = low.targets.len();
    let problem = if low.check_input_archive && !low.unbundle {
        "-check-input-archive cannot be used while bundling"
    } else if low.check_input_archive && !archive {
        "-check-input-archive can only be used for unbundling archives (-type=a)"
    } else if outputs.is_empty() {
        "no output file specified!"
    } else if targets == 0 {
        "for the --targets option: must be specified at least once!"
    } else if low.unbundle && inputs.len() != 1 {
        "only one input file supported in unbundling mode"
    } else if low.unbundle && outputs.len() != targets {
        "number of output files and targets should match in unbundling mode"
    } else if !low.unbundle && archive {
        "Archive files are only supported for unbundling"
    } else if !low.unbundle && outputs.len() != 1 {
        "only one output file supported in bundling mode"
    } else if !low.unbundle && inputs.len() != targets {
        "number of input files and targets should match in bundling mode"
    } else {
        return Ok(());
    };
    Err(ctx.error(problem))
}

fn env_flag(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// LLVM's `StringRef::getAsInteger(10, int)`: decimal digits with an optional `-`, the
/// whole string, in range.
fn parse_decimal_i32(s: &str) -> Option<i32> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Compression settings from the environment, read (and warned about) as LLVM 22's
/// `OffloadBundlerConfig` does before the command line overrides them.
struct EnvConfig {
    compress: Option<bool>,
    verbose: Option<bool>,
    level: Option<i32>,
    version: Version,
    threads: u32,
    max_size: Option<u64>,
    verify_hash: bool,
}
fn read_env(ctx: &mut Ctx<'_>) -> EnvConfig {
    let mut cfg = EnvConfig {
        compress: None,
        verbose: None,
        level: None,
        version: Version::V3,
        threads: 0,
        max_size: None,
        verify_hash: false,
    };
    if env_flag("OFFLOAD_BUNDLER_IGNORE_ENV_VAR").as_deref() == Some("1") {
        return cfg;
    }
    cfg.verbose = env_flag("OFFLOAD_BUNDLER_VERBOSE").map(|v| v == "1");
    cfg.compress = env_flag("OFFLOAD_BUNDLER_COMPRESS").map(|v| v == "1");
    if let Some(v) = env_flag("OFFLOAD_BUNDLER_COMPRESSION_LEVEL") {
        match parse_decimal_i32(&v) {
            Some(level) => cfg.level = Some(level),
            None => {
                let _ = writeln!(
                    ctx.err,
                    "Warning: Invalid value for OFFLOAD_BUNDLER_COMPRESSION_LEVEL: {v}. Ignoring it."
                );
            }
        }
    }
    if let Some(v) = env_flag("COMPRESSED_BUNDLE_FORMAT_VERSION") {
        let numeric = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        match v.parse::<u16>().ok().filter(|_| numeric) {
            Some(2) => cfg.version = Version::V2,
            Some(3) => cfg.version = Version::V3,
            Some(_) => {
                let _ = writeln!(
                    ctx.err,
                    "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {v}. Valid values are 2 or 3. Using default version 3."
                );
            }
            None => {
                let _ = writeln!(
                    ctx.err,
                    "Warning: Invalid value for COMPRESSED_BUNDLE_FORMAT_VERSION: {v}. Using default version 3."
                );
            }
        }
    }
    // offload-build's own settings.
    if let Some(v) = env_flag("OFFLOAD_BUNDLER_COMPRESSION_THREADS") {
        match v.parse() {
            Ok(n) => cfg.threads = n,
            Err(_) => ctx.warning(format_args!(
                "invalid value for OFFLOAD_BUNDLER_COMPRESSION_THREADS: '{v}' (expected a number of threads); ignoring it"
            )),
        }
    }
    cfg.verify_hash = env_flag("OFFLOAD_BUNDLER_VERIFY_HASH").as_deref() == Some("1");
    if let Some(v) = env_flag("OFFLOAD_BUNDLER_MAX_UNCOMPRESSED_SIZE") {
        match v.parse() {
            Ok(n) => cfg.max_size = Some(n),
            Err(_) => ctx.warning(format_args!(
                "invalid value for OFFLOAD_BUNDLER_MAX_UNCOMPRESSED_SIZE: '{v}' (expected a size in bytes); ignoring it"
            )),
        }
    }
    cfg
}
