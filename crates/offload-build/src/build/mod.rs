//! The build API for `build.rs`: sources and architectures in, a fat binary out.
//!
//! [`Build`] is shaped like `cc::Build`: chained `&mut self` setters, then
//! [`compile`](Build::compile) (panics with a readable message) or
//! [`try_compile`](Build::try_compile) (returns a typed [`Error`]). One device compile runs per
//! (source, architecture), in parallel under Cargo's jobserver, and only when its inputs
//! changed; the code objects are packed with this crate's own bundle / offload-binary writers.
//!
//! ```no_run
//! // build.rs
//! offload_build::Build::new()
//!     .files(["kernels/vector_add.hip", "kernels/scale.hip"])
//!     .include("kernels/include")
//!     .define("BLOCK", Some("256"))
//!     .archs("gfx90a;gfx942:xnack+;gfx1100")
//!     .compile("kernels");
//! // src/main.rs: include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
//! //   kernels::fatbin(), kernels::ARCHS, kernels::KERNELS
//! ```
//!
//! # What a build does
//!
//! 1. Finds the compiler ([`tool`](self#toolchain-discovery) order below) and asks it once
//!    which processors it supports (cached by the compiler's path, size and mtime).
//! 2. Resolves the architectures (table below) and checks them against the compiler.
//! 3. Runs one job per (source, architecture):
//!    `clang -x hip --offload-arch=<arch> --cuda-device-only --no-gpu-bundle-output -c <src>
//!    -o <obj> -MD -MF <depfile> -O3 [-nogpulib -nogpuinc | --rocm-path=<rocm>] <includes>
//!    <defines> <flags>`, prefixed by the launcher when one is set. An architecture compiled from
//!    several sources is compiled with `-fgpu-rdc` and device-linked once per architecture
//!    (`clang --target=amdgcn-amd-amdhsa -mcpu=<arch>`). CUDA sources give PTX per `sm_XX`
//!    (`-nocudainc -nocudalib` without a CUDA install) and, when `ptxas` is found, a cubin.
//! 4. Skips every job whose inputs (source and every header the depfile names) have the same
//!    content as at its last successful run, with the same compiler and arguments.
//! 5. Packs the results: a HIP fat binary (`.hipfb`: host entry plus
//!    `hipv4-amdgcn-amd-amdhsa--<arch>` entries, 4096-aligned, as clang writes it), optionally
//!    compressed (`CCOB`), or offload binaries (`.llvm.offloading` content).
//! 6. Writes `$OUT_DIR/<name>.rs` (see [`Build::try_compile`]) and, for the object
//!    [`Embed`] modes, a static library `lib<name>.a` to link.
//! 7. Tells Cargo: `rerun-if-changed` for every source, header and image,
//!    `rerun-if-env-changed` for every variable read (`PATH` included), `warning` for every
//!    fallback.
//!
//! # Architecture resolution
//!
//! The first source that names at least one architecture wins:
//!
//! | # | Source | Example |
//! |---|---|---|
//! | 1 | [`Build::arch`] / [`Build::archs`] | `.archs("gfx90a;gfx942:xnack+;gfx11-generic")` |
//! | 2 | `<CRATE>_OFFLOAD_ARCH` (package name upper-cased, `-` → `_`) | `MY_KERNELS_OFFLOAD_ARCH=gfx1100` |
//! | 3 | `OFFLOAD_ARCH` | `OFFLOAD_ARCH="gfx90a;gfx1201"` |
//! | 4 | HIP: `AMDGPU_TARGETS`, `GPU_TARGETS`, `PYTORCH_ROCM_ARCH`, `HIP_ARCHITECTURES`; CUDA: `CUDAARCHS`, `CUDA_COMPUTE_CAP` | `PYTORCH_ROCM_ARCH="gfx90a;gfx942"` |
//! | 5 | this machine's GPUs: `amdgpu-arch` (next to the compiler, then on `PATH`; 10 s timeout), then `/sys/class/kfd`; CUDA: `nvptx-arch`, then `nvidia-smi` — with a `cargo:warning` | |
//! | 6 | the default set [`DEFAULT_HIP_ARCHS`] / [`DEFAULT_CUDA_ARCHS`] (those the compiler knows), with a `cargo:warning` | |
//!
//! Lists are separated by `;`, `,` or white space. An item may be a target ID (`gfx90a`,
//! `gfx90a:xnack+`, `gfx11-generic`), an NVIDIA architecture (`sm_90`, `compute_90`, and the
//! CMake spellings `90`, `90-real`, `90-virtual`), `native` (this machine's GPUs; with none, the
//! default set and a warning — **a build never fails for lack of a GPU**) or `default`.
//! [`Build::file_archs`] replaces the list for the sources it matches.
//!
//! # Toolchain discovery
//!
//! The compiler is the first that exists of: [`Build::compiler`]; `HIPCXX` (path or name on
//! `PATH`); `HIP_CLANG_PATH/clang`; `ROCM_PATH/llvm/bin/clang`; `HIP_PATH/llvm/bin/clang`;
//! `CLANG` (path or name on `PATH`); `clang-NN` on `PATH` and `/usr/lib/llvm-NN/bin/clang`,
//! newest `NN` first among those with `ld.lld` beside them (Debian's `clang-NN` without
//! `lld-NN` cannot link device code); `/opt/rocm/llvm/bin/clang`; `clang` on `PATH`. When none exists,
//! [`Error::ToolNotFound`] lists every path tried. A ROCm install (from `ROCM_PATH`, `HIP_PATH`,
//! the compiler's location or `/opt/rocm`, recognised by `include/hip/hip_runtime.h`) is passed
//! with `--rocm-path`; without one, sources are compiled with `-nogpulib -nogpuinc` and must not
//! include `hip/hip_runtime.h`. The compiler's LLVM version decides the version-dependent output
//! (offload kind numbering in offload binaries, the compressed-bundle format version).
//!
//! # Environment variables
//!
//! Every variable is read through one gateway that prints `cargo:rerun-if-env-changed`.
//!
//! | Variable | Default | Effect |
//! |---|---|---|
//! | `<CRATE>_OFFLOAD_ARCH` | unset | architectures for this crate only (row 2 above) |
//! | `OFFLOAD_ARCH` | unset | architectures for every crate using offload-build |
//! | `AMDGPU_TARGETS`, `GPU_TARGETS`, `PYTORCH_ROCM_ARCH`, `HIP_ARCHITECTURES` | unset | HIP architectures, as ROCm libraries and PyTorch read them |
//! | `CUDAARCHS`, `CUDA_COMPUTE_CAP` | unset | CUDA architectures (CMake / candle conventions) |
//! | `HIPCXX`, `HIP_CLANG_PATH`, `CLANG` | unset | the compiler (see discovery) |
//! | `ROCM_PATH`, `HIP_PATH` | unset | ROCm install: its clang and `--rocm-path` |
//! | `CUDA_PATH`, `CUDA_HOME`, `CUDA_ROOT` | `/usr/local/cuda` | CUDA install: `--cuda-path` and `ptxas` |
//! | `PATH` | | where `clang-NN`, `clang`, `ptxas`, `amdgpu-arch` are looked for |
//! | `HIPFLAGS`, `CUDAFLAGS` | unset | extra compiler flags (white-space separated), after the builder's |
//! | `OFFLOAD_BUILD_LAUNCHER` | unset | a compiler launcher put in front of every source compile (`sccache`, `ccache`; may hold arguments) |
//! | `RUSTC_WRAPPER` | unset | used as the launcher when it is `sccache`, `cachepot` or `buildcache` and `OFFLOAD_BUILD_LAUNCHER` is unset |
//! | `OFFLOAD_BUILD_MAX_JOBS` | unlimited | at most this many device compiles at once (on top of Cargo's jobserver) |
//! | `OFFLOAD_BUILD_CACHE_DIR` | `$OUT_DIR/offload-build-cache` | where compiled objects and cache records are kept (may be shared between builds) |
//! | `NUM_JOBS` (set by Cargo) | CPUs | parallelism when no jobserver is inherited |
//!
//! Values set with [`Build::env`] take precedence over the process environment.
//!
//! # Self-check of the docs
//!
//! [`ENV_VARS`] lists the variables above; a unit test checks that each appears in this table
//! and in the README.

