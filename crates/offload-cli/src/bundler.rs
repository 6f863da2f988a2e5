//! `offload-bundler`: clang-offload-bundler's command line over this crate's formats.
//!
//! Options, validation order, messages and exit codes follow clang-offload-bundler
//! 22 (see the differential tests in `integration/`). Where LLVM crashes, loops or
//! writes a corrupt file, this tool stops with a one-line error instead:
//!
//! - malformed bundles (truncated header, an entry count larger than the header
//!   holds, a zero offset, a payload past the end, a text entry without its end
//!   marker) name the file, the entry and the offset;
//! - `-bundle-align=0` and two targets that standardize to the same bundle ID are
//!   rejected before anything is written;
//! - outputs are written to temporary files beside their targets and renamed into
//!   place only when everything succeeded: on any error no output is created or
//!   truncated (LLVM leaves the outputs of entries it had already extracted).
//!
//! Entry IDs are standardized as LLVM 22 does, with LLVM 19's rules where 22 rejects
//! or loses a target 19 accepted (see [`offload_formats::id::entry`]).
//!
//! Exit status: 0 on success, 1 on any error.

use std::fs::File;
use std::io::{self, Write};

use super::cl::{self, Kind, Opt};
use super::{Ctx, Exit};

mod objects;
use crate::fileio::{CopySource, Input, InputData, Memory, OutputFile, error_text};
use offload_formats::bundle::binary::BinaryBundleWriter;
use offload_formats::bundle::compressed::{
    self, CompressOptions, CompressedBundle, Decompressed, Limits, Method, Version,
};
use offload_formats::bundle::targets::{Mode, Targets};
use offload_formats::bundle::{BinaryBundle, FileType, TextBundle, text};
use offload_formats::id::raw;
use offload_formats::kind::is_llvm_object_file;

const OPTS: &[Opt] = &[
    Opt::required("type", Kind::Str),
    Opt::new("targets", Kind::CommaList),
    Opt::new("input", Kind::List),
    Opt::new("inputs", Kind::CommaList),
    Opt::new("output", Kind::List),
    Opt::new("outputs", Kind::CommaList),
    Opt::new("unbundle", Kind::Flag),
    Opt::new("list", Kind::Flag),
    Opt::new("allow-missing-bundles", Kind::Flag),
    Opt::new("bundle-align", Kind::Uint),
    Opt::new("check-input-archive", Kind::Flag),
    Opt::new("hip-openmp-compatible", Kind::Flag),
    Opt::new("compress", Kind::Flag),
    Opt::new("compression-level", Kind::Int),
    Opt::new("verbose", Kind::Flag),
    Opt::new("compression-threads", Kind::Uint),
    Opt::new("strict-hash", Kind::Flag),
    Opt::new("verify-hash", Kind::Flag),
    Opt::new("###", Kind::Flag),
    Opt::new("h", Kind::Flag),
];

/// Names offered in "Did you mean" hints, in an order that breaks ties as
/// clang-offload-bundler 22 does (observed: `-ver` and `-allow` → `--help`,
/// `-inptu` → `--inputs`, `-outptu` → `--output`, `-x` → `--###`). `-h` is never
/// offered.
const SUGGEST: &[&str] = &[
    "help",
    "###",
    "type",
    "targets",
    "inputs",
    "input",
    "output",
    "outputs",
    "unbundle",
    "list",
    "allow-missing-bundles",
    "bundle-align",
    "check-input-archive",
    "hip-openmp-compatible",
    "compress",
    "compression-level",
    "verbose",
    "help-list",
    "version",
    "compression-threads",
    "strict-hash",
    "verify-hash",
];

const HELP: &str = "OVERVIEW: A tool to bundle several input files of the specified type <type> 
referring to the same source file but different targets into a single 
one. The resulting file can also be unbundled into different files by 
this tool if -unbundle is provided.

USAGE: {prog} [options]

OPTIONS:

Generic Options:

  --help                  - Display available options (--help-hidden for more)
  --help-list             - Display list of available options (--help-list-hidden for more)
  --version               - Display the version of this program

