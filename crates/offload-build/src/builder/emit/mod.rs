//! The emit stage: the container file, the host object's static library (object [`Embed`]
//! modes, through [`crate::builder::emit::embed_glue`]), the generated `<name>.rs` (and, for
//! [`Embed::HipObject`], the C/C++ header `<name>_kernels.h`) and the link directives.
//! Unchanged files are not rewritten.
//!
//! Reads only the [`Plan`], the packed container and the job counts.

pub(crate) mod embed_glue;
pub(crate) mod rust_module;

use std::path::{Path, PathBuf};

use crate::builder::compiled::Compiled;
use crate::builder::env::Env;
use crate::builder::error::Error;
use crate::builder::fs;
use crate::builder::options::Embed;
use crate::builder::pack::Packed;
use crate::builder::plan::Plan;

/// Writes the outputs of a compile plan and tells Cargo how to link them.
pub(crate) fn run(
    plan: &Plan,
    packed: Packed,
    objects: &[(String, PathBuf)],
    jobs: (usize, usize),
    env: &Env<'_>,
) -> Result<Compiled, Error> {
    let out = plan.outputs();
    let name = out.name.as_str();
    fs::write_if_changed(&out.container_file, &packed.bytes)?;

    let target = env.get("TARGET").unwrap_or_default();
    let package = env.get("CARGO_PKG_NAME").map(|n| {
        let version = env.get("CARGO_PKG_VERSION").unwrap_or_default();
        (n, version)
    });
    let symbols = embed_glue::HostSymbols::new(
        package.as_ref().map(|(n, v)| (n.as_str(), v.as_str())),
        name,
        &target,
        &out.out_dir,
        &packed.bytes,
    );
    let library = match plan.embed {
        _ if plan.host_code => Some(host_library(plan, objects, &target, env)?),
        Embed::ContainerOnly => None,
        _ => Some(embed(plan, &packed, &target, &symbols, env)?),
    };
    // The HIP runtime of the ROCm install the code was compiled with: HipObject's constructor
    // calls __hipRegisterFatBinary & co., a ContainerOnly program loads container() with it.
    if let Some(dir) = &plan.hip_runtime_dir {
        let d = env.directives();
        d.push(format!("rustc-link-search=native={}", dir.display()));
        d.push("rustc-link-lib=dylib=amdhip64".into());
    }

    let text = rust_module::render(&rust_module::Generated {
        name,
        container_file: &out.container_file.to_string_lossy(),
        container_len: packed.bytes.len(),
        archs: &packed.archs,
        kernels: &packed.kernels,
        container: plan.container,
        compressed: packed.compressed,
        // The objects register their own device code: the module only describes it.
        embed: if plan.host_code {
            Embed::ContainerOnly
        } else {
            plan.embed
        },
        symbols: &symbols,
        images: &packed.images,
    });
    fs::write_if_changed(&out.generated, text.as_bytes())?;

    let (jobs_run, jobs_cached) = jobs;
    // The deprecated `fatbin` keeps its value for the callers that still read it.
    #[allow(deprecated)]
    Ok(Compiled {
        container_file: out.container_file.clone(),
        fatbin: out.container_file.clone(),
        generated: out.generated.clone(),
        library,
        archs: packed.archs,
        arch_origin: plan.arch_origin.clone(),
        kernels: packed.kernels,
        container: plan.container,
        compressed: packed.compressed,
        compiler: plan.toolchain.as_ref().map(|t| t.clang.clone()),
        compiler_version: plan.toolchain.as_ref().map(|t| t.version.clone()),
        jobs_run,
        jobs_cached,
        pch_made: 0,
        pch_used: 0,
        pch_background: 0,
        cargo_directives: Vec::new(),
        warnings: Vec::new(),
        diagnostics: Vec::new(),
    })
}