// Errors carry the failed command's full output by design; a build script's error path is not
// hot, and flat variants are easier for build scripts to match than boxed ones.
#![allow(clippy::result_large_err)]

mod arch;
mod cache;
mod codegen;
mod embed_glue;
mod env;
mod error;
mod jobs;
mod tool;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use xxhash_rust::xxh3::Xxh3;

pub use arch::{Arch, ArchError, DEFAULT_CUDA_ARCHS, DEFAULT_HIP_ARCHS};
pub use codegen::{amdgpu_kernels, ptx_kernels};
pub use error::Error;

use offload_formats::bundle::compressed::{self, CompressOptions, Version};
use offload_formats::id::EntryId;
use offload_formats::package::{ImageKind, LlvmVersion, OffloadKind};

use cache::{Hasher, Record};
use env::{Directives, Env};
use tool::Toolchain;

/// Every environment variable the build reads (besides those Cargo sets), as documented in the
/// [module docs](self#environment-variables). `<CRATE>_OFFLOAD_ARCH` is listed by its pattern.
pub const ENV_VARS: &[&str] = &[
    "<CRATE>_OFFLOAD_ARCH",
    "OFFLOAD_ARCH",
    "AMDGPU_TARGETS",
    "GPU_TARGETS",
    "PYTORCH_ROCM_ARCH",
    "HIP_ARCHITECTURES",
    "CUDAARCHS",
    "CUDA_COMPUTE_CAP",
    "HIPCXX",
    "HIP_CLANG_PATH",
    "CLANG",
    "ROCM_PATH",
    "HIP_PATH",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDA_ROOT",
    "PATH",
    "HIPFLAGS",
    "CUDAFLAGS",
    "OFFLOAD_BUILD_LAUNCHER",
    "RUSTC_WRAPPER",
    "OFFLOAD_BUILD_MAX_JOBS",
    "OFFLOAD_BUILD_CACHE_DIR",
    "NUM_JOBS",
];

/// The source language.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Language {
    /// HIP for AMD GPUs (`.hip`; `-x hip`).
    #[default]
    Hip,
    /// CUDA for NVIDIA GPUs (`.cu`; `-x cuda`), compiled by clang to PTX (and cubin with
    /// `ptxas`).
    Cuda,
}

/// The container the device code is packed into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Container {
    /// A clang-offload-bundler bundle (what the HIP runtime registers from `.hip_fatbin` and
    /// `hipModuleLoadData` loads). The default for HIP.
    Bundle,
    /// Offload binaries (clang-offload-packager / `.llvm.offloading`, the new offload driver).
    /// The default (and the only choice) for CUDA.
    OffloadBinary,
}

/// How the packed device code reaches the program.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Embed {
    /// A host object with `.hip_fatbin`, the `HIPF` wrapper and a constructor that registers
    /// the fat binary and every kernel with the HIP runtime (what clang emits for a HIP
    /// translation unit); kernels are launched through the handles in the generated `kernels`
    /// module. Linked as `lib<name>.a`.
    HipObject,
    /// A host object with the container in `.llvm.offloading`, for `clang-linker-wrapper`
    /// (the new offload driver). Linked as `lib<name>.a`.
    NewDriverObject,
    /// Only the container file in `OUT_DIR`, included in the program by the generated
    /// `fatbin()` (`include_bytes!`), to load at run time (`hipModuleLoadData`). Links nothing.
    #[default]
    FatbinOnly,
}

/// Values [`Build::archs`] takes: a CMake-style list string, or a collection of [`Arch`]s or
/// strings.
pub trait ArchList {
    /// Appends the items (as strings, parsed when compiling).
    fn append_to(self, out: &mut Vec<String>);
}

impl ArchList for &str {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.to_string());
    }
}

impl ArchList for String {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self);
    }
}

impl ArchList for &String {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.clone());
    }
}

impl ArchList for Arch {
    fn append_to(self, out: &mut Vec<String>) {
        out.push(self.to_string());
    }
}

impl<S: AsRef<str>, const N: usize> ArchList for [S; N] {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

impl<S: AsRef<str>> ArchList for &[S] {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

impl<S: AsRef<str>> ArchList for Vec<S> {
    fn append_to(self, out: &mut Vec<String>) {
        out.extend(self.iter().map(|s| s.as_ref().to_string()));
    }
}

/// A `build.rs` builder for GPU device code, in the style of `cc::Build`.
///
/// See the [module docs](self) for what a build does, the architecture resolution order and
/// the environment variables.
#[derive(Clone, Debug)]
pub struct Build {
    language: Option<Language>,
    files: Vec<PathBuf>,
    globs: Vec<String>,
    includes: Vec<PathBuf>,
    defines: Vec<(String, Option<String>)>,
    flags: Vec<String>,
    archs: Vec<String>,
    file_archs: Vec<(String, String)>,
    images: Vec<(String, PathBuf)>,
    container: Option<Container>,
    compress: Option<CompressOptions>,
    compress_auto_version: bool,
    embed: Embed,
    out_dir: Option<PathBuf>,
    cargo_metadata: bool,
    compiler: Option<PathBuf>,
    env: BTreeMap<OsString, Option<OsString>>,
    jobserver: Option<jobserver::Client>,
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

/// What [`Build::try_compile`] produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Compiled {
    /// The container file in `OUT_DIR` (`<name>.hipfb` or `<name>.offloadbin`).
    pub fatbin: PathBuf,
    /// The generated `<name>.rs` in `OUT_DIR`.
    pub generated: PathBuf,
    /// The static library holding the host object (object [`Embed`] modes only).
    pub library: Option<PathBuf>,
    /// The architectures in the container, sorted.
    pub archs: Vec<String>,
    /// Where the architectures came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, …).
    pub arch_origin: String,
    /// Kernel symbol names found in the device code, sorted.
    pub kernels: Vec<String>,
    /// The container format.
    pub container: Container,
    /// Whether the container is a compressed bundle.
    pub compressed: bool,
    /// The compiler used (none when only [`Build::image`]s were packed).
    pub compiler: Option<PathBuf>,
    /// Its `--version` line.
    pub compiler_version: Option<String>,
    /// Jobs (compiles and device links) that ran.
    pub jobs_run: usize,
    /// Jobs whose cached result was used.
    pub jobs_cached: usize,
    /// Every `cargo:` directive of this build (without the `cargo:` prefix), in order.
    pub cargo_directives: Vec<String>,
    /// The warnings among them.
    pub warnings: Vec<String>,
}

/// What [`Build::try_resolve_archs`] found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResolvedArchs {
    /// The architectures, in resolution order, without duplicates.
    pub archs: Vec<String>,
    /// Where they came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, `default`, …).
    pub origin: String,
    /// The compiler they were checked against.
    pub compiler: PathBuf,
    /// The fallback warnings (no GPU for `native`, no architecture set).
    pub warnings: Vec<String>,
}

impl Build {
    /// A builder with nothing set: HIP, architectures from the environment, a bundle, no
    /// compression, [`Embed::FatbinOnly`], Cargo directives printed.
    pub fn new() -> Build {
        Build {
            language: None,
            files: Vec::new(),
            globs: Vec::new(),
            includes: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
            archs: Vec::new(),
            file_archs: Vec::new(),
            images: Vec::new(),
            container: None,
            compress: None,
            compress_auto_version: true,
            embed: Embed::default(),
            out_dir: None,
            cargo_metadata: true,
            compiler: None,
            env: BTreeMap::new(),
            jobserver: None,
        }
    }

