//! How clang's commands are built, from what the plan decided ([`CompileOptions`]): the
//! device compile of one (source, architecture), the host-side preprocessing that writes its
//! depfile when the compile cannot, the code generation of `-fgpu-rdc` bitcode, `ptxas` for a
//! CUDA cubin, and the device link of one architecture. Part of the plan stage: these
//! functions decide nothing themselves, they spell out the plan's decisions as arguments.
//!
//! Another compiler or wrapper (nvcc, a precompiled preamble, a distributed compile) is another
//! module like this one that fills in the same [`CompileJob`].

use crate::builder::env::Env;
use crate::builder::error::Error;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use offload_formats::package::ImageKind;

use crate::builder::arch::{Arch, Target};
use crate::builder::command::{self, Command, DepsArg, Domain, KeyBuilder};
use crate::builder::job::{CompileJob, CompileOptions, DEP, LauncherKind, LinkJob, OUT};
use crate::builder::options::Language;
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::paths::{exe, newest_versioned, path_or_name};
use crate::builder::toolchain::rocm::{Rocm, hip_clang_path};

/// Whether an `-fgpu-rdc` compile emits its relocatable object itself (`-Xclang -emit-obj`
/// overriding the driver's `-emit-llvm-bc`) instead of bitcode that a second process turns
/// into the object. The object is the same bytes (clang 15, 19 and 22 run no LTO pipeline
/// for the device bitcode: the second step's `-O3` pipeline is the compile's own), without a
/// process, a bitcode file written and read, and a second optimization run; and under ccache
/// a hit is the object itself (neither sccache nor ccache caches the code generation of a
/// bitcode file: "unknown source language"). Not under a launcher that refuses the pair
/// ([`LauncherKind::refuses_xclang`]), nor with flags that choose the front end's output or the pipeline
/// themselves.
fn rdc_emits_object(o: &CompileOptions) -> bool {
    let chooses_output = |f: &OsString| {
        let f = f.to_string_lossy();
        [
            "-flto",
            "-foffload-lto",
            "-emit-",
            "-save-temps",
            "-Xclang",
            "-fno-integrated-as",
        ]
        .iter()
        .any(|p| f.starts_with(p))
    };
    o.lang == Language::Hip
        && !o.launcher_kind.refuses_xclang()
        && !o.flags.iter().any(chooses_output)
}

/// The device compile's arguments up to the user's flags (no source, output or depfile), and
/// the position of the optimization flag.
pub(crate) fn device_args(
    o: &CompileOptions,
    tc: &Toolchain,
    arch: &Arch,
    rdc: bool,
) -> (Vec<OsString>, usize) {
    let mut c = Command::new(&tc.clang);
    match o.lang {
        Language::Hip => {
            c.add_args(["-x", "hip"]);
            c.add_arg(format!("--offload-arch={arch}"));
            c.add_args(["--cuda-device-only", "--no-gpu-bundle-output"]);
            if rdc {
                c.add_arg("-fgpu-rdc");
            }
            match &tc.rocm {
                Some(r) => c.add_args(r.args()),
                None => c.add_args(["-nogpulib", "-nogpuinc"]),
            };
            c.add_arg("-c");
        }
        Language::Cuda => {
            c.add_args(["-x", "cuda"]);
            c.add_arg(format!("--offload-arch={}", arch.offload_arch()));
            c.add_arg("--cuda-device-only");
            c.add_args(crate::builder::toolchain::cuda::clang_args(&tc.cuda_use()));
            if let Some(v) = arch.min_ptx().filter(|_| o.min_ptx_isa) {
                // The driver's spelling where clang has one (the same `-target-feature` for
                // cc1): sccache refuses to cache a command with `-Xclang` pairs it does not
                // know.
                if tc.major >= 17 {
                    c.add_arg(format!("--cuda-feature=+ptx{v}"));
                } else {
                    c.add_args(["-Xclang", "-target-feature", "-Xclang"]);
                    c.add_arg(format!("+ptx{v}"));
                }
            }
            if o.launcher_kind == LauncherKind::Sccache {
                // sccache caches a command only with `-c`; clang's `-S` wins (the same PTX),
                // and its complaint that `-c` is unused is this crate's, not the user's: never
                // an error, and left out of the warnings (`diag::clean`).
                c.add_args(["-c", "-Wno-error=unused-command-line-argument"]);
            }
            c.add_arg("-S");
        }
    }
    let opt_at = c.args.len();
    c.add_arg(&o.opt_flag);
    if o.debug {
        // The compilation directory the debug information names: the root the compile runs
        // in, spelled `.`, as every path under it.
        c.add_args(["-g", "-fdebug-compilation-dir=."]);
    }
    c.add_args(o.source_args());
    (c.args, opt_at)
}