/// The static library `lib<name>.a` of a host-code build's objects (members named after
/// their sources, in source order), and the directives that link it with the C++ standard
/// library, as the `cc` crate links C++ sources (`CXXSTDLIB` chooses another, empty none).
fn host_library(
    plan: &Plan,
    objects: &[(String, PathBuf)],
    target: &str,
    env: &Env<'_>,
) -> Result<PathBuf, Error> {
    use offload_formats::bundle::archive::{NewMember, write_gnu_archive};
    let out = plan.outputs();
    let mut names: Vec<String> = Vec::new();
    let mut members = Vec::new();
    for (given, o) in objects {
        let data = std::fs::read(o).map_err(|e| Error::io("reading", o, e))?;
        let stem = given.strip_suffix(".o").unwrap_or(given);
        // Two sources of the same name in different directories: both members kept.
        let mut name = given.clone();
        let mut n = 1;
        while names.contains(&name) {
            n += 1;
            name = format!("{stem}-{n}.o");
        }
        names.push(name.clone());
        members.push(NewMember {
            name: name.into_bytes(),
            data: data.into(),
        });
    }
    let archive = write_gnu_archive(&members).map_err(|e| Error::Pack(e.into()))?;
    let library = out.out_dir.join(format!("lib{}.a", out.name));
    fs::write_if_changed(&library, &archive)?;
    let d = env.directives();
    d.push(format!(
        "rustc-link-search=native={}",
        out.out_dir.display()
    ));
    d.push(format!("rustc-link-lib=static={}", out.name));
    let stdlib = match env.get("CXXSTDLIB") {
        Some(v) => Some(v).filter(|v| !v.is_empty()),
        None if target.contains("msvc") => None,
        None if ["apple", "freebsd", "openbsd", "android"]
            .iter()
            .any(|t| target.contains(t)) =>
        {
            Some("c++".to_string())
        }
        None => Some("stdc++".to_string()),
    };
    if let Some(lib) = stdlib {
        d.push(format!("rustc-link-lib={lib}"));
    }
    if let Some((dir, libs)) = &plan.cuda_runtime {
        d.push(format!("rustc-link-search=native={}", dir.display()));
        for l in libs {
            d.push(format!("rustc-link-lib={l}"));
        }
    }
    Ok(library)
}

/// Writes the host object's library for an object [`Embed`] mode and the directives that
/// link it (and the HIP runtime); returns the library.
fn embed(
    plan: &Plan,
    packed: &Packed,
    target: &str,
    symbols: &embed_glue::HostSymbols,
    env: &Env<'_>,
) -> Result<PathBuf, Error> {
    let d = env.directives();
    let out = plan.outputs();
    let name = out.name.as_str();
    let embedded = embed_glue::embed_object(&embed_glue::EmbedRequest {
        mode: plan.embed,
        container_bytes: &packed.bytes,
        container: plan.container,
        target,
        kernels: &packed.kernels,
        name,
        out_dir: &out.out_dir,
        llvm_major: plan.toolchain.as_ref().map_or(0, |t| t.major),
        symbols,
    })?;
    d.push(format!(
        "rustc-link-search=native={}",
        out.out_dir.display()
    ));
    let link = &symbols.link_name;
    if plan.embed == Embed::HipObject {
        // Linked whole: the object registers its fat binary from a constructor that
        // nothing references, so as an ordinary archive member it would be dropped
        // whenever the program names no kernel. (The generated module keeps it too, with
        // a `#[used]` reference, for links that do not go through this directive.)
        d.push(format!("rustc-link-lib=static:+whole-archive={link}"));
    } else {
        d.push(format!("rustc-link-lib=static={link}"));
    }
    if plan.embed == Embed::HipObject {
        write_kernel_header(&out.out_dir, name, &packed.kernels, symbols)?;
    }
    Ok(embedded.library)
}

/// `<name>_kernels.h` in `out_dir`: the handles' declarations for C and C++ host code (the
/// CMake package puts its directory on the include path).
fn write_kernel_header(
    out_dir: &Path,
    name: &str,
    kernels: &[String],
    symbols: &embed_glue::HostSymbols,
) -> Result<(), Error> {
    let header = rust_module::render_header(name, kernels, symbols);
    fs::write_if_changed(
        &out_dir.join(format!("{name}_kernels.h")),
        header.as_bytes(),
    )?;
    Ok(())
}