    /// The source language; by default CUDA when every source ends in `.cu`, HIP otherwise.
    pub fn language(&mut self, language: Language) -> &mut Build {
        self.language = Some(language);
        self
    }

    /// Adds a source file.
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds source files.
    pub fn files<P: AsRef<Path>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut Build {
        for p in paths {
            self.file(p);
        }
        self
    }

    /// Adds the source files matching a glob pattern (`kernels/**/*.hip`), expanded (sorted)
    /// when compiling; the pattern's directory is watched for new files.
    pub fn glob(&mut self, pattern: &str) -> &mut Build {
        self.globs.push(pattern.to_string());
        self
    }

    /// Adds an include directory (`-I`).
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Defines a macro (`-DNAME` or `-DNAME=VALUE`).
    pub fn define(&mut self, name: &str, value: Option<&str>) -> &mut Build {
        self.defines
            .push((name.to_string(), value.map(str::to_string)));
        self
    }

    /// Adds a compiler flag, passed to every source compile after the crate's own flags
    /// (so `-O2` here overrides the default `-O3`).
    pub fn flag(&mut self, flag: &str) -> &mut Build {
        self.flags.push(flag.to_string());
        self
    }

    /// Adds compiler flags.
    pub fn flags<S: AsRef<str>>(&mut self, flags: impl IntoIterator<Item = S>) -> &mut Build {
        for f in flags {
            self.flag(f.as_ref());
        }
        self
    }

    /// Adds architectures: one [`Arch`], or a CMake-style list such as
    /// `"gfx90a;gfx942:xnack+;gfx11-generic"` (also `native`, `default`). Setting any takes
    /// precedence over the environment (see the [resolution order](self#architecture-resolution)).
    /// Checked when compiling.
    pub fn arch(&mut self, arch: impl AsRef<str>) -> &mut Build {
        self.archs.push(arch.as_ref().to_string());
        self
    }

    /// Adds several architectures: a CMake-style list (`"gfx90a;gfx942"`), or a collection of
    /// [`Arch`] values or strings (each may itself be a list).
    pub fn archs(&mut self, archs: impl ArchList) -> &mut Build {
        archs.append_to(&mut self.archs);
        self
    }

    /// Compiles the sources matching `pattern` (a path or a glob, relative like the sources)
    /// for `archs` instead of the resolved list, for example MFMA kernels only for
    /// `"gfx90a;gfx942"`. The first matching override wins.
    pub fn file_archs(&mut self, pattern: &str, archs: &str) -> &mut Build {
        self.file_archs
            .push((pattern.to_string(), archs.to_string()));
        self
    }

    /// Packs a code object built elsewhere (by rustc for `amdgcn-amd-amdhsa`, by another tool)
    /// for `arch`, alongside or instead of compiled sources. For CUDA a `.ptx`/`.s` file is a
    /// PTX image and a `.cubin` a cubin.
    pub fn image(&mut self, arch: impl AsRef<str>, path: impl AsRef<Path>) -> &mut Build {
        self.images
            .push((arch.as_ref().to_string(), path.as_ref().to_path_buf()));
        self
    }

    /// The container format (default: [`Container::Bundle`] for HIP,
    /// [`Container::OffloadBinary`] for CUDA).
    pub fn container(&mut self, container: Container) -> &mut Build {
        self.container = Some(container);
        self
    }

    /// Compresses the bundle (`CCOB`, zstd level 3 with long-distance matching, as
    /// `clang --offload-compress`; format version 2 for LLVM ≤ 21, 3 from LLVM 22). Bundles only.
    pub fn compress(&mut self, compress: bool) -> &mut Build {
        self.compress = compress.then(CompressOptions::default);
        self.compress_auto_version = true;
        self
    }

    /// Compresses with these exact options (method, level, format version).
    pub fn compress_with(&mut self, options: CompressOptions) -> &mut Build {
        self.compress = Some(options);
        self.compress_auto_version = false;
        self
    }

    /// How the device code is embedded (default [`Embed::FatbinOnly`]).
    pub fn embed(&mut self, embed: Embed) -> &mut Build {
        self.embed = embed;
        self
    }

    /// The output directory (default: `OUT_DIR`).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to print `cargo:` directives on stdout (default `true`). They are returned in
    /// [`Compiled::cargo_directives`] either way.
    pub fn cargo_metadata(&mut self, print: bool) -> &mut Build {
        self.cargo_metadata = print;
        self
    }

    /// Uses this compiler instead of discovering one.
    pub fn compiler(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.compiler = Some(path.as_ref().to_path_buf());
        self
    }

    /// Sets an environment variable as this build sees it (and as its compiler processes see
    /// it), without changing the process environment: for tests and for tools that drive a
    /// build outside Cargo.
    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Build {
        self.env.insert(
            name.as_ref().to_os_string(),
            Some(value.as_ref().to_os_string()),
        );
        self
    }

    /// Hides an environment variable from this build (and its compiler processes).
    pub fn env_remove(&mut self, name: impl AsRef<OsStr>) -> &mut Build {
        self.env.insert(name.as_ref().to_os_string(), None);
        self
    }

    /// Uses this jobserver instead of the one inherited from Cargo. As under Cargo, the build
    /// holds one implicit token: a client with `n` free tokens allows `n + 1` concurrent jobs.
    pub fn jobserver(&mut self, client: jobserver::Client) -> &mut Build {
        self.jobserver = Some(client);
        self
    }

    /// Compiles, packs and embeds; panics with a readable message on failure.
    ///
    /// See [`Build::try_compile`].
    pub fn compile(&self, name: &str) -> Compiled {
        match self.try_compile(name) {
            Ok(c) => c,
            Err(e) => {
                let text = e.to_string();
                if self.cargo_metadata {
                    for line in text.lines() {
                        println!("cargo:warning={line}");
                    }
                }
                panic!("\n\nerror occurred in offload-build: {text}\n\n");
            }
        }
    }

