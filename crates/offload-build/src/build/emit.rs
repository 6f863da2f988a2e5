//! The emit stage: the container file, the host object's static library (object [`Embed`]
//! modes, through [`super::embed_glue`]), the generated `<name>.rs` and the link directives.
//! Unchanged files are not rewritten.
//!
//! Reads only the [`Plan`], the packed container and the job counts.

use super::codegen;
use super::embed_glue;
use super::env::Env;
use super::error::Error;
use super::pack::Packed;
use super::plan::Plan;
use super::{Compiled, Embed, fs};

/// Writes the outputs of a compile plan and tells Cargo how to link them.
pub(crate) fn run(
    plan: &Plan,
    packed: Packed,
    jobs: (usize, usize),
    env: &Env<'_>,
) -> Result<Compiled, Error> {
    let d = env.directives();
    let out = plan.outputs();
    let name = out.name.as_str();
    fs::write_if_changed(&out.fatbin, &packed.bytes)?;

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
    );
    let mut library = None;
    if plan.embed != Embed::FatbinOnly {
        let embedded = embed_glue::embed_object(&embed_glue::EmbedRequest {
            mode: plan.embed,
            container_bytes: &packed.bytes,
            container: plan.container,
            target: &target,
            kernels: &packed.kernels,
            name,
            out_dir: &out.out_dir,
            llvm_major: plan.toolchain.as_ref().map_or(0, |t| t.major),
            symbols: &symbols,
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
        // The HipObject's constructor calls __hipRegisterFatBinary & co.: link the runtime
        // of the ROCm install the code was compiled with.
        if let Some(dir) = &plan.hip_runtime_dir {
            d.push(format!("rustc-link-search=native={}", dir.display()));
            d.push("rustc-link-lib=dylib=amdhip64".into());
        }
        library = Some(embedded.library);
    }

    let text = codegen::render(&codegen::Generated {
        name,
        fatbin_file: &out.fatbin.to_string_lossy(),
        fatbin_len: packed.bytes.len(),
        archs: &packed.archs,
        kernels: &packed.kernels,
        container: plan.container,
        compressed: packed.compressed,
        embed: plan.embed,
        symbols: &symbols,
        images: &packed.images,
    });
    fs::write_if_changed(&out.generated, text.as_bytes())?;

    let (jobs_run, jobs_cached) = jobs;
    Ok(Compiled {
        fatbin: out.fatbin.clone(),
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
        cargo_directives: Vec::new(),
        warnings: Vec::new(),
        diagnostics: Vec::new(),
    })
}
