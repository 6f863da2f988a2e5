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
//!
//! This file is the entry point: it reads the options and runs one action. Its children
//! own the rest: `flags.rs` and `hiargs.rs` the options, `read.rs` opening a bundle and
//! its entries (listing), `bundle.rs` and `unbundle.rs` the two directions, `objects.rs`
//! fat objects and archives, `entries.rs` and `verbose.rs` what these share.

use std::io::Write;

use super::cl;
use super::{Ctx, Exit};

mod bundle;
mod entries;
mod flags;
mod hiargs;
mod objects;
mod read;
mod unbundle;
mod verbose;

use flags::{FLAGS, HELP};
use hiargs::Action;

/// Runs the tool with the process's standard streams; returns the exit status.
pub fn main(args: &[String]) -> i32 {
    super::with_stdio(args, run)
}

/// Runs the tool: `args[0]` is the program name as invoked.
pub fn run(args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    super::run_body(args, "offload-bundler", out, err, run_inner)
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
        } => read::list_ids(ctx, &file_type, &input, verbose, &limits, out),
        Action::Unbundle(job) if job.file_type == "a" => objects::unbundle_archive(ctx, &job),
        Action::Unbundle(job) => unbundle::unbundle_files(ctx, &job),
        Action::Bundle(job) => bundle::bundle_files(ctx, &job),
    }
}