    /// Compiles, packs and embeds.
    ///
    /// Writes into the output directory:
    /// - `<name>.hipfb` (bundle) or `<name>.offloadbin` (offload binaries);
    /// - `<name>.rs`, to `include!`, with `pub fn fatbin() -> &'static [u8]` (the container,
    ///   4096-byte aligned), `pub const ARCHS: &[&str]`, `pub const KERNELS: &[&str]`,
    ///   `CONTAINER`, `COMPRESSED` and a `kernels` module with one constant per kernel (with
    ///   the host handle for `hipLaunchKernel` in [`Embed::HipObject`] mode);
    /// - for the object [`Embed`] modes, `lib<name>.a`, with the `cargo:rustc-link-*`
    ///   directives to link it.
    ///
    /// Unchanged outputs are not rewritten, so an unchanged rebuild changes no file.
    pub fn try_compile(&self, name: &str) -> Result<Compiled, Error> {
        let directives = Directives::new(self.cargo_metadata);
        let env = Env::new(&self.env, &directives);
        let result = self.run(name, &env);
        let (lines, warnings) = directives.take();
        result.map(|mut c| {
            c.cargo_directives = lines;
            c.warnings = warnings;
            c
        })
    }

    /// Resolves the architectures as [`Build::try_compile`] would (toolchain discovery, the
    /// resolution order above, the check against the compiler) without compiling anything.
    /// `offload-build compile --print-archs` and the CMake package's configure step use it, so
    /// a missing compiler or an unknown architecture is reported before the build starts.
    pub fn try_resolve_archs(&self) -> Result<ResolvedArchs, Error> {
        let directives = Directives::new(self.cargo_metadata);
        let env = Env::new(&self.env, &directives);
        let cwd = env
            .get_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let cache_dir = env
            .get_os("OFFLOAD_BUILD_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                self.out_dir
                    .clone()
                    .or_else(|| env.get_os("OUT_DIR").map(PathBuf::from))
                    .map(|d| d.join("offload-build-cache"))
            })
            .unwrap_or_else(|| std::env::temp_dir().join("offload-build-cache"));
        std::fs::create_dir_all(&cache_dir).map_err(|e| Error::io("creating", &cache_dir, e))?;
        let lang = self.language.unwrap_or_else(|| {
            if !self.files.is_empty()
                && self
                    .files
                    .iter()
                    .all(|s| s.extension().is_some_and(|e| e == "cu"))
            {
                Language::Cuda
            } else {
                Language::Hip
            }
        });
        let tc = tool::discover(&env, lang, self.compiler.as_deref(), &cache_dir, &cwd)?;
        let crate_var = env
            .get("CARGO_PKG_NAME")
            .map(|n| format!("{}_OFFLOAD_ARCH", n.to_ascii_uppercase().replace('-', "_")));
        let (archs, origin) = self.resolve_archs(&env, lang, &tc, crate_var.as_deref())?;
        for a in &archs {
            check_supported(a, &tc, lang, &origin)?;
        }
        let (_, warnings) = directives.take();
        Ok(ResolvedArchs {
            archs: archs.iter().map(Arch::to_string).collect(),
            origin,
            compiler: tc.clang.clone(),
            warnings,
        })
    }