clang-offload-bundler options:

  --###                   - Print any external commands that are to be executed instead of actually executing them - for testing purposes.
  --allow-missing-bundles - Create empty files if bundles are missing when unbundling.
  --bundle-align=<uint>   - Alignment of bundle for binary files
  --check-input-archive   - Check if input heterogeneous archive is valid in terms of TargetID rules.
  --compress              - Compress output file when bundling.
  --compression-level=<n> - Specify the compression level (integer)
  --compression-threads=<uint> - zstd worker threads for -compress (offload-build; 0, the default,
                            writes clang-offload-bundler's exact bytes; more is faster, other bytes)
  --hip-openmp-compatible - Treat hip and hipv4 offload kinds as compatible with openmp kind, and vice versa.
  --input=<string>        - Input file. Can be specified multiple times for multiple input files.
  --inputs=<string>       - [<input file>,...] (deprecated)
  --list                  - List bundle IDs in the bundled file.
  --output=<string>       - Output file. Can be specified multiple times for multiple output files.
  --outputs=<string>      - [<output file>,...] (deprecated)
  --strict-hash           - Fail when a compressed bundle's stored MD5 does not match its
                            contents (offload-build; -verify-hash only warns, LLVM never checks)
  --targets=<string>      - [<offload kind>-<target triple>,...]
  --type=<string>         - Type of the files to be bundled/unbundled.
                            Current supported types are:
                              i    - cpp-output
                              ii   - c++-cpp-output
                              cui  - cuda-cpp-output
                              hipi - hip-cpp-output
                              d    - dependency
                              ll   - llvm
                              bc   - llvm-bc
                              s    - assembler
                              o    - object
                              a    - archive of objects
                              gch  - precompiled-header
                              ast  - clang AST file
  --unbundle              - Unbundle bundled file into several output files.
  --verify-hash           - Check a compressed bundle's stored MD5 against its contents and warn on a
                            mismatch (offload-build; off by default as in LLVM, where hashing costs more
                            than unbundling; also OFFLOAD_BUNDLER_VERIFY_HASH=1)
  --verbose               - Print debug information.
";

/// Runs the tool with the process's standard streams; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    super::with_stdio(args, run)
}

/// Runs the tool: `args[0]` is the program name as invoked.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    super::run_body(args, "offload-bundler", out, err, run_inner)
}

/// How one bundle file is read or written, chosen from `-type` and the reference input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handler {
    Binary,
    Text(&'static str),
    /// A fat object (`-type=o` whose reference input is an object file).
    Object,
}

fn handler_for(
    ctx: &mut Ctx<'_>,
    file_type: &str,
    reference: &[u8],
    reference_path: &str,
) -> Result<Handler, Exit> {
    let Some(t) = FileType::parse(file_type) else {
        return Err(ctx.error(format_args!("'{file_type}': invalid file type specified")));
    };
    if let Some(comment) = t.text_comment() {
        return Ok(Handler::Text(comment));
    }
    if t == FileType::O && is_llvm_object_file(reference) {
        return objects::object_handler(ctx, reference, reference_path);
    }
    Ok(Handler::Binary)
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

/// How compressed bundles are written and read in this run.
#[derive(Clone, Copy)]
struct Compression {
    enabled: bool,
    options: CompressOptions,
    limits: Limits,
}

/// `1234567` → `1,234,567`, as LLVM's verbose output prints sizes.
fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i != 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn mb_per_s(bytes: u64, elapsed: std::time::Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        bytes as f64 / (1024.0 * 1024.0) / secs
    } else {
        0.0
    }
}

