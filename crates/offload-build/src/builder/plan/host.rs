//! What a host-code build ([`Build::host_code`]) can be asked for: settings that have no
//! meaning for objects that embed their own device code are refused before anything runs.

use crate::builder::config::Build;
use crate::builder::error::Error;
use crate::builder::options::{Container, Language};
use crate::builder::toolchain::Toolchain;
use std::path::{Path, PathBuf};

/// Refuses [`Build::rdc`] without [`Build::host_code`]: a device-only build links an
/// architecture's sources already whenever there are several.
pub(crate) fn check_rdc(build: &Build) -> Result<(), Error> {
    if build.rdc && !build.host_code {
        return Err(Error::Config(
            "Build::rdc(true) is for host-code builds (Build::host_code(true)); a device-only \
             build links an architecture's sources whenever there are several"
                .into(),
        ));
    }
    Ok(())
}

/// Refuses, for a host-code build of `lang`, the settings it cannot honour: another
/// embedding, a container other than the one its compiler embeds, compression, images built
/// elsewhere; and CUDA with clang but no toolkit (no runtime headers or library).
pub(crate) fn check_host_code(build: &Build, lang: Language, tc: &Toolchain) -> Result<(), Error> {
    if build.rdc && lang == Language::Cuda && !tc.is_nvcc() {
        return Err(Error::Config(format!(
            "Build::rdc(true) for CUDA is driven through nvcc (-rdc=true, then nvcc -dlink); \
             with clang ({}) relocatable CUDA code needs clang-linker-wrapper and nvlink, which \
             is not driven: use nvcc (Build::cuda_compiler(CompilerKind::Nvcc)) or \
             Build::rdc(false)",
            tc.clang.display()
        )));
    }
    let refuse = |what: &str| {
        Err(Error::Config(format!(
            "Build::host_code(true) compiles each source into the object its compiler's \
             driver writes, with its device code embedded: {what} has no meaning for it"
        )))
    };
    if build.embed_set {
        return refuse(&format!("Build::embed(Embed::{:?})", build.embed));
    }
    match (lang, build.container) {
        (_, None) | (Language::Hip, Some(Container::Bundle)) => {}
        (_, Some(c)) => return refuse(&format!("Build::container(Container::{c:?})")),
    }
    if build.compress.is_some() {
        return refuse("Build::compress");
    }
    if !build.images.is_empty() {
        return refuse("Build::image (device code built elsewhere)");
    }
    if lang == Language::Cuda && !tc.is_nvcc() && tc.cuda.is_none() {
        return Err(Error::Config(format!(
            "Build::host_code(true) with {} compiles CUDA host code against a CUDA toolkit's \
             headers and runtime, and none was found: install one (NVIDIA's wheels: pip \
             install nvidia-cuda-nvcc nvidia-nvvm nvidia-cuda-runtime nvidia-cuda-crt \
             nvidia-cuda-cccl, found through VIRTUAL_ENV; or CUDA_PATH), or use \
             Build::host_code(false) for the device code",
            tc.clang.display()
        )));
    }
    Ok(())
}

/// The file name of a versioned shared CUDA runtime in `dir` (`libcudart.so.13`), the
/// lowest of those there.
fn versioned_cudart(dir: &Path) -> Option<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("libcudart.so."))
        .collect();
    names.sort();
    names.into_iter().next()
}

/// The CUDA runtime a host-code build of CUDA sources links ([`Build::cudart`]): the
/// directory and the libraries (`cudart_static` and what it needs, `cudart`, or nothing).
/// A value other than `static`, `shared` or `none`, or a runtime the toolkit lacks, is an
/// error that names it.
pub(crate) fn cuda_runtime(
    build: &Build,
    tc: &Toolchain,
) -> Result<Option<(PathBuf, Vec<String>)>, Error> {
    let kind = build.cudart.as_deref().unwrap_or("static");
    let (file, libs): (&str, &[&str]) = match kind {
        "none" => return Ok(None),
        "static" => (
            "libcudart_static.a",
            &["static=cudart_static", "dl", "rt", "pthread"],
        ),
        "shared" => ("libcudart.so", &["cudart"]),
        other => {
            return Err(Error::Config(format!(
                "Build::cudart(\"{other}\"): expected \"static\", \"shared\" or \"none\""
            )));
        }
    };
    // nvcc's toolkit, or the one clang compiles against (the wheels' links directory).
    let root = match &tc.cuda {
        Some(r) if !tc.is_nvcc() => r.clone(),
        _ => crate::builder::toolchain::nvcc::root(&tc.clang).unwrap_or_default(),
    };
    let dirs = [root.join("lib64"), root.join("lib")];
    // The directory, and the versioned file where only that is there: NVIDIA's wheels ship
    // the shared runtime as `libcudart.so.13` alone.
    let found = dirs.iter().find_map(|d| {
        if d.join(file).is_file() {
            Some((d, None))
        } else if kind == "shared" {
            versioned_cudart(d).map(|v| (d, Some(v)))
        } else {
            None
        }
    });
    match found {
        Some((d, versioned)) => {
            let mut libs: Vec<String> = libs.iter().map(|l| l.to_string()).collect();
            // No `libcudart.so` for `-lcudart` to find (the wheels): the versioned file by
            // its name (`+verbatim`, stable since Rust 1.67).
            if let Some(v) = versioned {
                libs = vec![format!("dylib:+verbatim={v}")];
            }
            // Relocatable code's device runtime, as CMake links it with the static runtime.
            if build.rdc && kind == "static" && d.join("libcudadevrt.a").is_file() {
                libs.insert(1, "static=cudadevrt".into());
            }
            // The links directory clang compiles against points at the toolkit's own: named
            // as it is, it outlives the cache.
            Ok(Some((d.canonicalize().unwrap_or_else(|_| d.clone()), libs)))
        }
        None => Err(Error::Config(format!(
            "the CUDA runtime for Build::cudart(\"{kind}\") ({file}) is not in {} or {}: \
             install the toolkit's runtime (NVIDIA's wheels: pip install nvidia-cuda-runtime; \
             a CUDA install: its cudart package), or Build::cudart(\"none\") to link it yourself",
            dirs[0].display(),
            dirs[1].display()
        ))),
    }
}
