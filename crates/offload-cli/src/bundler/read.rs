//! Reading a bundle (`-list`, and the first half of `-unbundle`): the file opened (and
//! decompressed), its handler chosen from `-type` and its bytes, its entries listed.

use std::io::Write;

use super::entries::{Found, Handler};
use super::objects;
use super::verbose::report_decompressed;
use crate::fileio::{CopySource, Input, Memory, error_text};
use crate::{Ctx, Exit};
use offload_formats::bundle::compressed::{self, CompressedBundle, Limits};
use offload_formats::bundle::{BinaryBundle, FileType, TextBundle};
use offload_formats::kind::is_llvm_object_file;

pub(crate) fn handler_for(
    ctx: &mut Ctx<'_>,
    file_type: &str,
    reference: &[u8],
    reference_path: &str,
) -> Result<Handler, Exit> {
    let Some(t) = FileType::parse(file_type) else {
        return Err(ctx.error(format_args!("'{file_type}': invalid file type specified")));
    };
    if let Some(comment) = t.text_comment() {
        return Ok(Handler::Text(comment));
    }
    if t == FileType::O && is_llvm_object_file(reference) {
        return objects::object_handler(ctx, reference, reference_path);
    }
    Ok(Handler::Binary)
}

/// Opens a bundle to read (`-list`, `-unbundle`) and runs `f` on its bytes. A compressed
/// bundle is decompressed (only the first one when several follow each other, bounded by its
/// total size, as LLVM 23 does): `f` runs as soon as the bytes are there while the hash is
/// still being checked, and its messages are held back until LLVM 22's `-verbose` lines
/// (which come first) are printed. A value `f` returns (outputs not yet committed) is
/// dropped when the bundle turns out to be bad.
pub(crate) fn with_bundle<R>(
    ctx: &mut Ctx<'_>,
    path: &str,
    verbose: bool,
    limits: &Limits,
    f: impl FnOnce(&mut Ctx<'_>, &[u8], &dyn CopySource) -> Result<R, Exit>,
) -> Result<R, Exit> {
    let input = Input::open(path).map_err(|e| ctx.file_error(path, &e))?;
    if !compressed::llvm_decompresses(&input.data) {
        if verbose {
            let _ = writeln!(ctx.err, "Uncompressed bundle.");
        }
        return f(ctx, &input.data, &input);
    }
    let bundle = CompressedBundle::parse(&input.data)
        .map_err(|e| ctx.error(format_args!("'{path}': {e}")))?;
    let argv0 = ctx.argv0;
    let mut held = Vec::new();
    let result = bundle.decompress_with(limits, |progress| {
        let data = progress.wait(progress.expected_len())?;
        let mut inner = Ctx {
            argv0,
            err: &mut held,
        };
        Some(f(&mut inner, data, &Memory(data)))
    });
    match result {
        Err(e) => Err(ctx.error(format_args!("'{path}': {e}"))),
        Ok((d, value)) => {
            report_decompressed(ctx, path, &bundle, &d, verbose);
            let _ = ctx.err.write_all(&held);
            // `None`: decompression failed, which `result` would have reported.
            value.unwrap_or(Err(Exit(1)))
        }
    }
}

pub(crate) fn list_ids(
    ctx: &mut Ctx<'_>,
    file_type: &str,
    path: &str,
    verbose: bool,
    limits: &Limits,
    out: &mut dyn Write,
) -> Result<(), Exit> {
    let text = with_bundle(ctx, path, verbose, limits, |ctx, data, _| {
        let file_type = if file_type == "a" { "bc" } else { file_type };
        let handler = handler_for(ctx, file_type, data, path)?;
        let ids = read_entries(ctx, handler, data, path)?;
        let mut text = Vec::new();
        for e in ids {
            text.extend_from_slice(e.id);
            text.push(b'\n');
        }
        Ok(text)
    })?;
    out.write_all(&text)
        .map_err(|e| ctx.error(error_text(&e)))?;
    Ok(())
}

pub(crate) fn read_entries<'a>(
    ctx: &mut Ctx<'_>,
    handler: Handler,
    data: &'a [u8],
    path: &str,
) -> Result<Vec<Found<'a>>, Exit> {
    match handler {
        Handler::Binary => match BinaryBundle::parse(data) {
            Ok(None) => Ok(Vec::new()),
            Ok(Some(b)) => Ok(b
                .llvm_order()
                .into_iter()
                .map(|e| Found {
                    id: e.id,
                    offset: e.offset,
                    len: e.size(),
                    host_object: false,
                    unreadable: None,
                })
                .collect()),
            Err(e) => Err(ctx.error(format_args!("'{path}': {e}"))),
        },
        Handler::Text(comment) => match TextBundle::parse(data, comment) {
            Ok(t) => Ok(t
                .entries()
                .iter()
                .map(|e| Found {
                    id: e.id,
                    offset: e.offset,
                    len: e.data.len() as u64,
                    host_object: false,
                    unreadable: None,
                })
                .collect()),
            Err(e) => Err(ctx.error(format_args!("'{path}': {e}"))),
        },
        Handler::Object => objects::fat_object_entries(ctx, data, path),
    }
}