fn run_inner(ctx: &mut Ctx<'_>, args: &[String], out: &mut dyn Write) -> Result<(), Exit> {
    let rest = cl::expand_response_files(args.get(1..).unwrap_or_default().to_vec());
    let p = cl::parse(ctx.argv0, &rest, OPTS, SUGGEST);
    for e in &p.errors {
        let _ = writeln!(ctx.err, "{e}");
    }
    if p.help {
        let _ = out.write_all(
            HELP.replace("{prog}", cl::program_name(ctx.argv0))
                .as_bytes(),
        );
        return Ok(());
    }
    if p.version {
        let _ = writeln!(
            out,
            "offload-bundler (offload-build) version {}\n  a drop-in clang-offload-bundler, LLVM 22 behaviour",
            env!("CARGO_PKG_VERSION")
        );
        return Ok(());
    }
    if !p.errors.is_empty() {
        return Err(Exit(1));
    }
    if p.flag("h") {
        let _ = out.write_all(
            HELP.replace("{prog}", cl::program_name(ctx.argv0))
                .as_bytes(),
        );
        return Ok(());
    }

    let file_type = p.last("type").unwrap_or("").to_owned();
    let unbundle = p.flag("unbundle");
    let list = p.flag("list");
    let allow_missing = p.flag("allow-missing-bundles");
    let check_archive = p.flag("check-input-archive");
    let hip_openmp = p.flag("hip-openmp-compatible");
    let align = p
        .last("bundle-align")
        .and_then(cl::parse_llvm_integer)
        .unwrap_or(1) as u64;

    // Environment, read as LLVM's OffloadBundlerConfig does (its warnings come before any
    // error about the command line), then overridden by the options given.
    let env = read_env(ctx);
    let compress = p.flag_or("compress", env.compress.unwrap_or(false));
    let verbose = p.flag_or("verbose", env.verbose.unwrap_or(false));
    let level = if p.occurrences("compression-level") > 0 {
        p.last("compression-level")
            .and_then(cl::parse_llvm_integer)
            .map(|v| v as i32)
    } else {
        env.level
    };
    let threads = if p.occurrences("compression-threads") > 0 {
        p.last("compression-threads")
            .and_then(cl::parse_llvm_integer)
            .map_or(0, |v| v as u32)
    } else {
        env.threads
    };
    let compression = Compression {
        enabled: compress,
        options: CompressOptions {
            method: Method::Zstd,
            level,
            version: env.version,
            threads,
        },
        limits: Limits {
            max_size: env.max_size.unwrap_or(Limits::default().max_size),
            strict_hash: p.flag("strict-hash"),
            // Off by default, as in LLVM: the MD5 of a large bundle takes longer than the
            // whole unbundling. -verbose prints the recalculated hash, as LLVM does.
            verify_hash: p.flag_or("verify-hash", env.verify_hash) || verbose,
            hooks: crate::process::HOOKS,
        },
    };

    let mut inputs = p.raw_list("input");
    if p.occurrences("input") != 0 && p.occurrences("inputs") != 0 {
        return Err(
            ctx.error("-inputs and -input cannot be used together, use only -input instead")
        );
    }
    if !p.list("inputs").is_empty() {
        ctx.warning("-inputs is deprecated, use -input instead");
        inputs.extend(p.list("inputs"));
    }
    let mut outputs = p.raw_list("output");
    if p.occurrences("output") != 0 && p.occurrences("outputs") != 0 {
        return Err(
            ctx.error("-outputs and -output cannot be used together, use only -output instead")
        );
    }
    if !p.list("outputs").is_empty() {
        ctx.warning("-outputs is deprecated, use -output instead");
        outputs.extend(p.list("outputs"));
    }
    let targets = p.list("targets");

    if list {
        if unbundle {
            return Err(ctx.error("-unbundle and -list cannot be used together"));
        }
        if inputs.len() != 1 {
            return Err(ctx.error("only one input file supported for -list"));
        }
        if !outputs.is_empty() {
            return Err(ctx.error("-outputs option is invalid for -list"));
        }
        if !targets.is_empty() {
            return Err(ctx.error("-targets option is invalid for -list"));
        }
        return list_ids(
            ctx,
            &file_type,
            &inputs[0],
            verbose,
            &compression.limits,
            out,
        );
    }

    if check_archive {
        if !unbundle {
            return Err(ctx.error("-check-input-archive cannot be used while bundling"));
        }
        if file_type != "a" {
            return Err(ctx
                .error("-check-input-archive can only be used for unbundling archives (-type=a)"));
        }
    }
    if outputs.is_empty() {
        return Err(ctx.error("no output file specified!"));
    }
    if p.occurrences("targets") == 0 {
        return Err(ctx.error("for the --targets option: must be specified at least once!"));
    }
    if unbundle {
        if inputs.len() != 1 {
            return Err(ctx.error("only one input file supported in unbundling mode"));
        }
        if outputs.len() != targets.len() {
            return Err(
                ctx.error("number of output files and targets should match in unbundling mode")
            );
        }
    } else {
        if file_type == "a" {
            return Err(ctx.error("Archive files are only supported for unbundling"));
        }
        if outputs.len() != 1 {
            return Err(ctx.error("only one output file supported in bundling mode"));
        }
        if inputs.len() != targets.len() {
            return Err(
                ctx.error("number of input files and targets should match in bundling mode")
            );
        }
    }

    // Parse, standardize and check every target, as LLVM 22 does.
    let mode = if unbundle {
        Mode::Unbundle
    } else {
        Mode::Bundle
    };
    let checked = Targets::check(targets.iter().cloned(), mode, |target, id| {
        let tid = id.dropped_processor().unwrap_or_default();
        ctx.warning(format_args!(
            "target '{target}': no clang knows the processor of '{tid}'; it is left out of the bundle ID '{id}' as clang-offload-bundler 22 does"
        ));
    })
    .map_err(|e| ctx.error(e))?;

    let job = Job {
        file_type,
        targets: checked,
        inputs,
        outputs,
        align,
        allow_missing,
        hip_openmp,
        compression,
        verbose,
        print_only: p.flag("###"),
        check_archive,
    };
    if unbundle {
        if job.file_type == "a" {
            return objects::unbundle_archive(ctx, &job);
        }
        unbundle_files(ctx, &job)
    } else {
        bundle_files(ctx, &job)
    }
}