    fn run(&self, name: &str, env: &Env<'_>) -> Result<Compiled, Error> {
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(Error::Config(format!(
                "library name `{name}` must be non-empty ASCII letters, digits, `_` or `-`"
            )));
        }
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => env.get_os("OUT_DIR").map(PathBuf::from).ok_or_else(|| {
                Error::Config("OUT_DIR is not set: run from build.rs or call Build::out_dir".into())
            })?,
        };
        std::fs::create_dir_all(&out_dir).map_err(|e| Error::io("creating", &out_dir, e))?;
        let cwd = env
            .get_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let cache_dir = env
            .get_os("OFFLOAD_BUILD_CACHE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| out_dir.join("offload-build-cache"));
        let d = env.directives();

        // Sources.
        let mut sources: Vec<PathBuf> = self.files.clone();
        for pattern in &self.globs {
            let full = if Path::new(pattern).is_absolute() {
                pattern.clone()
            } else {
                format!("{}/{pattern}", cwd.display())
            };
            let paths = glob::glob(&full)
                .map_err(|e| Error::Config(format!("bad glob pattern `{pattern}`: {e}")))?;
            let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
            found.sort();
            if found.is_empty() {
                d.warn(&format!("offload-build: glob `{pattern}` matches no file"));
            }
            sources.extend(found);
            let literal: PathBuf = Path::new(&full)
                .components()
                .take_while(|c| !c.as_os_str().to_string_lossy().contains(['*', '?', '[']))
                .collect();
            d.push(format!("rerun-if-changed={}", literal.display()));
        }
        let abs = |p: &Path| {
            if p.is_absolute() {
                p.to_path_buf()
            } else {
                cwd.join(p)
            }
        };
        let mut seen = BTreeSet::new();
        sources.retain(|s| seen.insert(abs(s)));
        if sources.is_empty() && self.images.is_empty() {
            return Err(Error::Config(
                "nothing to build: add sources with Build::file/files/glob or images with Build::image"
                    .into(),
            ));
        }
        for s in &sources {
            if !abs(s).is_file() {
                return Err(Error::io(
                    "reading source",
                    s,
                    std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                ));
            }
            d.push(format!("rerun-if-changed={}", s.display()));
        }
        let lang = self.language.unwrap_or_else(|| {
            if !sources.is_empty()
                && sources
                    .iter()
                    .all(|s| s.extension().is_some_and(|e| e == "cu"))
            {
                Language::Cuda
            } else {
                Language::Hip
            }
        });
        let container = self.container.unwrap_or(match lang {
            Language::Hip => Container::Bundle,
            Language::Cuda => Container::OffloadBinary,
        });
        if lang == Language::Cuda && container == Container::Bundle {
            return Err(Error::Config(
                "CUDA device code is packed as offload binaries: use Container::OffloadBinary"
                    .into(),
            ));
        }
        if self.compress.is_some() && container != Container::Bundle {
            return Err(Error::Config(
                "compression applies to bundles (Container::Bundle) only".into(),
            ));
        }

        // Toolchain and architectures (only when there is something to compile).
        let mut per_arch: BTreeMap<Arch, Vec<Piece>> = BTreeMap::new();
        let mut toolchain = None;
        let mut arch_origin = String::from("Build::image");
        let mut jobs_run = 0;
        let mut jobs_cached = 0;
        if !sources.is_empty() {
            std::fs::create_dir_all(&cache_dir)
                .map_err(|e| Error::io("creating", &cache_dir, e))?;
            let tc = tool::discover(env, lang, self.compiler.as_deref(), &cache_dir, &cwd)?;
            let crate_var = env
                .get("CARGO_PKG_NAME")
                .map(|n| format!("{}_OFFLOAD_ARCH", n.to_ascii_uppercase().replace('-', "_")));
            let (global, origin) = self.resolve_archs(env, lang, &tc, crate_var.as_deref())?;
            arch_origin = origin.clone();
            // Per-source architecture sets.
            let mut plan: Vec<(PathBuf, Vec<Arch>)> = Vec::new();
            for s in &sources {
                let rel = s.strip_prefix(&cwd).unwrap_or(s);
                let over = self.file_archs.iter().find(|(pat, _)| {
                    Path::new(pat) == rel
                        || glob::Pattern::new(pat).is_ok_and(|p| p.matches_path(rel))
                });
                let archs = match over {
                    Some((pat, list)) => {
                        let origin = format!("Build::file_archs(\"{pat}\")");
                        let (a, _) = self.expand(env, lang, &tc, list, &origin)?;
                        a
                    }
                    None => global.clone(),
                };
                for a in &archs {
                    check_supported(a, &tc, lang, &origin)?;
                }
                plan.push((abs(s), archs));
            }
            let launcher = launcher(env);
            let max_jobs = match env.get("OFFLOAD_BUILD_MAX_JOBS") {
                None => usize::MAX,
                Some(v) => match v.parse::<usize>() {
                    Ok(n) if n > 0 => n,
                    _ => {
                        d.warn(&format!(
                            "offload-build: OFFLOAD_BUILD_MAX_JOBS=`{v}` is not a positive number; ignored"
                        ));
                        usize::MAX
                    }
                },
            };
            let client = self.jobserver.clone().or_else(jobs::inherited).or_else(|| {
                let n = env
                    .get("NUM_JOBS")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
                jobs::local(n)
            });
            let extra_flags: Vec<String> = env
                .get(match lang {
                    Language::Hip => "HIPFLAGS",
                    Language::Cuda => "CUDAFLAGS",
                })
                .map(|v| v.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
            let mut sources_per_arch: BTreeMap<&Arch, usize> = BTreeMap::new();
            for (_, archs) in &plan {
                for a in archs {
                    *sources_per_arch.entry(a).or_default() += 1;
                }
            }
            let hasher = Hasher::default();
            let ctx = JobCtx {
                tc: &tc,
                lang,
                cache_dir: &cache_dir,
                launcher: &launcher,
                hasher: &hasher,
                env_overrides: &self.env,
                includes: self.includes.iter().map(|i| abs(i)).collect(),
                defines: &self.defines,
                flags: self.flags.iter().chain(&extra_flags).cloned().collect(),
                no_depfile: Default::default(),
            };
            let mut specs = Vec::new();
            for (src, archs) in &plan {
                for a in archs {
                    let rdc = lang == Language::Hip && sources_per_arch[a] > 1;
                    specs.push(ctx.spec(src, a, rdc));
                }
            }
            let job_list: Vec<jobs::Job<'_, JobOut>> = specs
                .into_iter()
                .map(|spec| {
                    let ctx = &ctx;
                    Box::new(move || ctx.run(spec)) as jobs::Job<'_, JobOut>
                })
                .collect();
            let outs = jobs::run(job_list, client.as_ref(), max_jobs)?;
            if ctx.no_depfile.load(std::sync::atomic::Ordering::Relaxed) {
                d.warn(&format!(
                    "offload-build: {} wrote no depfile (-MD -MF); header changes are not tracked",
                    tc.clang.display()
                ));
            }
            let mut to_link: BTreeMap<Arch, Vec<PathBuf>> = BTreeMap::new();
            for o in &outs {
                if o.ran {
                    jobs_run += 1;
                } else {
                    jobs_cached += 1;
                }
                for dep in o.deps.iter().skip(1) {
                    d.push(format!("rerun-if-changed={}", dep.display()));
                }
                if o.rdc {
                    to_link
                        .entry(o.arch.clone())
                        .or_default()
                        .push(o.outputs[0].clone());
                } else {
                    for (kind, path) in &o.outputs_kinds() {
                        per_arch.entry(o.arch.clone()).or_default().push(Piece {
                            kind: *kind,
                            data: std::fs::read(path).map_err(|e| Error::io("reading", path, e))?,
                        });
                    }
                }
            }
            // Device links, one per architecture compiled from several sources.
            let link_jobs: Vec<jobs::Job<'_, (Arch, PathBuf, bool)>> = to_link
                .into_iter()
                .map(|(a, objs)| {
                    let ctx = &ctx;
                    Box::new(move || ctx.link(a, objs)) as jobs::Job<'_, (Arch, PathBuf, bool)>
                })
                .collect();
            for (a, co, ran) in jobs::run(link_jobs, client.as_ref(), max_jobs)? {
                if ran {
                    jobs_run += 1;
                } else {
                    jobs_cached += 1;
                }
                per_arch.entry(a).or_default().push(Piece {
                    kind: ImageKind::Object,
                    data: std::fs::read(&co).map_err(|e| Error::io("reading", &co, e))?,
                });
            }
            toolchain = Some(tc);
        }

        // Images built elsewhere.
        for (arch, path) in &self.images {
            let origin = format!("Build::image(\"{arch}\", …)");
            let a = Arch::new(arch).map_err(|reason| Error::InvalidArch {
                arch: arch.clone(),
                origin: origin.clone(),
                reason,
            })?;
            let p = abs(path);
            let data = std::fs::read(&p).map_err(|e| Error::io("reading image", &p, e))?;
            d.push(format!("rerun-if-changed={}", path.display()));
            let kind = match p.extension().and_then(OsStr::to_str) {
                Some("ptx") | Some("s") if a.is_nvidia() => ImageKind::Ptx,
                Some("cubin") => ImageKind::Cubin,
                _ => ImageKind::Object,
            };
            let entry = per_arch.entry(a.clone()).or_default();
            if container == Container::Bundle && !entry.is_empty() {
                return Err(Error::Config(format!(
                    "architecture {a} has both compiled sources and an image (or two images); \
                     a bundle holds one code object per architecture"
                )));
            }
            entry.push(Piece { kind, data });
        }

        // Kernel names, pack.
        let mut kernels = BTreeSet::new();
        for pieces in per_arch.values() {
            for p in pieces {
                match p.kind {
                    ImageKind::Ptx => {
                        kernels.extend(ptx_kernels(&String::from_utf8_lossy(&p.data)))
                    }
                    ImageKind::Object => kernels.extend(amdgpu_kernels(&p.data)),
                    _ => {}
                }
            }
        }
        let kernels: Vec<String> = kernels.into_iter().collect();
        let major = toolchain.as_ref().map_or(0, |t| t.major);
        let (bytes, compressed) = pack(
            &per_arch,
            lang,
            container,
            self.compress,
            self.compress_auto_version,
            major,
        )?;
        let ext = match container {
            Container::Bundle => "hipfb",
            Container::OffloadBinary => "offloadbin",
        };
        let fatbin = out_dir.join(format!("{name}.{ext}"));
        cache::write_if_changed(&fatbin, &bytes)?;
        let archs: Vec<String> = per_arch.keys().map(|a| a.to_string()).collect();

        let mut library = None;
        if self.embed != Embed::FatbinOnly {
            let target = env.get("TARGET").unwrap_or_default();
            let embedded = embed_glue::embed_object(&embed_glue::EmbedRequest {
                mode: self.embed,
                container_bytes: &bytes,
                container,
                target: &target,
                kernels: &kernels,
                name,
                out_dir: &out_dir,
                llvm_major: major,
            })?;
            d.push(format!("rustc-link-search=native={}", out_dir.display()));
            d.push(format!("rustc-link-lib=static={name}"));
            library = Some(embedded.library);
        }

        let generated = out_dir.join(format!("{name}.rs"));
        let text = codegen::render(&codegen::Generated {
            name,
            fatbin_file: &fatbin.to_string_lossy(),
            fatbin_len: bytes.len(),
            archs: &archs,
            kernels: &kernels,
            container,
            compressed,
            embed: self.embed,
        });
        cache::write_if_changed(&generated, text.as_bytes())?;

        Ok(Compiled {
            fatbin,
            generated,
            library,
            archs,
            arch_origin,
            kernels,
            container,
            compressed,
            compiler: toolchain.as_ref().map(|t| t.clang.clone()),
            compiler_version: toolchain.as_ref().map(|t| t.version.clone()),
            jobs_run,
            jobs_cached,
            cargo_directives: Vec::new(),
            warnings: Vec::new(),
        })
    }

    /// Expands one list (from `origin`) into architectures, resolving `native` and `default`.
    fn expand(
        &self,
        env: &Env<'_>,
        lang: Language,
        tc: &Toolchain,
        list: &str,
        origin: &str,
    ) -> Result<(Vec<Arch>, bool), Error> {
        let items = arch::parse_list(list).map_err(|(arch, reason)| Error::InvalidArch {
            arch,
            origin: origin.to_string(),
            reason,
        })?;
        let mut out: Vec<Arch> = Vec::new();
        for item in items {
            match item {
                arch::Item::Arch(a) => out.push(a),
                arch::Item::Default => out.extend(arch::default_set(lang, &tc.supported)),
                arch::Item::Native => {
                    let (found, how) = arch::probe_native(lang, &tc.tool_dirs);
                    if found.is_empty() {
                        let def = arch::default_set(lang, &tc.supported);
                        env.directives().warn(&format!(
                            "offload-build: `native` (from {origin}) found no GPU on this machine; \
                             using the default set: {}",
                            join(&def)
                        ));
                        out.extend(def);
                    } else {
                        env.directives().warn(&format!(
                            "offload-build: `native` (from {origin}) is {} (found with {how})",
                            join(&found)
                        ));
                        out.extend(found);
                    }
                }
            }
        }
        let mut seen = BTreeSet::new();
        out.retain(|a| seen.insert(a.clone()));
        let nonempty = !out.is_empty();
        Ok((out, nonempty))
    }

    /// The global architecture list and where it came from.
    fn resolve_archs(
        &self,
        env: &Env<'_>,
        lang: Language,
        tc: &Toolchain,
        crate_var: Option<&str>,
    ) -> Result<(Vec<Arch>, String), Error> {
        if !self.archs.is_empty() {
            let (a, ok) = self.expand(env, lang, tc, &self.archs.join(";"), "Build::archs")?;
            if ok {
                return Ok((a, "Build::archs".into()));
            }
        }
        let mut vars: Vec<&str> = crate_var.into_iter().collect();
        vars.push("OFFLOAD_ARCH");
        match lang {
            Language::Hip => vars.extend([
                "AMDGPU_TARGETS",
                "GPU_TARGETS",
                "PYTORCH_ROCM_ARCH",
                "HIP_ARCHITECTURES",
            ]),
            Language::Cuda => vars.extend(["CUDAARCHS", "CUDA_COMPUTE_CAP"]),
        }
        for var in vars {
            if let Some(v) = env.get(var) {
                let (a, ok) = self.expand(env, lang, tc, &v, var)?;
                if ok {
                    return Ok((a, var.to_string()));
                }
            }
        }
        let (found, how) = arch::probe_native(lang, &tc.tool_dirs);
        let hint = format!(
            "set {} or OFFLOAD_ARCH (e.g. \"{}\") to choose",
            crate_var.unwrap_or("<CRATE>_OFFLOAD_ARCH"),
            match lang {
                Language::Hip => "gfx90a;gfx1100",
                Language::Cuda => "sm_80;sm_90",
            }
        );
        if !found.is_empty() {
            env.directives().warn(&format!(
                "offload-build: no offload architecture set; compiling for this machine's GPUs: {} \
                 (found with {how}); {hint}",
                join(&found)
            ));
            return Ok((found, "native".into()));
        }
        let def = arch::default_set(lang, &tc.supported);
        env.directives().warn(&format!(
            "offload-build: no offload architecture set and no GPU found; using the default set: {}; {hint}",
            join(&def)
        ));
        Ok((def, "default".into()))
    }
}

