//! `offload-build compile`: its options mapped onto the builder of `offload-build` (the
//! same plan, cache and parallelism as a `build.rs` build), the build run, and the output
//! and depfile written together.

use std::io::{self, Write};

use clap::Args;

use super::commit;
use super::depfile::depfile_text;
use super::failure::{Failure, output_error, read};
use crate::fileio::{error_text, path_text};
use offload_formats::id::spell;

#[derive(Args, Debug)]
pub(crate) struct CompileArgs {
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
    /// for the new offload driver for offload binaries); `fatbin`: the container alone
    /// [default: object].
    #[arg(long, value_enum)]
    embed: Option<EmbedArg>,
    /// Compile each source with its host code (launch wrappers, `main`, the kernels' host
    /// stubs and registration) into the object `hipcc -c` writes, its device code for every
    /// architecture embedded: `-o lib<name>.a` for a static library, `-o x.o` for one source.
    #[arg(long)]
    host_code: bool,
    /// With --host-code: relocatable device code (`hipcc -fgpu-rdc`, `nvcc -rdc=true`): the
    /// sources may call each other's `__device__` functions; the device code is linked once
    /// (HIP: per architecture; CUDA: `nvcc -dlink`, with nvcc only).
    #[arg(long)]
    rdc: bool,
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
    /// print `archs=<a;b;...>` and `compiler=<path>` lines (with --host-code for CUDA, also
    /// the runtime it links: `link-dir=<dir>` and `link-lib=<rustc-link-lib value>` lines)
    /// and exit.
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
/// `Plan` (crates/offload-build/src/builder/plan/), 3) the flag in [`CompileArgs`] and its
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
    if a.rdc && !a.host_code {
        return Err(
            "--rdc is for --host-code builds (a device-only build links an \
                    architecture's sources whenever there are several)"
                .to_owned()
                .into(),
        );
    }
    if a.host_code {
        if a.embed.is_some() {
            return Err(
                "--host-code writes the objects the compiler's driver writes, with the \
                        device code embedded: --embed has no meaning with it"
                    .to_owned()
                    .into(),
            );
        }
        let one_object = a.output.as_deref().is_some_and(|o| o.ends_with(".o"));
        if one_object && a.sources.len() != 1 {
            return Err(format!(
                "--host-code -o {}: an object holds one source ({} given): write a \
                 library (-o lib<name>.a)",
                a.output.as_deref().unwrap_or_default(),
                a.sources.len()
            )
            .into());
        }
        b.host_code(true).rdc(a.rdc);
        return Ok(b);
    }
    // `object`: the host object that holds the container the plan chooses.
    let embed = match a.embed.unwrap_or(EmbedArg::Object) {
        EmbedArg::Fatbin => Embed::ContainerOnly,
        EmbedArg::Object => match b.object_embed() {
            // No host object registers an NVIDIA fat binary: it is loaded at run time.
            Embed::ContainerOnly => {
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

pub(crate) fn compile(
    a: &CompileArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), Failure> {
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
        return print_resolved(out, &r).map_err(output_error);
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
        (None, _) => read(&path_text(&c.container_file))?.data.to_vec(),
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

/// `--resolve`'s lines: `archs=`, `compiler=` and, for a CUDA host-code build, the runtime
/// its library links (`link-dir=`, one `link-lib=` each: what CMake's offload_add_library
/// links).
fn print_resolved(
    out: &mut dyn Write,
    r: &offload_build::builder::ResolvedArchs,
) -> std::io::Result<()> {
    writeln!(out, "archs={}", r.archs.join(";"))?;
    writeln!(out, "compiler={}", r.compiler.display())?;
    if let Some((dir, libs)) = &r.cuda_runtime {
        writeln!(out, "link-dir={}", dir.display())?;
        for l in libs {
            writeln!(out, "link-lib={l}")?;
        }
    }
    Ok(())
}

/// `compile`'s warnings on standard error, as `offload-build: warning: …`.
fn warn(err: &mut dyn Write, warnings: &[String]) {
    for w in warnings {
        let w = w.strip_prefix("offload-build: ").unwrap_or(w);
        let _ = writeln!(err, "offload-build: warning: {w}");
    }
}