/// The compile job of `source` for `arch`, its files named in `cache_dir` after its key.
pub(crate) fn compile_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    arch: &Arch,
    rdc: bool,
) -> CompileJob {
    let (mut args, opt_at) = device_args(o, tc, arch, rdc);
    let one_step = rdc && rdc_emits_object(o);
    if one_step {
        args.extend(["-Xclang", "-emit-obj"].map(OsString::from));
    }
    args.push(source.as_os_str().to_os_string());
    args.extend([OsString::from("-o"), OsString::from(OUT)]);
    if o.depfile_in_compile {
        args.extend(["-MD", "-MF", DEP].map(OsString::from));
    }
    let first_ext = match (o.lang, rdc && !one_step) {
        (Language::Hip, false) => "o",
        (Language::Hip, true) => "bc",
        (Language::Cuda, _) => "ptx",
    };
    let target = Target::Device(arch.clone());
    let (mut job, _) = new_job(o, tc, cache_dir, source, &target, rdc, args, first_ext);
    let compile = &mut job.steps[0];
    if o.cuid_from_key {
        let cuid = if o.host_code {
            source_cuid(tc, o, source)
        } else {
            cuid(tc, compile, source)
        };
        compile
            .args
            .insert(opt_at, OsString::from(format!("-cuid={cuid:032x}")));
    }
    compile.depfile = o.depfile_in_compile.then(|| job.depfile.clone());
    job.deps_only = deps_only(compile, &job.depfile);
    let first_out = compile.outputs[0].clone();
    add_later_steps(&mut job, o, tc, arch, first_out);
    job
}

/// The HIP compilation unit ID of `compile` (clang's `__hip_cuid_*` symbol, unique per
/// translation unit of a link): a key over the compiler's version, the command as it runs (paths
/// under the root relative) and the source's content. Neither the checkout's directory nor the
/// compiler's file stamp enters it, so two checkouts or machines compile the same bytes, and a
/// compiler cache sees the same command.
fn cuid(tc: &Toolchain, compile: &Command, source: &Path) -> u128 {
    let mut k = KeyBuilder::new(Domain::Cuid);
    k.str(&tc.version);
    let content = std::fs::read(source).map_or(0, |d| xxhash_rust::xxh3::xxh3_128(&d));
    // The output and depfile lie in the cache directory: their names do not reach the code.
    let cache = compile.outputs.first().and_then(|o| o.parent());
    let root = compile.dir.as_deref().unwrap_or(Path::new(""));
    let mut run = Command::new(&compile.program);
    run.args = compile
        .args
        .iter()
        .filter(|a| !cache.is_some_and(|c| Path::new(a).starts_with(c)))
        .map(|a| crate::builder::command::relative_arg(a, root))
        .collect();
    run.inputs = vec![PathBuf::from(crate::builder::command::relative_arg(
        source.as_os_str(),
        root,
    ))];
    run.add_to_key(&mut k, |_| Some(content));
    k.finish()
}

