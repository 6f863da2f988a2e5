//! `offload-build`: inspect, extract and embed device code (no LLVM counterpart, so the
//! options are parsed with `clap` rather than LLVM's option conventions).
//!
//! ```text
//! offload-build inspect PATH... [--json] [--archs] [--verify]
//! offload-build check --gpu GPU... PATH... [--json]
//! offload-build extract [FILE] (--index N | --id ID [--nth K] | --uri URI) -o OUT
//! offload-build embed hip --target TRIPLE (--bundle FILE | --code-object TARGET_ID=FILE...) -o OUT
//! offload-build embed new-driver --target TRIPLE [--llvm N] --offload-binary FILE... -o OUT
//! offload-build compile SOURCE... [--archs "a;b"] [-I DIR] [-D NAME[=V]] [--flag F]
//!     [--container bundle|offload-binary|cuda-fatbin] [--compress] [--embed object|fatbin]
//!     -o lib<name>.a|<name>.o|<name>.hipfb [--depfile FILE] [-j N] [--out-dir DIR]
//!     [--no-warnings] [--warnings-into-errors] [--quiet] [--timeout SECS] [--ptxas PTXAS]
//!     [--no-pch]
//! offload-build compile --resolve [--archs "a;b"] [--compiler CLANG]
//! ```
//!
//! `compile` is the command-line face of [`offload_build::builder::Build`] (the same orchestrator,
//! cache and parallelism), for CMake and other build systems: it prints no Cargo directives;
//! on standard error it prints one progress line per finished device compile
//! (`[3/14] gfx90a k.hip 2.1 s`, unless `--quiet`), the compiler's warnings once per distinct
//! warning with the architectures that printed it (`[gfx90a, gfx1100] k.hip:3:5: warning: ...`,
//! also for compiles whose cached result is used), and fallback warnings as
//! `offload-build: warning: ...`.
//!
//! `inspect` and `check` take files, directories (walked recursively; symbolic links inside
//! them are not followed) and zip files such as Python wheels (members read in memory).
//!
//! Exit status: 0 success, 1 an error (every file of `inspect` is still attempted) or, for
//! `check`, a file with no code object for a GPU, 2 bad usage (and `check --gpu native` on a
//! machine without a GPU). A broken pipe on standard output ends the program quietly with status 0.

use crate::fileio::path_text;
use offload_formats::id::spell;
use std::io::{self, Write};

use clap::{Args, Parser, Subcommand};

mod commit;
mod installs;

use crate::fileio::{Input, OutputFile, error_text};
use installs::{Found, Progress, Visit};
use offload_build::embed::{DeviceVariable, HipObject, NewDriverObject};
use offload_formats::inspect::{self, Report, Selected, Selector};
use offload_formats::package::LlvmVersion;

#[derive(Parser, Debug)]
#[command(
    name = "offload-build",
    version,
    about = "Inspect, extract and embed GPU device code (bundles, compressed bundles, offload binaries, NVIDIA fat binaries)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every embedded container and entry of raw bundles, CCOBs, offload binaries,
    /// NVIDIA fat binaries (cubins and PTX, as `cuobjdump --list-elf --list-ptx`), objects,
    /// executables, shared libraries and static archives.
    Inspect {
        /// Files, directories (recursively) and zip files (wheels) to inspect.
        #[arg(required = true)]
        files: Vec<String>,
        /// Print JSON (an array with one report per file, each with its `archs`) instead of
        /// text.
        #[arg(long)]
        json: bool,
        /// Print one line per file with device code: the file and its target IDs.
        #[arg(long)]
        archs: bool,
        /// Decompress every compressed bundle whole and check the MD5 its header stores
        /// (otherwise each is decoded only as far as its entry table).
        #[arg(long)]
        verify: bool,
    },
    /// Whether every file with device code holds a code object the runtime would load on
    /// each GPU (HIP's processor, generic-processor and xnack/sramecc rules; CUDA's
    /// compute-capability rules). Exit status 1 when a file has none for a GPU.
    Check {
        /// A GPU: `gfx1151`, `gfx90a:xnack+`, `sm_86`, `8.6`, or `native` (this machine's
        /// GPUs); repeatable.
        #[arg(long = "gpu", value_name = "GPU", required = true)]
        gpus: Vec<String>,
        /// Files, directories (recursively) and zip files (wheels) to check.
        #[arg(required = true)]
        paths: Vec<String>,
        /// Print JSON (an array with one object per file with device code).
        #[arg(long)]
        json: bool,
    },
    /// Write one entry to a file.
    Extract(ExtractArgs),
    /// Write a host object that embeds device code.
    #[command(subcommand)]
    Embed(EmbedCommand),
    /// Compile device sources for several architectures in parallel, pack them and write a
    /// static library, object or fat binary (with a Make depfile).
    Compile(CompileArgs),
}

