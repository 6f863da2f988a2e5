//! The builder's configuration: [`Build`] and its setters, in `cc::Build`'s style. What a
//! setting means for the build is decided in the plan ([`crate::builder::plan`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use offload_formats::bundle::compressed::CompressOptions;

use crate::builder::arch::ArchList;
use crate::builder::options::{CompilerKind, Container, Embed, Language};
use crate::builder::process::CancelToken;
use crate::builder::progress::{Progress, ProgressHook};

/// A `build.rs` builder for GPU device code, in the style of `cc::Build`.
///
/// See the [module docs](crate::builder) for what a build does, the architecture resolution order and
/// the environment variables.
///
/// # Written for `cc`
///
/// The setters have `cc::Build`'s signatures, so a `build.rs` written for `cc` compiles
/// against offload-build unchanged (only the sources are device code now):
///
/// ```no_run
/// use std::ffi::OsStr;
/// use std::path::Path;
///
/// let extra: &OsStr = OsStr::new("-ffast-math");
/// offload_build::Build::new()
///     .file("kernels/saxpy.hip")
///     .files(["kernels/scale.hip"])
///     .include(Path::new("kernels/include"))
///     .includes(["include", "third_party/include"])
///     .define("N", "256")
///     .define("X", None)
///     .flag(extra)
///     .flags(["-Wall"])
///     .flag_if_supported("-Wno-unused-parameter")
///     .opt_level(2)
///     .debug(false)
///     .warnings(true)
///     .compile("kernels");
/// ```
// To add a builder option: 1) a field here and its setter below, 2) its decision in `Plan`
// (plan/; the jobs, pack and emit stages read only the plan), 3) the CLI flag and its
// mapping in one place (`CompileArgs` and `builder` in crates/offload-cli/src/helper/compile.rs),
// 4) the CMake argument (`_offload_add_fatbin_command` in build-support/cmake/OffloadBuild.cmake).
#[derive(Clone, Debug)]
pub struct Build {
    pub(crate) language: Option<Language>,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) globs: Vec<String>,
    pub(crate) includes: Vec<PathBuf>,
    pub(crate) defines: Vec<(String, Option<String>)>,
    pub(crate) flags: Vec<OsString>,
    pub(crate) flags_if_supported: Vec<OsString>,
    pub(crate) opt_level: Option<String>,
    pub(crate) debug: bool,
    pub(crate) cancel: Option<CancelToken>,
    pub(crate) archs: Vec<String>,
    pub(crate) archs_exact: bool,
    pub(crate) file_archs: Vec<(String, String)>,
    pub(crate) images: Vec<(String, PathBuf)>,
    pub(crate) container: Option<Container>,
    pub(crate) compress: Option<CompressOptions>,
    pub(crate) compress_auto_version: bool,
    pub(crate) embed: Embed,
    /// Whether [`Build::embed`] was called (a host-code build refuses any embedding).
    pub(crate) embed_set: bool,
    pub(crate) out_dir: Option<PathBuf>,
    pub(crate) cargo_metadata: bool,
    pub(crate) compiler: Option<PathBuf>,
    pub(crate) cuda_compiler: Option<CompilerKind>,
    pub(crate) link_hip_runtime: bool,
    pub(crate) env: BTreeMap<OsString, Option<OsString>>,
    pub(crate) jobserver: Option<jobserver::Client>,
    pub(crate) warnings: bool,
    pub(crate) warnings_into_errors: bool,
    pub(crate) progress: Option<ProgressHook>,
    pub(crate) timeout: Option<std::time::Duration>,
    pub(crate) ptxas: Option<PathBuf>,
    pub(crate) pch: bool,
    pub(crate) pch_background: Option<bool>,
    pub(crate) host_code: bool,
    pub(crate) cudart: Option<String>,
    pub(crate) rdc: bool,
}

impl Default for Build {
    fn default() -> Self {
        Build::new()
    }
}

