//! offload-cli: the command-line tools of offload-build. Each tool is a `run` function over
//! argument strings and output streams, so the binaries in `src/bin/` stay a few lines long
//! and the tools can be tested in-process. The binaries read their arguments with
//! `std::env::args_os` and pass each as the text that holds its bytes
//! ([`offload_formats::id::spell::text_of_os`]), so a file name or target that is not UTF-8 reaches
//! the OS, the files written and the messages (through [`offload_formats::id::spell::BytesWriter`])
//! as the same bytes, as LLVM's tools treat it. The tools are thin layers over the
//! `offload-formats` and `offload-build` libraries; what is theirs alone is argument
//! parsing (LLVM's `cl` conventions in [`cl`], clap for `offload-build`) and output
//! policy ([`fileio`]: mapped inputs, atomically replaced outputs) and process policy: how many
//! threads `inspect --verify` decodes on, the priority of compression threads and the memory
//! advice on large buffers.
//!
//! - [`bundler`]: `offload-bundler` (clang-offload-bundler).
//! - [`packager`]: `offload-packager` (clang-offload-packager, llvm-offload-binary).
//! - [`helper`]: `offload-build` (compile, inspect, extract, check, embed; no LLVM counterpart).

#![deny(missing_docs)]

pub mod bundler;
pub mod cl;
pub mod fileio;
pub mod helper;
pub mod packager;
mod process;
mod verify;

use std::io::{self, Write};

use fileio::error_text;

/// An exit status whose message has already been printed.
pub(crate) struct Exit(pub(crate) i32);

/// Where a tool reports: its name as invoked (the prefix of its messages) and stderr.
pub(crate) struct Ctx<'a> {
    pub(crate) argv0: &'a str,
    pub(crate) err: &'a mut dyn Write,
}

impl Ctx<'_> {
    /// Prints `<argv0>: error: msg` and returns exit status 1.
    pub(crate) fn error(&mut self, msg: impl std::fmt::Display) -> Exit {
        let _ = writeln!(self.err, "{}: error: {msg}", self.argv0);
        Exit(1)
    }

    /// Prints `<argv0>: warning: msg`.
    pub(crate) fn warning(&mut self, msg: impl std::fmt::Display) {
        let _ = writeln!(self.err, "{}: warning: {msg}", self.argv0);
    }

    /// An I/O error on `path`, worded as LLVM words it.
    pub(crate) fn file_error(&mut self, path: &str, e: &io::Error) -> Exit {
        self.error(format_args!("'{path}': {}", error_text(e)))
    }
}

/// The body of a tool: arguments (`args[0]` is the program name), stdout, and a [`Ctx`].
pub(crate) type Body = fn(&mut Ctx<'_>, &[String], &mut dyn Write) -> Result<(), Exit>;

/// Runs `body` and turns its outcome into an exit status; `default_name` stands for a
/// missing `argv[0]`.
pub(crate) fn run_body(
    args: &[String],
    default_name: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
    body: Body,
) -> i32 {
    let argv0 = args.first().map_or(default_name, String::as_str);
    let mut ctx = Ctx { argv0, err };
    match body(&mut ctx, args, out) {
        Ok(()) => 0,
        Err(Exit(code)) => code,
    }
}

/// Restores the default disposition of `SIGPIPE`, which Rust's runtime ignores: a tool whose
/// reader goes away (`offload-bundler -list … | head -1`) then ends quietly, killed by the
/// signal (status 141 in a shell), as LLVM's tools end, instead of reporting `Broken pipe`.
/// Called first thing by the binaries.
pub fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: signal(2) with SIG_DFL installs no handler; it is called before any thread
    // starts, so nothing observes the disposition change half-way.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Runs `run` with the process's locked standard streams.
///
/// Standard output is written as LLVM's `outs()` writes it: a failed write (a full disk,
/// `> /dev/full`) is remembered, and reported once the tool is done, as
/// `LLVM ERROR: IO failure on output stream: …` with exit status 1. (A descriptor 1 that
/// was closed when the tool started cannot be told: Rust's runtime opens `/dev/null` there.)
pub(crate) fn with_stdio(
    args: &[String],
    run: fn(&[String], &mut dyn Write, &mut dyn Write) -> i32,
) -> i32 {
    let stderr = io::stderr();
    let mut out = io::BufWriter::new(StickyStdout { error: None });
    // Messages name files and targets as the bytes given (see `offload_formats::id::spell`).
    let code = run(
        args,
        &mut out,
        &mut offload_formats::id::spell::BytesWriter(stderr.lock()),
    );
    let error = match out.into_inner() {
        Ok(w) => w.error,
        Err(e) => e.into_inner().into_parts().0.error,
    };
    match error {
        Some(e) => {
            let _ = writeln!(
                stderr.lock(),
                "LLVM ERROR: IO failure on output stream: {}",
                fileio::error_text(&e)
            );
            if code == 0 { 1 } else { code }
        }
        None => code,
    }
}

/// File descriptor 1, written directly; the first error is kept and later writes dropped.
struct StickyStdout {
    error: Option<io::Error>,
}

impl Write for StickyStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(buf.len());
        }
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            match rustix::io::write(io::stdout().as_fd(), buf) {
                Ok(n) => Ok(n),
                Err(rustix::io::Errno::INTR) => Ok(0),
                Err(e) => {
                    self.error = Some(e.into());
                    Ok(buf.len())
                }
            }
        }
        #[cfg(not(unix))]
        {
            io::stdout().write(buf)
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