/// The compilation unit ID of `source` in a host-code build: the same for its device
/// compiles and its host compile, which must agree on it (the names of its static device
/// variables and kernels); a key over the compiler's version, the source's path under the root,
/// its content and the options (paths under the root relative), but no architecture: the
/// same in every checkout, so that a compiler cache sees the same command.
fn source_cuid(tc: &Toolchain, o: &CompileOptions, source: &Path) -> u128 {
    let mut k = KeyBuilder::new(Domain::Cuid);
    k.str(&tc.version).str("host code");
    k.os(crate::builder::command::relative_arg(
        source.as_os_str(),
        &o.root,
    ));
    k.u128(std::fs::read(source).map_or(0, |d| xxhash_rust::xxh3::xxh3_128(&d)));
    k.str(&o.opt_flag);
    // `-I` under the root as the compile spells it (relative): the same in every checkout.
    for a in o.source_args() {
        k.os(crate::builder::command::relative_arg(&a, &o.root));
    }
    k.finish()
}

/// The host compile of `source` in a host-code build: its host code, the host stubs of its
/// kernels and the constructor that registers them, with `gpubinary` (the source's bundle of
/// `archs`, or for CUDA its NVIDIA fat binary) embedded by `-fcuda-include-gpubinary`, as
/// clang's HIP and CUDA drivers compile the host side after the device side; the same `-cuid`
/// as its device compiles, and the depfile in the same pass. Filed in `cache_dir` under
/// [`Target::Host`], after a key that covers the bundle's name (named after its content).
pub(crate) fn host_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    archs: &[Arch],
    gpubinary: &Path,
) -> CompileJob {
    host_compile(o, tc, cache_dir, source, archs, Some(gpubinary))
}

/// The host compile of `source` with relocatable device code (`-fgpu-rdc`): as [`host_job`]
/// but embedding nothing (its constructor registers `__hip_fatbin`, which the library's
/// linked bundle defines), so it is planned and run with the device compiles.
pub(crate) fn host_job_rdc(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    archs: &[Arch],
) -> CompileJob {
    host_compile(o, tc, cache_dir, source, archs, None)
}

/// [`host_job`] embedding `gpubinary`, or [`host_job_rdc`] without one.
fn host_compile(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    archs: &[Arch],
    gpubinary: Option<&Path>,
) -> CompileJob {
    let mut args = host_args(o, tc, archs);
    // sccache refuses a command with an `-Xclang` pair it does not know ("Can't handle
    // UnknownFlag arguments with -Xclang"): the host compile would neither be cached nor go
    // to a build farm. clang 16 and later also take `-Xclang=<arg>` (the same cc1 arguments,
    // the same object), which sccache keeps as an argument of the command; clang 15 reads
    // that as its old `-X` and drops it.
    let joined = o.launcher_kind == LauncherKind::Sccache && tc.major >= 16;
    if o.lang == Language::Hip {
        // Not in the preamble's command: the ID follows the source's content, a PCH its
        // preamble only.
        let cuid = if o.cuid_from_key {
            let cuid = format!("-cuid={:032x}", source_cuid(tc, o, source));
            args.push(cuid.clone().into());
            Some(cuid)
        } else {
            user_cuid(&o.flags)
        };
        // clang 19's driver (not 16's or 22's) leaves `-cuid=` out of a host-only compile:
        // its `__hip_cuid_` symbol then lacks the ID the driver's whole compile gives it.
        // Given to cc1 as well; the same value twice changes nothing where the driver keeps it.
        if let Some(cuid) = cuid {
            xclang(&mut args, joined, cuid.into());
        }
    }
    if let Some(g) = gpubinary {
        xclang(&mut args, joined, "-fcuda-include-gpubinary".into());
        xclang(&mut args, joined, g.as_os_str().to_os_string());
    }
    let mut job = host_object_job(o, tc, cache_dir, source, args, deps_only);
    if let Some(g) = gpubinary.filter(|_| joined) {
        // The device code sccache does not see as an input: hashed into its key and shipped
        // to a build server as one of its extra files.
        let mut files = vec![g.to_path_buf()];
        if let Some(more) = &o.sccache_extrafiles {
            files.extend(std::env::split_paths(more));
        }
        if let Ok(v) = std::env::join_paths(files) {
            job.steps[0]
                .env
                .push(("SCCACHE_EXTRAFILES".into(), Some(v)));
        }
    }
    job.steps[0].inputs.extend(gpubinary.map(Path::to_path_buf));
    job
}