struct Job {
    file_type: String,
    /// The `-targets`, checked.
    targets: Targets,
    inputs: Vec<String>,
    outputs: Vec<String>,
    align: u64,
    allow_missing: bool,
    hip_openmp: bool,
    compression: Compression,
    verbose: bool,
    /// `-###`: print the llvm-objcopy commands LLVM would run instead of fat-object work.
    print_only: bool,
    /// `-check-input-archive`.
    check_archive: bool,
}

/// Opens a bundle to read (`-list`, `-unbundle`) and runs `f` on its bytes. A compressed
/// bundle is decompressed (only the first one when several follow each other, bounded by its
/// total size, as LLVM 23 does): `f` runs as soon as the bytes are there while the hash is
/// still being checked, and its messages are held back until LLVM 22's `-verbose` lines
/// (which come first) are printed. A value `f` returns (outputs not yet committed) is
/// dropped when the bundle turns out to be bad.
fn with_bundle<R>(
    ctx: &mut Ctx<'_>,
    path: &str,
    verbose: bool,
    limits: &Limits,
    f: impl FnOnce(&mut Ctx<'_>, &[u8], &dyn CopySource) -> Result<R, Exit>,
) -> Result<R, Exit> {
    let input = Input::open(path).map_err(|e| ctx.file_error(path, &e))?;
    if !compressed::llvm_decompresses(&input.data) {
        if verbose {
            let _ = writeln!(ctx.err, "Uncompressed bundle.");
        }
        return f(ctx, &input.data, &input);
    }
    let bundle = CompressedBundle::parse(&input.data)
        .map_err(|e| ctx.error(format_args!("'{path}': {e}")))?;
    let argv0 = ctx.argv0;
    let mut held = Vec::new();
    let result = bundle.decompress_with(limits, |progress| {
        let data = progress.wait(progress.expected_len())?;
        let mut inner = Ctx {
            argv0,
            err: &mut held,
        };
        Some(f(&mut inner, data, &Memory(data)))
    });
    match result {
        Err(e) => Err(ctx.error(format_args!("'{path}': {e}"))),
        Ok((d, value)) => {
            report_decompressed(ctx, path, &bundle, &d, verbose);
            let _ = ctx.err.write_all(&held);
            // `None`: decompression failed, which `result` would have reported.
            value.unwrap_or(Err(Exit(1)))
        }
    }
}

/// Warnings about a decompressed bundle, and LLVM 22's `-verbose` lines.
fn report_decompressed(
    ctx: &mut Ctx<'_>,
    path: &str,
    bundle: &CompressedBundle<'_>,
    d: &Decompressed,
    verbose: bool,
) {
    for w in &d.warnings {
        ctx.warning(format_args!("'{path}': {w}"));
    }
    if !verbose {
        return;
    }
    let h = bundle.header();
    let compressed = bundle.payload().len() as u64;
    let size = d.data.len() as u64;
    let mut text = format!("Compressed bundle format version: {}\n", h.version.raw());
    if let Some(total) = h.total_size {
        text += &format!(
            "Total file size (from header): {} bytes\n",
            with_commas(total)
        );
    }
    text += &format!(
        "Decompression method: {}\nSize before decompression: {} bytes\nSize after decompression: {} bytes\n",
        h.method.name(),
        with_commas(compressed),
        with_commas(size)
    );
    let rate = size as f64 / compressed.max(1) as f64;
    text += &format!(
        "Compression rate: {rate:.2}\nCompression ratio: {:.2}%\nDecompression speed: {:.2} MB/s\n",
        100.0 * compressed as f64 / size.max(1) as f64,
        mb_per_s(size, d.elapsed)
    );
    let computed = d.hash.unwrap_or_default();
    text += &format!(
        "Stored hash: {:#x}\nRecalculated hash: {:#x}\nHashes match: {}\n",
        h.hash,
        computed,
        if h.hash == computed { "Yes" } else { "No" }
    );
    let _ = ctx.err.write_all(text.as_bytes());
}

fn list_ids(
    ctx: &mut Ctx<'_>,
    file_type: &str,
    path: &str,
    verbose: bool,
    limits: &Limits,
    out: &mut dyn Write,
) -> Result<(), Exit> {
    let text = with_bundle(ctx, path, verbose, limits, |ctx, data, _| {
        let file_type = if file_type == "a" { "bc" } else { file_type };
        let handler = handler_for(ctx, file_type, data, path)?;
        let ids = read_entries(ctx, handler, data, path)?;
        let mut text = Vec::new();
        for e in ids {
            text.extend_from_slice(e.id);
            text.push(b'\n');
        }
        Ok(text)
    })?;
    out.write_all(&text)
        .map_err(|e| ctx.error(error_text(&e)))?;
    Ok(())
}

/// One entry to extract: its ID and where its payload lies in the input.
struct Found<'a> {
    id: &'a [u8],
    offset: u64,
    len: u64,
    /// A fat object's host entry: the output is the object without its bundle sections.
    host_object: bool,
    /// A fat object's section whose contents cannot be read: the error to report when it
    /// is extracted (listing it is fine, as in LLVM).
    unreadable: Option<String>,
}