#[derive(Args, Debug)]
struct CompileArgs {
    /// Device sources (`.hip`, `.cu`).
    #[arg(required_unless_present = "resolve")]
    sources: Vec<String>,
    /// An architecture (`gfx90a`, `gfx942:xnack+`, `sm_90`, `native`, `default`); repeatable.
    #[arg(long = "arch", value_name = "ARCH")]
    arch: Vec<String>,
    /// A list of architectures separated by `;`, `,` or spaces (CMake style).
    #[arg(long, value_name = "LIST")]
    archs: Option<String>,
    /// PATTERN=LIST: architectures for the sources matching PATTERN (a path or glob).
    #[arg(long = "file-archs", value_name = "PATTERN=LIST")]
    file_archs: Vec<String>,
    /// An include directory; repeatable.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    includes: Vec<String>,
    /// A macro NAME or NAME=VALUE; repeatable.
    #[arg(short = 'D', long = "define", value_name = "NAME[=VALUE]")]
    defines: Vec<String>,
    /// An extra compiler flag (`--flag=-O2`); repeatable.
    #[arg(long = "flag", value_name = "FLAG", allow_hyphen_values = true)]
    flags: Vec<String>,
    /// The source language (default: from the extensions).
    #[arg(long, value_enum)]
    language: Option<LanguageArg>,
    /// The container (default: bundle for HIP, offload-binary for CUDA).
    #[arg(long, value_enum)]
    container: Option<ContainerArg>,
    /// Compress the bundle (CCOB).
    #[arg(long)]
    compress: bool,
    /// `object`: a host object embedding the container (self-registering for bundles,
    /// for the new offload driver for offload binaries); `fatbin`: the container alone.
    #[arg(long, value_enum, default_value = "object")]
    embed: EmbedArg,
    /// The compiler: a clang, or (CUDA) an nvcc (default: discovery, as for `Build`).
    #[arg(long, value_name = "COMPILER")]
    compiler: Option<String>,
    /// The CUDA compiler (default: nvcc when one is found: `CUDACXX`, `CUDA_PATH`, `PATH`,
    /// `/usr/local/cuda`, NVIDIA's wheels; else clang).
    #[arg(long, value_enum, value_name = "KIND")]
    cuda_compiler: Option<CudaCompilerArg>,
    /// Host target triple of the object (default: this machine's).
    #[arg(long)]
    target: Option<String>,
    /// Output: `lib<name>.a` (or any `.a`), an object (`.o`), or with `--embed fatbin` the
    /// container file.
    #[arg(short, long, required_unless_present = "resolve")]
    output: Option<String>,
    /// Write a Make depfile (target: the output) naming every source and header read.
    #[arg(long, value_name = "FILE")]
    depfile: Option<String>,
    /// At most N compiles at once (default: an inherited make jobserver, else the CPUs).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    jobs: Option<usize>,
    /// Directory for intermediates and the cache (default: `<output>.offload-build/`).
    #[arg(long, value_name = "DIR")]
    out_dir: Option<String>,
    /// Library name (default: from the output file name).
    #[arg(long)]
    name: Option<String>,
    /// Only find the compiler and resolve and check the architectures (as a build would);
    /// print `archs=<a;b;...>` and `compiler=<path>` lines and exit.
    #[arg(long)]
    resolve: bool,
    /// Compile with `-w` and show no compiler warning.
    #[arg(long)]
    no_warnings: bool,
    /// Make every compiler warning an error (`-Werror`).
    #[arg(long)]
    warnings_into_errors: bool,
    /// Print no progress line.
    #[arg(short, long)]
    quiet: bool,
    /// NVIDIA's `ptxas`, for cubins (default: `PTXAS`, the CUDA install's, `PATH`, NVIDIA's
    /// `nvidia-cuda-nvcc-cu12` wheel in `VIRTUAL_ENV` or `python3`'s `site-packages`).
    #[arg(long, value_name = "PTXAS")]
    ptxas: Option<String>,
    /// Kill a compile that runs longer than SECS seconds (with its children) and fail
    /// (default: `OFFLOAD_BUILD_COMPILE_TIMEOUT`, else none).
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Compile without precompiled preambles (`Build::pch(false)`; see `OFFLOAD_BUILD_PCH`).
    #[arg(long)]
    no_pch: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum LanguageArg {
    Hip,
    Cuda,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum CudaCompilerArg {
    Nvcc,
    Clang,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum ContainerArg {
    Bundle,
    OffloadBinary,
    CudaFatbin,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum EmbedArg {
    Object,
    Fatbin,
}

#[derive(Args, Debug)]
struct ExtractArgs {
    /// The file to read (optional with --uri, which names it).
    file: Option<String>,
    /// The entry's index, as `inspect` shows it.
    #[arg(long, conflicts_with_all = ["id", "uri"])]
    index: Option<usize>,
    /// The entry's ID, as `inspect` shows it.
    #[arg(long, conflicts_with = "uri")]
    id: Option<String>,
    /// Which of several entries with the same ID (0-based).
    #[arg(long, requires = "id")]
    nth: Option<usize>,
    /// A `file://PATH#offset=N&size=M` URI: an entry, or any byte range of the file.
    #[arg(long)]
    uri: Option<String>,
    /// Output file.
    #[arg(short, long)]
    output: String,
}

#[derive(Subcommand, Debug)]
enum EmbedCommand {
    /// A self-registering HIP object (`.hip_fatbin`, wrapper, constructor).
    Hip(HipArgs),
    /// An object for clang's new offload driver (`.llvm.offloading` and entries).
    NewDriver(NewDriverArgs),
}

#[derive(Args, Debug)]
struct CommonEmbed {
    /// Host target triple (x86_64-unknown-linux-gnu, aarch64-linux-gnu,
    /// powerpc64le-linux-gnu, x86_64-pc-windows-msvc).
    #[arg(long)]
    target: String,
    /// A kernel to register besides the discovered ones.
    #[arg(long = "kernel")]
    kernels: Vec<String>,
    /// A device variable NAME=SIZE to register (replaces a discovered one).
    #[arg(long = "variable")]
    variables: Vec<String>,
    /// Do not read kernels and variables from the device code.
    #[arg(long)]
    no_discover: bool,
    /// Prefix of the exported host symbols.
    #[arg(long, default_value = "")]
    symbol_prefix: String,
    /// Output object.
    #[arg(short, long)]
    output: String,
}

#[derive(Args, Debug)]
struct HipArgs {
    #[command(flatten)]
    common: CommonEmbed,
    /// A finished bundle or compressed bundle, embedded unchanged.
    #[arg(long, conflicts_with = "code_objects")]
    bundle: Option<String>,
    /// TARGET_ID=FILE: a code object for one device (repeatable).
    #[arg(long = "code-object")]
    code_objects: Vec<String>,
    /// Compress the bundle built from code objects (CCOB version 2, zstd).
    #[arg(long)]
    compress: bool,
    /// Export a symbol of this name at the start of the bundle.
    #[arg(long)]
    start_symbol: Option<String>,
    /// Export an 8-byte integer of this name holding the bundle size.
    #[arg(long)]
    size_symbol: Option<String>,
    /// Omit the wrapper and constructor (data only).
    #[arg(long)]
    no_register: bool,
}

#[derive(Args, Debug)]
struct NewDriverArgs {
    #[command(flatten)]
    common: CommonEmbed,
    /// Offload binaries to embed (repeatable).
    #[arg(long = "offload-binary", required = true)]
    offload_binaries: Vec<String>,
    /// Major version of the LLVM whose clang-linker-wrapper links the object.
    #[arg(long, default_value_t = 19)]
    llvm: u32,
}

/// Runs the tool on the process arguments and exits.
pub fn main(args: &[String]) -> i32 {
    let stdout = io::stdout();
    let stderr = io::stderr();
    // Messages name files as the bytes given (see `offload_formats::id::spell`).
    let mut err = offload_formats::id::spell::BytesWriter(stderr.lock());
    run(args, &mut stdout.lock(), &mut err)
}

/// Runs the tool with `args` (including `argv[0]`), writing to `out` and `err`; returns the
/// exit status.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let text = e.render().to_string();
            let _ = if code == 0 {
                out.write_all(text.as_bytes())
            } else {
                err.write_all(text.as_bytes())
            };
            return code;
        }
    };
    let result = match cli.command {
        Command::Inspect {
            files,
            json,
            archs,
            verify,
        } => inspect_files(&files, json, archs, verify, out, err),
        Command::Check { gpus, paths, json } => check_files(&gpus, &paths, json, out, err),
        Command::Extract(a) => extract(&a).map(|()| 0),
        Command::Embed(EmbedCommand::Hip(a)) => embed_hip(&a).map(|()| 0),
        Command::Embed(EmbedCommand::NewDriver(a)) => embed_new_driver(&a).map(|()| 0),
        Command::Compile(a) => compile(&a, out, err).map(|()| 0),
    };
    match result {
        Ok(code) => code,
        Err(Failure::BrokenPipe) => 0,
        Err(Failure::Message(m)) => {
            let _ = writeln!(err, "offload-build: error: {m}");
            1
        }
    }
}

enum Failure {
    BrokenPipe,
    Message(String),
}

impl From<String> for Failure {
    fn from(m: String) -> Self {
        Failure::Message(m)
    }
}

impl From<inspect::ExtractError> for Failure {
    fn from(e: inspect::ExtractError) -> Self {
        Failure::Message(e.to_string())
    }
}

impl From<&str> for Failure {
    fn from(m: &str) -> Self {
        Failure::Message(m.to_owned())
    }
}

fn output_error(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Message(format!("cannot write the output: {}", error_text(&e)))
    }
}