/// Passes `arg` to cc1: `-Xclang <arg>`, or `-Xclang=<arg>` when `joined`.
fn xclang(args: &mut Vec<OsString>, joined: bool, arg: OsString) {
    if joined {
        let mut a = OsString::from("-Xclang=");
        a.push(arg);
        args.push(a);
    } else {
        args.extend([OsString::from("-Xclang"), arg]);
    }
}

/// The user's `-cuid=<id>` among `flags` (the last, as clang takes it).
fn user_cuid(flags: &[OsString]) -> Option<String> {
    flags
        .iter()
        .rev()
        .map(|f| f.to_string_lossy())
        .find(|f| f.starts_with("-cuid="))
        .map(|f| f.into_owned())
}

/// The job of one host compile, `args` up to the source, filed under [`Target::Host`]: the
/// source, the object ([`OUT`]) and the depfile in the same pass ([`DEP`]), and `deps` to
/// write the depfile alone when the compile wrote none. Shared by clang's and nvcc's
/// host-code jobs.
pub(crate) fn host_object_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    mut args: Vec<OsString>,
    deps: fn(&Command, &Path) -> Command,
) -> CompileJob {
    args.push(source.as_os_str().to_os_string());
    args.extend(["-o", OUT, "-MD", "-MF", DEP].map(OsString::from));
    let (mut job, _) = new_job(o, tc, cache_dir, source, &Target::Host, false, args, "o");
    let compile = &mut job.steps[0];
    compile.depfile = Some(job.depfile.clone());
    job.deps_only = deps(compile, &job.depfile);
    job.outputs
        .push((ImageKind::Object, compile.outputs[0].clone()));
    job
}

/// The host compile's arguments up to the user's flags (no `-cuid`, bundle, source, output or
/// depfile): what [`host_job`] runs and its precompiled preamble is made with.
pub(crate) fn host_args(o: &CompileOptions, tc: &Toolchain, archs: &[Arch]) -> Vec<OsString> {
    let mut c = Command::new(&tc.clang);
    match o.lang {
        Language::Hip => {
            c.add_args(["-x", "hip", "--cuda-host-only"]);
            if o.rdc {
                c.add_arg("-fgpu-rdc");
            }
            for a in archs {
                c.add_arg(format!("--offload-arch={a}"));
            }
            match &tc.rocm {
                Some(r) => c.add_args(r.args()),
                None => c.add_args(["-nogpulib", "-nogpuinc"]),
            };
        }
        Language::Cuda => {
            c.add_args(["-x", "cuda", "--cuda-host-only"]);
            for a in archs {
                c.add_arg(format!("--offload-arch={}", a.offload_arch()));
            }
            c.add_args(crate::builder::toolchain::cuda::clang_args(&tc.cuda_use()));
        }
    }
    c.add_arg("-c").add_arg(&o.opt_flag);
    if o.debug {
        c.add_args(["-g", "-fdebug-compilation-dir=."]);
    }
    c.add_args(o.source_args());
    c.args
}

/// A compile job of one command, `args` (with the [`OUT`] and [`DEP`] placeholders), run by
/// the toolchain's compiler with the launcher, and its key (over the compiler identity, the
/// launcher and the arguments): its files in `cache_dir` are named `<stem>-<arch>-<key>` (the
/// first output with extension `first_ext`); no later steps or outputs yet.
#[allow(clippy::too_many_arguments)]
pub(crate) fn new_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    target: &Target,
    rdc: bool,
    args: Vec<OsString>,
    first_ext: &str,
) -> (CompileJob, u128) {
    let mut compile = Command::new(&tc.clang);
    compile.launcher = o.launcher.clone();
    compile.args = args;
    compile.env = o.env.clone();
    compile.dir = Some(o.root.clone());
    // The job key: compiler identity, launcher, root, arguments (with placeholders for paths).
    let mut k = KeyBuilder::new(Domain::Job);
    k.u128(tc.identity).os(o.root.as_os_str());
    compile.add_to_key(&mut k, |_| None);
    let key = k.finish();
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = cache_dir.join(format!("{stem}-{}-{:016x}", target.file_tag(), key as u64));
    let first_out = base.with_extension(first_ext);
    let depfile = base.with_extension("d");
    for a in compile.args.iter_mut() {
        if a == OUT {
            *a = first_out.clone().into_os_string();
        } else if a == DEP {
            *a = depfile.clone().into_os_string();
        }
    }
    compile.inputs = vec![source.to_path_buf()];
    compile.outputs = vec![first_out];
    let job = CompileJob {
        source: source.to_path_buf(),
        target: target.clone(),
        rdc,
        steps: vec![compile],
        deps_only: Command::new(&tc.clang),
        outputs: Vec::new(),
        depfile,
        record: base.with_extension("rec"),
        base,
        pch: None,
        pch_skip: 0,
        threads: 1,
        ways: vec![crate::builder::job::Way::Driver],
        remote: false,
        stays: None,
    };
    (job, key)
}

