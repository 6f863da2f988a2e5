//! The container and the embedding a build writes, and the images built elsewhere
//! (`Build::image`) that go into it.

use crate::builder::arch::Arch;
use crate::builder::config::Build;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::options::Container;
use crate::builder::options::Embed;
use crate::builder::options::Language;
use crate::builder::plan::sources::{absolute, cwd, language, sources};
use offload_formats::package::ImageKind;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The container and compression settings a compile can use with `lang`.
pub(crate) fn check_container(
    build: &Build,
    lang: Language,
    container: Container,
) -> Result<(), Error> {
    if lang == Language::Cuda && container == Container::Bundle {
        return Err(Error::Config(
            "CUDA device code is packed as offload binaries or an NVIDIA fat binary: \
             use Container::OffloadBinary or Container::CudaFatbin"
                .into(),
        ));
    }
    if container == Container::CudaFatbin {
        if lang != Language::Cuda {
            return Err(Error::Config(
                "Container::CudaFatbin holds CUDA device code (cubins, PTX): \
                 compile CUDA sources (Language::Cuda)"
                    .into(),
            ));
        }
        if build.embed != Embed::ContainerOnly {
            return Err(Error::Config(
                "Container::CudaFatbin is loaded at run time (cuModuleLoadData): \
                 use Embed::ContainerOnly"
                    .into(),
            ));
        }
    }
    if build.compress.is_some() && container != Container::Bundle {
        return Err(Error::Config(
            "compression applies to bundles (Container::Bundle) only".into(),
        ));
    }
    if build.compress.is_some() && !offload_formats::bundle::compressed::SUPPORTED {
        return Err(Error::Config(NEEDS_COMPRESSION.into()));
    }
    Ok(())
}

/// Why a compressed bundle cannot be written.
pub(crate) const NEEDS_COMPRESSION: &str = "compressed bundles need the `compression` feature of offload-build \
     (offload-build = { version = \"0.1\", features = [\"compression\"] })";

/// The container as a plan decides it, without checking anything or reporting directives
/// (for [`Build::object_embed`]).
pub(crate) fn container(build: &Build, env: &Env<'_>) -> Container {
    let cwd = cwd(env);
    let sources = sources(build, &cwd, env.directives()).unwrap_or_else(|_| build.files.clone());
    default_container(build, language(build.language, &sources))
}

/// The container set, else the language's: a bundle for HIP, offload binaries for CUDA.
pub(crate) fn default_container(build: &Build, lang: Language) -> Container {
    build.container.unwrap_or(match lang {
        Language::Hip => Container::Bundle,
        Language::Cuda => Container::OffloadBinary,
    })
}

/// A code object built elsewhere ([`Build::image`]).
#[derive(Clone, Debug)]
pub(crate) struct PlannedImage {
    /// Its architecture.
    pub arch: Arch,
    /// The path as given (for `rerun-if-changed`).
    pub given: PathBuf,
    /// The path to read (absolute).
    pub path: PathBuf,
    /// What it holds.
    pub kind: ImageKind,
}

/// The images with their architectures and kinds. A bundle holds one code object per
/// architecture: an image for an architecture that sources are compiled for, or two images
/// for one architecture, are an error.
pub(crate) fn images(
    build: &Build,
    compiles: &[(PathBuf, Vec<Arch>)],
    cwd: &Path,
    container: Container,
) -> Result<Vec<PlannedImage>, Error> {
    let mut taken: BTreeSet<Arch> = compiles
        .iter()
        .flat_map(|(_, archs)| archs.iter().cloned())
        .collect();
    let mut out = Vec::new();
    for (arch, given) in &build.images {
        let origin = format!("Build::image(\"{arch}\", …)");
        let a = Arch::new(arch).map_err(|reason| Error::InvalidArch {
            arch: arch.clone(),
            origin: origin.clone(),
            reason,
        })?;
        let path = absolute(cwd, given);
        let kind = match path.extension().and_then(OsStr::to_str) {
            Some("ptx") | Some("s") if a.is_nvidia() => ImageKind::Ptx,
            Some("cubin") => ImageKind::Cubin,
            _ => ImageKind::Object,
        };
        if container == Container::Bundle && !taken.insert(a.clone()) {
            return Err(Error::Config(format!(
                "architecture {a} has both compiled sources and an image (or two images); \
                 a bundle holds one code object per architecture"
            )));
        }
        out.push(PlannedImage {
            arch: a,
            given: given.clone(),
            path,
            kind,
        });
    }
    Ok(out)
}
