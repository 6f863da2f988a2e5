//! `offload-bundler`: clang-offload-bundler's command line over this crate's formats.
//!
//! Options, validation order, messages and exit codes follow clang-offload-bundler
//! 22 (see the differential tests in `integration/`). Where LLVM crashes, loops or
//! writes a corrupt file, this tool stops with a one-line error instead:
//!
//! - malformed bundles (truncated header, an entry count larger than the header
//!   holds, a zero offset, a payload past the end, a text entry without its end
//!   marker) name the file, the entry and the offset;
//! - `-bundle-align=0` and two targets that standardize to the same bundle ID are
//!   rejected before anything is written;
//! - outputs are written to temporary files beside their targets and renamed into
//!   place only when everything succeeded: on any error no output is created or
//!   truncated (LLVM leaves the outputs of entries it had already extracted).
//!
//! Entry IDs are standardized as LLVM 22 does, with LLVM 19's rules where 22 rejects
//! or loses a target 19 accepted (see [`offload_formats::id::entry`]).
//!
//! Exit status: 0 on success, 1 on any error.

use std::fs::File;
use std::io::{self, Write};

use super::cl;
use super::{Ctx, Exit};

mod flags;
mod hiargs;
mod objects;
use crate::fileio::{CopySource, Input, InputData, Memory, OutputFile, error_text};
use flags::{FLAGS, HELP};
use hiargs::{Action, Job};
use offload_formats::bundle::binary::{BinaryBundleWriter, BinaryLayout};
use offload_formats::bundle::compressed::{
    self, CompressOptions, CompressedBundle, Decompressed, Limits,
};
use offload_formats::bundle::{BinaryBundle, FileType, TextBundle, text};
use offload_formats::id::spell;
use offload_formats::kind::is_llvm_object_file;

/// Runs the tool with the process's standard streams; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    super::with_stdio(args, run)
}

/// Runs the tool: `args[0]` is the program name as invoked.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    super::run_body(args, "offload-bundler", out, err, run_inner)
}

/// How one bundle file is read or written, chosen from `-type` and the reference input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Handler {
    Binary,
    Text(&'static str),
    /// A fat object (`-type=o` whose reference input is an object file).
    Object,
}

fn handler_for(
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

/// `1234567` → `1,234,567`, as LLVM's verbose output prints sizes.
fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i != 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn mb_per_s(bytes: u64, elapsed: std::time::Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        bytes as f64 / (1024.0 * 1024.0) / secs
    } else {
        0.0
    }
}

fn run_inner(ctx: &mut Ctx<'_>, args: &[String], out: &mut dyn Write) -> Result<(), Exit> {
    let Some(low) = cl::parse_args(ctx, args, FLAGS, &HELP, out)? else {
        return Ok(());
    };
    if low.h {
        cl::print_help(out, ctx.argv0, &HELP, FLAGS, false);
        return Ok(());
    }
    match Action::new(ctx, low)? {
        Action::List {
            file_type,
            input,
            verbose,
            limits,
        } => list_ids(ctx, &file_type, &input, verbose, &limits, out),
        Action::Unbundle(job) if job.file_type == "a" => objects::unbundle_archive(ctx, &job),
        Action::Unbundle(job) => unbundle_files(ctx, &job),
        Action::Bundle(job) => bundle_files(ctx, &job),
    }
}

/// Opens a bundle to read (`-list`, `-unbundle`) and runs `f` on its bytes. A compressed
/// bundle is decompressed (only the first one when several follow each other, bounded by its
/// total size, as LLVM 23 does): `f` runs as soon as the bytes are there while the hash is
/// still being checked, and its messages are held back until LLVM 22's `-verbose` lines
/// (which come first) are printed. A value `f` returns (outputs not yet committed) is
/// dropped when the bundle turns out to be bad.
fn with_bundle<R>(
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

/// Warnings about a decompressed bundle, and LLVM 22's `-verbose` lines.
fn report_decompressed(
    ctx: &mut Ctx<'_>,
    path: &str,
    bundle: &CompressedBundle<'_>,
    d: &Decompressed,
    verbose: bool,
) {
    for w in &d.warnings {
        ctx.warning(format_args!("'{path}': {w}"));
    }
    if !verbose {
        return;
    }
    let h = bundle.header();
    let compressed = bundle.payload().len() as u64;
    let size = d.data.len() as u64;
    let mut text = format!("Compressed bundle format version: {}\n", h.version.raw());
    if let Some(total) = h.total_size {
        text += &format!(
            "Total file size (from header): {} bytes\n",
            with_commas(total)
        );
    }
    text += &format!(
        "Decompression method: {}\nSize before decompression: {} bytes\nSize after decompression: {} bytes\n",
        h.method.name(),
        with_commas(compressed),
        with_commas(size)
    );
    let rate = size as f64 / compressed.max(1) as f64;
    text += &format!(
        "Compression rate: {rate:.2}\nCompression ratio: {:.2}%\nDecompression speed: {:.2} MB/s\n",
        100.0 * compressed as f64 / size.max(1) as f64,
        mb_per_s(size, d.elapsed)
    );
    let computed = d.hash.unwrap_or_default();
    text += &format!(
        "Stored hash: {:#x}\nRecalculated hash: {:#x}\nHashes match: {}\n",
        h.hash,
        computed,
        if h.hash == computed { "Yes" } else { "No" }
    );
    let _ = ctx.err.write_all(text.as_bytes());
}

fn list_ids(
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

/// One entry to extract: its ID and where its payload lies in the input.
struct Found<'a> {
    id: &'a [u8],
    offset: u64,
    len: u64,
    /// A fat object's host entry: the output is the object without its bundle sections.
    host_object: bool,
    /// A fat object's section whose contents cannot be read: the error to report when it
    /// is extracted (listing it is fine, as in LLVM).
    unreadable: Option<String>,
}

fn read_entries<'a>(
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

fn bundle_files(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
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

/// LLVM 22's `-verbose` lines after compressing a bundle.
fn report_compressed(
    ctx: &mut Ctx<'_>,
    ccob: &[u8],
    options: &CompressOptions,
    elapsed: std::time::Duration,
) -> Result<(), Exit> {
    let header = compressed::Header::parse(ccob).map_err(|e| ctx.error(e))?;
    let before = header.uncompressed_size;
    let after = (ccob.len() - header.len()) as u64;
    let text = format!(
        "Compressed bundle format version: {}\n\
         Total file size (including headers): {} bytes\n\
         Compression method used: {}\n\
         Compression level: {}\n\
         Binary size before compression: {} bytes\n\
         Binary size after compression: {} bytes\n\
         Compression rate: {:.2}\n\
         Compression ratio: {:.2}%\n\
         Compression speed: {:.2} MB/s\n\
         Truncated MD5 hash: {:#x}\n",
        header.version.raw(),
        with_commas(ccob.len() as u64),
        header.method.name(),
        options.effective_level(),
        with_commas(before),
        with_commas(after),
        before as f64 / after.max(1) as f64,
        100.0 * after as f64 / before.max(1) as f64,
        mb_per_s(before, elapsed),
        header.hash
    );
    let _ = ctx.err.write_all(text.as_bytes());
    Ok(())
}

fn unbundle_files(ctx: &mut Ctx<'_>, job: &Job) -> Result<(), Exit> {
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