/// The steps after the compile: code generation of `-fgpu-rdc` bitcode, `ptxas` for a CUDA
/// architecture that has machine code; and the job's outputs.
fn add_later_steps(
    job: &mut CompileJob,
    o: &CompileOptions,
    tc: &Toolchain,
    arch: &Arch,
    first_out: PathBuf,
) {
    let base = job.base.clone();
    match o.lang {
        Language::Hip if job.rdc && first_out.extension().is_some_and(|e| e == "bc") => {
            let obj = base.with_extension("o");
            job.steps.push(codegen(o, tc, arch, &first_out, &obj));
            job.outputs.push((ImageKind::Object, obj));
        }
        Language::Hip => job.outputs.push((ImageKind::Object, first_out)),
        Language::Cuda => {
            job.outputs.push((ImageKind::Ptx, first_out.clone()));
            if let (false, Some(ptxas)) = (arch.is_virtual(), &tc.ptxas) {
                let cubin = base.with_extension("cubin");
                job.steps
                    .push(ptxas_step(o, ptxas, arch, &first_out, &cubin));
                job.outputs.push((ImageKind::Cubin, cubin));
            }
        }
    }
}

/// What makes a command a PCH's ([`crate::builder::pch::job`]): `-emit-pch`, no timestamp in
/// it (the same bytes every time), and the preamble's template instantiations done in it.
pub(crate) const PCH_FLAGS: [&str; 6] = [
    "-Xclang",
    "-emit-pch",
    "-Xclang",
    "-fno-pch-timestamp",
    "-Xclang",
    "-fpch-instantiate-templates",
];

/// The host-side preprocessing of the same source with the same flags, writing only the
/// depfile (`-M -MF`): for compilers that write none in a device-only compile (clang 22).
/// A PCH's command loses its `-Xclang` PCH flags ([`PCH_FLAGS`]):
/// `-emit-pch` would override `-M` (clang parses the whole preamble and writes the PCH to
/// standard output, as long as making it: 0.6 s against 0.04 s for a preamble of six
/// standard headers with clang 22).
pub(crate) fn deps_only(compile: &Command, depfile: &Path) -> Command {
    command::deps_only(compile, depfile, |a, next| match a.to_str() {
        Some("--cuda-device-only") => DepsArg::Replace("--cuda-host-only"),
        Some("--no-gpu-bundle-output" | "-c" | "-S" | "-MD" | "-fgpu-rdc") => DepsArg::Drop(0),
        Some("-o" | "-MF") => DepsArg::Drop(1),
        // `-Xclang -emit-obj` (an `-fgpu-rdc` compile's) would override `-M`, and so would
        // `-Xclang -emit-pch`.
        Some("-Xclang") if next.is_some_and(overrides_deps) => DepsArg::Drop(1),
        _ => DepsArg::Keep,
    })
}

/// Whether the cc1 argument `a` (after `-Xclang`) chooses what a compile writes (its object,
/// a PCH) or how a PCH is made (the PCH stage's flags): left out of a [`deps_only`] command.
fn overrides_deps(a: &OsStr) -> bool {
    a == "-emit-obj" || PCH_FLAGS.iter().any(|f| *f != "-Xclang" && a == *f)
}