impl Build {
    /// A builder with nothing set: HIP, architectures from the environment, a bundle, no
    /// compression, [`Embed::ContainerOnly`], Cargo directives printed.
    pub fn new() -> Build {
        Build {
            language: None,
            files: Vec::new(),
            globs: Vec::new(),
            includes: Vec::new(),
            defines: Vec::new(),
            flags: Vec::new(),
            flags_if_supported: Vec::new(),
            opt_level: None,
            debug: false,
            cancel: None,
            archs: Vec::new(),
            archs_exact: false,
            file_archs: Vec::new(),
            images: Vec::new(),
            container: None,
            compress: None,
            compress_auto_version: true,
            embed: Embed::default(),
            embed_set: false,
            out_dir: None,
            cargo_metadata: true,
            compiler: None,
            cuda_compiler: None,
            link_hip_runtime: true,
            env: BTreeMap::new(),
            jobserver: None,
            warnings: true,
            warnings_into_errors: false,
            progress: None,
            timeout: None,
            ptxas: None,
            pch: true,
            pch_background: None,
            host_code: false,
            cudart: None,
            rdc: false,
        }
    }

    /// The source language; by default CUDA when every source ends in `.cu`, HIP otherwise.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().language(offload_build::Language::Cuda);
    /// ```
    pub fn language(&mut self, language: Language) -> &mut Build {
        self.language = Some(language);
        self
    }

    /// Adds a source file.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().file("kernels/saxpy.hip");
    /// ```
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds source files.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().files(["kernels/a.hip", "kernels/b.hip"]);
    /// ```
    pub fn files<P: AsRef<Path>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut Build {
        for p in paths {
            self.file(p);
        }
        self
    }

    /// Adds the source files matching a glob pattern (`kernels/**/*.hip`), expanded (sorted)
    /// when compiling; the pattern's directory is watched for new files.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().glob("kernels/**/*.hip");
    /// ```
    pub fn glob(&mut self, pattern: &str) -> &mut Build {
        self.globs.push(pattern.to_string());
        self
    }

    /// Adds an include directory (`-I`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().include("kernels/include");
    /// ```
    pub fn include(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.includes.push(dir.as_ref().to_path_buf());
        self
    }

    /// Adds include directories (`-I`), in order.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().includes(["kernels/include", "third_party/include"]);
    /// ```
    pub fn includes<P: AsRef<Path>>(&mut self, dirs: impl IntoIterator<Item = P>) -> &mut Build {
        for d in dirs {
            self.include(d);
        }
        self
    }

    /// Defines a macro: `-DVAR=VAL` with a value, `-DVAR` with `None` (as `cc::Build::define`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new()
    ///     .define("BLOCK", "256") // -DBLOCK=256
    ///     .define("USE_FAST_MATH", None); // -DUSE_FAST_MATH
    /// ```
    pub fn define<'a, V: Into<Option<&'a str>>>(&mut self, var: &str, val: V) -> &mut Build {
        self.defines
            .push((var.to_string(), val.into().map(str::to_string)));
        self
    }

    /// Adds a compiler flag, passed to every device compile after the crate's own flags (a
    /// `-O` flag here overrides [`Build::opt_level`]).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().flag("-ffast-math");
    /// ```
    pub fn flag(&mut self, flag: impl AsRef<OsStr>) -> &mut Build {
        self.flags.push(flag.as_ref().to_os_string());
        self
    }

    /// Adds compiler flags, in order.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().flags(["-ffast-math", "-Wall"]);
    /// ```
    pub fn flags<S: AsRef<OsStr>>(&mut self, flags: impl IntoIterator<Item = S>) -> &mut Build {
        for f in flags {
            self.flag(f);
        }
        self
    }