/// Writes `value` as pretty-printed JSON and a newline.
fn print_json(out: &mut dyn Write, value: &[serde_json::Value]) -> Result<(), Failure> {
    serde_json::to_writer_pretty(&mut *out, value)
        .map_err(|e| output_error(io::Error::other(e)))?;
    writeln!(out).map_err(output_error)
}

fn read(path: &str) -> Result<Input, Failure> {
    Input::open(path).map_err(|e| Failure::Message(format!("'{path}': {}", error_text(&e))))
}

/// Walks `paths` (see [`installs::walk`], with its progress line), inspects each file found
/// with `inspect` and hands the report to `each`, with whether the file was named on the
/// command line. A file that cannot be read or inspected is reported on `err` and the walk
/// goes on; the status returned is then 1, else 0. An error of `each` ends the walk.
fn walk_reports<E: std::fmt::Display>(
    paths: &[String],
    err: &mut dyn Write,
    inspect: impl Fn(&Found<'_>) -> Result<Report, E>,
    each: &mut dyn FnMut(Report, bool) -> Result<(), Failure>,
) -> Result<i32, Failure> {
    let progress = Progress::new();
    let mut status = 0;
    installs::walk(paths, &progress, &mut |v| -> Result<(), Failure> {
        let report = match v {
            Visit::Error(m) => Err(m),
            Visit::File(found) => inspect(&found)
                .map(|r| (r, found.explicit))
                .map_err(|e| e.to_string()),
        };
        match report {
            Ok((r, explicit)) => each(r, explicit),
            Err(m) => {
                let _ = writeln!(err, "offload-build: error: {m}");
                status = 1;
                Ok(())
            }
        }
    })?;
    Ok(status)
}

fn inspect_files(
    files: &[String],
    json: bool,
    archs_only: bool,
    verify: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Failure> {
    let options = if verify {
        inspect::Options::verify()
    } else {
        inspect::Options::default()
    };
    let mut reports = Vec::new();
    let inspect = |found: &Found<'_>| crate::verify::inspect(found.data, found.path, &options);
    let status = walk_reports(files, err, inspect, &mut |r, explicit| {
        // Files found in a directory or a zip file are shown only with device code.
        if r.containers.is_empty() && !explicit {
            return Ok(());
        }
        let archs = installs::archs(&r);
        if archs_only && archs.is_empty() {
            return Ok(());
        }
        if json {
            let mut v = if archs_only {
                serde_json::json!({ "path": r.path })
            } else {
                serde_json::to_value(&r).map_err(|e| output_error(io::Error::other(e)))?
            };
            v["archs"] = serde_json::json!(archs);
            reports.push(v);
        } else if archs_only {
            // File names as the bytes given (JSON keeps text: U+10FFxx there).
            writeln!(
                spell::BytesWriter(&mut *out),
                "{}: {}",
                r.path,
                archs.join(" ")
            )
            .map_err(output_error)?;
        } else {
            // One write per file, not per line: a file may hold 100,000 containers.
            let mut text = Vec::new();
            print_report(&r, &mut text).map_err(output_error)?;
            spell::BytesWriter(&mut *out)
                .write_all(&text)
                .map_err(output_error)?;
        }
        Ok(())
    })?;
    if json {
        print_json(out, &reports)?;
    }
    Ok(status)
}

/// The GPUs of `check`'s `--gpu` options (`native`: those of this machine), each once.
/// A GPU that cannot be named or found is reported on `err`: `Err(2)`, the exit status.
fn parse_gpus(
    specs: &[String],
    err: &mut dyn Write,
) -> Result<Vec<(String, offload_formats::compat::Gpu)>, i32> {
    use offload_formats::compat::Gpu;
    let mut gpus: Vec<(String, Gpu)> = Vec::new();
    for spec in specs {
        let names = if spec == "native" {
            let found = installs::native_gpus();
            if found.is_empty() {
                let _ = writeln!(
                    err,
                    "offload-build: error: --gpu native: this machine has no GPU that \
                     offload-build can see (no AMD GPU in /sys/class/kfd/kfd/topology/nodes, \
                     none from amdgpu-arch, rocminfo or nvidia-smi); name one with --gpu, e.g. \
                     --gpu gfx1100 or --gpu sm_86"
                );
                return Err(2);
            }
            found
        } else {
            vec![spec.clone()]
        };
        for name in names {
            match Gpu::parse(&name) {
                Ok(g) => {
                    if !gpus.iter().any(|(n, _)| *n == name) {
                        gpus.push((name, g));
                    }
                }
                Err(e) => {
                    let _ = writeln!(err, "offload-build: error: --gpu: {e}");
                    return Err(2);
                }
            }
        }
    }
    Ok(gpus)
}

/// `check`: exit 0 when every file with device code has a code object for every GPU, 1 when
/// one has none (or a file cannot be read), 2 for a GPU that cannot be named or found.
fn check_files(
    specs: &[String],
    paths: &[String],
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Failure> {
    let gpus = match parse_gpus(specs, err) {
        Ok(gpus) => gpus,
        Err(status) => return Ok(status),
    };
    let mut status = 0;
    let mut with_code = 0usize;
    let mut results = Vec::new();
    let inspect = |found: &Found<'_>| inspect::inspect(found.data, found.path);
    status |= walk_reports(paths, &mut *err, inspect, &mut |r, explicit| {
        let verdicts: Vec<_> = gpus
            .iter()
            .filter_map(|(name, g)| installs::check(&r, name, g))
            .collect();
        if verdicts.is_empty() {
            if explicit && !json {
                writeln!(out, "{}: no device code", r.path).map_err(output_error)?;
            }
            return Ok(());
        }
        with_code += 1;
        let archs = installs::archs(&r);
        let mut gpu_json = Vec::new();
        for v in &verdicts {
            if v.chosen.is_none() {
                status = 1;
            }
            if json {
                gpu_json.push(verdict_json(v));
            } else {
                print_verdict(&r.path, &archs, v, out).map_err(output_error)?;
            }
        }
        if json {
            results.push(serde_json::json!({
                "path": r.path,
                "archs": archs,
                "gpus": gpu_json,
            }));
        }
        Ok(())
    })?;
    if json {
        print_json(out, &results)?;
    }
    if with_code == 0 && status == 0 {
        let _ = writeln!(
            err,
            "offload-build: error: no device code in {}",
            paths.join(", ")
        );
        status = 1;
    }
    Ok(status)
}

fn print_verdict(
    path: &str,
    archs: &[String],
    v: &installs::Verdict,
    out: &mut dyn Write,
) -> io::Result<()> {
    match &v.chosen {
        Some((id, rule)) => {
            write!(out, "{path}: {}: loads {id} ({rule})", v.gpu)?;
            if !v.conditions.is_empty() {
                write!(out, " if the GPU runs with {}", v.conditions.join(" or "))?;
            }
            if v.containers > 1 {
                write!(out, ", and from each of the {} containers", v.containers)?;
            }
            writeln!(out)
        }
        None => {
            write!(out, "{path}: {}: no code object loads", v.gpu)?;
            if v.containers > 1 {
                let shown: Vec<String> = v.missing.iter().take(8).map(usize::to_string).collect();
                write!(
                    out,
                    " from {} of {} containers ({}{})",
                    v.missing.len(),
                    v.containers,
                    shown.join(", "),
                    if v.missing.len() > 8 { ", ..." } else { "" }
                )?;
            }
            writeln!(
                out,
                "; the file has {}",
                if archs.is_empty() {
                    "no target ID".to_owned()
                } else {
                    archs.join(" ")
                }
            )?;
            for (id, why) in &v.rejected {
                writeln!(out, "  {id}: {why}")?;
            }
            Ok(())
        }
    }
}

fn verdict_json(v: &installs::Verdict) -> serde_json::Value {
    match &v.chosen {
        Some((id, rule)) => serde_json::json!({
            "gpu": v.gpu,
            "loads": true,
            "containers": v.containers,
            "entry": id,
            "rule": rule.to_string(),
            "if_gpu_runs_with_any_of": v.conditions,
        }),
        None => serde_json::json!({
            "gpu": v.gpu,
            "loads": false,
            "containers": v.containers,
            "missing_containers": v.missing,
            "rejected": v.rejected.iter().map(|(id, why)| serde_json::json!({
                "entry": id,
                "reason": why.to_string(),
            })).collect::<Vec<_>>(),
        }),
    }
}

fn print_report(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let entries = r.entries().count();
    writeln!(
        out,
        "{}: {} ({} bytes), {} container(s), {} entr{}",
        r.path,
        r.format,
        r.size,
        r.containers.len(),
        entries,
        if entries == 1 { "y" } else { "ies" }
    )?;
    for c in &r.containers {
        let mut place = String::new();
        if let Some(m) = &c.member {
            place.push_str(&format!(" member={m}"));
        }
        if let Some(s) = &c.section {
            place.push_str(&format!(" section={s}"));
        }
        write!(
            out,
            "  container {} {}{place} offset={} size={}",
            c.index, c.kind, c.offset, c.size
        )?;
        if let Some(z) = &c.compression {
            write!(
                out,
                " {} v{} {} -> {} bytes (ratio {:.2})",
                z.method, z.version, z.compressed_size, z.uncompressed_size, z.ratio
            )?;
            match z.hash_matches {
                Some(false) => out.write_all(b" (stored MD5 does not match the contents)")?,
                Some(true) => out.write_all(b" (MD5 verified)")?,
                None => {}
            }
        }
        writeln!(out, " {}", c.uri)?;
        for e in &c.entries {
            let offset = e.offset.map_or_else(|| "-".to_owned(), |o| o.to_string());
            write!(
                out,
                "    entry {} {} offset={offset} size={}",
                e.index, e.id, e.size
            )?;
            if let Some(k) = e.image_kind {
                write!(out, " image={k}")?;
            }
            match (&e.uri, e.compression) {
                (Some(u), _) => writeln!(out, " {u}")?,
                (None, Some(method)) => writeln!(
                    out,
                    " ({method}-compressed by NVIDIA's tools; extract decompresses it)"
                )?,
                (None, None) => writeln!(out, " (compressed)")?,
            }
        }
    }
    Ok(())
}

fn extract(a: &ExtractArgs) -> Result<(), Failure> {
    let (path, selector) = if let Some(u) = &a.uri {
        let (p, offset, size) = inspect::parse_uri(u)
            .ok_or_else(|| format!("'{u}' is not a file://PATH#offset=N&size=M URI"))?;
        if let Some(f) = &a.file {
            if f != p {
                return Err(format!("the URI names '{p}' but the file given is '{f}'").into());
            }
        }
        (p.to_owned(), Selector::Range { offset, size })
    } else {
        let file = a
            .file
            .clone()
            .ok_or_else(|| "a FILE is needed unless --uri names it".to_owned())?;
        let selector = match (&a.index, &a.id) {
            (Some(i), _) => Selector::Index(*i),
            (None, Some(id)) => Selector::Id {
                id: id.clone(),
                nth: a.nth,
            },
            (None, None) => {
                return Err("choose the entry with --index, --id or --uri"
                    .to_owned()
                    .into());
            }
        };
        (file, selector)
    };
    let input = read(&path)?;
    let data = &input.data[..];
    let report = inspect::inspect(data, &path).map_err(|e| e.to_string());
    let bytes = match (&selector, report) {
        // A raw range of a file that cannot be inspected is still a range.
        (Selector::Range { offset, size }, Err(_)) => {
            std::borrow::Cow::Borrowed(inspect::range(data, *offset, *size)?)
        }
        (_, Err(e)) => return Err(e.into()),
        (_, Ok(report)) => match inspect::select(&report, &selector)? {
            Selected::Entry(c, e) => inspect::entry_bytes(data, c, e)?,
            Selected::Range(offset, size) => {
                std::borrow::Cow::Borrowed(inspect::range(data, offset, size)?)
            }
        },
    };
    write_output(&a.output, &bytes)
}

fn write_output(path: &str, bytes: &[u8]) -> Result<(), Failure> {
    let fail = |e: io::Error| Failure::Message(format!("'{path}': {}", error_text(&e)));
    let mut f = OutputFile::create(path).map_err(fail)?;
    f.file().write_all(bytes).map_err(fail)?;
    f.commit().map_err(fail)
}

fn variables(specs: &[String]) -> Result<Vec<DeviceVariable>, Failure> {
    specs
        .iter()
        .map(|s| {
            let (name, size) = s
                .split_once('=')
                .ok_or_else(|| format!("--variable '{s}': expected NAME=SIZE"))?;
            let size = size
                .parse()
                .map_err(|_| format!("--variable '{s}': the size is not a number"))?;
            Ok(DeviceVariable::new(name, size))
        })
        .collect()
}

fn embed_hip(a: &HipArgs) -> Result<(), Failure> {
    let c = &a.common;
    let mut hip = HipObject::new(&c.target).map_err(|e| e.to_string())?;
    let mut inputs = Vec::new();
    if let Some(b) = &a.bundle {
        inputs.push((String::new(), read(b)?));
    }
    for spec in &a.code_objects {
        let (target, file) = spec
            .split_once('=')
            .ok_or_else(|| format!("--code-object '{spec}': expected TARGET_ID=FILE"))?;
        inputs.push((target.to_owned(), read(file)?));
    }
    if inputs.is_empty() {
        return Err("give --bundle or at least one --code-object"
            .to_owned()
            .into());
    }
    for (target, input) in &inputs {
        if a.bundle.is_some() {
            hip.bundle(&input.data[..]);
        } else {
            hip.code_object(target, &input.data[..])
                .map_err(|e| e.to_string())?;
        }
    }
    hip.compress_v2(a.compress)
        .discover_symbols(!c.no_discover)
        .register(!a.no_register)
        .symbol_prefix(&c.symbol_prefix);
    for k in &c.kernels {
        hip.kernel(k);
    }
    for v in variables(&c.variables)? {
        hip.variable(v);
    }
    if let Some(s) = &a.start_symbol {
        hip.start_symbol(s);
    }
    if let Some(s) = &a.size_symbol {
        hip.size_symbol(s);
    }
    let bytes = hip.write().map_err(|e| e.to_string())?;
    write_output(&c.output, &bytes)
}

fn embed_new_driver(a: &NewDriverArgs) -> Result<(), Failure> {
    let c = &a.common;
    let mut obj =
        NewDriverObject::new(&c.target, LlvmVersion::new(a.llvm)).map_err(|e| e.to_string())?;
    let inputs: Vec<Input> = a
        .offload_binaries
        .iter()
        .map(|p| read(p))
        .collect::<Result<_, _>>()?;
    for (input, path) in inputs.iter().zip(&a.offload_binaries) {
        obj.offload_binary(&input.data[..])
            .map_err(|e| format!("'{path}': {e}"))?;
    }
    obj.discover_symbols(!c.no_discover)
        .symbol_prefix(&c.symbol_prefix);
    for k in &c.kernels {
        obj.kernel(k);
    }
    for v in variables(&c.variables)? {
        obj.variable(v);
    }
    let bytes = obj.write().map_err(|e| e.to_string())?;
    write_output(&c.output, &bytes)
}

/// This machine's target triple, as the host-object writer spells it.
fn host_triple() -> &'static str {
    match (std::env::consts::ARCH, std::env::consts::OS) {
        ("aarch64", _) => "aarch64-unknown-linux-gnu",
        ("powerpc64", _) => "powerpc64le-unknown-linux-gnu",
        (_, "windows") => "x86_64-pc-windows-msvc",
        _ => "x86_64-unknown-linux-gnu",
    }
}

/// The library name from the output's file name: `libk.a` → `k`, `k.o` → `k`, with any other
/// character than ASCII letters, digits, `_` and `-` replaced by `_`.
fn name_from_output(output: &str) -> String {
    let file = std::path::Path::new(output)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file.split('.').next().unwrap_or_default();
    let stem = if file.ends_with(".a") {
        stem.strip_prefix("lib").unwrap_or(stem)
    } else {
        stem
    };
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() {
        "offload".to_owned()
    } else {
        name
    }
}

/// A file name as a depfile must spell it for GNU make and Ninja alike (clang's escaping):
/// a space is `\ ` with the backslashes before it doubled, `#` is `\#`, `$` is `$$`, any
/// other byte (a backslash too) is itself. Names that the two read differently, or cannot
/// hold, are refused with an error naming the file: a line break (one rule per line), a
/// trailing backslash (it would escape the separator), a backslash before `#`.
fn depfile_name(path: &str, depfile: &str) -> Result<String, Failure> {
    let refuse = |why: &str| {
        Failure::Message(format!(
            "'{}': {why} cannot be written to the depfile '{depfile}' (GNU make and Ninja \
             would read another name); rename the file",
            path.escape_debug()
        ))
    };
    if path.contains(['\n', '\r']) {
        return Err(refuse("a file name with a line break"));
    }
    if path.ends_with('\\') {
        return Err(refuse("a file name ending with a backslash"));
    }
    if path.contains("\\#") {
        return Err(refuse("a file name with a backslash before '#'"));
    }
    let mut out = String::with_capacity(path.len() + 8);
    let mut backslashes = 0;
    for c in path.chars() {
        match c {
            ' ' => {
                // 2N+1 backslashes and a space are N backslashes and a space.
                out.extend(std::iter::repeat_n('\\', backslashes + 1));
                out.push(' ');
            }
            '#' => out.push_str("\\#"),
            '$' => out.push_str("$$"),
            _ => out.push(c),
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    Ok(out)
}

/// The library's message, with its builder-call names turned into this command's options.
fn build_error(e: offload_build::builder::Error) -> Failure {
    Failure::Message(
        e.to_string()
            .replace("(from Build::archs)", "(from --archs)")
            .replace("(set with Build::compiler)", "(set with --compiler)")
            .replace("(or Build::ptxas)", "(or --ptxas)")
            .replace("(Build::timeout, ", "(--timeout, "),
    )
}

/// The one mapping from `compile`'s options to the builder: every option becomes the
/// [`Build`](offload_build::builder::Build) setter of the same meaning, and the build's own plan
/// (shared with `build.rs` builds and `--resolve`) decides everything from there.
///
/// To add a builder option: 1) a field and a setter in `Build`, 2) its decision in the build's
/// `Plan` (crates/offload-build/src/builder/plan.rs), 3) the flag in [`CompileArgs`] and its
/// mapping here, 4) the CMake argument (`_offload_add_fatbin_command` in
/// build-support/cmake/OffloadBuild.cmake).
fn builder(a: &CompileArgs) -> Result<offload_build::builder::Build, Failure> {
    use offload_build::builder::{Build, Embed};
    let mut b = Build::new();
    b.cargo_metadata(false);
    // Outside Cargo: never take the crate-specific variable from an enclosing build script.
    b.env_remove("CARGO_PKG_NAME");
    b.env_remove("CARGO_MANIFEST_DIR");
    b.env("TARGET", a.target.as_deref().unwrap_or(host_triple()));
    sources_and_flags(&mut b, a)?;
    run_settings(&mut b, a)?;
    match (&a.out_dir, &a.output) {
        (Some(d), _) => {
            b.out_dir(spell::os(d));
        }
        // Intermediates next to the output (a resolve writes none).
        (None, Some(output)) if !a.resolve => {
            b.out_dir(spell::os(&format!("{output}.offload-build")));
        }
        _ => {}
    }
    // `object`: the host object that holds the container the plan chooses.
    let embed = match a.embed {
        EmbedArg::Fatbin => Embed::FatbinOnly,
        EmbedArg::Object => match b.object_embed() {
            // No host object registers an NVIDIA fat binary: it is loaded at run time.
            Embed::FatbinOnly => {
                return Err(
                    "an NVIDIA fat binary (--container cuda-fatbin) is loaded at run \
                            time: use --embed fatbin"
                        .to_owned()
                        .into(),
                );
            }
            e => e,
        },
    };
    b.embed(embed);
    Ok(b)
}

/// `compile`'s sources, architectures, compiler flags, language and container, onto `b`
/// (for [`builder`]).
fn sources_and_flags(
    b: &mut offload_build::builder::Build,
    a: &CompileArgs,
) -> Result<(), Failure> {
    use offload_build::builder::{Container, Language};
    b.files(a.sources.iter().map(|s| spell::os(s)));
    // The user's own choice (CMake's ARCHITECTURES too): as before, the environment does
    // not override it.
    for arch in &a.arch {
        b.archs_exact(arch.as_str());
    }
    if let Some(list) = &a.archs {
        b.archs_exact(list.as_str());
    }
    for spec in &a.file_archs {
        let (pat, list) = spec
            .split_once('=')
            .ok_or_else(|| format!("--file-archs '{spec}': expected PATTERN=LIST"))?;
        b.file_archs(pat, list);
    }
    for dir in &a.includes {
        b.include(spell::os(dir));
    }
    for d in &a.defines {
        match d.split_once('=') {
            Some((n, v)) => b.define(n, Some(v)),
            None => b.define(d, None),
        };
    }
    for f in &a.flags {
        b.flag(f);
    }
    if let Some(l) = a.language {
        b.language(match l {
            LanguageArg::Hip => Language::Hip,
            LanguageArg::Cuda => Language::Cuda,
        });
    }
    if let Some(c) = a.container {
        b.container(match c {
            ContainerArg::Bundle => Container::Bundle,
            ContainerArg::OffloadBinary => Container::OffloadBinary,
            ContainerArg::CudaFatbin => Container::CudaFatbin,
        });
    }
    if a.compress {
        b.compress(true);
    }
    Ok(())
}

/// `compile`'s warnings, progress, compiler, timeout and parallelism, onto `b` (for
/// [`builder`]).
fn run_settings(b: &mut offload_build::builder::Build, a: &CompileArgs) -> Result<(), Failure> {
    b.warnings(!a.no_warnings)
        .warnings_into_errors(a.warnings_into_errors)
        .pch(!a.no_pch);
    if !a.quiet {
        // On the building thread, as each compile finishes: live in CMake's output.
        b.on_progress(|p| {
            let _ = writeln!(io::stderr().lock(), "{p}");
        });
    }
    if let Some(c) = &a.compiler {
        b.compiler(spell::os(c));
    }
    if let Some(k) = a.cuda_compiler {
        b.cuda_compiler(match k {
            CudaCompilerArg::Nvcc => offload_build::CompilerKind::Nvcc,
            CudaCompilerArg::Clang => offload_build::CompilerKind::Clang,
        });
    }
    if let Some(p) = &a.ptxas {
        b.ptxas(p);
    }
    if let Some(t) = a.timeout {
        let t = std::time::Duration::try_from_secs_f64(t).map_err(|_| {
            format!("--timeout {t}: expected a number of seconds (0 for no timeout)")
        })?;
        b.timeout(t);
    }
    if let Some(n) = a.jobs {
        if n == 0 {
            return Err("-j: the number of jobs must be at least 1"
                .to_owned()
                .into());
        }
        let client = jobserver::Client::new(n - 1)
            .map_err(|e| format!("cannot create a jobserver: {}", error_text(&e)))?;
        b.jobserver(client);
    }
    Ok(())
}

fn compile(a: &CompileArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), Failure> {
    use offload_build::builder::CancelToken;
    // SIGINT/SIGTERM/SIGHUP cancel the build: its compilers (each in a process group of its
    // own) are killed with their children before the signal ends this process. The hook is a
    // plain `fn`, so the token it cancels is this process's one.
    static CANCEL: std::sync::OnceLock<CancelToken> = std::sync::OnceLock::new();
    fn cancel() {
        if let Some(token) = CANCEL.get() {
            token.cancel();
        }
    }
    let token = CANCEL.get_or_init(CancelToken::new);
    let mut b = builder(a)?;
    b.cancel_token(token);
    crate::fileio::on_terminating_signal(cancel);
    let build_error = |e| {
        if token.is_cancelled() {
            // A signal is ending the process: its handler's thread finishes the job (and
            // the exit status is the signal's), with no error message.
            loop {
                std::thread::park();
            }
        }
        build_error(e)
    };
    if a.resolve {
        let r = b.try_resolve_archs().map_err(build_error)?;
        warn(err, &r.warnings);
        writeln!(
            out,
            "archs={}\ncompiler={}",
            r.archs.join(";"),
            r.compiler.display()
        )
        .map_err(output_error)?;
        return Ok(());
    }
    let output = a.output.as_deref().unwrap_or_default();
    let name = a.name.clone().unwrap_or_else(|| name_from_output(output));
    // Before anything runs: no output names a source or the other, each can be written.
    let outputs = commit::Outputs::new(output, a.depfile.as_deref());
    let sources: Vec<std::path::PathBuf> = a
        .sources
        .iter()
        .map(|s| crate::fileio::os_path(s))
        .collect();
    outputs.refuse_inputs("source", &sources)?;
    let files = outputs.prepare()?;
    let out_dir = a
        .out_dir
        .clone()
        .unwrap_or_else(|| format!("{output}.offload-build"));
    let lock = commit::NameLock::take(&crate::fileio::os_path(&out_dir), &name)?;
    let c = b.try_compile(&name).map_err(build_error)?;
    warn(err, &c.warnings);
    for d in &c.diagnostics {
        let _ = writeln!(err, "{d}");
    }
    let bytes = compiled_bytes(&c, output)?;
    drop(lock);
    let deps = rerun_paths(&c.cargo_directives);
    let headers: Vec<std::path::PathBuf> = deps.iter().map(|d| spell::os(d).into()).collect();
    outputs.refuse_inputs("header", &headers)?;
    let mut contents: Vec<Vec<u8>> = vec![bytes];
    if let Some(depfile) = &a.depfile {
        // Names as the bytes they are (the text holds them, see `offload_formats::id::spell`).
        contents.push(spell::bytes(&depfile_text(output, depfile, &deps)?).into_owned());
    }
    let contents: Vec<&[u8]> = contents.iter().map(Vec::as_slice).collect();
    commit::commit(files, &contents)?;
    Ok(())
}

/// What `compile` writes to its output: the library, its one object, or (`--embed fatbin`)
/// the container.
fn compiled_bytes(c: &offload_build::builder::Compiled, output: &str) -> Result<Vec<u8>, Failure> {
    let object_out = output.ends_with(".o") || output.ends_with(".obj");
    Ok(match (&c.library, object_out) {
        (None, _) => read(&path_text(&c.fatbin))?.data.to_vec(),
        (Some(lib), false) => read(&path_text(lib))?.data.to_vec(),
        (Some(lib), true) => {
            let input = read(&path_text(lib))?;
            let ar = offload_formats::bundle::archive::Archive::parse(&input.data[..])
                .map_err(|e| e.to_string())?;
            let m = ar.members().first().ok_or("the library has no object")?;
            m.data.to_vec()
        }
    })
}

/// The files a build read beside its sources (its `rerun-if-changed` directives), once each.
fn rerun_paths(directives: &[String]) -> Vec<&str> {
    let mut deps: Vec<&str> = Vec::new();
    for line in directives {
        if let Some(p) = line.strip_prefix("rerun-if-changed=") {
            if !deps.contains(&p) {
                deps.push(p);
            }
        }
    }
    deps
}

/// `compile`'s warnings on standard error, as `offload-build: warning: …`.
fn warn(err: &mut dyn Write, warnings: &[String]) {
    for w in warnings {
        let w = w.strip_prefix("offload-build: ").unwrap_or(w);
        let _ = writeln!(err, "offload-build: warning: {w}");
    }
}

/// The depfile `compile --depfile` writes: `output` depends on every file the build read
/// (`deps`, from [`rerun_paths`]).
fn depfile_text(output: &str, depfile: &str, deps: &[&str]) -> Result<String, Failure> {
    let mut text = depfile_name(output, depfile)?;
    text.push(':');
    for d in deps {
        text.push_str(" \\\n  ");
        text.push_str(&depfile_name(d, depfile)?);
    }
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depfile_names_are_escaped_for_make_and_ninja() {
        let name = |p: &str| match depfile_name(p, "k.d") {
            Ok(s) => s,
            Err(Failure::Message(m)) => format!("error: {m}"),
            Err(Failure::BrokenPipe) => "broken pipe".into(),
        };
        assert_eq!(name("my k.hip"), "my\\ k.hip");
        assert_eq!(name("a\\ b.h"), "a\\\\\\ b.h");
        assert_eq!(name("a\\b.h"), "a\\b.h");
        assert_eq!(name("x#y$z"), "x\\#y$$z");
        for bad in ["a\nb", "a\\", "a\\#b"] {
            assert!(name(bad).starts_with("error: '"), "{bad:?}: {}", name(bad));
        }
        assert_eq!(
            name("x\ny"),
            "error: 'x\\ny': a file name with a line break cannot be written to the depfile \
             'k.d' (GNU make and Ninja would read another name); rename the file"
        );
    }
}