/// Code generation of one `-fgpu-rdc` bitcode file into a relocatable object.
fn codegen(o: &CompileOptions, tc: &Toolchain, arch: &Arch, bc: &Path, obj: &Path) -> Command {
    let mut c = Command::new(&tc.clang);
    c.env = o.env.clone();
    c.add_arg("--target=amdgcn-amd-amdhsa")
        .add_arg(format!("-mcpu={arch}"));
    // The device libraries were linked into the bitcode by the compile (clang links them into
    // every translation unit): code generation needs none, and clang 15 would look for them
    // for a bare amdgcn target. hipcc's code-generation options apply here, where the code is
    // generated.
    c.add_arg("-nogpulib");
    if let Some(r) = &tc.rocm {
        c.add_args(r.codegen_args());
    }
    c.add_args([o.opt_flag.as_str(), "-c"])
        .add_arg(bc)
        .add_arg("-o")
        .add_arg(obj);
    c.inputs = vec![bc.to_path_buf()];
    c.outputs = vec![obj.to_path_buf()];
    c
}

/// `ptxas` turning one PTX file into the architecture's cubin.
fn ptxas_step(o: &CompileOptions, ptxas: &Path, arch: &Arch, ptx: &Path, cubin: &Path) -> Command {
    let mut c = Command::new(ptxas);
    c.env = o.env.clone();
    c.add_arg(format!("-arch={}", arch.offload_arch()))
        .add_arg(&o.ptxas_opt_flag)
        .add_arg(ptx)
        .add_arg("-o")
        .add_arg(cubin);
    c.inputs = vec![ptx.to_path_buf()];
    c.outputs = vec![cubin.to_path_buf()];
    c
}

/// The device link of `objs` (one architecture's relocatable objects) into a code object.
pub(crate) fn device_link(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    arch: &Arch,
    objs: Vec<PathBuf>,
) -> LinkJob {
    let out = cache_dir.join(format!("linked-{}.co", arch.file_tag()));
    let mut c = Command::new(&tc.clang);
    c.env = o.env.clone();
    c.add_arg("--target=amdgcn-amd-amdhsa")
        .add_arg(format!("-mcpu={arch}"))
        .add_arg("-nogpulib")
        // clang 15 needs -nogpulib here, later clangs call it unused: the link step has no
        // flags of the user's, so nothing else is silenced.
        .add_arg("-Wno-unused-command-line-argument")
        .add_args(&objs)
        .add_arg("-o")
        .add_arg(&out);
    LinkJob::new(Target::Device(arch.clone()), c, objs, out)
}

/// A device compile of the empty `source` into `out` with `flag`, unknown and unused flags
/// made errors: whether the compiler accepts the flag
/// ([`Build::flag_if_supported`](crate::builder::Build::flag_if_supported)).
pub(crate) fn flag_probe(
    tc: &Toolchain,
    lang: Language,
    arch: Option<&Arch>,
    flag: &OsString,
    source: &Path,
    out: &Path,
) -> Command {
    let mut c = Command::new(&tc.clang);
    match lang {
        Language::Hip => c.add_args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"]),
        Language::Cuda => c.add_args([
            "-x",
            "cuda",
            "--cuda-device-only",
            "-nocudainc",
            "-nocudalib",
        ]),
    };
    if let Some(a) = arch {
        c.add_arg(format!("--offload-arch={}", a.offload_arch()));
    }
    if lang == Language::Hip {
        c.add_args(["-nogpulib", "-nogpuinc"]);
    }
    c.add_args([
        "-Werror=unknown-warning-option",
        "-Werror=unused-command-line-argument",
        "-Werror=ignored-optimization-argument",
    ]);
    c.add_arg(flag)
        .add_arg("-c")
        .add_arg(source)
        .add_arg("-o")
        .add_arg(out);
    c.inputs = vec![source.to_path_buf()];
    c.outputs = vec![out.to_path_buf()];
    c
}

