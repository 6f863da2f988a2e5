//! The bundler's object-file paths: fat objects (`-type=o` with an object host) and
//! heterogeneous archives (`-type=a -unbundle`), over [`offload_formats::bundle::fatobj`] and
//! [`offload_formats::bundle::archive`].
//!
//! Where LLVM runs llvm-objcopy, this tool writes the object itself; with `-###` it prints
//! the llvm-objcopy command LLVM would run (each argument double-quoted, to stderr; the
//! `llvm-objcopy` found beside this executable or in `PATH`, else the bare name; LLVM's
//! temporary file shown as `<tmp>/clang-offload-bundler-XXXXXX.tmp`, not created) and, as
//! LLVM does, leaves the fat object (bundling) or the host output (unbundling) empty.

use std::io::Write;

use super::entries::{Found, Handler};
use super::hiargs::Job;
use crate::fileio::{Input, OutputFile};
use crate::{Ctx, Exit};
use offload_formats::bundle::archive::{self, UnbundleError, UnbundleOptions};
use offload_formats::bundle::fatobj::{self, FatObject, HOST_PLACEHOLDER};
use offload_formats::id::EntryId;

/// The handler for `-type=o` when the reference input looks like an object file: fat
/// object if it parses, otherwise the binary format (as LLVM falls back when its object
/// reader fails).
pub(crate) fn object_handler(
    _ctx: &mut Ctx<'_>,
    reference: &[u8],
    _path: &str,
) -> Result<Handler, Exit> {
    Ok(if FatObject::parse_sections(reference).is_ok() {
        Handler::Object
    } else {
        Handler::Binary
    })
}

/// The bundle sections of a fat object, in section order. A section whose contents cannot
/// be read is listed by its name, as LLVM lists it, and carries its error for when it is
/// extracted.
pub(crate) fn fat_object_entries<'a>(
    ctx: &mut Ctx<'_>,
    data: &'a [u8],
    path: &str,
) -> Result<Vec<Found<'a>>, Exit> {
    let (_, sections) =
        FatObject::parse_sections(data).map_err(|e| ctx.error(format_args!("'{path}': {e}")))?;
    Ok(sections
        .into_iter()
        .map(|s| match s.contents {
            Ok(e) => Found {
                id: e.id,
                offset: e.offset,
                len: e.data.len() as u64,
                host_object: e.is_host(),
                unreadable: None,
            },
            Err(e) => Found {
                id: s.id,
                offset: 0,
                len: 0,
                host_object: false,
                unreadable: Some(format!("'{path}': {e}")),
            },
        })
        .collect())
}

/// Writes the fat object of `job` (`inputs` opened in `-input` order).
pub(crate) fn bundle_fat_object(
    ctx: &mut Ctx<'_>,
    job: &Job,
    inputs: &[Input],
) -> Result<(), Exit> {
    let Some(host) = job.targets.ids().iter().position(EntryId::is_host) else {
        // LLVM 19 and 22 crash here (SIGSEGV): the fat object has no host to carry it.
        return Err(ctx.error(format_args!(
            "'{}': a fat object (-type=o with an object file input) needs a host target in -targets",
            job.inputs[job.targets.reference_input()]
        )));
    };
    let out_path = &job.outputs[0];
    let mut output = OutputFile::create(out_path).map_err(|e| ctx.file_error(out_path, &e))?;
    if job.print_only {
        let ids: Vec<&str> = job.targets.ids().iter().map(EntryId::as_str).collect();
        let files: Vec<&str> = job.inputs.iter().map(String::as_str).collect();
        let cmd = fatobj::objcopy_add_command(
            &objcopy_path(),
            &ids,
            &files,
            host,
            &temp_name(),
            &job.inputs[host],
            out_path,
        );
        let _ = ctx.err.write_all(cmd.as_bytes());
        return output.commit().map_err(|e| ctx.file_error(out_path, &e));
    }
    let entries: Vec<(&str, &[u8])> = job
        .targets
        .ids()
        .iter()
        .zip(inputs)
        .enumerate()
        .map(|(i, (id, input))| {
            let payload: &[u8] = if i == host {
                HOST_PLACEHOLDER
            } else {
                &input.data
            };
            (id.as_str(), payload)
        })
        .collect();
    let bytes = fatobj::write_fat_object(&inputs[host].data, &entries)
        .map_err(|e| ctx.error(format_args!("'{}': {e}", job.inputs[host])))?;
    output.preallocate(bytes.len() as u64);
    output
        .file()
        .write_all(&bytes)
        .map_err(|e| ctx.file_error(out_path, &e))?;
    output.commit().map_err(|e| ctx.file_error(out_path, &e))
}

