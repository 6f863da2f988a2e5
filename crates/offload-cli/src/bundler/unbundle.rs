//! Unbundling: the entries the targets ask for matched in the bundle and copied out (in
//! parallel over the cores) to outputs committed together.

use std::io;

use super::entries::Found;
use super::hiargs::Job;
use super::objects;
use super::read::{handler_for, read_entries, with_bundle};
use crate::fileio::{CopySource, OutputFile};
use crate::{Ctx, Exit};

pub(crate) fn unbundle_files(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
    let path = &job.inputs[0];
    let limits = &job.compression.limits;
    let outputs = with_bundle(ctx, path, job.verbose, limits, |ctx, data, input| {
        unbundle_entries(ctx, job, data, input)
    })?;
    OutputFile::commit_all(outputs)
        .map_err(|(p, e)| ctx.file_error(&crate::fileio::path_text(&p), &e))
}

/// Extracts the entries of the bundle `data` (copied from `input`, the same bytes) into
/// outputs that are returned uncommitted.
fn unbundle_entries(
    ctx: &mut Ctx<'_>,
    job: &Job,
    data: &[u8],
    input: &dyn CopySource,
) -> Result<Vec<OutputFile>, Exit> {
    let path = &job.inputs[0];
    let handler = handler_for(ctx, &job.file_type, data, path)?;
    let entries = read_entries(ctx, handler, data, path)?;

    let ids: Vec<&[u8]> = entries.iter().map(|e| e.id).collect();
    let m = job.targets.match_entries(&ids, job.hip_openmp);
    if !job.allow_missing && !m.missing.is_empty() {
        return Err(ctx.error(job.targets.missing_message(&m.missing)));
    }
    let matched: Vec<(usize, &Found<'_>)> =
        m.pairs.iter().map(|&(t, e)| (t, &entries[e])).collect();
    // LLVM reads the matched sections in section order and fails at the first unreadable.
    if let Some(message) = m
        .pairs
        .iter()
        .map(|&(_, e)| e)
        .min_by_key(|&e| (entries[e].unreadable.is_none(), e))
        .and_then(|e| entries[e].unreadable.as_ref())
    {
        return Err(ctx.error(message));
    }
    let (worklist, found_host) = (m.missing, m.found_host);
    let mut outputs = Vec::new();
    // Every output is staged closed: any number of them fits a small descriptor limit.
    let create = |ctx: &mut Ctx<'_>, t: usize| -> Result<OutputFile, Exit> {
        let p = &job.outputs[t];
        let mut o = OutputFile::create(p).map_err(|e| ctx.file_error(p, &e))?;
        o.close();
        Ok(o)
    };
    if matched.is_empty() {
        // No bundle at all: the input is taken to be the host's file.
        for &t in &worklist {
            let mut o = create(ctx, t)?;
            if job.targets.ids()[t].is_host() {
                let r = o
                    .reopen()
                    .and_then(|()| input.copy_range(0, input.len(), o.file()));
                r.map_err(|e| ctx.file_error(&job.outputs[t], &e))?;
                o.close();
            }
            outputs.push(o);
        }
    } else {
        let mut copies = Vec::with_capacity(matched.len());
        for &(t, entry) in &matched {
            if entry.host_object {
                let mut o = objects::host_output(ctx, job, data, &job.outputs[t])?;
                o.close();
                outputs.push(o);
                continue;
            }
            copies.push((create(ctx, t)?, entry.offset, entry.len));
        }
        if !(found_host || !job.targets.has_host() || job.allow_missing) {
            return Err(ctx.error("Can't find bundle for the host target"));
        }
        if let Err((t, e)) = copy_in_parallel(input, &mut copies) {
            let p = crate::fileio::path_text(copies[t].0.path());
            return Err(ctx.file_error(&p, &e));
        }
        outputs.extend(copies.into_iter().map(|(o, _, _)| o));
        for &t in &worklist {
            outputs.push(create(ctx, t)?);
        }
    }
    Ok(outputs)
}

/// Fills the closed output `o` with `len` bytes of `input` at `offset`, holding its
/// descriptor only meanwhile.
fn fill(input: &dyn CopySource, o: &mut OutputFile, offset: u64, len: u64) -> io::Result<()> {
    o.reopen()?;
    o.preallocate(len);
    input.copy_range(offset, len, o.file())?;
    o.close();
    Ok(())
}

/// One output to fill: the file, and the offset and length of its payload in the input.
type Copy = (OutputFile, u64, u64);

/// Copies `(output, offset, len)` ranges of `input`, spreading the outputs over the
/// available cores (each output is its own file, so the copies do not contend).
/// Returns the index of the first failed output with its error.
fn copy_in_parallel(
    input: &dyn CopySource,
    copies: &mut [(OutputFile, u64, u64)],
) -> Result<(), (usize, io::Error)> {
    let total: u64 = copies.iter().map(|c| c.2).sum();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(copies.len());
    if threads <= 1 || total < 8 << 20 || !input.parallel_copies() {
        for (i, (o, offset, len)) in copies.iter_mut().enumerate() {
            fill(input, o, *offset, *len).map_err(|e| (i, e))?;
        }
        return Ok(());
    }
    // Deal outputs to threads, largest first, each to the least loaded thread.
    let mut order: Vec<usize> = (0..copies.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(copies[i].2));
    let mut load = vec![0u64; threads];
    let mut owner = vec![0usize; copies.len()];
    for i in order {
        let t = (0..threads).min_by_key(|&t| load[t]).unwrap_or(0);
        load[t] += copies[i].2;
        owner[i] = t;
    }
    let mut buckets: Vec<Vec<(usize, &mut Copy)>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, c) in copies.iter_mut().enumerate() {
        buckets[owner[i]].push((i, c));
    }
    let results: Vec<Result<(), (usize, io::Error)>> = std::thread::scope(|s| {
        let handles: Vec<_> = buckets
            .into_iter()
            .map(|bucket| {
                s.spawn(move || {
                    for (i, (o, offset, len)) in bucket {
                        fill(input, o, *offset, *len).map_err(|e| (i, e))?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err((0, io::Error::other("copy thread panicked"))))
            })
            .collect()
    });
    let mut first: Option<(usize, io::Error)> = None;
    for r in results {
        if let Err((i, e)) = r {
            if first.as_ref().is_none_or(|(j, _)| i < *j) {
                first = Some((i, e));
            }
        }
    }
    first.map_or(Ok(()), Err)
}
