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
//!
//! This file is the entry point: the command line and which subcommand runs. Each
//! subcommand is a child (`inspect.rs`, `check.rs`, `extract.rs`, `embed.rs`, `compile.rs`)
//! that owns its options and its work; `failure.rs` is how they fail and read and write
//! files, `installs.rs` the walk over files, directories and wheels, `commit.rs` and
//! `depfile.rs` what `compile` writes.

use std::io::{self, Write};

use clap::{Parser, Subcommand};

mod check;
mod commit;
mod compile;
mod depfile;
mod embed;
mod extract;
mod failure;
mod inspect;
mod installs;

use check::check_files;
use compile::{CompileArgs, compile};
use embed::{EmbedCommand, embed_hip, embed_new_driver};
use extract::{ExtractArgs, extract};
use failure::Failure;
use inspect::inspect_files;

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