/// The output for a fat object's host entry: the object without its bundle sections (or,
/// with `-###`, an empty file and the llvm-objcopy command LLVM would run).
pub(crate) fn host_output(
    ctx: &mut Ctx<'_>,
    job: &Job,
    data: &[u8],
    out_path: &str,
) -> Result<OutputFile, Exit> {
    let in_path = &job.inputs[0];
    let mut output = OutputFile::create(out_path).map_err(|e| ctx.file_error(out_path, &e))?;
    if job.print_only {
        let cmd = fatobj::objcopy_remove_command(&objcopy_path(), in_path, &temp_name());
        let _ = ctx.err.write_all(cmd.as_bytes());
        return Ok(output);
    }
    let bytes = fatobj::remove_bundle_sections(data)
        .map_err(|e| ctx.error(format_args!("'{in_path}': {e}")))?;
    output
        .file()
        .write_all(&bytes)
        .map_err(|e| ctx.file_error(out_path, &e))?;
    Ok(output)
}

/// `-type=a -unbundle`: one device archive per target.
pub(crate) fn unbundle_archive(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
    let path = &job.inputs[0];
    let input = Input::open(path).map_err(|e| ctx.file_error(path, &e))?;
    // LLVM's one message for every input that is not an archive (issue 19, part 4).
    if !archive::has_archive_magic(&input.data) {
        return Err(ctx.error(archive::NOT_AN_ARCHIVE));
    }
    if job.check_archive {
        archive::check_archive(&input.data, path).map_err(|m| ctx.error(m))?;
    }
    let targets: Vec<EntryId> = job
        .targets
        .ids()
        .iter()
        .map(EntryId::standardized)
        .collect();
    let options = UnbundleOptions {
        allow_missing: job.allow_missing,
        hip_openmp: job.hip_openmp,
    };
    let archives = archive::unbundle_archive(&input.data, &targets, options).map_err(|e| match e {
        UnbundleError::NoCompatible { index, .. } => ctx.error(format_args!(
            "no compatible code object found for the target '{}' in heterogeneous archive library: {path}",
            job.targets.ids()[index].as_str()
        )),
        e => ctx.error(e.message(path)),
    })?;
    let mut outputs = Vec::with_capacity(archives.len());
    for (bytes, out_path) in archives.iter().zip(&job.outputs) {
        let mut o = OutputFile::create(out_path).map_err(|e| ctx.file_error(out_path, &e))?;
        o.preallocate(bytes.len() as u64);
        o.file()
            .write_all(bytes)
            .map_err(|e| ctx.file_error(out_path, &e))?;
        outputs.push(o);
    }
    OutputFile::commit_all(outputs)
        .map_err(|(p, e)| ctx.file_error(&crate::fileio::path_text(&p), &e))
}

/// Where LLVM would find llvm-objcopy: beside the executable, then in `PATH`.
fn objcopy_path() -> String {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("llvm-objcopy")))
        .filter(|p| p.is_file());
    if let Some(p) = beside {
        return p.display().to_string();
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let p = dir.join("llvm-objcopy");
            if p.is_file() {
                return p.display().to_string();
            }
        }
    }
    "llvm-objcopy".into()
}

/// A name of the shape LLVM's temporary files have (`clang-offload-bundler-XXXXXX.tmp`).
fn temp_name() -> String {
    use std::hash::{BuildHasher, RandomState};
    let r = RandomState::new().hash_one(std::process::id()) & 0xff_ffff;
    std::env::temp_dir()
        .join(format!("clang-offload-bundler-{r:06x}.tmp"))
        .display()
        .to_string()
}
