//! What a build produced ([`Build::try_compile`](crate::Build::try_compile), [`Build::try_resolve_archs`](crate::Build::try_resolve_archs)).

use std::path::PathBuf;

use crate::builder::diag::Diagnostic;
use crate::builder::options::Container;

/// What [`Build::try_compile`](crate::Build::try_compile) produced.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Compiled {
    /// The container file in `OUT_DIR` (`<name>.hipfb`, `<name>.offloadbin` or
    /// `<name>.fatbin`).
    pub container_file: PathBuf,
    /// The old name of [`Compiled::container_file`]: "fatbin" names NVIDIA's container only.
    #[deprecated(since = "0.2.0", note = "renamed `container_file`")]
    pub fatbin: PathBuf,
    /// The generated `<name>.rs` in `OUT_DIR`.
    pub generated: PathBuf,
    /// The static library holding the host object (object [`Embed`](crate::builder::Embed) modes only):
    /// `lib<name>-<hash>.a` in the output directory.
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
    /// The compiler used (none when only [`Build::image`](crate::Build::image)s were packed).
    pub compiler: Option<PathBuf>,
    /// Its `--version` line.
    pub compiler_version: Option<String>,
    /// Jobs (compiles and device links) that ran.
    pub jobs_run: usize,
    /// Jobs whose cached result was used.
    pub jobs_cached: usize,
    /// Precompiled preambles made by this build ([`Build::pch`](crate::Build::pch)), one per preamble and
    /// architecture, counting those an earlier build made in the background and this one
    /// adopted ([`Build::pch_background`](crate::Build::pch_background)).
    pub pch_made: usize,
    /// Compiles of this build that used a precompiled preamble.
    pub pch_used: usize,
    /// Precompiled preambles this build started making in the background
    /// ([`Build::pch_background`](crate::Build::pch_background)), for the next build.
    pub pch_background: usize,
    /// Every `cargo:` directive of this build (without the `cargo:` prefix), in order.
    pub cargo_directives: Vec<String>,
    /// The warnings among them: offload-build's own (fallbacks), not the compiler's.
    pub warnings: Vec<String>,
    /// What the compiler printed for the device compiles (its warnings), one entry per
    /// distinct diagnostic with the architectures that printed it; replayed from the cache
    /// for compiles that did not run. Empty with [`Build::warnings`](crate::Build::warnings)`(false)`.
    pub diagnostics: Vec<Diagnostic>,
}

/// What [`Build::try_resolve_archs`](crate::Build::try_resolve_archs) found.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ResolvedArchs {
    /// The architectures, in resolution order, without duplicates, each spelled so that a
    /// build given it builds the same ([`Arch::spelling`](crate::builder::Arch::spelling):
    /// `80-real` stays `80-real`).
    pub archs: Vec<String>,
    /// Where they came from (`Build::archs`, `OFFLOAD_ARCH`, `native`, `default`, …).
    pub origin: String,
    /// The compiler they were checked against.
    pub compiler: PathBuf,
    /// The fallback warnings (no GPU for `native`, no architecture set).
    pub warnings: Vec<String>,
    /// For a [`Build::host_code`](crate::Build::host_code) build of CUDA sources: the
    /// directory of the CUDA runtime its library links and the libraries, as `rustc-link-lib`
    /// values (`static=cudart_static`, `dl`, …; [`Build::cudart`](crate::Build::cudart)).
    pub cuda_runtime: Option<(PathBuf, Vec<String>)>,
}
