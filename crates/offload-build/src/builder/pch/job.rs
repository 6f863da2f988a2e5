//! A precompiled preamble as the plan hands it on ([`PchJob`]): the command that makes it, its
//! cache files and key, and the arguments a compile uses it with. Spelled here, run by the
//! jobs stage.

use crate::builder::arch::{Arch, Target};
use crate::builder::command::{Command, Domain, KeyBuilder};
use crate::builder::job::{self, CompileJob, CompileOptions};
use crate::builder::pch::preamble::{RUNTIME_PREAMBLE, preamble_len};
use crate::builder::toolchain::Toolchain;
use crate::builder::toolchain::clang;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::xxh3_128;

/// One planned precompiled preamble: the preamble file to write, the command making the PCH
/// from it, and the files named after its key in the cache directory.
#[derive(Clone, Debug)]
pub(crate) struct PchJob {
    /// What the compiles using it build: device code for an architecture, or host objects.
    pub target: Target,
    /// The preamble's bytes (the source's first [`PchJob::len`] bytes).
    pub preamble: Vec<u8>,
    /// Where the jobs stage writes [`PchJob::preamble`] before the command runs (named
    /// after the key; its content never changes).
    pub preamble_file: PathBuf,
    /// The command making the PCH (`-S -Xclang -emit-pch`), without the launcher.
    pub command: Command,
    /// The host-side preprocessing of the preamble file that writes the depfile, for
    /// compilers that write none in a device-only compile (clang 22).
    pub deps_only: Command,
    /// The PCH.
    pub pch: PathBuf,
    /// Its depfile: the headers whose content the record checks.
    pub depfile: PathBuf,
    /// Its cache record (as a compile job's: inputs' content, outputs, diagnostics).
    pub record: PathBuf,
    /// The key: compiler identity, every argument, the preamble's bytes and the
    /// source directory (through `-iquote`).
    pub key: u128,
    /// The key without the preamble's bytes: the PCHs of one family differ only in their
    /// preamble, so one made of a preamble's first lines serves every source starting so.
    pub family: u128,
}

impl PchJob {
    /// The directory where the PCH of `p` is made in the background
    /// ([`crate::builder::pch::background`]): beside its record, `.bg`.
    pub(crate) fn background_dir(&self) -> PathBuf {
        self.record.with_extension("bg")
    }

    /// The paths of `p`'s outputs (the PCH, its depfile) in `dir`, under their own file names.
    pub(crate) fn in_dir<'p>(&'p self, dir: &'p Path) -> impl Fn(&Path) -> Option<PathBuf> + 'p {
        move |q: &Path| {
            (q == self.pch || q == self.depfile)
                .then(|| dir.join(q.file_name().unwrap_or_default()))
        }
    }

    /// The preamble's length (the compile's `-preamble-bytes` when it is the source's own).
    pub fn len(&self) -> usize {
        self.preamble.len()
    }

    /// Whether a build made it or asked for it: its record, its `.seen` mark (the next build
    /// makes it) or its background directory.
    pub(crate) fn is_known(&self) -> bool {
        self.record.is_file()
            || self.record.with_extension("seen").is_file()
            || self.background_dir().is_dir()
    }
}

/// Flags with which a compile gets no PCH: they change how a PCH is read or made
/// (`-include`, `-imacros`, `-Xclang`, modules, `-save-temps`), ask for warnings a PCH
/// would hide (`-Weverything`, `-Wunused-macros`), or choose C++20 or later, where clang 15
/// and 19 reject the preamble of `hip/hip_runtime.h` ("'operator new' has different
/// definitions in different modules", from `cuda_wrappers/new`), or debug information
/// (`-g…`): clang does not emit the debug entries of using-declarations it read from a PCH
/// (`DW_TAG_imported_declaration` of `using std::abs`), so the code object differs.
pub(crate) fn flag_refuses_pch(flag: &OsStr) -> bool {
    let f = flag.as_encoded_bytes();
    let prefixes: [&[u8]; 8] = [
        b"-include",
        b"-imacros",
        b"-Xclang",
        b"-fmodules",
        b"-save-temps",
        b"-emit-",
        b"-Weverything",
        b"-Wunused-macros",
    ];
    let cxx20 = [
        b"-std=c++2".as_slice(),
        b"-std=gnu++2",
        b"--std=c++2",
        b"--std=gnu++2",
    ];
    let debug = f.starts_with(b"-g") && !f.starts_with(b"-gno-");
    prefixes.iter().any(|p| f.starts_with(p))
        || cxx20.iter().any(|p| f.starts_with(p))
        || debug
        || f == b"--precompile"
}

