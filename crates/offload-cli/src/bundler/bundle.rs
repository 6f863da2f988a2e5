//! Bundling: the inputs opened (few at a time), then written as a binary, text or
//! compressed bundle, or as a fat object (`objects.rs`), to an output that appears only
//! when complete.

use std::fs::File;
use std::io::{self, Write};

use super::entries::Handler;
use super::hiargs::Job;
use super::objects;
use super::read::handler_for;
use super::verbose::report_compressed;
use crate::fileio::{Input, InputData, OutputFile};
use crate::{Ctx, Exit};
use offload_formats::bundle::binary::{BinaryBundleWriter, BinaryLayout};
use offload_formats::bundle::compressed;
use offload_formats::bundle::text;
use offload_formats::id::spell;

/// The inputs of a bundling run, opened in order: only the reference input (mapped: its
/// bytes decide the format), small inputs (read at once) and inputs that are not regular
/// files (read once) stay open (`Some`); the others are reopened when copied.
struct Opened {
    inputs: Vec<Option<Input>>,
    lens: Vec<u64>,
}

/// Opens every input in order, so the first that cannot be is the one reported (as LLVM
/// reports it), keeping few open so that any number of inputs fits a small descriptor
/// limit.
fn open_inputs(ctx: &mut Ctx<'_>, job: &Job) -> Result<Opened, Exit> {
    let r = job.targets.reference_input();
    // Small inputs are read at once and closed (up to 64 MiB in all), so that 100,000 tiny
    // inputs are opened once each, not twice.
    const SMALL: u64 = 64 << 10;
    let mut small_budget: u64 = 64 << 20;
    let mut opened = Opened {
        inputs: Vec::with_capacity(job.inputs.len()),
        lens: Vec::with_capacity(job.inputs.len()),
    };
    for (i, path) in job.inputs.iter().enumerate() {
        let input = if i == r {
            Input::open(path)
        } else {
            Input::open_unmapped(path).and_then(|input| {
                let max = SMALL.min(small_budget);
                let input = input.into_memory_if_small(max)?;
                if input.file.is_none() {
                    small_budget = small_budget.saturating_sub(input.len());
                }
                Ok(input)
            })
        };
        let input = input.map_err(|e| ctx.file_error(path, &e))?;
        opened.lens.push(input.len());
        let reopenable = matches!(input.data, InputData::Unmapped);
        opened.inputs.push((i == r || !reopenable).then_some(input));
    }
    Ok(opened)
}

impl Opened {
    /// Copies input `i` whole, reopening it when it was closed.
    fn copy(&self, job: &Job, i: usize, w: &mut File) -> io::Result<()> {
        let len = self.lens[i];
        match &self.inputs[i] {
            Some(input) => input.copy_range(0, len, w),
            None => {
                let input = Input::open_unmapped(&job.inputs[i])?;
                if input.len() != len {
                    return Err(io::Error::other("the file changed size while bundling"));
                }
                input.copy_range(0, len, w)
            }
        }
    }

    /// Every input mapped (or held in memory), for the writers that read all bytes at once.
    fn map_all(self, ctx: &mut Ctx<'_>, job: &Job) -> Result<Vec<Input>, Exit> {
        let mut all = Vec::with_capacity(self.inputs.len());
        for (input, path) in self.inputs.into_iter().zip(&job.inputs) {
            all.push(match input {
                Some(i) => i,
                None => Input::open(path).map_err(|e| ctx.file_error(path, &e))?,
            });
        }
        Ok(all)
    }
}

