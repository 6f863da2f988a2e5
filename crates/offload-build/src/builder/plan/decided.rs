//! The plan: everything a build decided before any job runs ([`Plan::new`]), read by the
//! jobs, pack and emit stages.

use crate::builder::arch::Arch;
use crate::builder::config::Build;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::options::Container;
use crate::builder::options::Embed;
use crate::builder::options::Language;
use crate::builder::plan::archs::{check_all_supported, check_ptxas, resolve_archs};
use crate::builder::plan::container::{PlannedImage, check_container, default_container, images};
use crate::builder::plan::host::{check_host_code, check_rdc, cuda_runtime};
use crate::builder::plan::jobs::{JobSettings, job_settings};
use crate::builder::plan::sources::{check_sources, cwd, language, per_source_archs, sources};
use crate::builder::toolchain::{self, Toolchain};
use offload_formats::bundle::compressed::CompressOptions;
use std::path::PathBuf;

/// What the plan is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Purpose<'a> {
    /// A full build of the library `name` ([`Build::try_compile`]).
    Compile(&'a str),
    /// Only the toolchain and the global architectures ([`Build::try_resolve_archs`]): no
    /// output directory is needed, sources need not exist, nothing is checked that only a
    /// build needs.
    Resolve,
}

/// Where the outputs go (compile plans only).
#[derive(Clone, Debug)]
pub(crate) struct Outputs {
    /// The library name (`lib<name>.a`, `<name>.rs`).
    pub name: String,
    /// The output directory (created).
    pub out_dir: PathBuf,
    /// The container file: `<name>.hipfb` or `<name>.offloadbin`.
    pub container_file: PathBuf,
    /// The generated `<name>.rs`.
    pub generated: PathBuf,
}

/// Everything decided before any compile (see the [module docs](self)).
#[derive(Debug)]
pub(crate) struct Plan {
    /// Output names and directory; `None` for [`Purpose::Resolve`].
    pub outputs: Option<Outputs>,
    /// The directory relative paths are taken from (`CARGO_MANIFEST_DIR`, else the current
    /// directory).
    pub cwd: PathBuf,
    /// Where compiled objects and cache records are kept.
    pub cache_dir: PathBuf,
    /// The source language.
    pub lang: Language,
    /// The container.
    pub container: Container,
    /// Bundle compression, if any.
    pub compress: Option<CompressOptions>,
    /// Whether the compressed-bundle format version follows the compiler's LLVM version.
    pub compress_auto_version: bool,
    /// How the container reaches the program.
    pub embed: Embed,
    /// The compiler and the installs around it; `None` when nothing is compiled.
    pub toolchain: Option<Toolchain>,
    /// The global architecture list (before [`Build::file_archs`] overrides).
    pub archs: Vec<Arch>,
    /// Where [`Plan::archs`] came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, …; or
    /// `Build::image` when nothing is compiled).
    pub arch_origin: String,
    /// Each source (absolute) with the architectures it is compiled for.
    pub compiles: Vec<(PathBuf, Vec<Arch>)>,
    /// The shared job settings; `None` when there is nothing to compile.
    pub jobs: Option<JobSettings>,
    /// Code objects built elsewhere.
    pub images: Vec<PlannedImage>,
    /// The directory of the HIP runtime library (`libamdhip64.so`) to link: an
    /// [`Embed::HipObject`] build with a ROCm install in use, unless
    /// [`Build::link_hip_runtime`] turned it off.
    pub hip_runtime_dir: Option<PathBuf>,
    /// Whether each source is compiled with its host code ([`Build::host_code`]): the
    /// objects, not a container, are what the build links.
    pub host_code: bool,
    /// The CUDA runtime a host-code build of CUDA sources links: its directory and the
    /// `rustc-link-lib` values ([`Build::cudart`]).
    pub cuda_runtime: Option<(PathBuf, Vec<String>)>,
}