fn read_entries<'a>(
    ctx: &mut Ctx<'_>,
    handler: Handler,
    data: &'a [u8],
    path: &str,
) -> Result<Vec<Found<'a>>, Exit> {
    match handler {
        Handler::Binary => match BinaryBundle::parse(data) {
            Ok(None) => Ok(Vec::new()),
            Ok(Some(b)) => Ok(b
                .llvm_order()
                .into_iter()
                .map(|e| Found {
                    id: e.id,
                    offset: e.offset,
                    len: e.size(),
                    host_object: false,
                    unreadable: None,
                })
                .collect()),
            Err(e) => Err(ctx.error(format_args!("'{path}': {e}"))),
        },
        Handler::Text(comment) => match TextBundle::parse(data, comment) {
            Ok(t) => Ok(t
                .entries()
                .iter()
                .map(|e| Found {
                    id: e.id,
                    offset: e.offset,
                    len: e.data.len() as u64,
                    host_object: false,
                    unreadable: None,
                })
                .collect()),
            Err(e) => Err(ctx.error(format_args!("'{path}': {e}"))),
        },
        Handler::Object => objects::fat_object_entries(ctx, data, path),
    }
}

fn bundle_files(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
    // Every input is opened in order, so the first that cannot be is the one reported (as
    // LLVM reports it); only the reference input (mapped: its bytes decide the format) and
    // inputs that are not regular files (read once) stay open, so that any number of inputs
    // fits a small descriptor limit.
    let r = job.targets.reference_input();
    // Small inputs are read at once and closed (up to 64 MiB in all), so that 100,000 tiny
    // inputs are opened once each, not twice.
    const SMALL: u64 = 64 << 10;
    let mut small_budget: u64 = 64 << 20;
    let mut inputs: Vec<Option<Input>> = Vec::with_capacity(job.inputs.len());
    let mut lens = Vec::with_capacity(job.inputs.len());
    for (i, path) in job.inputs.iter().enumerate() {
        let input = if i == r {
            Input::open(path)
        } else {
            Input::open_unmapped(path).and_then(|input| {
                let max = SMALL.min(small_budget);
                let input = input.into_memory_if_small(max)?;
                if input.file.is_none() {
                    small_budget = small_budget.saturating_sub(input.len());
                }
                Ok(input)
            })
        };
        let input = input.map_err(|e| ctx.file_error(path, &e))?;
        lens.push(input.len());
        let reopenable = matches!(input.data, InputData::Unmapped);
        inputs.push((i == r || !reopenable).then_some(input));
    }
    let reference = inputs[r].as_ref().map_or(&[][..], |i| &i.data[..]);
    let handler = handler_for(ctx, &job.file_type, reference, &job.inputs[r])?;
    if handler == Handler::Object || job.compression.enabled {
        // These read every input's bytes at once: map them all.
        let mut all = Vec::with_capacity(inputs.len());
        for (input, path) in inputs.into_iter().zip(&job.inputs) {
            all.push(match input {
                Some(i) => i,
                None => Input::open(path).map_err(|e| ctx.file_error(path, &e))?,
            });
        }
        if handler == Handler::Object {
            // LLVM's -compress has no effect on fat objects (llvm-objcopy overwrites the
            // output).
            return objects::bundle_fat_object(ctx, job, &all);
        }
        let text_comment = match handler {
            Handler::Text(comment) => Some(comment),
            _ => None,
        };
        return bundle_compressed(ctx, job, text_comment, &all);
    }
    // Copies input `i` whole, reopening it when it was closed.
    let copy = |i: usize, w: &mut File| -> io::Result<()> {
        match &inputs[i] {
            Some(input) => input.copy_range(0, lens[i], w),
            None => {
                let input = Input::open_unmapped(&job.inputs[i])?;
                if input.len() != lens[i] {
                    return Err(io::Error::other("the file changed size while bundling"));
                }
                input.copy_range(0, lens[i], w)
            }
        }
    };
    let out_path = &job.outputs[0];
    let mut output = OutputFile::create(out_path).map_err(|e| ctx.file_error(out_path, &e))?;
    let written = match handler {
        Handler::Binary => {
            let mut w = BinaryBundleWriter::new();
            w.align(job.align).map_err(|e| ctx.error(e))?;
            for (id, &len) in job.targets.ids().iter().zip(&lens) {
                w.add(raw::bytes(id.as_str()), len)
                    .map_err(|e| ctx.error(e))?;
            }
            let layout = w.layout().map_err(|e| ctx.error(e))?;
            output.preallocate(layout.len());
            layout.write_to(output.file(), |i, w| {
                copy(i, w.inner())?;
                w.add_count(lens[i]);
                Ok(())
            })
        }
        Handler::Object => Err(io::Error::other(
            "fat objects are written by bundle_fat_object",
        )),
        Handler::Text(comment) => (|| {
            let f = output.file();
            for (i, id) in job.targets.ids().iter().enumerate() {
                text::write_start(f, comment, &raw::bytes(id.as_str()))?;
                copy(i, f)?;
                text::write_end(f, comment, &raw::bytes(id.as_str()))?;
            }
            Ok(())
        })(),
    };
    written.map_err(|e| ctx.file_error(out_path, &e))?;
    output.commit().map_err(|e| ctx.file_error(out_path, &e))
}

