//! NVIDIA's own answers for the CUDA tests on code nobody in the project wrote: the vendored
//! programs of `integration/third-party/` (NVIDIA's cuda-samples and candle's kernels, each with
//! the include directories and nvcc flags its authors build it with), `nvcc -fatbin` of the
//! wheels (see `nvidia`) on them, and what `cuobjdump` says any file holding device code
//! contains: its images (a cubin or PTX, per architecture) and the kernels of each image.
//!
//! Architectures are spelled as nvcc's `-gencode` spells them: a cubin's is `sm_80`, PTX's is
//! the virtual `compute_80` (cuobjdump names both `sm_80`; here the PTX is renamed so that one
//! map holds both). A missing tool or header fails the test, naming `build-support/setup.sh`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

use super::fixtures::process_dir;
use super::nvidia;

/// What a fat binary image is: a cubin (cuobjdump's "ELF file") or PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum ImageKind {
    /// A cubin, for a real architecture (`sm_80`).
    Elf,
    /// PTX, for a virtual architecture (`compute_80`).
    Ptx,
}

/// One image of a fat binary as cuobjdump lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Image {
    /// Cubin or PTX.
    pub(crate) kind: ImageKind,
    /// `sm_NN` for a cubin, `compute_NN` for PTX (suffixes such as `a` kept).
    pub(crate) arch: String,
}

impl Image {
    /// The image of `kind` for the architecture `sm` (`"sm_90a"`), named as [`Image::arch`] says.
    pub(crate) fn of(kind: ImageKind, sm: &str) -> Image {
        let arch = match kind {
            ImageKind::Elf => sm.to_string(),
            ImageKind::Ptx => virtual_arch(sm),
        };
        Image { kind, arch }
    }
}

/// `sm_80` → `compute_80` (a name that is not `sm_…` is returned unchanged).
pub(crate) fn virtual_arch(sm: &str) -> String {
    sm.strip_prefix("sm_")
        .map_or_else(|| sm.to_string(), |n| format!("compute_{n}"))
}

/// A vendored program: one source compiled on its own, as its authors compile it.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    /// A name unique among the programs (`vectorAdd`, `candle-binary`).
    pub(crate) name: &'static str,
    /// The `.cu` file.
    pub(crate) source: PathBuf,
    /// Directories for `-I`, besides the source's own.
    pub(crate) includes: Vec<PathBuf>,
    /// nvcc's other flags, as the authors' build passes them.
    pub(crate) flags: &'static [&'static str],
}

/// `integration/third-party/` of the repository.
pub(crate) fn third_party_dir() -> PathBuf {
    super::repo_root().join("integration/third-party")
}

/// The nvcc flags candle's `candle-kernels/build.rs` passes (to cudaforge, before that to
/// bindgen_cuda), besides the architecture and output options.
pub(crate) const CANDLE_FLAGS: &[&str] = &["--expt-relaxed-constexpr", "-std=c++17", "-O3"];

/// The four cuda-samples programs (`-I Common`, no other flag).
pub(crate) fn cuda_samples() -> Vec<Program> {
    let dir = third_party_dir().join("cuda-samples");
    [
        "vectorAdd",
        "matrixMul",
        "simpleAtomicIntrinsics",
        "simpleTemplates",
    ]
    .into_iter()
    .map(|name| Program {
        name,
        source: dir.join(name).join(format!("{name}.cu")),
        includes: vec![dir.join("Common")],
        flags: &[],
    })
    .collect()
}

/// The nine candle kernel files, with [`CANDLE_FLAGS`].
pub(crate) fn candle_kernels() -> Vec<Program> {
    let dir = third_party_dir().join("candle-kernels/src");
    [
        ("candle-affine", "affine"),
        ("candle-binary", "binary"),
        ("candle-cast", "cast"),
        ("candle-fill", "fill"),
        ("candle-indexing", "indexing"),
        ("candle-reduce", "reduce"),
        ("candle-sort", "sort"),
        ("candle-ternary", "ternary"),
        ("candle-unary", "unary"),
    ]
    .into_iter()
    .map(|(name, file)| Program {
        name,
        source: dir.join(format!("{file}.cu")),
        includes: Vec::new(),
        flags: CANDLE_FLAGS,
    })
    .collect()
}