fn join(archs: &[Arch]) -> String {
    archs
        .iter()
        .map(Arch::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_supported(a: &Arch, tc: &Toolchain, lang: Language, origin: &str) -> Result<(), Error> {
    let wrong_vendor = match lang {
        Language::Hip => a.is_nvidia(),
        Language::Cuda => !a.is_nvidia(),
    };
    let processor = a.offload_arch();
    let processor = processor.split(':').next().unwrap_or_default();
    if wrong_vendor || (!tc.supported.is_empty() && !tc.supported.iter().any(|s| s == processor)) {
        return Err(Error::ArchUnsupported {
            arch: a.to_string(),
            compiler: tc.clang.clone(),
            origin: origin.to_string(),
            supported: tc.supported.clone(),
        });
    }
    Ok(())
}

/// The launcher: `OFFLOAD_BUILD_LAUNCHER`, else a caching `RUSTC_WRAPPER`.
fn launcher(env: &Env<'_>) -> Vec<OsString> {
    if let Some(v) = env.get("OFFLOAD_BUILD_LAUNCHER") {
        return v.split_whitespace().map(OsString::from).collect();
    }
    if let Some(w) = env.get_os("RUSTC_WRAPPER") {
        let stem = Path::new(&w)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if matches!(stem.as_str(), "sccache" | "cachepot" | "buildcache") {
            return vec![w];
        }
    }
    Vec::new()
}

/// One image of one architecture.
#[derive(Debug)]
struct Piece {
    kind: ImageKind,
    data: Vec<u8>,
}

/// Everything the jobs share.
struct JobCtx<'a> {
    tc: &'a Toolchain,
    lang: Language,
    cache_dir: &'a Path,
    launcher: &'a [OsString],
    hasher: &'a Hasher,
    env_overrides: &'a BTreeMap<OsString, Option<OsString>>,
    includes: Vec<PathBuf>,
    defines: &'a [(String, Option<String>)],
    flags: Vec<String>,
    no_depfile: std::sync::atomic::AtomicBool,
}

/// One (source, arch) compile, planned.
struct Spec {
    source: PathBuf,
    arch: Arch,
    rdc: bool,
    /// A command that writes only the depfile, for compilers that ignore `-MD` in the compile.
    deps_only: Vec<OsString>,
    /// The commands (program first); output paths already filled in.
    steps: Vec<Vec<OsString>>,
    /// Outputs: the object (HIP), or PTX then cubin (CUDA).
    outputs: Vec<PathBuf>,
    depfile: PathBuf,
    record: PathBuf,
}

/// A finished job.
struct JobOut {
    arch: Arch,
    rdc: bool,
    lang: Language,
    outputs: Vec<PathBuf>,
    deps: Vec<PathBuf>,
    ran: bool,
}

impl JobOut {
    fn outputs_kinds(&self) -> Vec<(ImageKind, &PathBuf)> {
        match self.lang {
            Language::Hip => vec![(ImageKind::Object, &self.outputs[0])],
            Language::Cuda => {
                let mut v = vec![(ImageKind::Ptx, &self.outputs[0])];
                if let Some(c) = self.outputs.get(1) {
                    v.push((ImageKind::Cubin, c));
                }
                v
            }
        }
    }
}

fn quote(arg: &OsStr) -> String {
    let s = arg.to_string_lossy();
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=+./:,@%".contains(&b))
    {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn command_line(argv: &[OsString]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}

impl JobCtx<'_> {
    fn spec(&self, source: &Path, arch: &Arch, rdc: bool) -> Spec {
        const OUT: &str = "<out>";
        const DEP: &str = "<depfile>";
        let mut args: Vec<OsString> = Vec::new();
        let s = |v: &str| OsString::from(v);
        match self.lang {
            Language::Hip => {
                args.extend(["-x", "hip"].map(s));
                args.push(s(&format!("--offload-arch={arch}")));
                args.extend(["--cuda-device-only", "--no-gpu-bundle-output"].map(s));
                if rdc {
                    args.push(s("-fgpu-rdc"));
                }
                match &self.tc.rocm {
                    Some(r) => args.push(s(&format!("--rocm-path={}", r.display()))),
                    None => args.extend(["-nogpulib", "-nogpuinc"].map(s)),
                }
                args.push(s("-c"));
            }
            Language::Cuda => {
                args.extend(["-x", "cuda"].map(s));
                args.push(s(&format!("--offload-arch={}", arch.offload_arch())));
                args.push(s("--cuda-device-only"));
                match &self.tc.cuda {
                    Some(c) => args.push(s(&format!("--cuda-path={}", c.display()))),
                    None => args.extend(["-nocudainc", "-nocudalib"].map(s)),
                }
                args.push(s("-S"));
            }
        }
        args.push(s("-O3"));
        for i in &self.includes {
            args.push(s(&format!("-I{}", i.display())));
        }
        for (n, v) in self.defines {
            args.push(s(&match v {
                Some(v) => format!("-D{n}={v}"),
                None => format!("-D{n}"),
            }));
        }
        args.extend(self.flags.iter().map(|f| s(f)));
        args.push(source.as_os_str().to_os_string());
        args.extend([s("-o"), s(OUT), s("-MD"), s("-MF"), s(DEP)]);

        // The job key: compiler identity, launcher, arguments (with placeholders for paths).
        let mut h = Xxh3::new();
        h.update(b"offload-build job 1\0");
        h.update(&self.tc.identity.to_le_bytes());
        for a in self.launcher.iter().chain(&args) {
            h.update(a.as_encoded_bytes());
            h.update(b"\0");
        }
        let key = h.digest128();
        let stem = source
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let base = self
            .cache_dir
            .join(format!("{stem}-{}-{:016x}", arch.file_tag(), key as u64));
        let ext = match (self.lang, rdc) {
            (Language::Hip, false) => "o",
            (Language::Hip, true) => "bc",
            (Language::Cuda, _) => "ptx",
        };
        let first_out = base.with_extension(ext);
        let depfile = base.with_extension("d");
        for a in args.iter_mut() {
            if a == OUT {
                *a = first_out.clone().into_os_string();
            } else if a == DEP {
                *a = depfile.clone().into_os_string();
            }
        }
        // clang 22 writes no depfile for device-only compiles: then the dependencies come from
        // a host-side preprocessing of the same source with the same flags.
        let mut deps_only: Vec<OsString> = vec![self.tc.clang.clone().into_os_string()];
        let mut skip = 0;
        for a in &args {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            match a.to_str() {
                Some("--cuda-device-only") => deps_only.push(s("--cuda-host-only")),
                Some("--no-gpu-bundle-output" | "-c" | "-S" | "-MD" | "-fgpu-rdc") => {}
                Some("-o" | "-MF") => skip = 1,
                _ => deps_only.push(a.clone()),
            }
        }
        deps_only.extend([s("-M"), s("-MF"), depfile.clone().into_os_string()]);
        let mut step1: Vec<OsString> = self.launcher.to_vec();
        step1.push(self.tc.clang.clone().into_os_string());
        step1.extend(args);
        let mut steps = vec![step1];
        let mut outputs = vec![first_out.clone()];
        if rdc {
            // Code generation of the bitcode, still in this (parallel) job.
            let obj = base.with_extension("o");
            let mut step = vec![
                self.tc.clang.clone().into_os_string(),
                s("--target=amdgcn-amd-amdhsa"),
                s(&format!("-mcpu={arch}")),
            ];
            if self.tc.rocm.is_none() {
                step.push(s("-nogpulib"));
            }
            step.extend([
                s("-O3"),
                s("-c"),
                first_out.into_os_string(),
                s("-o"),
                obj.clone().into_os_string(),
            ]);
            steps.push(step);
            outputs = vec![obj];
        }
        if self.lang == Language::Cuda && !arch.is_virtual() {
            if let Some(ptxas) = &self.tc.ptxas {
                let cubin = base.with_extension("cubin");
                steps.push(vec![
                    ptxas.clone().into_os_string(),
                    s(&format!("-arch={}", arch.offload_arch())),
                    s("-O3"),
                    outputs[0].clone().into_os_string(),
                    s("-o"),
                    cubin.clone().into_os_string(),
                ]);
                outputs.push(cubin);
            }
        }
        Spec {
            source: source.to_path_buf(),
            arch: arch.clone(),
            rdc,
            deps_only,
            steps,
            outputs,
            depfile,
            record: base.with_extension("rec"),
        }
    }

    fn exec(&self, argv: &[OsString], arch: &Arch, source: Option<&Path>) -> Result<(), Error> {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]);
        for (k, v) in self.env_overrides {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        let out = cmd.output().map_err(|error| Error::Spawn {
            command: command_line(argv),
            error,
        })?;
        if out.status.success() {
            return Ok(());
        }
        Err(Error::CompileFailed {
            arch: arch.to_string(),
            source: source.map(Path::to_path_buf),
            command: command_line(argv),
            status: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    fn run(&self, spec: Spec) -> Result<JobOut, Error> {
        let done = |deps: Vec<PathBuf>, ran: bool, spec: Spec| JobOut {
            arch: spec.arch,
            rdc: spec.rdc,
            lang: self.lang,
            outputs: spec.outputs,
            deps,
            ran,
        };
        if let Some(rec) = Record::load(&spec.record) {
            if spec.outputs.iter().all(|o| o.is_file()) && rec.is_fresh(self.hasher) {
                let deps = rec.deps.into_iter().map(|(p, _)| p).collect();
                return Ok(done(deps, false, spec));
            }
        }
        let _ = std::fs::remove_file(&spec.record);
        // A compiler that ignores -MD for device-only compiles (clang 22's new offload driver)
        // leaves no depfile: then only the source is tracked, and Cargo is told so.
        let _ = std::fs::remove_file(&spec.depfile);
        for step in &spec.steps {
            self.exec(step, &spec.arch, Some(&spec.source))?;
        }
        if !spec.depfile.is_file() {
            let _ = self.exec(&spec.deps_only, &spec.arch, Some(&spec.source));
        }
        let text = match std::fs::read_to_string(&spec.depfile) {
            Ok(t) => t,
            Err(_) => {
                self.no_depfile
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                String::new()
            }
        };
        let mut deps = vec![spec.source.clone()];
        for dep in cache::parse_depfile(&text) {
            let dep = if dep.is_absolute() {
                dep
            } else {
                // The compiler ran in this process's working directory.
                std::env::current_dir().map(|c| c.join(&dep)).unwrap_or(dep)
            };
            if !deps.contains(&dep) {
                deps.push(dep);
            }
        }
        let mut rec = Record { deps: Vec::new() };
        for dep in &deps {
            if let Some(h) = self.hasher.file(dep) {
                rec.deps.push((dep.clone(), h));
            }
        }
        rec.store(&spec.record)?;
        Ok(done(deps, true, spec))
    }

    /// Device link of one architecture's relocatable objects into a code object.
    fn link(&self, arch: Arch, objs: Vec<PathBuf>) -> Result<(Arch, PathBuf, bool), Error> {
        let mut h = Xxh3::new();
        h.update(b"offload-build link 1\0");
        h.update(&self.tc.identity.to_le_bytes());
        h.update(arch.as_str().as_bytes());
        for o in &objs {
            self.hasher.forget(o);
            let content = self
                .hasher
                .file(o)
                .ok_or_else(|| Error::io("reading", o, std::io::ErrorKind::NotFound.into()))?;
            h.update(&content.to_le_bytes());
        }
        let co = self.cache_dir.join(format!(
            "linked-{}-{:016x}.co",
            arch.file_tag(),
            h.digest128() as u64
        ));
        if co.is_file() {
            return Ok((arch, co, false));
        }
        let tmp = co.with_extension("co.tmp");
        let mut argv: Vec<OsString> = vec![
            self.tc.clang.clone().into_os_string(),
            OsString::from("--target=amdgcn-amd-amdhsa"),
            OsString::from(format!("-mcpu={arch}")),
        ];
        argv.extend(objs.iter().map(|o| o.clone().into_os_string()));
        argv.extend([OsString::from("-o"), tmp.clone().into_os_string()]);
        self.exec(&argv, &arch, None)?;
        std::fs::rename(&tmp, &co).map_err(|e| Error::io("renaming", &tmp, e))?;
        Ok((arch, co, true))
    }
}

/// Packs the images into the container's bytes; returns whether they are compressed.
fn pack(
    per_arch: &BTreeMap<Arch, Vec<Piece>>,
    lang: Language,
    container: Container,
    compress: Option<CompressOptions>,
    auto_version: bool,
    llvm_major: u32,
) -> Result<(Vec<u8>, bool), Error> {
    let llvm = if llvm_major == 0 {
        LlvmVersion::NEWEST_RELEASE
    } else {
        LlvmVersion::new(llvm_major)
    };
    match container {
        Container::Bundle => {
            let mut ids: Vec<(String, &[u8])> = vec![(
                EntryId::parse("host-x86_64-unknown-linux")
                    .as_str()
                    .to_string(),
                &[][..],
            )];
            let mut device: Vec<(String, &[u8])> = Vec::new();
            for (a, pieces) in per_arch {
                let id = EntryId::parse(&format!("hipv4-amdgcn-amd-amdhsa--{a}"));
                for p in pieces {
                    device.push((id.as_str().to_string(), &p.data));
                }
            }
            device.sort_by(|x, y| x.0.cmp(&y.0));
            ids.extend(device);
            let refs: Vec<(&[u8], &[u8])> = ids.iter().map(|(i, d)| (i.as_bytes(), *d)).collect();
            let bundle = offload_formats::bundle::binary::write_bundle(&refs, 4096)
                .map_err(|e| Error::Pack(e.into()))?;
            match compress {
                None => Ok((bundle, false)),
                Some(mut o) => {
                    if auto_version {
                        o.version = if llvm.major() >= 22 {
                            Version::V3
                        } else {
                            Version::V2
                        };
                    }
                    let c = compressed::compress(&bundle, &o).map_err(|e| Error::Pack(e.into()))?;
                    Ok((c, true))
                }
            }
        }
        Container::OffloadBinary => {
            let (kind, triple) = match lang {
                Language::Hip => (OffloadKind::Hip, "amdgcn-amd-amdhsa"),
                Language::Cuda => (OffloadKind::Cuda, "nvptx64-nvidia-cuda"),
            };
            let mut out = Vec::new();
            for (a, pieces) in per_arch {
                let arch_name = if a.is_nvidia() {
                    a.offload_arch()
                } else {
                    a.to_string()
                };
                for p in pieces {
                    let keys = [("triple", triple), ("arch", arch_name.as_str())];
                    let order =
                        offload_formats::package::order::dense_map_order(&keys.map(|k| k.0));
                    let mut image =
                        offload_formats::package::Image::new(p.kind, kind, llvm, &p.data)
                            .map_err(|e| Error::Pack(e.into()))?;
                    for i in order {
                        image = image.string(keys[i].0, keys[i].1);
                    }
                    let bin = offload_formats::package::write_v1(&image)
                        .map_err(|e| Error::Pack(e.into()))?;
                    out.extend_from_slice(&bin);
                }
            }
            Ok((out, false))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_table_documents_every_variable() {
        let docs = include_str!("mod.rs");
        let readme = include_str!("../../../../README.md");
        for var in ENV_VARS {
            assert!(
                docs.contains(&format!("`{var}`")),
                "{var} missing from the module docs"
            );
            assert!(
                readme.contains(&format!("`{var}`")),
                "{var} missing from README.md"
            );
        }
    }

    #[test]
    fn quoting() {
        let argv: Vec<OsString> = ["clang", "-DX=a b", "--offload-arch=gfx90a:xnack+"]
            .map(OsString::from)
            .to_vec();
        assert_eq!(
            command_line(&argv),
            "clang '-DX=a b' --offload-arch=gfx90a:xnack+"
        );
    }

    #[test]
    fn bundles_pack_like_clang() {
        let mut per_arch = BTreeMap::new();
        for a in ["gfx90a:xnack+", "gfx1100"] {
            per_arch.insert(
                Arch::new(a).unwrap(),
                vec![Piece {
                    kind: ImageKind::Object,
                    data: a.as_bytes().to_vec(),
                }],
            );
        }
        let (bytes, compressed) =
            pack(&per_arch, Language::Hip, Container::Bundle, None, true, 19).unwrap();
        assert!(!compressed);
        let b = offload_formats::bundle::BinaryBundle::parse(&bytes)
            .unwrap()
            .unwrap();
        let ids: Vec<String> = b
            .entries()
            .iter()
            .map(|e| e.id_str().into_owned())
            .collect();
        assert_eq!(
            ids,
            [
                "host-x86_64-unknown-linux--",
                "hipv4-amdgcn-amd-amdhsa--gfx1100",
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"
            ]
        );
        let (c, compressed) = pack(
            &per_arch,
            Language::Hip,
            Container::Bundle,
            Some(CompressOptions::default()),
            true,
            19,
        )
        .unwrap();
        assert!(compressed && c.starts_with(b"CCOB\x02\x00"));
    }
}