/// `-compress`: the bundle (binary, or text with this comment string) is built from the
/// mapped inputs, hashed and compressed (in parallel), then written at once.
fn bundle_compressed(
    ctx: &mut Ctx<'_>,
    job: &Job,
    text_comment: Option<&str>,
    inputs: &[Input],
) -> Result<(), Exit> {
    let payloads: Vec<&[u8]> = inputs.iter().map(|i| &i.data[..]).collect();
    let markers: Vec<(Vec<u8>, Vec<u8>)>;
    let layout;
    let pieces: Vec<&[u8]> = match text_comment {
        None => {
            let mut w = BinaryBundleWriter::new();
            w.align(job.align).map_err(|e| ctx.error(e))?;
            for (id, input) in job.targets.ids().iter().zip(inputs) {
                w.add(raw::bytes(id.as_str()), input.len())
                    .map_err(|e| ctx.error(e))?;
            }
            layout = w.layout().map_err(|e| ctx.error(e))?;
            layout.pieces(&payloads).map_err(|e| ctx.error(e))?
        }
        Some(comment) => {
            markers = job
                .targets
                .ids()
                .iter()
                .map(|id| {
                    let (mut start, mut end) = (Vec::new(), Vec::new());
                    let id = &raw::bytes(id.as_str());
                    let _ = text::write_start(&mut start, comment, id);
                    let _ = text::write_end(&mut end, comment, id);
                    (start, end)
                })
                .collect();
            markers
                .iter()
                .zip(&payloads)
                .flat_map(|((start, end), data)| [&start[..], data, &end[..]])
                .collect()
        }
    };
    let options = &job.compression.options;
    let started = std::time::Instant::now();
    let ccob = compressed::compress_pieces_with(&pieces, options, &crate::process::HOOKS)
        .map_err(|e| ctx.error(e))?;
    let elapsed = started.elapsed();
    if job.verbose {
        let header = compressed::Header::parse(&ccob).map_err(|e| ctx.error(e))?;
        let before = header.uncompressed_size;
        let after = (ccob.len() - header.len()) as u64;
        let text = format!(
            "Compressed bundle format version: {}\n\
             Total file size (including headers): {} bytes\n\
             Compression method used: {}\n\
             Compression level: {}\n\
             Binary size before compression: {} bytes\n\
             Binary size after compression: {} bytes\n\
             Compression rate: {:.2}\n\
             Compression ratio: {:.2}%\n\
             Compression speed: {:.2} MB/s\n\
             Truncated MD5 hash: {:#x}\n",
            header.version.raw(),
            with_commas(ccob.len() as u64),
            header.method.name(),
            options.effective_level(),
            with_commas(before),
            with_commas(after),
            before as f64 / after.max(1) as f64,
            100.0 * after as f64 / before.max(1) as f64,
            mb_per_s(before, elapsed),
            header.hash
        );
        let _ = ctx.err.write_all(text.as_bytes());
    }
    let out_path = &job.outputs[0];
    let mut output = OutputFile::create(out_path).map_err(|e| ctx.file_error(out_path, &e))?;
    output.preallocate(ccob.len() as u64);
    output
        .file()
        .write_all(&ccob)
        .map_err(|e| ctx.file_error(out_path, &e))?;
    output.commit().map_err(|e| ctx.file_error(out_path, &e))
}