pub(crate) fn bundle_files(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
    let opened = open_inputs(ctx, job)?;
    let r = job.targets.reference_input();
    let reference = opened.inputs[r].as_ref().map_or(&[][..], |i| &i.data[..]);
    let handler = handler_for(ctx, &job.file_type, reference, &job.inputs[r])?;
    let out_path = &job.outputs[0];
    match handler {
        Handler::Object => {
            // LLVM's -compress has no effect on fat objects (llvm-objcopy overwrites the
            // output).
            let all = opened.map_all(ctx, job)?;
            objects::bundle_fat_object(ctx, job, &all)
        }
        _ if job.compression.enabled => {
            let text_comment = match handler {
                Handler::Text(comment) => Some(comment),
                _ => None,
            };
            let all = opened.map_all(ctx, job)?;
            bundle_compressed(ctx, job, text_comment, &all)
        }
        Handler::Binary => {
            let mut output = create_output(ctx, out_path)?;
            let layout = binary_layout(ctx, job, &opened.lens)?;
            output.preallocate(layout.len());
            let written = layout.write_to(output.file(), |i, w| {
                opened.copy(job, i, w.inner())?;
                w.add_count(opened.lens[i]);
                Ok(())
            });
            commit_output(ctx, out_path, output, written)
        }
        Handler::Text(comment) => {
            let mut output = create_output(ctx, out_path)?;
            let f = output.file();
            let written =
                text_markers(job, comment)
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, (start, end))| {
                        f.write_all(start)?;
                        opened.copy(job, i, f)?;
                        f.write_all(end)
                    });
            commit_output(ctx, out_path, output, written)
        }
    }
}

/// The layout of a binary bundle of the job's targets with payloads of these lengths.
fn binary_layout(ctx: &mut Ctx<'_>, job: &Job, lens: &[u64]) -> Result<BinaryLayout, Exit> {
    let mut w = BinaryBundleWriter::new();
    w.align(job.align).map_err(|e| ctx.error(e))?;
    for (id, &len) in job.targets.ids().iter().zip(lens) {
        w.add(spell::bytes(id.as_str()), len)
            .map_err(|e| ctx.error(e))?;
    }
    w.layout().map_err(|e| ctx.error(e))
}

/// The start and end markers of each target's entry in a text bundle.
fn text_markers(job: &Job, comment: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    job.targets
        .ids()
        .iter()
        .map(|id| {
            let (mut start, mut end) = (Vec::new(), Vec::new());
            let id = &spell::bytes(id.as_str());
            let _ = text::write_start(&mut start, comment, id);
            let _ = text::write_end(&mut end, comment, id);
            (start, end)
        })
        .collect()
}

/// Creates the output `path` (a temporary file until [`commit_output`]).
fn create_output(ctx: &mut Ctx<'_>, path: &str) -> Result<OutputFile, Exit> {
    OutputFile::create(path).map_err(|e| ctx.file_error(path, &e))
}

/// Renames `output` into place at `path` when it was `written` without error.
fn commit_output(
    ctx: &mut Ctx<'_>,
    path: &str,
    output: OutputFile,
    written: io::Result<()>,
) -> Result<(), Exit> {
    written.map_err(|e| ctx.file_error(path, &e))?;
    output.commit().map_err(|e| ctx.file_error(path, &e))
}

/// `-compress`: the bundle (binary, or text with this comment string) is built from the
/// mapped inputs, hashed and compressed (in parallel), then written at once.
fn bundle_compressed(
    ctx: &mut Ctx<'_>,
    job: &Job,
    text_comment: Option<&str>,
    inputs: &[Input],
) -> Result<(), Exit> {
    let payloads: Vec<&[u8]> = inputs.iter().map(|i| &i.data[..]).collect();
    let markers: Vec<(Vec<u8>, Vec<u8>)>;
    let layout;
    let pieces: Vec<&[u8]> = match text_comment {
        None => {
            let lens: Vec<u64> = inputs.iter().map(Input::len).collect();
            layout = binary_layout(ctx, job, &lens)?;
            layout.pieces(&payloads).map_err(|e| ctx.error(e))?
        }
        Some(comment) => {
            markers = text_markers(job, comment);
            markers
                .iter()
                .zip(&payloads)
                .flat_map(|((start, end), data)| [&start[..], data, &end[..]])
                .collect()
        }
    };
    let options = &job.compression.options;
    let started = std::time::Instant::now();
    let ccob = compressed::compress_pieces_with(&pieces, options, &crate::process::HOOKS)
        .map_err(|e| ctx.error(e))?;
    if job.verbose {
        report_compressed(ctx, &ccob, options, started.elapsed())?;
    }
    let out_path = &job.outputs[0];
    let mut output = create_output(ctx, out_path)?;
    output.preallocate(ccob.len() as u64);
    let written = output.file().write_all(&ccob);
    commit_output(ctx, out_path, output, written)
}
