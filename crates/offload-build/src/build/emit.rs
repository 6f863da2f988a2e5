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
use super::{Compiled, Embed, cache};

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
    cache::write_if_changed(&out.fatbin, &packed.bytes)?;

    let mut library = None;
    if plan.embed != Embed::FatbinOnly {
        let target = env.get("TARGET").unwrap_or_default();
        let embedded = embed_glue::embed_object(&embed_glue::EmbedRequest {
            mode: plan.embed,
            container_bytes: &packed.bytes,
            container: plan.container,
            target: &target,
            kernels: &packed.kernels,
            name,
            out_dir: &out.out_dir,
            llvm_major: plan.toolchain.as_ref().map_or(0, |t| t.major),
        })?;
        d.push(format!(
            "rustc-link-search=native={}",
            out.out_dir.display()
        ));
        d.push(format!("rustc-link-lib=static={name}"));
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
    });
    cache::write_if_changed(&out.generated, text.as_bytes())?;

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