fn unbundle_files(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
    let path = &job.inputs[0];
    let limits = &job.compression.limits;
    let outputs = with_bundle(ctx, path, job.verbose, limits, |ctx, data, input| {
        unbundle_entries(ctx, job, data, input)
    })?;
    OutputFile::commit_all(outputs)
        .map_err(|(p, e)| ctx.file_error(&crate::fileio::path_text(&p), &e))
}

/// Extracts the entries of the bundle `data` (copied from `input`, the same bytes) into
/// outputs that are returned uncommitted.
fn unbundle_entries(
    ctx: &mut Ctx<'_>,
    job: &Job,
    data: &[u8],
    input: &dyn CopySource,
) -> Result<Vec<OutputFile>, Exit> {
    let path = &job.inputs[0];
    let handler = handler_for(ctx, &job.file_type, data, path)?;
    let entries = read_entries(ctx, handler, data, path)?;

    let ids: Vec<&[u8]> = entries.iter().map(|e| e.id).collect();
    let m = job.targets.match_entries(&ids, job.hip_openmp);
    if !job.allow_missing && !m.missing.is_empty() {
        return Err(ctx.error(job.targets.missing_message(&m.missing)));
    }
    let matched: Vec<(usize, &Found<'_>)> =
        m.pairs.iter().map(|&(t, e)| (t, &entries[e])).collect();
    // LLVM reads the matched sections in section order and fails at the first unreadable.
    if let Some(message) = m
        .pairs
        .iter()
        .map(|&(_, e)| e)
        .min_by_key(|&e| (entries[e].unreadable.is_none(), e))
        .and_then(|e| entries[e].unreadable.as_ref())
    {
        return Err(ctx.error(message));
    }
    let (worklist, found_host) = (m.missing, m.found_host);
    let mut outputs = Vec::new();
    // Every output is staged closed: any number of them fits a small descriptor limit.
    let create = |ctx: &mut Ctx<'_>, t: usize| -> Result<OutputFile, Exit> {
        let p = &job.outputs[t];
        let mut o = OutputFile::create(p).map_err(|e| ctx.file_error(p, &e))?;
        o.close();
        Ok(o)
    };
    if matched.is_empty() {
        // No bundle at all: the input is taken to be the host's file.
        for &t in &worklist {
            let mut o = create(ctx, t)?;
            if job.targets.ids()[t].is_host() {
                let r = o
                    .reopen()
                    .and_then(|()| input.copy_range(0, input.len(), o.file()));
                r.map_err(|e| ctx.file_error(&job.outputs[t], &e))?;
                o.close();
            }
            outputs.push(o);
        }
    } else {
        let mut copies = Vec::with_capacity(matched.len());
        for &(t, entry) in &matched {
            if entry.host_object {
                let mut o = objects::host_output(ctx, job, data, &job.outputs[t])?;
                o.close();
                outputs.push(o);
                continue;
            }
            copies.push((create(ctx, t)?, entry.offset, entry.len));
        }
        if !(found_host || !job.targets.has_host() || job.allow_missing) {
            return Err(ctx.error("Can't find bundle for the host target"));
        }
        if let Err((t, e)) = copy_in_parallel(input, &mut copies) {
            let p = crate::fileio::path_text(copies[t].0.path());
            return Err(ctx.file_error(&p, &e));
        }
        outputs.extend(copies.into_iter().map(|(o, _, _)| o));
        for &t in &worklist {
            outputs.push(create(ctx, t)?);
        }
    }
    Ok(outputs)
}