impl Plan {
    /// Reads `build` and the environment and decides everything (see the [module
    /// docs](self)). Reports directives (`rerun-if-changed`, warnings) through `env`.
    pub(crate) fn new(build: &Build, env: &Env<'_>, purpose: Purpose<'_>) -> Result<Plan, Error> {
        let compile = matches!(purpose, Purpose::Compile(_));
        if let Purpose::Compile(name) = purpose {
            check_name(name)?;
        }
        let out_dir = match &build.out_dir {
            Some(d) => Some(d.clone()),
            None => env.get_os("OUT_DIR").map(PathBuf::from),
        };
        if compile {
            let dir = out_dir.as_ref().ok_or_else(|| {
                Error::Config("OUT_DIR is not set: run from build.rs or call Build::out_dir".into())
            })?;
            std::fs::create_dir_all(dir).map_err(|e| Error::io("creating", dir, e))?;
        }
        let cwd = cwd(env);
        let cache_dir = env
            .get_os("OFFLOAD_BUILD_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| out_dir.as_ref().map(|d| d.join("offload-build-cache")))
            .unwrap_or_else(|| std::env::temp_dir().join("offload-build-cache"));
        let d = env.directives();

        // Sources.
        let sources = sources(build, &cwd, d)?;
        if compile {
            check_sources(build, &cwd, &sources, d)?;
        }

        // Language, container, embedding, output names.
        let lang = language(build.language, &sources);
        let container = default_container(build, lang);
        if compile {
            check_container(build, lang, container)?;
        }
        let outputs = match (purpose, out_dir) {
            (Purpose::Compile(name), Some(out_dir)) => Some(outputs(name, out_dir, container)),
            _ => None,
        };

        let mut plan = Plan {
            outputs,
            cwd,
            cache_dir,
            lang,
            container,
            compress: build.compress,
            compress_auto_version: build.compress_auto_version,
            embed: build.embed,
            toolchain: None,
            archs: Vec::new(),
            arch_origin: String::from("Build::image"),
            compiles: Vec::new(),
            jobs: None,
            images: Vec::new(),
            hip_runtime_dir: None,
            host_code: build.host_code,
            cuda_runtime: None,
        };

        // Toolchain and architectures (only when there is something to compile, or to
        // resolve).
        if !compile || !sources.is_empty() {
            plan.resolve(build, env, compile, &sources)?;
        }

        if compile {
            plan.images = images(build, &plan.compiles, &plan.cwd, plan.container)?;
        }
        Ok(plan)
    }

    /// The toolchain, the architectures and (for a compile) the jobs.
    fn resolve(
        &mut self,
        build: &Build,
        env: &Env<'_>,
        compile: bool,
        sources: &[PathBuf],
    ) -> Result<(), Error> {
        let lang = self.lang;
        std::fs::create_dir_all(&self.cache_dir)
            .map_err(|e| Error::io("creating", &self.cache_dir, e))?;
        let wanted = toolchain::Wanted {
            compiler: build.compiler.as_deref(),
            cuda_compiler: build.cuda_compiler,
            ptxas: build.ptxas.as_deref(),
        };
        let tc = toolchain::discover(env, lang, wanted, &self.cache_dir, &self.cwd)?;
        let crate_var = env
            .get("CARGO_PKG_NAME")
            .map(|n| format!("{}_OFFLOAD_ARCH", n.to_ascii_uppercase().replace('-', "_")));
        let (global, origin) = resolve_archs(build, env, lang, &tc, crate_var.as_deref())?;
        check_rdc(build)?;
        if build.host_code {
            check_host_code(build, lang, &tc)?;
            if lang == Language::Cuda {
                self.cuda_runtime = cuda_runtime(build, &tc)?;
            }
        }
        if compile {
            self.compiles =
                per_source_archs(build, env, lang, &tc, &self.cwd, sources, &global, &origin)?;
            let at = (self.cwd.as_path(), self.cache_dir.as_path());
            self.jobs = Some(job_settings(build, env, &tc, lang, &self.compiles, at)?);
            if lang == Language::Cuda {
                check_ptxas(&self.compiles, &tc, env.directives())?;
                crate::builder::toolchain::cuda::warn(&tc.cuda_use(), env.directives());
            }
        } else {
            check_all_supported(&global, &tc, lang, &origin)?;
        }
        // HipObject's constructor calls the HIP runtime; a ContainerOnly HIP build's program
        // loads `container()` with it (`hipModuleLoadData`).
        if build.link_hip_runtime
            && lang == Language::Hip
            && matches!(self.embed, Embed::HipObject | Embed::ContainerOnly)
        {
            self.hip_runtime_dir = tc.rocm.as_ref().and_then(|r| r.hip_lib_dir.clone());
        }
        self.archs = global;
        self.arch_origin = origin;
        self.toolchain = Some(tc);
        Ok(())
    }

    /// The outputs of a compile plan.
    pub(crate) fn outputs(&self) -> &Outputs {
        self.outputs
            .as_ref()
            .expect("only compile plans reach the emit stage, and they have outputs")
    }
}

impl Plan {
    /// The toolchain and the first architecture of a resolve plan: what one device command
    /// is spelled for ([`Build::try_get_compiler`], [`Build::try_get_preamble`]).
    pub(crate) fn first_compile(&self) -> Result<(&Toolchain, &Arch), Error> {
        let tc = self
            .toolchain
            .as_ref()
            .expect("a resolve plan always discovers the toolchain");
        let arch = self.archs.first().ok_or_else(|| {
            Error::Config("no architecture to compile for: set one with Build::arch".into())
        })?;
        Ok((tc, arch))
    }
}

pub(crate) fn check_name(name: &str) -> Result<(), Error> {
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(Error::Config(format!(
            "library name `{name}` must be non-empty ASCII letters, digits, `_` or `-`"
        )));
    }
    Ok(())
}

pub(crate) fn outputs(name: &str, out_dir: PathBuf, container: Container) -> Outputs {
    let ext = match container {
        Container::Bundle => "hipfb",
        Container::OffloadBinary => "offloadbin",
        Container::CudaFatbin => "fatbin",
    };
    Outputs {
        name: name.to_string(),
        container_file: out_dir.join(format!("{name}.{ext}")),
        generated: out_dir.join(format!("{name}.rs")),
        out_dir,
    }
}