/// Every vendored program: [`cuda_samples`] then [`candle_kernels`].
pub(crate) fn programs() -> Vec<Program> {
    let mut all = cuda_samples();
    all.extend(candle_kernels());
    all
}

/// The vendored program called `name`, or a panic listing the names.
pub(crate) fn program(name: &str) -> Program {
    let all = programs();
    let names: Vec<_> = all.iter().map(|p| p.name).collect();
    all.into_iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no vendored program {name:?}; there are {names:?}"))
}

/// nvcc's arguments for a cubin and PTX of each `sm_NN`:
/// `-gencode arch=compute_NN,code=[sm_NN,compute_NN]` per architecture.
pub(crate) fn gencodes(archs: &[&str]) -> Vec<String> {
    archs
        .iter()
        .flat_map(|sm| {
            let virt = virtual_arch(sm);
            [
                "-gencode".to_string(),
                format!("arch={virt},code=[{sm},{virt}]"),
            ]
        })
        .collect()
}

const SETUP_HINT: &str = "run `build-support/setup.sh` as root: it installs NVIDIA's CUDA 13 \
     wheels (nvidia-cuda-nvcc, nvidia-nvvm, nvidia-cuda-runtime, nvidia-cuda-crt, \
     nvidia-cuda-cccl, nvidia-cuda-profiler-api, nvidia-cuda-cuobjdump) into \
     /opt/offload-build/nvidia-venv (or OFFLOAD_BUILD_NVIDIA_VENV)";

/// The wheels' CUDA 13 headers that the vendored programs include, or a panic with the hint.
fn require_headers() {
    let include = nvidia::nvidia_dir().join("cu13/include");
    for h in [
        "cuda_runtime.h",
        "crt/host_defines.h",
        "cuda_profiler_api.h",
        "cccl/cuda/std/limits",
    ] {
        let p = include.join(h);
        assert!(p.is_file(), "{} is missing: {SETUP_HINT}", p.display());
    }
}