/// Fills the closed output `o` with `len` bytes of `input` at `offset`, holding its
/// descriptor only meanwhile.
fn fill(input: &dyn CopySource, o: &mut OutputFile, offset: u64, len: u64) -> io::Result<()> {
    o.reopen()?;
    o.preallocate(len);
    input.copy_range(offset, len, o.file())?;
    o.close();
    Ok(())
}

/// One output to fill: the file, and the offset and length of its payload in the input.
type Copy = (OutputFile, u64, u64);

/// Copies `(output, offset, len)` ranges of `input`, spreading the outputs over the
/// available cores (each output is its own file, so the copies do not contend).
/// Returns the index of the first failed output with its error.
fn copy_in_parallel(
    input: &dyn CopySource,
    copies: &mut [(OutputFile, u64, u64)],
) -> Result<(), (usize, io::Error)> {
    let total: u64 = copies.iter().map(|c| c.2).sum();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(copies.len());
    if threads <= 1 || total < 8 << 20 || !input.parallel_copies() {
        for (i, (o, offset, len)) in copies.iter_mut().enumerate() {
            fill(input, o, *offset, *len).map_err(|e| (i, e))?;
        }
        return Ok(());
    }
    // Deal outputs to threads, largest first, each to the least loaded thread.
    let mut order: Vec<usize> = (0..copies.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(copies[i].2));
    let mut load = vec![0u64; threads];
    let mut owner = vec![0usize; copies.len()];
    for i in order {
        let t = (0..threads).min_by_key(|&t| load[t]).unwrap_or(0);
        load[t] += copies[i].2;
        owner[i] = t;
    }
    let mut buckets: Vec<Vec<(usize, &mut Copy)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in copies.iter_mut().enumerate() {
        buckets[owner[i]].push((i, c));
    }
    let results: Vec<Result<(), (usize, io::Error)>> = std::thread::scope(|s| {
        let handles: Vec<_> = buckets
            .into_iter()
            .map(|bucket| {
                s.spawn(move || {
                    for (i, (o, offset, len)) in bucket {
                        fill(input, o, *offset, *len).map_err(|e| (i, e))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err((0, io::Error::other("copy thread panicked"))))
            })
            .collect()
    });
    let mut first: Option<(usize, io::Error)> = None;
    for r in results {
        if let Err((i, e)) = r {
            if first.as_ref().is_none_or(|(j, _)| i < *j) {
                first = Some((i, e));
            }
        }
    }
    first.map_or(Ok(()), Err)
}