/// The PCH job for the preamble of `source` (whose content is `text`) for `arch`, with the
/// options of its compile, or `None` when the source has no preamble or a flag refuses PCH
/// ([`flag_refuses_pch`]). Sources of one directory with the same preamble get the same job.
pub(crate) fn pch_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    text: &[u8],
    arch: &Arch,
    rdc: bool,
) -> Option<PchJob> {
    whole_preamble(text).and_then(|p| prefix_job(o, tc, cache_dir, source, p, arch, rdc))
}

/// The source's preamble (its first [`preamble_len`] bytes), when it has one.
fn whole_preamble(text: &[u8]) -> Option<Vec<u8>> {
    let len = preamble_len(text);
    (len > 0).then(|| text[..len].to_vec())
}

/// [`pch_job`] for `preamble`: the source's own preamble, or the [`normalized`](crate::builder::pch::preamble::normalized) text of its
/// first directives ([`prefer_shared`](crate::builder::pch::shared::prefer_shared)).
pub(crate) fn prefix_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    preamble: Vec<u8>,
    arch: &Arch,
    rdc: bool,
) -> Option<PchJob> {
    let (args, _) = clang::device_args(o, tc, arch, rdc);
    if preincludes_hip_wrapper(&args) {
        return None;
    }
    let target = Target::Device(arch.clone());
    job_of_args(o, tc, cache_dir, source, preamble, &target, args)
}

/// Whether a HIP device compile of `args` pre-includes clang's HIP runtime wrapper
/// (`__clang_hip_runtime_wrapper.h`: a ROCm install of HIP newer than 3.5, as `--hip-version`
/// says, without `-nogpuinc` or `-nohipwrapperinc`) and keeps the wrapper's weak device
/// functions (`__cxa_pure_virtual`, `__cxa_deleted_virtual`) in its code object: an
/// `-fgpu-rdc` compile, or one not optimized (`-O0`, or no `-O`), where clang does not
/// internalize them away. Clang emits them after the others when they come from a PCH and
/// before them when it parses the wrapper, so such a code object would differ from the
/// compile's without PCH: the device compile gets none. An optimized whole-program compile
/// (hipcc's `-O3`) drops them, and its code object is the same either way (tested against
/// hipcc in `integration/hip_fp16_crate.rs`); the host compile emits none of them.
pub(crate) fn preincludes_hip_wrapper(args: &[OsString]) -> bool {
    let last_of = |pick: &dyn Fn(&str) -> bool| last_arg(args, pick);
    let rdc = last_of(&|a| a == "-fgpu-rdc" || a == "-fno-gpu-rdc") == Some("-fgpu-rdc");
    let unoptimized = matches!(last_of(&|a| a.starts_with("-O")), None | Some("-O0"));
    includes_hip_wrapper(args) && (rdc || unoptimized)
}

/// Whether a HIP compile of `args` (device or host) pre-includes clang's HIP runtime wrapper:
/// `-x hip`, a `--hip-version` newer than 3.5 (the last one), no `-nogpuinc` or
/// `-nohipwrapperinc`. Its parse is about half of a small source's compile, the same for
/// every source compiled with the same flags: a PCH of it alone (an empty preamble) serves
/// them all ([`crate::builder::pch::prefer_wrapper`]).
pub(crate) fn includes_hip_wrapper(args: &[OsString]) -> bool {
    let has = |f: &str| args.iter().any(|a| a == f);
    let last_of = |pick: &dyn Fn(&str) -> bool| last_arg(args, pick);
    // The last `--hip-version` is the one clang takes (a user's flag after the install's).
    let newer = last_of(&|a| a.starts_with("--hip-version="))
        .and_then(|a| a.strip_prefix("--hip-version="))
        .is_some_and(|v| {
            let mut n = v.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
            (n.next().unwrap_or(0), n.next().unwrap_or(0)) > (3, 5)
        });
    let hip = args.windows(2).any(|w| w[0] == "-x" && w[1] == "hip");
    hip && newer && !has("-nogpuinc") && !has("-nohipwrapperinc")
}

/// The last of `args` that `pick` takes (clang takes the last of a flag's spellings).
fn last_arg<'a>(args: &'a [OsString], pick: &dyn Fn(&str) -> bool) -> Option<&'a str> {
    args.iter()
        .rev()
        .filter_map(|a| a.to_str())
        .find(|a| pick(a))
}

/// The precompiled preamble of the host compile of `source` (content `text`) in a host-code
/// build ([`clang::host_job`]), filed under [`Target::Host`]; `None` as for [`pch_job`].
pub(crate) fn host_pch_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    text: &[u8],
    archs: &[Arch],
) -> Option<PchJob> {
    whole_preamble(text).and_then(|p| host_prefix_job(o, tc, cache_dir, source, p, archs))
}

/// [`host_pch_job`] for `preamble`: the source's own, or the first directives it shares with
/// other sources ([`prefer_shared`](crate::builder::pch::prefer_shared)).
pub(crate) fn host_prefix_job(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    preamble: Vec<u8>,
    archs: &[Arch],
) -> Option<PchJob> {
    let args = clang::host_args(o, tc, archs);
    job_of_args(o, tc, cache_dir, source, preamble, &Target::Host, args)
}