/// Runs `cmd`; a failure to start or a non-zero exit is a panic with `what` and stderr.
fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run ({e}): {SETUP_HINT}"));
    assert!(
        out.status.success(),
        "{what} failed ({}): {cmd:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `nvcc -fatbin <gencodes> <flags> <source> -o <out>` with the wheels' nvcc (CUDA 13, its
/// own tools first on `PATH`, `NVCC_PREPEND_FLAGS`/`NVCC_APPEND_FLAGS` removed): the fat
/// binary's bytes, also left at `out`.
pub(crate) fn nvcc_fatbin(
    source: &Path,
    gencodes: &[String],
    flags: &[String],
    out: &Path,
) -> Vec<u8> {
    require_headers();
    let path = format!(
        "{}:{}",
        nvidia::cu13_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(nvidia::nvcc());
    cmd.env("PATH", path)
        .env_remove("NVCC_PREPEND_FLAGS")
        .env_remove("NVCC_APPEND_FLAGS")
        .arg("-fatbin")
        .args(gencodes)
        .args(flags)
        .arg(source)
        .arg("-o")
        .arg(out);
    run(&mut cmd, "nvcc -fatbin");
    std::fs::read(out).unwrap_or_else(|e| panic!("read {}: {e}", out.display()))
}

/// [`nvcc_fatbin`] of `program` for `archs` (`sm_NN`: a cubin and PTX each), with its `-I`s and
/// flags.
pub(crate) fn nvcc_program(program: &Program, archs: &[&str], out: &Path) -> Vec<u8> {
    let mut flags: Vec<String> = program
        .includes
        .iter()
        .map(|d| format!("-I{}", d.display()))
        .collect();
    flags.extend(program.flags.iter().map(|f| f.to_string()));
    nvcc_fatbin(&program.source, &gencodes(archs), &flags, out)
}

/// [`nvcc_program`] of `program` for `archs`, compiled once per test process (tests that compare
/// their own build of a program with nvcc's share it): the fat binary's path, in this
/// process's `$CARGO_TARGET_TMPDIR/cuda-ref-<pid>/`.
pub(crate) fn reference_fatbin(program: &Program, archs: &[&str]) -> PathBuf {
    let name = format!("{}.{}.fatbin", program.name, archs.join("-"));
    once_per_process(&name, |out| {
        nvcc_program(program, archs, out);
    })
}

/// The file `name` in this process's `$CARGO_TARGET_TMPDIR/cuda-ref-<pid>/`, written by `make`
/// the first time it is asked for (a test asking while another makes it waits for it).
pub(crate) fn once_per_process(name: &str, make: impl FnOnce(&Path)) -> PathBuf {
    type Slot = Arc<OnceLock<PathBuf>>;
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    static MADE: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let slot = Arc::clone(
        MADE.get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name.to_string())
            .or_default(),
    );
    slot.get_or_init(|| {
        let out = DIR.get_or_init(|| process_dir("cuda-ref-")).join(name);
        make(&out);
        out
    })
    .clone()
}

/// `cuobjdump <args> <file>`'s stdout.
fn cuobjdump(args: &[&str], file: &Path) -> String {
    let what = format!("cuobjdump {} {}", args.join(" "), file.display());
    let out = run(
        Command::new(nvidia::cuobjdump()).args(args).arg(file),
        &what,
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The images of `file` (a fat binary, or an object or executable holding one), in
/// cuobjdump's order: `cuobjdump --list-elf --list-ptx`.
pub(crate) fn images(file: &Path) -> Vec<Image> {
    parse_images(&cuobjdump(&["--list-elf", "--list-ptx"], file))
}

/// [`images`] from cuobjdump's listing: `ELF file    1: <name>.sm_80.cubin`,
/// `PTX file    1: <name>.sm_80.ptx` (the architecture is the name's second-to-last part).
pub(crate) fn parse_images(listing: &str) -> Vec<Image> {
    listing
        .lines()
        .filter_map(|line| {
            let (label, name) = line.split_once(':')?;
            let kind = match label.split_whitespace().next()? {
                "ELF" => ImageKind::Elf,
                "PTX" => ImageKind::Ptx,
                _ => return None,
            };
            let sm = name.trim().rsplit('.').nth(1)?;
            Some(Image::of(kind, sm))
        })
        .collect()
}

/// The kernels of each image of `file`, by architecture (`sm_NN` for cubins, `compute_NN` for
/// PTX; an image without kernels maps to an empty set): for cubins the symbols of type `FUNC`
/// marked `ENTRY` (`cuobjdump -symbols`), for PTX the `.entry` names (`cuobjdump -ptx`), both
/// mangled as stored. Several fat binaries in one file add up per architecture.
pub(crate) fn kernel_names(file: &Path) -> BTreeMap<String, BTreeSet<String>> {
    parse_kernel_names(&cuobjdump(&["-symbols", "-ptx"], file))
}

/// [`kernel_names`] from the text of `cuobjdump -symbols -ptx`: sections that open with
/// `Fatbin elf code:` or `Fatbin ptx code:` and name their `arch = sm_NN`.
pub(crate) fn parse_kernel_names(dump: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut kind = None;
    let mut arch: Option<String> = None;
    for line in dump.lines() {
        match line.trim() {
            "Fatbin elf code:" => (kind, arch) = (Some(ImageKind::Elf), None),
            "Fatbin ptx code:" => (kind, arch) = (Some(ImageKind::Ptx), None),
            t if arch.is_none() && t.starts_with("arch = ") => {
                let Some(k) = kind else { continue };
                let a = Image::of(k, t["arch = ".len()..].trim()).arch;
                names.entry(a.clone()).or_default();
                arch = Some(a);
            }
            t => {
                let (Some(k), Some(a)) = (kind, &arch) else {
                    continue;
                };
                let name = match k {
                    ImageKind::Elf => cubin_entry(t),
                    ImageKind::Ptx => ptx_entry(t),
                };
                if let Some(n) = name {
                    names.get_mut(a).unwrap().insert(n.to_string());
                }
            }
        }
    }
    names
}

/// The kernel of a `-symbols` row `FUNC  GLOBAL  DEFAULT  ENTRY  <name>`.
fn cubin_entry(row: &str) -> Option<&str> {
    let f: Vec<&str> = row.split_whitespace().collect();
    (f.len() == 5 && f[0] == "FUNC" && f[3] == "ENTRY").then(|| f[4])
}

/// The kernel of a PTX line `[.visible|.weak] .entry <name>(` (comments ignored).
fn ptx_entry(line: &str) -> Option<&str> {
    let code = line.split("//").next().unwrap_or("");
    let mut tokens = code.split_whitespace();
    tokens.find(|t| *t == ".entry")?;
    let name = tokens.next()?.split('(').next()?;
    (!name.is_empty()).then_some(name)
}