    /// Adds a compiler flag when the device compiler accepts it: the compiler is asked once
    /// per flag (a device compile of an empty source with the flag, unknown and unused flags
    /// made errors), and the answer is kept in the cache directory with the other probes.
    /// Flags it refuses are left out silently, as with `cc::Build::flag_if_supported`.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().flag_if_supported("-fgpu-flush-denormals-to-zero");
    /// ```
    pub fn flag_if_supported(&mut self, flag: impl AsRef<OsStr>) -> &mut Build {
        self.flags_if_supported.push(flag.as_ref().to_os_string());
        self
    }

    /// The optimization level of the device code (`-O<level>`; default 3). Device code keeps
    /// `-O3` whatever Cargo's profile: as `nvcc` and `hipcc`, the build does not read
    /// `OPT_LEVEL`, since debug builds of the host still want fast kernels. `ptxas` gets the
    /// same level (3 for levels it does not know).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().opt_level(2); // -O2
    /// ```
    pub fn opt_level(&mut self, level: u32) -> &mut Build {
        self.opt_level = Some(level.to_string());
        self
    }

    /// The optimization level as clang spells it after `-O` (`"s"`, `"z"`, `"fast"`, `"2"`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().opt_level_str("s"); // -Os
    /// ```
    pub fn opt_level_str(&mut self, level: &str) -> &mut Build {
        self.opt_level = Some(level.to_string());
        self
    }

    /// Whether device debug information is generated (`-g`; default `false`). Like the
    /// optimization level, it does not follow Cargo's `DEBUG`: device debug information is
    /// asked for explicitly.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().debug(true); // -g
    /// ```
    pub fn debug(&mut self, debug: bool) -> &mut Build {
        self.debug = debug;
        self
    }

    /// Stops this build when `token` is cancelled ([`CancelToken::cancel`](crate::builder::CancelToken::cancel)): its compilers
    /// are killed with their children (they run in process groups of their own) and the
    /// build ends with [`Error::Stopped`](crate::builder::Error::Stopped). For programs that handle SIGINT and SIGTERM
    /// themselves (`offload-build compile`); a `build.rs` needs none.
    ///
    /// # Example
    ///
    /// ```
    /// let token = offload_build::builder::CancelToken::new();
    /// offload_build::Build::new().cancel_token(&token);
    /// ```
    pub fn cancel_token(&mut self, token: &CancelToken) -> &mut Build {
        self.cancel = Some(token.clone());
        self
    }

    /// Adds architectures: one [`Arch`](crate::builder::Arch), or a CMake-style list such as
    /// `"gfx90a;gfx942:xnack+;gfx11-generic"` (also `native`, `default`). This is the crate's
    /// default: whoever builds overrides it with `<CRATE>_OFFLOAD_ARCH` or `OFFLOAD_ARCH`, and
    /// it takes precedence over the rest of the environment (see the
    /// [resolution order](crate::builder#architecture-resolution); [`Build::archs_exact`] makes the
    /// list a requirement). Checked when compiling.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().arch("gfx90a").arch("gfx942:xnack+");
    /// ```
    pub fn arch(&mut self, arch: impl AsRef<str>) -> &mut Build {
        self.archs.push(arch.as_ref().to_string());
        self
    }

    /// Adds several architectures: a CMake-style list (`"gfx90a;gfx942"`), or a collection of
    /// [`Arch`](crate::builder::Arch) values or strings (each may itself be a list). As with [`Build::arch`], a
    /// default that `<CRATE>_OFFLOAD_ARCH` and `OFFLOAD_ARCH` override.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new()
    ///     .archs("gfx90a;gfx1100")
    ///     .archs(["gfx942", "gfx1201"]);
    /// ```
    pub fn archs(&mut self, archs: impl ArchList) -> &mut Build {
        archs.append_to(&mut self.archs);
        self
    }

