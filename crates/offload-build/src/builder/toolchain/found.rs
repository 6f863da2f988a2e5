//! The toolchain a build found: the compiler and the installs around it.

use crate::builder::fs;
use crate::builder::options::CompilerKind;
use std::path::PathBuf;

use crate::builder::toolchain::cuda::{CudaHeaders, CudaUse};
use crate::builder::toolchain::rocm::{DEBIAN_ROCM_PACKAGES, Rocm};

/// The compiler and the installs around it.
#[derive(Clone, Debug)]
pub(crate) struct Toolchain {
    /// Which compiler it is: clang, or (CUDA) nvcc.
    pub kind: CompilerKind,
    /// The compiler (clang, or nvcc when `kind` says so).
    pub clang: PathBuf,
    /// The version line of `clang --version` (`nvcc --version`'s `release` line for nvcc).
    pub version: String,
    /// LLVM major version (0 when it cannot be read).
    pub major: u32,
    /// How the compiler was chosen (`HIPCXX`, `CLANG`, `the ROCm install's clang (…)`, …).
    pub origin: String,
    /// The ROCm install the compiles use (`--rocm-path`, …): the one found, when the compiler
    /// is the clang it was built for (or, when that is unknown, one named by `HIPCXX`,
    /// `HIP_CLANG_PATH` or [`Build::compiler`](crate::builder::Build::compiler)).
    pub rocm: Option<Rocm>,
    /// The ROCm install found, used or not (HIP only).
    pub rocm_found: Option<Rocm>,
    /// Where ROCm was looked for without success, in order (for messages).
    pub rocm_looked: Vec<String>,
    /// The CUDA toolkit's root passed with `--cuda-path`, if any: a system install, or the
    /// links directory laid out for NVIDIA's wheels ([`crate::builder::toolchain::cuda`]).
    pub cuda: Option<PathBuf>,
    /// The CUDA headers clang compiles with (CUDA only): a toolkit, or clang's builtins behind
    /// the prelude.
    pub cuda_headers: Option<CudaHeaders>,
    /// `ptxas`, when found ([`find_ptxas`](crate::builder::toolchain::ptxas::find_ptxas)).
    pub ptxas: Option<PathBuf>,
    /// Where `ptxas` was looked for, in order (for messages).
    pub ptxas_searched: Vec<PathBuf>,
    /// Processors the compiler supports for the language's device target.
    pub supported: Vec<String>,
    /// Hash of everything that identifies the compiler.
    pub identity: u128,
    /// Directories holding helper tools (`amdgpu-arch`, `nvptx-arch`, `nvidia-smi`):
    /// the compiler's own directory, then `PATH`.
    pub tool_dirs: Vec<PathBuf>,
}

impl Toolchain {
    /// For unit tests: a compiler of `kind` and LLVM `major` version at a path nothing runs,
    /// with no install around it.
    #[cfg(test)]
    pub(crate) fn for_test(kind: CompilerKind, major: u32) -> Toolchain {
        Toolchain {
            kind,
            clang: PathBuf::from("/nonexistent/clang"),
            version: String::new(),
            major,
            origin: "CLANG".into(),
            rocm: None,
            rocm_found: None,
            rocm_looked: Vec::new(),
            cuda: None,
            cuda_headers: None,
            ptxas: None,
            ptxas_searched: Vec::new(),
            supported: Vec::new(),
            identity: 0,
            tool_dirs: Vec::new(),
        }
    }

    /// What the CUDA arguments and messages need of it ([`CudaUse`]).
    pub(crate) fn cuda_use(&self) -> CudaUse<'_> {
        CudaUse {
            cuda_headers: &self.cuda_headers,
            major: self.major,
            clang: &self.clang,
        }
    }

    /// Whether the compiler is nvcc (else a clang).
    pub(crate) fn is_nvcc(&self) -> bool {
        self.kind == CompilerKind::Nvcc
    }

    /// The processors code can be built for: those the compiler supports and, with a ROCm
    /// install in use, its device libraries serve (for the default set).
    pub(crate) fn buildable(&self) -> Vec<String> {
        match &self.rocm {
            Some(r) if self.supported.is_empty() => r.served(),
            Some(r) => self
                .supported
                .iter()
                .filter(|p| r.serves(p))
                .cloned()
                .collect(),
            None => self.supported.clone(),
        }
    }

    /// The system include directories, whose headers get no `rerun-if-changed` (as `-MMD`
    /// leaves them out of a depfile): the compiler's resource directory (`<prefix>/lib/clang`
    /// of its real path, where clang looks for it), `/usr/include`, `/usr/lib/gcc`
    /// (libstdc++), the `include` directories of the ROCm install in use and the CUDA headers
    /// directories (the toolkit's `include` and what its links point to, or the prelude).
    pub(crate) fn system_include_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![PathBuf::from("/usr/include"), PathBuf::from("/usr/lib/gcc")];
        let real = self.clang.canonicalize().ok();
        if let Some(prefix) = real.as_deref().and_then(|c| c.parent()?.parent()) {
            dirs.push(prefix.join("lib/clang"));
        }
        if let Some(r) = &self.rocm {
            dirs.push(r.root.join("include"));
            dirs.extend(r.hip.as_ref().map(|h| h.join("include")));
        }
        dirs.extend(self.cuda_headers.iter().flat_map(CudaHeaders::system_dirs));
        dirs.iter().map(|d| fs::lexical(d)).collect()
    }

    /// Why a source that includes `hip/hip_runtime.h` cannot be compiled: no ROCm install was
    /// found (where discovery looked, how to install one), or the one found is not used with
    /// this compiler.
    pub(crate) fn no_rocm_hint(&self) -> String {
        match &self.rocm_found {
            Some(r) => format!(
                "the source needs the HIP headers; a ROCm install was found at {} (by {}), but \
                 it is not used with {} (chosen by {}): its headers need the clang they were \
                 built for{}. Unset that choice, or set HIPCXX to that clang",
                r.root.display(),
                r.found_by,
                self.clang.display(),
                self.origin,
                r.clang
                    .as_ref()
                    .map(|c| format!(" ({})", c.display()))
                    .unwrap_or_default()
            ),
            None => format!(
                "the source needs the HIP headers, but no ROCm install was found, so it was \
                 compiled with -nogpulib -nogpuinc (no HIP headers, no device libraries). \
                 Looked at: {}. Install ROCm (Debian 12: apt-get install {DEBIAN_ROCM_PACKAGES}) \
                 or set ROCM_PATH to an install",
                self.rocm_looked.join("; ")
            ),
        }
    }
}