/// Finds the compiler, recording every place looked at; returns it with how it was chosen.
///
/// A variable that names a compiler (`HIPCXX`, `HIP_CLANG_PATH`, `CLANG`) and names none is an
/// error ([`Error::CompilerVar`]), never a silent fallback to another clang. `rocm` (HIP only)
/// is the install discovery found: its clang comes after those variables.
pub(crate) fn find_clang(
    env: &Env<'_>,
    explicit: Option<&Path>,
    rocm: Option<&Rocm>,
    path: Option<&OsString>,
    cwd: &Path,
) -> Result<(PathBuf, String), Error> {
    let mut searched = Vec::new();
    if let Some(p) = explicit {
        searched.push(p.to_path_buf());
        if p.is_file() {
            return Ok((p.to_path_buf(), "Build::compiler".into()));
        }
        return Err(Error::ToolNotFound {
            tool: "clang (set with Build::compiler)".into(),
            searched,
        });
    }
    let bad_var = |var: &str, value: String, searched: Vec<PathBuf>| Error::CompilerVar {
        var: var.to_string(),
        value,
        searched,
    };
    if let Some(v) = env.get("HIPCXX") {
        let mut tried = Vec::new();
        return match path_or_name(&v, path, cwd, &mut tried) {
            Some(p) => Ok((p, "HIPCXX".into())),
            None => Err(bad_var("HIPCXX", v, tried)),
        };
    }
    if let Some(v) = env.get_os("HIP_CLANG_PATH") {
        return hip_clang_path(&v, rocm);
    }
    // A ROCm install named by ROCM_PATH / HIP_PATH brings its clang.
    if let Some(r) = rocm.filter(|r| r.from_env) {
        if let Some(c) = &r.clang {
            return Ok((
                c.clone(),
                format!("the ROCm install's clang ({})", r.found_by),
            ));
        }
    }
    if let Some(v) = env.get("CLANG") {
        let mut tried = Vec::new();
        return match path_or_name(&v, path, cwd, &mut tried) {
            Some(p) => Ok((p, "CLANG".into())),
            None => Err(bad_var("CLANG", v, tried)),
        };
    }
    if let Some(r) = rocm {
        if let Some(c) = &r.clang {
            searched.push(c.clone());
            if c.is_file() {
                return Ok((
                    c.clone(),
                    format!("the ROCm install's clang ({})", r.found_by),
                ));
            }
        }
    }
    if let Some(p) = newest_versioned(path, &mut searched) {
        return Ok((p, "the newest clang-NN with ld.lld".into()));
    }
    let rocm = PathBuf::from("/opt/rocm/llvm/bin/clang");
    searched.push(rocm.clone());
    if rocm.is_file() {
        return Ok((rocm, "/opt/rocm".into()));
    }
    if let Some(p) = path_or_name(&exe("clang"), path, cwd, &mut searched) {
        return Ok((p, "clang on PATH".into()));
    }
    Err(Error::ToolNotFound {
        tool: "clang".into(),
        searched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The depfile-only command of a PCH's command preprocesses: without `-emit-pch` (which
    /// would make clang write the whole PCH to standard output) or the other PCH flags, with
    /// `-M -MF`, host side.
    #[test]
    fn the_deps_of_a_pch_are_asked_without_making_it() {
        let mut pch = Command::new("clang++");
        pch.add_args([
            "-x",
            "hip",
            "--cuda-device-only",
            "-S",
            "-O3",
            "-Xclang",
            "-emit-obj",
        ])
        .add_args(PCH_FLAGS)
        .add_args(["-Xclang", "-fno-rtti-data", "pre.hip", "-o", "pre.pch"]);
        let deps = deps_only(&pch, Path::new("pre.d"));
        let args: Vec<&str> = deps.args.iter().filter_map(|a| a.to_str()).collect();
        assert_eq!(
            args,
            [
                "-x",
                "hip",
                "--cuda-host-only",
                "-O3",
                "-Xclang",
                "-fno-rtti-data",
                "pre.hip",
                "-M",
                "-MF",
                "pre.d"
            ]
        );
    }
}