    /// Adds architectures, as [`Build::archs`], and makes the builder's list exact: the
    /// environment no longer overrides it. For code that builds only for these architectures
    /// (inline assembly of one ISA, MFMA-only kernels); when `<CRATE>_OFFLOAD_ARCH` or
    /// `OFFLOAD_ARCH` is set all the same, the build says with a `cargo:warning` that it is
    /// ignored. `offload-build compile --arch/--archs` (and so CMake's architectures) set
    /// the list this way.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().archs_exact("gfx942");
    /// ```
    pub fn archs_exact(&mut self, archs: impl ArchList) -> &mut Build {
        archs.append_to(&mut self.archs);
        self.archs_exact = true;
        self
    }

    /// Compiles the sources matching `pattern` (a path or a glob, relative like the sources)
    /// for `archs` instead of the resolved list, for example MFMA kernels only for
    /// `"gfx90a;gfx942"`. The first matching override wins.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().file_archs("kernels/mfma_*.hip", "gfx90a;gfx942");
    /// ```
    pub fn file_archs(&mut self, pattern: &str, archs: &str) -> &mut Build {
        self.file_archs
            .push((pattern.to_string(), archs.to_string()));
        self
    }

    /// Packs a code object built elsewhere (by rustc for `amdgcn-amd-amdhsa`, by another tool)
    /// for `arch`, alongside or instead of compiled sources. For CUDA a `.ptx`/`.s` file is a
    /// PTX image and a `.cubin` a cubin.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().image("gfx90a", "prebuilt/k-gfx90a.co");
    /// ```
    pub fn image(&mut self, arch: impl AsRef<str>, path: impl AsRef<Path>) -> &mut Build {
        self.images
            .push((arch.as_ref().to_string(), path.as_ref().to_path_buf()));
        self
    }

    /// The container format (default: [`Container::Bundle`] for HIP,
    /// [`Container::OffloadBinary`] for CUDA; [`Container::CudaFatbin`] for CUDA code that
    /// the CUDA driver loads).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().container(offload_build::Container::OffloadBinary);
    /// ```
    pub fn container(&mut self, container: Container) -> &mut Build {
        self.container = Some(container);
        self
    }

    /// Compresses the bundle (`CCOB`, zstd level 3 with long-distance matching, as
    /// `clang --offload-compress`; format version 2 for LLVM ≤ 21, 3 from LLVM 22). Bundles only.
    ///
    /// Needs the crate's `compression` feature; without it the build fails with
    /// [`Error::Config`](crate::builder::Error::Config) naming the feature.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().compress(true);
    /// ```
    pub fn compress(&mut self, compress: bool) -> &mut Build {
        self.compress = compress.then(CompressOptions::default);
        self.compress_auto_version = true;
        self
    }

    /// Compresses with these exact options (method, level, format version).
    ///
    /// # Example
    ///
    /// ```
    /// use offload_build::bundle::compressed::CompressOptions;
    /// offload_build::Build::new().compress_with(CompressOptions::default());
    /// ```
    pub fn compress_with(&mut self, options: CompressOptions) -> &mut Build {
        self.compress = Some(options);
        self.compress_auto_version = false;
        self
    }

    /// How the device code is embedded (default [`Embed::ContainerOnly`]).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().embed(offload_build::Embed::HipObject);
    /// ```
    pub fn embed(&mut self, embed: Embed) -> &mut Build {
        self.embed = embed;
        self.embed_set = true;
        self
    }