/// The arguments making a PCH from the compile's `args`, with a stand-in for the preamble
/// file and [`job::OUT`] for the PCH; `None` when a flag refuses PCH, or for an `empty`
/// preamble (the implicit includes alone) without clang's HIP runtime wrapper among them.
fn making_args(
    mut args: Vec<OsString>,
    source: &Path,
    preamble: &[u8],
) -> Option<(Vec<OsString>, PathBuf)> {
    let empty = preamble.is_empty();
    if args.iter().any(|f| flag_refuses_pch(f)) || (empty && !includes_hip_wrapper(&args)) {
        return None;
    }
    // The PCH is the front end's output alone: `-S` (HIP's `-c` would link a code object).
    for a in args.iter_mut().filter(|a| *a == "-c") {
        *a = OsString::from("-S");
    }
    // The preamble's quoted includes are the source's directory's (the preamble file is in
    // the cache); an empty one and HIP's runtime header alone have none, and serve the
    // sources of every directory.
    if !empty && preamble != RUNTIME_PREAMBLE {
        let dir = source.parent().unwrap_or(Path::new("/"));
        args.extend(["-iquote".into(), dir.as_os_str().to_os_string()]);
    }
    args.extend(clang::PCH_FLAGS.map(OsString::from));
    let stand_in = PathBuf::from("<preamble>");
    args.extend([
        stand_in.clone().into_os_string(),
        "-o".into(),
        job::OUT.into(),
    ]);
    Some((args, stand_in))
}

/// The PCH job of `preamble` made with the compile's arguments `args` (up to the user's
/// flags, `-c` among them).
fn job_of_args(
    o: &CompileOptions,
    tc: &Toolchain,
    cache_dir: &Path,
    source: &Path,
    preamble: Vec<u8>,
    target: &Target,
    args: Vec<OsString>,
) -> Option<PchJob> {
    let (args, stand_in) = making_args(args, source, &preamble)?;
    // No launcher: the PCH is cached here by content already (and `sccache` or `ccache`
    // cannot cache `-emit-pch`); the compile using it goes through the launcher.
    let mut c = Command::new(&tc.clang);
    c.env = o.env.clone();
    c.args = args;
    c.inputs = vec![stand_in];
    let mut k = KeyBuilder::new(Domain::Preamble);
    k.u128(tc.identity);
    let mut f = k.clone();
    c.add_to_key(&mut k, |_| Some(xxh3_128(&preamble)));
    let key = k.finish();
    c.add_to_key(&mut f, |_| Some(0));
    let family = f.finish();
    let base = cache_dir.join(format!(
        "preamble-{}-{:016x}",
        target.file_tag(),
        key as u64
    ));
    let (preamble_file, pch, depfile) = (
        base.with_extension("hip"),
        base.with_extension("pch"),
        base.with_extension("d"),
    );
    for a in c.args.iter_mut() {
        if *a == *"<preamble>" {
            *a = preamble_file.clone().into_os_string();
        } else if *a == *job::OUT {
            *a = pch.clone().into_os_string();
        }
    }
    c.inputs = vec![preamble_file.clone()];
    c.outputs = vec![pch.clone()];
    if o.depfile_in_compile {
        c.add_args(["-MD", "-MF"]).add_arg(&depfile);
        c.depfile = Some(depfile.clone());
    }
    let deps_only = clang::deps_only(&c, &depfile);
    Some(PchJob {
        target: target.clone(),
        preamble,
        preamble_file,
        command: c,
        deps_only,
        pch,
        depfile,
        record: base.with_extension("rec"),
        key,
        family,
    })
}

/// The arguments that make a compile use `pch`, standing for the source's first `skip`
/// bytes (before the source): `-include-pch` and `-preamble-bytes=<skip>,1`.
pub(crate) fn use_args(pch: &PchJob, skip: usize) -> Vec<OsString> {
    vec![
        "-Xclang".into(),
        "-include-pch".into(),
        "-Xclang".into(),
        pch.pch.clone().into_os_string(),
        "-Xclang".into(),
        format!("-preamble-bytes={skip},1").into(),
    ]
}

/// The compile of `job` using `pch`: its first step with [`use_args`] before the source and
/// the PCH among its inputs. The job's key, `-cuid` and file names stay those of the compile
/// without PCH (the device code is the same), so either fills the same cache entry.
pub(crate) fn compile_with_pch(job: &CompileJob, pch: &PchJob) -> Command {
    let mut c = job.steps[0].clone();
    let at = c
        .args
        .iter()
        .position(|a| Path::new(a) == job.source)
        .unwrap_or(c.args.len());
    c.args.splice(at..at, use_args(pch, job.pch_skip));
    c.inputs.push(pch.pch.clone());
    c
}