    /// The output directory (default: `OUT_DIR`).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().out_dir("target/kernels");
    /// ```
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Build {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Whether to print `cargo:` directives on stdout (default `true`). They are returned in
    /// [`Compiled::cargo_directives`](crate::builder::Compiled::cargo_directives) either way.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().cargo_metadata(false);
    /// ```
    pub fn cargo_metadata(&mut self, print: bool) -> &mut Build {
        self.cargo_metadata = print;
        self
    }

    /// Uses this compiler instead of discovering one.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().compiler("/opt/rocm/llvm/bin/clang");
    /// ```
    pub fn compiler(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.compiler = Some(path.as_ref().to_path_buf());
        self
    }

    /// Chooses the CUDA compiler: nvcc or clang. By default nvcc when one is found
    /// (`CUDACXX`, the CUDA install of `CUDA_PATH`/`CUDA_HOME`/`CUDA_ROOT`, `PATH`,
    /// `/usr/local/cuda`, NVIDIA's `nvidia-cuda-nvcc` wheel), as in CMake, else clang; see
    /// [CUDA](crate::builder#cuda). A [`Build::compiler`] or `CUDACXX` of the other kind is an error.
    ///
    /// # Example
    ///
    /// ```
    /// use offload_build::{Build, CompilerKind};
    ///
    /// Build::new().cuda_compiler(CompilerKind::Clang);
    /// ```
    pub fn cuda_compiler(&mut self, kind: CompilerKind) -> &mut Build {
        self.cuda_compiler = Some(kind);
        self
    }

    /// Uses this `ptxas` (CUDA) to turn PTX into cubins, instead of looking for one (`PTXAS`,
    /// the CUDA install, `PATH`, NVIDIA's `nvidia-cuda-nvcc-cu12` wheel in `VIRTUAL_ENV` or
    /// the `site-packages` of `python3`; see [CUDA](crate::builder#cuda)).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().ptxas("/usr/local/cuda/bin/ptxas");
    /// ```
    pub fn ptxas(&mut self, path: impl AsRef<Path>) -> &mut Build {
        self.ptxas = Some(path.as_ref().to_path_buf());
        self
    }

    /// Whether an [`Embed::HipObject`] or [`Embed::ContainerOnly`] HIP build links the HIP runtime
    /// (default `true`): when a ROCm install is in use and has `libamdhip64.so`, the build
    /// prints `cargo:rustc-link-search=native=<its directory>` and
    /// `cargo:rustc-link-lib=dylib=amdhip64`, because the object's constructor calls
    /// `__hipRegisterFatBinary` (HipObject) or the program loads `container()` with
    /// `hipModuleLoadData` (ContainerOnly). Turn it off to link a runtime of your own (a
    /// stand-in, or one opened with `dlopen`); without any, a HipObject link fails with
    /// `undefined symbol: __hipRegisterFatBinary` (see the [module docs](crate::builder#the-hip-runtime)).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().link_hip_runtime(false);
    /// ```
    pub fn link_hip_runtime(&mut self, link: bool) -> &mut Build {
        self.link_hip_runtime = link;
        self
    }

    /// Sets an environment variable as this build sees it (and as its compiler processes see
    /// it), without changing the process environment: for tests and for tools that drive a
    /// build outside Cargo.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().env("OFFLOAD_ARCH", "gfx90a");
    /// ```
    pub fn env(&mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Build {
        self.env.insert(
            name.as_ref().to_os_string(),
            Some(value.as_ref().to_os_string()),
        );
        self
    }

    /// Hides an environment variable from this build (and its compiler processes).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().env_remove("HIPFLAGS");
    /// ```
    pub fn env_remove(&mut self, name: impl AsRef<OsStr>) -> &mut Build {
        self.env.insert(name.as_ref().to_os_string(), None);
        self
    }

    /// Uses this jobserver instead of the one inherited from Cargo. As under Cargo, the build
    /// holds one implicit token: a client with `n` free tokens allows `n + 1` concurrent jobs.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().jobserver(jobserver::Client::new(4).unwrap());
    /// ```
    pub fn jobserver(&mut self, client: jobserver::Client) -> &mut Build {
        self.jobserver = Some(client);
        self
    }

    /// Whether the compiler's warnings are shown (default `true`): every diagnostic clang
    /// prints for a successful device compile becomes `cargo:warning=` lines, the first
    /// prefixed with the architectures whose compiles printed it
    /// (`[gfx90a, gfx1100] k.hip:3:5: warning: unused variable 'x'`), once per distinct
    /// diagnostic however many architectures print it; they are also in
    /// [`Compiled::diagnostics`](crate::builder::Compiled::diagnostics). A compile whose cached result is used shows the warnings it
    /// printed when it ran (they are kept in its cache record), so a warning does not vanish
    /// on the next build. `false` compiles with `-w` and shows nothing.
    ///
    /// Unlike `cc`, `true` adds no `-Wall`/`-Wextra`: add them with [`Build::flag`].
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().warnings(false); // -w
    /// ```
    pub fn warnings(&mut self, warnings: bool) -> &mut Build {
        self.warnings = warnings;
        self
    }

    /// Whether each source is compiled with its host code (default `false`: device code
    /// only), as `hipcc -c` and `nvcc -c` compile it: its host functions (an `extern "C"`
    /// launch wrapper, `main`), the host stubs of its kernels and the constructor that
    /// registers them, with its device code for every architecture embedded. The device
    /// code is compiled per (source, architecture) in parallel and cached as without it; then
    /// one host compile per source (cached by content too) reads the source's bundle with
    /// `-fcuda-include-gpubinary`. The objects are linked as the static library
    /// `lib<name>.a`, with the HIP runtime (`amdhip64`) and the C++ standard library, as the
    /// `cc` crate links C++ sources.
    ///
    /// With a ROCm install and the same `-cuid=` flag, each object is byte for byte the one
    /// that install's `hipcc -c` writes. Settings that have no meaning for it are refused
    /// when the build starts: another [`Embed`] mode or container, compression.
    ///
    /// # Example
    ///
    /// ```no_run
    /// // build.rs: kernels.hip holds `extern "C" int launch_scale(float*, float, int)`.
    /// offload_build::Build::new()
    ///     .file("kernels.hip")
    ///     .archs("gfx90a;gfx1030")
    ///     .host_code(true)
    ///     .compile("kernels"); // links libkernels.a: call launch_scale through extern "C"
    /// ```
    pub fn host_code(&mut self, host_code: bool) -> &mut Build {
        self.host_code = host_code;
        self
    }

    /// Relocatable device code in a [`Build::host_code`] build (default `false`), as
    /// `hipcc -fgpu-rdc` and `nvcc -rdc=true` build it: the sources may call each other's
    /// `__device__` functions. Each (source, architecture) compiles to relocatable device code
    /// and each architecture is linked once; each source's host compile (`-fgpu-rdc`, run beside
    /// the device compiles: it needs none of their output) registers the linked bundle, which
    /// one more object of the library defines (`__hip_fatbin`). For CUDA with nvcc, each
    /// source compiles with `-rdc=true` and one `nvcc -dlink` (every architecture) writes the
    /// object that registers the linked device code (`cuda_dlink.o`), as CMake's separable
    /// compilation does; `cudadevrt` is linked with the static runtime. Refused without host
    /// code (a device-only build links an architecture's sources whenever there are several)
    /// and for CUDA with clang.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().host_code(true).rdc(true);
    /// ```
    pub fn rdc(&mut self, rdc: bool) -> &mut Build {
        self.rdc = rdc;
        self
    }

    /// The CUDA runtime a [`Build::host_code`] build of CUDA sources links, as the `cc` crate's
    /// `cudart`: `"static"` (the default: `cudart_static`, with `dl`, `rt` and `pthread`),
    /// `"shared"` (`cudart`; NVIDIA's wheels have only `libcudart.so.13`, linked by that name
    /// with `dylib:+verbatim=`, so the program needs it on its library path to run) or
    /// `"none"`; from the lib directory of the toolkit that compiles (nvcc's, or the one clang
    /// compiles against), with `cudadevrt` for [`Build::rdc`] and the static runtime. Another
    /// value is an error when the build starts.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().host_code(true).cudart("shared");
    /// ```
    pub fn cudart(&mut self, cudart: &str) -> &mut Build {
        self.cudart = Some(cudart.to_string());
        self
    }

    /// Whether HIP sources compiled by clang get a precompiled preamble (default `true`):
    /// the leading `#include`s and definitions of a source (clang's preamble) are compiled
    /// once per architecture into a PCH in the cache and the device compile reads it instead
    /// of parsing them again; the device code is byte-identical. A PCH is made only where it
    /// is used again (sources of this build sharing the preamble, or an earlier build that
    /// compiled it: see the module `builder::preamble`); a compile that fails or prints
    /// anything with it runs again without. `OFFLOAD_BUILD_PCH=0` turns it off too.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().pch(false);
    /// ```
    pub fn pch(&mut self, pch: bool) -> &mut Build {
        self.pch = pch;
        self
    }

    /// Whether a preamble that only one compile of this build would use, and that no earlier
    /// build compiled, is precompiled after the build, in the background (default `true`,
    /// `false` when the environment variable `CI` is set: a one-off build never edits). The
    /// build's compiles do not wait for it (a cold build costs what it would without PCH);
    /// the detached compiler starts at once, a little below the build's priority (nice 5: on a
    /// machine other work keeps busy it still finishes before the next edit), and the
    /// next build (the one after the first edit of a kernel body) uses its PCH when every
    /// header it read and the context are as they were when it started; one that still runs
    /// is taken over (killed), never waited for. As clangd does with the preamble of a file
    /// it opens. Without it, that next build makes the PCH itself. No effect with
    /// [`Build::pch`]`(false)`; `OFFLOAD_BUILD_PCH_BACKGROUND=0` turns it off, `1` on.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().pch_background(false);
    /// ```
    pub fn pch_background(&mut self, background: bool) -> &mut Build {
        self.pch_background = Some(background);
        self
    }

    /// Makes every warning an error (`-Werror`, before the builder's flags, so a
    /// `-Wno-error=<warning>` flag can exempt one). Default `false`; no effect with
    /// [`Build::warnings`]`(false)` (`-w` silences every warning).
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().warnings_into_errors(true); // -Werror
    /// ```
    pub fn warnings_into_errors(&mut self, into_errors: bool) -> &mut Build {
        self.warnings_into_errors = into_errors;
        self
    }

    /// Calls `hook` on the building thread as each device compile (and device link)
    /// finishes, with a [`Progress`] whose `Display` is a line such as
    /// `[3/14] gfx90a k.hip 2.1 s`; compiles whose cached result is used are not counted.
    /// `offload-build compile` prints these lines on standard error.
    ///
    /// In `build.rs`, Cargo shows a build script's output only when it fails, or live with
    /// `cargo build -vv`; a long build can print its progress there:
    /// `.on_progress(|p| eprintln!("{p}"))`. By default nothing is printed.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().on_progress(|p| eprintln!("{p}"));
    /// ```
    pub fn on_progress(&mut self, hook: impl Fn(&Progress) + Send + Sync + 'static) -> &mut Build {
        self.progress = Some(ProgressHook(std::sync::Arc::new(hook)));
        self
    }

    /// Kills a compile that runs longer than `timeout` (each process of a job: the compile,
    /// `ptxas`, a device link), with every process it started (it runs in a process group of
    /// its own), and fails the build with [`Error::CompileTimedOut`](crate::builder::Error::CompileTimedOut), one line naming the
    /// source, the architecture and the timeout. Off by default; overrides
    /// `OFFLOAD_BUILD_COMPILE_TIMEOUT` (seconds). A zero duration means no timeout.
    ///
    /// With a timeout the compilers are in process groups of their own, which a terminal's
    /// Ctrl-C does not reach: a compile running when Cargo is interrupted runs to its end.
    /// The version and `native` probes always have a 30 s timeout.
    ///
    /// # Example
    ///
    /// ```
    /// offload_build::Build::new().timeout(std::time::Duration::from_secs(600));
    /// ```
    pub fn timeout(&mut self, timeout: std::time::Duration) -> &mut Build {
        self.timeout = Some(timeout);
        self
    }
}
